"""Physical invariants of the disaggregated serving model over the catalog (issue 19).

Every catalog GPU × a set of LLMs (dense and MoE, GQA and MLA, 0.5B to 671B), each side on the
smallest worker (1, 2, 4 or 8 GPUs) that holds the model, the decode pool on the same or on
another GPU type:

* more prefill workers never raise TTFT (mean and p90) at a fixed rate and the same KV link (a
  worker that takes the unit out of one NVLink domain moves the transfer to the network:
  checked apart);
* more decode workers never raise ITL (mean and p90) at a fixed rate;
* power per GPU of each pool lies in [idle, TDP] and is non-decreasing in the rate; the unit's
  power is the sum of its pools;
* ITL never beats the decode step's memory-read floor;
* the KV transfer takes at least bytes / (links × link bandwidth), over NVLink only inside one
  NVLink domain;
* capacity meets both SLAs, and the curves the planner reads start idle at 0 and end there.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.estimators.step import StepInputs
from predictors.features import add_features, join_specs
from predictors.serving.curves import BATCH_GRID
from predictors.serving.disagg import (
    DisaggTable,
    disagg_at_rate,
    disagg_capacity,
    prefill_capacity,
)
from predictors.serving.disagg_build import disagg_curves

LLMS = (
    "Qwen/Qwen2.5-0.5B-Instruct",
    "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Llama-3.1-70B-Instruct",
    "Qwen/Qwen3-30B-A3B",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "openai/gpt-oss-120b",
    "deepseek-ai/DeepSeek-V3",
)
COUNTS = (1, 2, 4, 8)
EPS = 1e-9


def _units(predictor: Predictor) -> pl.DataFrame:
    gpus = predictor.catalog.gpus["id"].to_list()
    rows = []
    for i, (llm, gpu) in enumerate(itertools.product(LLMS, gpus)):
        other = gpus[(gpus.index(gpu) + 1) % len(gpus)] if i % 2 else gpu
        rows += [
            {
                "model": llm,
                "engine": "vllm",
                "precision": "bf16",
                "input_tokens": 2048.0 if i % 3 else 512.0,
                "output_tokens": 256.0 if i % 3 else 1024.0,
                "prefill_gpu": gpu,
                "prefill_gpu_count": n,
                "prefill_workers": 1 + i % 3,
                "decode_gpu": other,
                "decode_gpu_count": n,
                "decode_workers": 1 + i % 2,
                "_pair": i,
            }
            for n in COUNTS
        ]
    frame = pl.DataFrame(rows)
    table = disagg_curves(predictor, frame.drop("_pair"))
    ok = frame.with_columns(pl.Series("_ok", table.ok)).filter("_ok")
    return ok.group_by("_pair").agg(pl.all().sort_by("prefill_gpu_count").first()).drop("_ok")


@pytest.fixture(scope="module")
def units(predictor: Predictor) -> pl.DataFrame:
    u = _units(predictor).sort("_pair").drop("_pair")
    assert u.height > 150, "too few catalog units hold the model on up to 8 GPUs"
    return u


@pytest.fixture(scope="module")
def table(predictor: Predictor, units: pl.DataFrame) -> DisaggTable:
    t = disagg_curves(predictor, units)
    assert all(e == "" for e in t.error)
    return t


def _rates(t: DisaggTable, points: int = 8) -> np.ndarray:
    """(N, points) rates from 0 to just below what every unit carries."""
    top = np.minimum(t.prefill.servers / t.prefill.service_s, _decode_top(t)) * 0.98
    return top[:, None] * np.linspace(0.0, 1.0, points)[None, :]


def _decode_top(t: DisaggTable) -> np.ndarray:
    from predictors.serving.curves import rate_per_s

    return rate_per_s(t.decode, t.decode.max_batch[:, None])[:, 0] * t.decode_workers


def test_the_catalog_sample_covers_gpus_llms_and_mixed_pools(units: pl.DataFrame) -> None:
    assert units["prefill_gpu"].n_unique() >= 30
    assert set(units["model"]) == set(LLMS)
    assert (units["prefill_gpu"] != units["decode_gpu"]).sum() > 50


def _with(units: pl.DataFrame, **changes: pl.Expr) -> pl.DataFrame:
    return units.with_columns(**changes)


def test_more_prefill_workers_never_raise_ttft(
    predictor: Predictor, units: pl.DataFrame, table: DisaggTable
) -> None:
    base = table
    more = disagg_curves(predictor, _with(units, prefill_workers=pl.col("prefill_workers") + 1))
    lam = _rates(base)
    same_link = base.kv.nvlink == more.kv.nvlink
    assert same_link.mean() > 0.8
    # leaving the NVLink domain only ever moves the transfer to the slower network
    assert np.all(more.kv.seconds[~same_link] >= base.kv.seconds[~same_link])
    for j in range(lam.shape[1]):
        a, b = disagg_at_rate(base, lam[:, j]), disagg_at_rate(more, lam[:, j])
        assert np.all(b.ttft_s[same_link] <= a.ttft_s[same_link] * (1 + EPS))
        assert np.all(b.ttft_wait_s <= a.ttft_wait_s * (1 + EPS) + 1e-15)
    sla = np.full(base.rows, 5.0)
    for pct in (None, 90.0):
        a_cap, b_cap = prefill_capacity(base, sla, pct), prefill_capacity(more, sla, pct)
        assert np.all(b_cap[same_link] >= a_cap[same_link])


def test_more_decode_workers_never_raise_itl(
    predictor: Predictor, units: pl.DataFrame, table: DisaggTable
) -> None:
    base = table
    more = disagg_curves(predictor, _with(units, decode_workers=pl.col("decode_workers") + 1))
    lam = _rates(base)
    for j in range(lam.shape[1]):
        a, b = disagg_at_rate(base, lam[:, j]), disagg_at_rate(more, lam[:, j])
        assert np.all(b.itl_s <= a.itl_s * (1 + EPS))
        assert np.all(b.itl_s_p90 <= a.itl_s_p90 * (1 + EPS))


def test_pool_power_stays_within_idle_and_tdp_and_rises_with_load(table: DisaggTable) -> None:
    lam = _rates(table, 12)
    points = [disagg_at_rate(table, lam[:, j]) for j in range(lam.shape[1])]
    pre = np.stack([p.prefill_power_w_per_gpu for p in points], axis=1)
    dec = np.stack([p.decode_power_w_per_gpu for p in points], axis=1)
    total = np.stack([p.power_w for p in points], axis=1)
    assert np.all(np.isfinite(pre)) and np.all(np.isfinite(dec))
    p, t = table.prefill, table
    assert np.all(pre >= p.idle_w[:, None] - EPS) and np.all(pre <= p.tdp_w[:, None] + EPS)
    assert np.all(dec >= t.decode.idle_w[:, None] - EPS)
    assert np.all(dec <= t.decode_tdp_w[:, None] + EPS)
    assert np.all(np.diff(pre, axis=1) >= -EPS) and np.all(np.diff(dec, axis=1) >= -EPS)
    pools = (
        pre * (p.workers * p.gpus_per_worker)[:, None]
        + dec * (t.decode_workers * t.decode_gpus_per_worker)[:, None]
    )
    np.testing.assert_allclose(total, pools, rtol=1e-12)
    np.testing.assert_allclose(total[:, 0], t.idle_w, rtol=1e-9)


def test_pool_power_intervals_hold_their_points_within_idle_and_tdp(table: DisaggTable) -> None:
    """Each pool's power interval (the report's bands of a unit) holds its point, stays in
    [idle, TDP] and is not the point alone on every unit."""
    bands = table.power_bands
    assert bands is not None
    p, d = table.prefill, table.decode
    lo, hi = bands.prefill_busy_lo_w, bands.prefill_busy_hi_w
    assert np.all(p.idle_w - EPS <= lo) and np.all(lo <= p.busy_power_w + EPS)
    assert np.all(p.busy_power_w - EPS <= hi) and np.all(hi <= p.tdp_w + EPS)
    assert np.all(d.idle_w[:, None] - EPS <= bands.decode_lo_w)
    assert np.all(bands.decode_lo_w <= d.power_w + EPS)
    assert np.all(d.power_w - EPS <= bands.decode_hi_w)
    assert np.all(bands.decode_hi_w <= table.decode_tdp_w[:, None] + EPS)
    assert (hi > lo).mean() > 0.9 and (
        bands.decode_hi_w[:, -1] > bands.decode_lo_w[:, -1]
    ).mean() > 0.9


def test_itl_never_beats_the_memory_read_floor(
    predictor: Predictor, units: pl.DataFrame, table: DisaggTable
) -> None:
    """At the rates where each decode worker holds a grid batch b (and the prefill pool is
    stable), ITL >= the step's bytes / (n · BW)."""
    from predictors.serving.curves import rate_per_s

    grid = np.asarray(BATCH_GRID[:6], dtype=np.float64)
    for b in grid:
        inside = table.decode.max_batch >= b
        lam = rate_per_s(table.decode, np.full((table.rows, 1), b))[:, 0] * table.decode_workers
        itl = disagg_at_rate(table, np.where(inside, lam, 0.0)).itl_s
        rows = units.select(
            "model",
            pl.col("decode_gpu").alias("gpu"),
            pl.col("decode_gpu_count").alias("gpu_count"),
            "engine",
            "precision",
            "input_tokens",
            "output_tokens",
            pl.lit(float(b)).alias("batch_size"),
        ).with_columns(
            pl.lit(predictor.card["reference_source"]).alias("source"),
            pl.lit(False).alias("itl_includes_prefill"),
        )
        rows = rows.with_columns(
            pl.col("gpu").replace_strict(
                {g: predictor.catalog.try_resolve_gpu(g) for g in rows["gpu"].unique()}
            )
        )
        floor = StepInputs.of(add_features(join_specs(rows, predictor.catalog))).memory_floor_s()
        # (NaN where the prefill pool cannot carry that rate: the unit is above capacity)
        checked = inside & np.isfinite(itl)
        assert checked.sum() > 0.5 * inside.sum()
        assert np.all(itl[checked] >= floor[checked] * (1 - 1e-9))


def test_kv_transfer_takes_at_least_bytes_over_the_links(
    predictor: Predictor, units: pl.DataFrame, table: DisaggTable
) -> None:
    kv = table.kv
    assert np.all(kv.bytes_per_request > 0)
    assert np.all(kv.seconds >= kv.bytes_per_request / (kv.links * kv.link_bytes_per_s))
    gpus = {g: predictor.catalog.gpu(g) for g in units["prefill_gpu"].unique()}
    for i, r in enumerate(units.iter_rows(named=True)):
        spec = gpus[r["prefill_gpu"]]
        same = r["prefill_gpu"] == r["decode_gpu"]
        # one prefill worker beside one decode worker decides, not the unit's size
        pair = r["prefill_gpu_count"] + r["decode_gpu_count"]
        domain = max(int(spec.get("nvlink_domain_gpus") or 1), int(spec.get("node_gpus") or 8))
        assert bool(kv.nvlink[i]) == (same and pair <= domain)
        net = min(
            float(gpus.get(g, predictor.catalog.gpu(g)).get("scale_out_gbit_s") or 100.0)
            for g in (r["prefill_gpu"], r["decode_gpu"])
        )
        nvlink = float(spec.get("interconnect_gb_s") or 64.0) / 2.0 * 1e9
        latency = max(
            float(predictor.catalog.gpu(g).get("scale_out_latency_us") or 5.0) * 1e-6
            for g in (r["prefill_gpu"], r["decode_gpu"])
        )
        over_net = latency + kv.bytes_per_request[i] / (kv.links[i] * net / 8.0 * 1e9)
        if kv.nvlink[i]:  # inside the domain: NVLink or, where faster, the network
            assert (
                min(
                    abs(kv.link_bytes_per_s[i] / nvlink - 1),
                    abs(kv.link_bytes_per_s[i] / net * 8e-9 - 1),
                )
                < 1e-9
            )
            assert kv.seconds[i] <= over_net * (1 + 1e-12)
        else:
            assert kv.link_bytes_per_s[i] == pytest.approx(net / 8.0 * 1e9)
            assert kv.seconds[i] == pytest.approx(over_net)


@pytest.mark.parametrize("percentile", [None, 90.0])
def test_capacity_meets_both_slas_and_its_curve_starts_idle(
    table: DisaggTable, percentile: float | None
) -> None:
    n = table.rows
    light = disagg_capacity(table, np.full(n, np.inf), np.full(n, np.inf), percentile)
    itl_sla = light.itl_s_light * 1.5
    ttft_sla = light.ttft_s_light * 3.0
    cap = disagg_capacity(table, itl_sla, ttft_sla, percentile)
    ok = cap.max_requests_per_s > 0
    assert ok.mean() > 0.9
    assert np.all(cap.itl_s_at_capacity[ok] <= itl_sla[ok] * (1 + 1e-6))
    assert np.all(cap.ttft_s_at_capacity[ok] <= ttft_sla[ok] * (1 + 1e-6))
    np.testing.assert_allclose(
        cap.max_requests_per_s,
        np.minimum(cap.prefill_max_requests_per_s, cap.decode_max_requests_per_s),
    )
    for i in np.flatnonzero(ok):
        xs, ps = cap.curve_requests_per_s[i], cap.curve_power_w[i]
        assert xs[0] == 0.0 and xs[-1] == pytest.approx(cap.max_requests_per_s[i])
        assert np.all(np.diff(xs) > 0) and np.all(np.diff(ps) >= 0)
        assert ps[0] == pytest.approx(table.idle_w[i])
        assert len(cap.curve_itl_s[i]) == len(xs) == len(cap.curve_ttft_s[i])
    assert set(cap.limit) <= {"itl", "ttft", "memory", "throughput"}
    # the ITL and TTFT at capacity are the unit's at its capacity, whichever side sets it (fuzz
    # round 24: a TTFT-bound unit recorded its decode pool's ITL at the decode pool's own,
    # higher, capacity)
    tight_ttft = disagg_capacity(table, np.full(n, np.inf), light.ttft_s_light * 1.01, percentile)
    for c in (cap, tight_ttft):
        live = c.max_requests_per_s > 0
        at = disagg_at_rate(table, c.max_requests_per_s)
        itl = at.itl_s if percentile is None else at.itl_s_p90
        np.testing.assert_allclose(c.itl_s_at_capacity[live], itl[live], rtol=1e-9)
    assert (np.asarray(tight_ttft.limit) == "ttft").mean() > 0.5


@pytest.mark.slow
def test_bad_units_are_refused_with_one_line_reasons(predictor: Predictor) -> None:
    units = pl.DataFrame(
        {
            "model": ["meta-llama/Llama-3.1-70B-Instruct", "no-such-llm", "Qwen/Qwen3-8B"],
            "engine": ["vllm", "vllm", "vllm"],
            "precision": ["bf16", "bf16", "bf16"],
            "input_tokens": [1024.0, 1024.0, 1024.0],
            "output_tokens": [256.0, 256.0, 256.0],
            "prefill_gpu": ["H100-SXM5-80GB", "H100-SXM5-80GB", "H1OO"],
            "prefill_gpu_count": [1, 1, 3],
            "prefill_workers": [1, 1, 1],
            "decode_gpu": ["H100-SXM5-80GB", "H100-SXM5-80GB", "H100-SXM5-80GB"],
            "decode_gpu_count": [4, 1, 1],
            "decode_workers": [2, 0, 1],
            "decode_tp": [2, None, None],
        }
    )
    t = disagg_curves(predictor, units)
    assert not any(t.ok)
    assert all("\n" not in e and e for e in t.error)
    assert t.error[0].startswith("prefill worker: does not fit") and "decode_tp: 2" in t.error[0]
    assert "unknown llm 'no-such-llm'" in t.error[1] and "decode_workers" in t.error[1]
    assert t.error[2].startswith("prefill_gpu:") and "did you mean" in t.error[2]
    cap = disagg_capacity(t, np.full(3, 0.1), np.full(3, 1.0), None)
    assert np.all(cap.max_requests_per_s == 0.0)
    assert np.all(np.isnan(disagg_at_rate(t, np.full(3, 0.1)).power_w))
    with pytest.raises(ValueError, match="decode_workers"):
        disagg_curves(predictor, units.drop("decode_workers"))
