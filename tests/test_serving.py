"""The serving model (operating point at a Poisson load per replica).

Hand arithmetic on tiny curves (Little's law, energy per request, Poisson expectations), then
properties over the whole GPU catalog with the shipped predictors: power within [idle, TDP] and
non-decreasing in the rate, ITL non-decreasing, capacity meeting the SLA, and the issue's lower
bound idle + (1 - e^-b)(P1 - idle) on the mean power.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.rows import OUTPUT_COLUMNS, predict_rows
from predictors.serving import curves, operating, poisson
from predictors.serving.curves import BATCH_GRID, ServingCurves
from predictors.serving.grid import engine_max_batch, serving_table

MODELS = (
    ("meta-llama/Llama-3.1-8B-Instruct", 1),
    ("meta-llama/Llama-3.1-70B-Instruct", 4),
    ("Qwen/Qwen3-30B-A3B", 2),
)


def _flat(
    itl: float, power: float, idle: float, out: float = 100.0, prefill: float = 0.0
) -> ServingCurves:
    g = len(BATCH_GRID)
    return ServingCurves(
        batch=np.asarray(BATCH_GRID, dtype=np.float64),
        itl_s=np.full((1, g), itl),
        power_w=np.full((1, g), power),
        idle_w=np.asarray([idle]),
        prefill_s=np.asarray([prefill]),
        ttft_base_s=np.asarray([0.05]),
        comm_s_per_token=np.zeros(1),
        output_tokens=np.asarray([out]),
        max_batch=np.asarray([2048.0]),
    )


def test_littles_law_and_energy_per_request_by_hand() -> None:
    # ITL 20 ms at every batch, 100 output tokens: λ(b) = b / (100 · 0.02) = b / 2
    c = _flat(itl=0.02, power=150.0, idle=50.0)
    op = operating.at_rate(c, np.asarray([1.0]))
    assert op.decoding[0] == pytest.approx(2.0, rel=1e-9)  # b = λ · O · ITL
    n = 2.0 + 1.0 * (0.05 + 0.02)  # plus λ · TTFT (t_p 50 ms + one step)
    assert op.concurrency[0] == pytest.approx(n, rel=1e-9)
    assert op.ttft_s[0] == pytest.approx(0.07, rel=1e-9)
    # P(k) = 150 W for every k >= 1, idle when empty: E[P(K)] = 50 + 100 (1 - e^-n)
    power = 50.0 + 100.0 * (1.0 - math.exp(-n))
    assert op.power_w_per_gpu[0] == pytest.approx(power, rel=1e-9)
    # energy per request = mean power / rate (1 req/s): J per request
    assert op.power_w_per_gpu[0] / 1.0 == pytest.approx(power, rel=1e-9)
    assert op.output_throughput_tok_s[0] == pytest.approx(100.0)


def test_chunked_prefill_lengthens_the_step_by_hand() -> None:
    # prompt compute c_p = 0.5 s per request, O = 100: τ(b) = 0.02 + b · 0.5 / 100
    c = _flat(itl=0.02, power=150.0, idle=50.0, prefill=0.5)
    b = np.asarray([[4.0]])
    assert curves.step_time_s(c, b)[0, 0] == pytest.approx(0.02 + 4 * 0.005)
    # λ(b) = b / (O τ) = 4 / (100 · 0.04) = 1; the prefill share λ·τ·c_p/τ = λ c_p = 0.5
    assert curves.rate_per_s(c, b)[0, 0] == pytest.approx(1.0)
    op = operating.at_rate(c, np.asarray([1.0]))
    assert op.decoding[0] == pytest.approx(4.0, rel=1e-9)


@pytest.mark.parametrize("mean", [0.01, 0.3, 2.0, 9.0, 23.0, 40.0, 300.0])
def test_mean_power_is_the_poisson_expectation(mean: float) -> None:
    rng = np.random.default_rng(int(mean * 100))
    g = len(BATCH_GRID)
    power = np.sort(rng.uniform(60, 400, size=g))[None, :]
    c = ServingCurves(
        np.asarray(BATCH_GRID, dtype=np.float64),
        np.full((1, g), 0.01),
        power,
        np.asarray([40.0]),
        np.zeros(1),
        np.zeros(1),
        np.zeros(1),
        np.ones(1),
        np.asarray([2048.0]),
    )
    k = np.arange(0, int(mean + 12 * math.sqrt(mean) + 30))
    logpmf = np.asarray([j * math.log(mean) - mean - math.lgamma(j + 1) for j in k])
    pk = np.interp(k, np.concatenate(([0.0], BATCH_GRID)), np.concatenate(([40.0], power[0])))
    want = float((np.exp(logpmf) * pk).sum())
    got = poisson.mean_power_w(c, np.asarray([[mean]]))[0, 0]
    assert got == pytest.approx(want, rel=2e-3 if mean > 24 else 1e-9)


@pytest.mark.parametrize("mean", [0.2, 3.0, 17.0, 60.0, 500.0])
def test_poisson_quantile(mean: float) -> None:
    q = poisson.poisson_quantile(np.asarray([mean]), 0.9)[0]
    k = np.arange(0, int(mean + 12 * math.sqrt(mean) + 30))
    cdf = np.cumsum([math.exp(j * math.log(mean) - mean - math.lgamma(j + 1)) for j in k])
    want = int(np.argmax(cdf >= 0.9))
    assert abs(q - want) <= (0 if mean <= 24 else 1)


@pytest.fixture(scope="module")
def catalog_table() -> tuple[pl.DataFrame, object, Predictor]:
    predictor = Predictor.load()
    gpus = predictor.catalog.gpus["id"].to_list()
    rows = pl.DataFrame(
        [
            {
                "model": m,
                "gpu": g,
                "gpu_count": float(tp),
                "engine": "vllm",
                "precision": "bf16",
                "input_tokens": 1024.0,
                "output_tokens": 256.0,
            }
            for m, tp in MODELS
            for g in gpus
        ]
    )
    return rows, serving_table(rows, predictor), predictor


RATES = np.asarray([0.01, 0.05, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0])


def test_power_within_idle_tdp_and_rising_with_load_over_the_catalog(
    catalog_table: tuple[pl.DataFrame, object, Predictor],
) -> None:
    rows, table, _ = catalog_table
    c = table.curves  # type: ignore[attr-defined]
    tdp = np.asarray(table.tdp_w)  # type: ignore[attr-defined]
    live = np.flatnonzero(c.max_batch >= 1)
    assert live.size > 50
    prev_p = c.idle_w.copy()
    prev_itl = np.zeros(c.rows)
    checked = 0
    for lam in RATES:
        op = operating.at_rate(c, np.full(c.rows, lam))
        ok = ~np.isnan(op.power_w_per_gpu)
        idx = live[ok[live]]
        checked += idx.size
        p, itl = op.power_w_per_gpu[idx], op.itl_s[idx]
        assert (p >= c.idle_w[idx] - 1e-9).all() and (p <= tdp[idx] + 1e-9).all()
        assert (p >= prev_p[idx] - 1e-9).all(), rows[idx[p < prev_p[idx] - 1e-9]]
        assert (itl >= prev_itl[idx] - 1e-12).all()
        prev_p[idx], prev_itl[idx] = p, itl
    assert checked > 300


def test_mean_power_meets_the_busy_share_lower_bound_over_the_catalog(
    catalog_table: tuple[pl.DataFrame, object, Predictor],
) -> None:
    """power >= idle + (1 - e^-b)(P1 - idle), b = λ · O · ITL(batch 1), P1 = power at batch 1."""
    _, table, _ = catalog_table
    c = table.curves  # type: ignore[attr-defined]
    live = c.max_batch >= 1
    p1, itl1 = c.power_w[:, 0], c.itl_s[:, 0]
    for lam in RATES:
        op = operating.at_rate(c, np.full(c.rows, lam))
        ok = live & ~np.isnan(op.power_w_per_gpu)
        b = lam * c.output_tokens * itl1
        bound = c.idle_w + (1.0 - np.exp(-b)) * (p1 - c.idle_w)
        assert (op.power_w_per_gpu[ok] >= bound[ok] - 1e-9).all()


def test_capacity_meets_the_sla_and_is_the_largest_rate(
    catalog_table: tuple[pl.DataFrame, object, Predictor],
) -> None:
    _, table, _ = catalog_table
    c = table.curves  # type: ignore[attr-defined]
    sla = np.full(c.rows, 0.08)
    for pct in (None, 90.0):
        cap = operating.capacity(c, sla, np.full(c.rows, np.inf), pct)
        live = np.flatnonzero(cap.max_requests_per_s > 0)
        assert live.size > 30
        b = cap.decoding_at_capacity[live][:, None]
        sub = curves.ServingCurves(
            c.batch,
            *(getattr(c, f)[live] for f in ServingCurves.__dataclass_fields__ if f != "batch"),
        )
        assert (operating.itl_at_percentile_s(sub, b, pct)[:, 0] <= 0.08 + 1e-9).all()
        assert np.allclose(curves.rate_per_s(sub, b)[:, 0], cap.max_requests_per_s[live])
        # a little more load breaks one of the limits
        more = b * 1.01 + 1e-6
        itl_bad = operating.itl_at_percentile_s(sub, more, pct)[:, 0] > 0.08
        mem_bad = ~operating._memory_ok(sub, more)[:, 0]
        assert (itl_bad | mem_bad).all()
        for i in live:
            xs, ps = cap.curve_requests_per_s[i], cap.curve_power_w_per_gpu[i]
            assert xs[0] == 0 and ps[0] == c.idle_w[i] and (np.diff(xs) > 0).all()
            assert (np.diff(ps) >= 0).all() and xs[-1] == pytest.approx(cap.max_requests_per_s[i])


def test_engine_rules() -> None:
    assert engine_max_batch("vllm", 80) == 1024 and engine_max_batch("vllm", 24) == 256
    assert engine_max_batch("tensorrt-llm", 24) == 2048
    # each attention-DP rank schedules its own batch; the grid's end bounds every limit
    assert engine_max_batch("tensorrt-llm", 192, 4) == 8192
    assert engine_max_batch("vllm", 80, 8) == 8192 and engine_max_batch("vllm", 24, 2) == 512
    assert engine_max_batch("tensorrt-llm", 192, 32) == BATCH_GRID[-1]
    assert engine_max_batch("sglang", 192) == 2048 and engine_max_batch("sglang", 24, 4) == 8192


def test_attention_dp_ranks_each_hold_the_engine_batch() -> None:
    """A DeepSeek-V3 decode worker of 32 GB200 at TP 1 × DP 32 (aiconfigurator's wide-EP
    layout, measured holding 8,192 users) holds up to 32 × 2,048 sequences as TensorRT-LLM
    schedules them, not one rank's 2,048 (then memory decides); at DP 1 × TP 32, one
    scheduler, the engine's 2,048; and the ITL curve is predicted up to the larger limit."""
    predictor = Predictor.load()
    base = {
        "model": "deepseek-ai/DeepSeek-V3",
        "gpu": "GB200",
        "gpu_count": 32.0,
        "engine": "tensorrt-llm",
        "precision": "fp8",
        "input_tokens": 1024.0,
        "output_tokens": 1024.0,
        "pipeline_parallel": 1.0,
    }
    rows = pl.DataFrame(
        [
            {**base, "data_parallel": 32.0, "expert_parallel": 32.0},
            {**base, "data_parallel": 1.0, "expert_parallel": 32.0},
        ]
    )
    t = serving_table(rows, predictor)
    wide, one = t.curves.memory_batch, t.curves.max_batch
    limit = one if wide is None else wide
    assert limit[0] > 8192 and t.curves.max_batch[1] <= 2048
    assert np.isfinite(t.curves.itl_s[0]).all() and (np.diff(t.curves.itl_s[0]) >= 0).all()


def test_tensorrt_gets_more_kv_than_vllm_and_nvlink_beats_pcie() -> None:
    predictor = Predictor.load()
    base = {
        "model": "meta-llama/Llama-3.1-70B-Instruct",
        "gpu_count": 4.0,
        "precision": "bf16",
        "input_tokens": 1024.0,
        "output_tokens": 256.0,
    }
    rows = pl.DataFrame(
        [
            {**base, "gpu": "H100-SXM5-80GB", "engine": "vllm"},
            {**base, "gpu": "H100-SXM5-80GB", "engine": "tensorrt-llm"},
            {**base, "gpu": "H100-PCIE-80GB", "engine": "vllm"},
        ]
    )
    t = serving_table(rows, predictor)
    assert t.kv_budget_gb[1] > t.kv_budget_gb[0] > 0
    # comm time per token scales with 1 / interconnect: 900 GB/s NVLink vs 128 GB/s PCIe Gen5
    comm = t.curves.comm_s_per_token
    assert comm[2] / comm[0] == pytest.approx(900.0 / 128.0, rel=1e-9)


def test_predict_at_load_batch_contract() -> None:
    predictor = Predictor.load()
    rows = pl.DataFrame(
        {
            "model": ["meta-llama/Llama-3.1-8B-Instruct"] * 5,
            "gpu": ["H100-SXM5-80GB", "A30", "L4", "H100-SXM5-80GB", "A30"],
            "requests_per_s": ["0.33", "0.33", "", "-1", "900"],
        }
    )
    out = predict_rows(predictor, rows)
    assert out.columns[-len(OUTPUT_COLUMNS) :] == list(OUTPUT_COLUMNS)
    assert out.columns[-10:-7] == ["concurrency", "ttft_s_at_load", "itl_s_p90"]
    errors = out["error"].to_list()
    assert errors[:3] == ["", "", ""]
    assert errors[3].startswith("requests_per_s: must be a positive number")
    assert errors[4].startswith("requests_per_s: 900 is more than one replica carries")
    assert out["concurrency"][2] is None and out["concurrency"][0] > 0
    # at load: throughput = rate × output tokens; p90 ITL >= mean ITL
    assert out["output_throughput_tok_s"][0] == pytest.approx(0.33 * 256)
    assert out["itl_s_p90"][1] >= out["itl_s"][1]
    assert out["power_w_per_gpu_lo"][0] <= out["power_w_per_gpu"][0] <= out["power_w_per_gpu_hi"][0]


@pytest.mark.parametrize("p", [0.5, 0.9, 0.99])
def test_quantile_fits_agrees_with_the_quantile(p: float) -> None:
    means = np.concatenate((np.linspace(0.001, 30, 400), np.linspace(30, 3000, 200)))
    limits = np.asarray([0, 1, 3, 10, 40, 79, 80, 81, 200, 2048], dtype=np.float64)
    q = poisson.poisson_quantile(means, p)
    for lim in limits:
        got = poisson.quantile_fits(means, np.full(means.size, lim), p)
        assert (got == (q <= lim)).all(), lim


def _peaked(max_batch: float) -> ServingCurves:
    """An ITL that grows with the square of the batch past 64: λ(b) = b / (O · ITL(b)) peaks
    at 64 sequences, far below the batch limit *max_batch* of memory and engine."""
    b = np.asarray(BATCH_GRID, dtype=np.float64)
    c = _flat(itl=0.01, power=300.0, idle=60.0)
    itl = 0.01 * (1.0 + (b / 64.0) ** 2)
    return curves.rising_throughput(
        ServingCurves(**{**c.__dict__, "itl_s": itl[None, :], "max_batch": np.asarray([max_batch])})
    )


def test_a_capacity_at_the_throughput_peak_is_not_said_to_be_memory() -> None:
    """Fuzz round 24: the batch limit lowered to the throughput peak (more sequences in flight
    would serve fewer requests) was labelled 'memory' though the KV cache held 4x more; the
    memory limit below the peak is still 'memory'."""
    inf = np.asarray([np.inf])
    peak = operating.capacity(_peaked(2048.0), inf, inf, None)
    assert peak.limit == ["throughput"] and peak.decoding_at_capacity[0] <= 64.0 + 1e-9
    memory = operating.capacity(_peaked(32.0), inf, inf, None)
    assert memory.limit == ["memory"]
    assert memory.max_requests_per_s[0] < peak.max_requests_per_s[0]
