"""The capacity stage by hand: :func:`planner.capacity.evaluate_candidates` on a stub predictor.

The stub predicts a flat ITL of 20 ms and a flat 200 W above idle at every batch, so every
number of the candidate follows from the serving model's formulas (docs/method.md §3) with
pencil and paper:

* prompt compute per request ``c_p = 2·A·I / (F·PREFILL_MFU)`` (TP 1: no all-reduce);
* step time with chunked prefill ``τ(b) = 20 ms + b·c_p/O``;
* the SLA ``τ(b*) = SLA`` gives ``b* = (SLA − 20 ms)·O/c_p``;
* Little's law: capacity ``λ* = b*/(O·τ(b*)) = b*/(O·SLA)`` (headroom 1);
* mean power at capacity ``E[P(K)] = idle + 200·(1 − e^(−n*))`` with ``n* ≥ b*`` requests in the
  system, so 200 W above idle to within e^(−b*);
* the power curve lies between ``idle + 200·(1 − e^(−λ·O·20 ms))`` and ``idle + 200`` at every
  knot (the busy share of a replica), starting at idle at zero load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl
import pytest

from planner.capacity import CAPACITY_HEADROOM, CandidateSpec, evaluate_candidates
from predictors import physics
from predictors.catalog.store import Catalog, load_catalog

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
GPU = "H100-SXM5-80GB"
ITL_S = 0.020
ABOVE_IDLE_W = 200.0
INPUT_TOKENS, OUTPUT_TOKENS = 512.0, 256.0


@dataclass
class FlatPredictor:
    """Stands in for :class:`predictors.api.Predictor`: same call, constant predictions."""

    catalog: Catalog

    def predict(
        self,
        rows: pl.DataFrame,
        *,
        with_ttft: bool = False,
        with_fit: bool = False,
        beyond_memory: bool = False,
    ) -> pl.DataFrame:
        idle = pl.Series(
            [float(self.catalog.gpu(g)["idle_power_w"]) for g in rows["gpu"]], dtype=pl.Float64
        )
        n = rows.height
        out = rows.with_columns(
            pl.lit(ITL_S).alias("itl_s"),
            pl.lit(ITL_S * 0.9).alias("itl_s_lo"),
            pl.lit(ITL_S * 1.2).alias("itl_s_hi"),
            (idle + ABOVE_IDLE_W).alias("power_w_per_gpu"),
            (idle + 0.8 * ABOVE_IDLE_W).alias("power_w_per_gpu_lo"),
            (idle + 1.2 * ABOVE_IDLE_W).alias("power_w_per_gpu_hi"),
            (pl.col("batch_size").cast(pl.Float64) / ITL_S).alias("output_throughput_tok_s"),
            pl.Series("in_domain", [True] * n),
            pl.Series("error", [""] * n),
            pl.Series("fits_in_memory", [True] * n),
        )
        return out


def _spec(itl_sla_s: float) -> CandidateSpec:
    return CandidateSpec(
        name="chat",
        model=MODEL,
        gpu=GPU,
        tp=1,
        engine="vllm",
        precision="bf16",
        input_tokens=INPUT_TOKENS,
        output_tokens=OUTPUT_TOKENS,
        itl_sla_s=itl_sla_s,
        ttft_sla_s=None,
        usd_per_hour_per_gpu=2.0,
    )


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _prompt_compute_s(catalog: Catalog) -> float:
    llm, gpu = catalog.llm(MODEL), catalog.gpu(GPU)
    flops = 2.0 * float(llm["active_params_b"]) * 1e9 * INPUT_TOKENS
    return flops / (float(gpu["fp16_tflops_dense"]) * 1e12 * physics.PREFILL_MFU)


@pytest.mark.parametrize("itl_sla_s", [0.025, 0.030])
def test_capacity_and_power_by_hand(catalog: Catalog, itl_sla_s: float) -> None:
    (cand,) = evaluate_candidates([_spec(itl_sla_s)], FlatPredictor(catalog))  # type: ignore[arg-type]
    assert cand.feasible, cand.reason
    c_p = _prompt_compute_s(catalog)
    b_star = (itl_sla_s - ITL_S) * OUTPUT_TOKENS / c_p
    lam_star = b_star / (OUTPUT_TOKENS * itl_sla_s) * CAPACITY_HEADROOM
    assert cand.max_requests_per_s_per_replica == pytest.approx(lam_star, rel=2e-3)
    assert cand.batch_size == round(b_star)
    assert cand.itl_s_at_capacity == pytest.approx(itl_sla_s, rel=2e-3)
    idle = float(catalog.gpu(GPU)["idle_power_w"])
    assert cand.idle_power_w_per_replica == pytest.approx(idle)
    assert cand.power_w_per_gpu_at_capacity == pytest.approx(
        idle + ABOVE_IDLE_W * (1 - math.exp(-b_star)), rel=1e-9
    )
    # the curve: idle at zero load, then between the busy-share bound and the full draw
    xs, ps = cand.load_curve_requests_per_s, cand.power_curve_w_per_replica
    assert xs[0] == 0.0 and ps[0] == pytest.approx(idle)
    assert list(xs) == sorted(xs) and list(ps) == sorted(ps)
    for x, p in zip(xs[1:], ps[1:], strict=True):
        busy = 1 - math.exp(-x * OUTPUT_TOKENS * ITL_S)
        # (the Poisson expectation is summed numerically: agree to 1e-6 W)
        assert idle + ABOVE_IDLE_W * busy - 1e-6 <= p <= idle + ABOVE_IDLE_W + 1e-6
    # energy per request of the optimiser's linear bound: the least slope of the concave
    # curve, which is the chord to the last knot, (P(λ*) − idle)/λ*
    assert cand.energy_j_per_request == pytest.approx((ps[-1] - idle) / xs[-1], rel=1e-9)


def test_an_sla_below_the_flat_itl_is_excluded_with_the_itl(catalog: Catalog) -> None:
    (cand,) = evaluate_candidates([_spec(0.015)], FlatPredictor(catalog))  # type: ignore[arg-type]
    assert not cand.feasible
    # the ITL of the lightest load: 20 ms plus a sliver of chunked prefill
    assert ITL_S <= cand.itl_s_at_capacity <= ITL_S * (1 + 1e-3)
    assert "SLA 15 ms" in cand.reason
