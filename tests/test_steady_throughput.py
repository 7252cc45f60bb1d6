"""A replica's decode throughput ``b / τ(b)`` never falls as its batch grows
(:func:`predictors.serving.curves.steady_throughput`, docs/method.md §3).

The step reads the weights once for the whole batch while its KV reads and FLOPs grow with b,
so the per-sequence time ``ITL(b) / b`` does not rise; the trees' steps could make it rise
(a throughput dip), and the serving model then stopped at the first dip. Checked by hand on
the isotonic fit (against a plain pool-adjacent-violators loop) and over the whole GPU catalog
with the shipped predictors, for the mean, lower and upper curves.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.serving import operating
from predictors.serving.curves import (
    BATCH_GRID,
    ServingCurves,
    isotonic_falling,
    rate_per_s,
    rising_throughput,
    steady_throughput,
)
from predictors.serving.grid import serving_table


def _pooled(y: list[float], w: list[float]) -> list[float]:
    """Non-increasing least-squares fit by pooling adjacent violators, one block at a time."""
    blocks: list[tuple[float, float, int]] = []
    for value, weight in zip(y, w, strict=True):
        blocks.append((value, weight, 1))
        while len(blocks) > 1 and blocks[-2][0] < blocks[-1][0]:
            (v1, w1, n1), (v2, w2, n2) = blocks.pop(), blocks.pop()
            blocks.append(((v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, n1 + n2))
    return [v for v, _, n in blocks for _ in range(n)]


def test_the_isotonic_fit_is_pool_adjacent_violators() -> None:
    rng = np.random.default_rng(7)
    y = rng.normal(size=(300, len(BATCH_GRID)))
    w = rng.uniform(0.05, 3.0, size=y.shape)
    fitted = isotonic_falling(y, w)
    for i in range(y.shape[0]):
        np.testing.assert_allclose(fitted[i], _pooled(y[i].tolist(), w[i].tolist()), atol=1e-12)
    assert (np.diff(fitted, axis=1) <= 1e-12).all()


def _curves(itl_ms: list[float], max_batch: float) -> ServingCurves:
    itl = np.asarray([itl_ms]) * 1e-3
    return ServingCurves(
        batch=np.asarray(BATCH_GRID, dtype=np.float64),
        itl_s=steady_throughput(itl, np.ones_like(itl, dtype=bool)),
        power_w=np.full_like(itl, 300.0),
        idle_w=np.asarray([100.0]),
        prefill_s=np.asarray([0.01]),
        ttft_base_s=np.asarray([0.05]),
        comm_s_per_token=np.zeros(1),
        output_tokens=np.asarray([256.0]),
        max_batch=np.asarray([max_batch]),
    )


def test_a_dip_is_pooled_and_the_capacity_reaches_past_it() -> None:
    """ITL that more than doubles from 128 to 256 (throughput 4,267 -> 3,657 tokens/s) and
    recovers at 512: the pooled curve keeps ITL non-decreasing, its throughput non-decreasing,
    the points before the dip as they were, and the capacity is no longer cut at batch 128."""
    raw = [10, 10.5, 11, 12, 14, 18, 30, 70, 100, 200, 420, 860, 1750, 3550, 7200, 14600]
    c = _curves(raw, 1000.0)
    itl = c.itl_s[0] * 1e3
    np.testing.assert_allclose(itl[:6], raw[:6])
    assert (np.diff(itl) >= 0).all()
    rate = np.asarray(BATCH_GRID) / itl
    assert (np.diff(rate) >= -1e-9 * rate[1:]).all()
    assert itl[6] > raw[6] and itl[7] < raw[7]  # 128 and 256 pooled: one time per sequence
    b = np.linspace(1.0, 1000.0, 4000)[None, :]
    lam = rate_per_s(c, b)[0]
    assert (np.diff(lam) >= -1e-9 * lam[1:]).all()
    capped = rising_throughput(c)
    assert capped.max_batch[0] == 1000.0  # no throughput peak any more: memory limits
    inf = np.asarray([np.inf])
    cap = operating.capacity(capped, inf, inf, None)
    assert cap.limit == ["memory"] and cap.decoding_at_capacity[0] > 500.0


MODELS = (
    ("meta-llama/Llama-3.1-8B-Instruct", 1),
    ("meta-llama/Llama-3.1-70B-Instruct", 4),
    ("Qwen/Qwen3-30B-A3B", 2),
)
WORKLOADS = ((1024.0, 256.0), (8192.0, 1024.0))


@pytest.fixture(scope="module")
def catalog_curves(predictor: Predictor) -> list[ServingCurves]:
    gpus = predictor.catalog.gpus["id"].to_list()
    rows = pl.DataFrame(
        [
            {
                "model": m,
                "gpu": g,
                "gpu_count": float(tp),
                "engine": "vllm",
                "precision": "bf16",
                "input_tokens": i,
                "output_tokens": o,
            }
            for m, tp in MODELS
            for g in gpus
            for i, o in WORKLOADS
        ]
    )
    table = serving_table(rows, predictor)
    return [table.curves, table.curves_lo, table.curves_hi]


def test_throughput_never_falls_with_the_batch_over_the_catalog(
    catalog_curves: list[ServingCurves],
) -> None:
    b = np.geomspace(0.01, 2048.0, 400)
    for c in catalog_curves:
        live = np.flatnonzero(c.max_batch >= 1)
        assert live.size > 100
        lam = rate_per_s(c, np.broadcast_to(b, (c.rows, b.size)))[live]
        falls = np.diff(lam, axis=1) < -1e-9 * lam[:, 1:]
        assert not falls.any(), f"{falls.any(axis=1).sum()} rows' throughput falls"
        assert (np.diff(c.itl_s[live], axis=1) >= 0).all()
        # no capacity is cut at a throughput peak: every limit is the KV cache or the engine
        assert c.memory_batch is not None
        np.testing.assert_array_equal(c.max_batch[live], c.memory_batch[live])


def test_the_capacity_rate_fed_back_meets_the_sla_over_the_catalog(
    catalog_curves: list[ServingCurves],
) -> None:
    """Fuzz round 27: on a saturated stretch λ(b) is flat, and the capacity's rate fed back to
    :func:`operating.at_rate` landed anywhere along it (Qwen3-0.6B on H100 NVL, 4,096 / 64
    tokens: capacity at a 20 ms ITL SLA, then 98.7 ms at that rate). The rate now maps to the
    stretch's start, and the capacity's own operating point is that start too."""
    c = catalog_curves[0]
    inf = np.full(c.rows, np.inf)
    checked = 0
    for sla_s in (0.02, 0.04, 0.08):
        sla = np.full(c.rows, sla_s)
        for pct in (None, 90.0):
            cap = operating.capacity(c, sla, inf, pct)
            live = cap.max_requests_per_s > 0
            op = operating.at_rate(c, cap.max_requests_per_s)
            itl = op.itl_s if pct is None else op.itl_s_p90
            assert (itl[live] <= sla_s * (1 + 1e-6)).all(), np.flatnonzero(live & (itl > sla_s))
            np.testing.assert_allclose(
                op.decoding[live], cap.decoding_at_capacity[live], rtol=1e-6, atol=1e-6
            )
            checked += int(live.sum())
    assert checked > 500


def test_a_rate_on_a_saturated_stretch_maps_to_its_start() -> None:
    """ITL proportional to the batch from 32 on (a throughput of 32 / 40 ms per step, flat):
    the flat rate is carried by 32 sequences, and capacity under a loose SLA stops there."""
    raw = [4, 5, 6, 8, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240, 20480]
    c = _curves(raw, 600.0)
    c = ServingCurves(**{**c.__dict__, "prefill_s": np.zeros(1)})
    flat = 64.0 / (256.0 * 0.020)  # λ at 64 = λ at 32 = ... (requests/s)
    op = operating.at_rate(c, np.asarray([flat]))
    assert op.decoding[0] == pytest.approx(32.0, rel=1e-6)
    cap = operating.capacity(c, np.asarray([0.5]), np.asarray([np.inf]), None)
    assert cap.max_requests_per_s[0] == pytest.approx(flat, rel=1e-9)
    assert cap.decoding_at_capacity[0] == pytest.approx(32.0, rel=1e-6)
