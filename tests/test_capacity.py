"""The capacity model: candidate order, exclusion reasons, and the curve each candidate carries.

:func:`evaluate_candidates` must keep the specs' order when some are excluded by scenario rules;
every feasible candidate's power curve starts at idle, rises with load and ends at its capacity,
where the ITL at the SLA percentile meets the SLA.
"""

from __future__ import annotations

import pytest

from planner.capacity import CandidateSpec, evaluate_candidates
from planner.inputs import Exclusion
from predictors.api import Predictor

LLAMA8B = "meta-llama/Llama-3.1-8B-Instruct"
LLAMA70B = "meta-llama/Llama-3.1-70B-Instruct"


def _spec(
    name: str,
    gpu: str,
    excluded: str = "",
    *,
    model: str = LLAMA8B,
    tp: int = 1,
    itl_sla_s: float = 0.05,
    ttft_sla_s: float | None = None,
    percentile: float | None = None,
    price: float | None = 2.0,
) -> CandidateSpec:
    return CandidateSpec(
        name=name,
        model=model,
        gpu=gpu,
        tp=tp,
        engine="vllm",
        precision="bf16",
        input_tokens=512.0,
        output_tokens=256.0,
        itl_sla_s=itl_sla_s,
        ttft_sla_s=ttft_sla_s,
        usd_per_hour_per_gpu=price,
        excluded_reason=excluded,
        percentile=percentile,
    )


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.load()


def test_excluded_specs_keep_their_place_and_reason(predictor: Predictor) -> None:
    specs = [
        _spec("a", "H100-SXM5-80GB", excluded="in a.forbidden_gpus"),
        _spec("b", "H100-SXM5-80GB"),
        _spec("c", "A100-SXM4-80GB", excluded="not in c.allowed_gpus"),
        _spec("d", "A100-SXM4-80GB"),
    ]
    got = evaluate_candidates(specs, predictor)
    assert [(c.name, c.gpu) for c in got] == [(s.name, s.gpu) for s in specs]
    assert [c.reason for c in (got[0], got[2])] == ["in a.forbidden_gpus", "not in c.allowed_gpus"]
    assert not got[0].feasible and not got[2].feasible
    assert got[0].usd_per_hour_per_replica == 2.0
    alone = evaluate_candidates([specs[1], specs[3]], predictor)
    assert [got[1], got[3]] == alone
    assert all(c.feasible for c in alone)
    assert evaluate_candidates([specs[0]], predictor) == [got[0]]


def test_exclusion_reasons(predictor: Predictor) -> None:
    got = evaluate_candidates(
        [
            _spec("w", "L4", model=LLAMA70B),
            _spec("i", "L4", itl_sla_s=0.001),
            _spec("t", "L4", itl_sla_s=1.0, ttft_sla_s=0.001),
            _spec("p", "L4", itl_sla_s=1.0, price=None),
        ],
        predictor,
    )
    assert got[0].reason.startswith("needs ") and "GB for weights" in got[0].reason
    assert got[1].reason.startswith("ITL ") and "even at the lightest load" in got[1].reason
    assert got[2].reason.startswith("TTFT ") and "> SLA 1 ms" in got[2].reason
    assert got[3].reason.startswith("no $/hour for L4")
    assert not any(c.feasible for c in got)
    assert [c.exclusion for c in got] == [
        Exclusion.MEMORY,
        Exclusion.ITL_SLA,
        Exclusion.TTFT_SLA,
        Exclusion.NO_PRICE,
    ]
    assert got[0].memory_needed_gb is not None and got[0].memory_usable_gb is not None
    assert got[0].memory_needed_gb > got[0].memory_usable_gb


@pytest.mark.parametrize("percentile", [None, 90.0])
def test_curves_rise_from_idle_to_capacity_within_the_sla(
    predictor: Predictor, percentile: float | None
) -> None:
    gpus = ["H100-SXM5-80GB", "A100-SXM4-80GB", "L40S", "A30", "L4", "H200-SXM-141GB"]
    specs = [
        _spec(f"{g}-{tp}", g, tp=tp, itl_sla_s=0.08, percentile=percentile)
        for g in gpus
        for tp in (1, 2)
    ]
    got = [c for c in evaluate_candidates(specs, predictor) if c.feasible]
    assert len(got) >= 8
    for c in got:
        xs, ps = c.curve
        assert xs[0] == 0.0 and ps[0] == pytest.approx(c.idle_power_w_per_replica)
        assert xs[-1] == pytest.approx(c.max_requests_per_s_per_replica)
        assert all(b >= a for a, b in zip(ps, ps[1:], strict=False))
        assert c.itl_s_at_capacity <= 0.08 + 1e-9
        assert c.power_w_per_gpu_at_capacity == pytest.approx(ps[-1] / c.tp)
        # the linear under-estimator used by bounds never exceeds the curve
        for x, p in zip(xs, ps, strict=True):
            assert c.idle_power_w_per_replica + c.energy_j_per_request * x <= p + 1e-6
        assert c.itl_s_at(0.0) <= c.itl_s_at(xs[-1]) + 1e-12
    tail = {c.gpu: c for c in evaluate_candidates(specs, predictor) if c.feasible and c.tp == 1}
    if percentile is not None and "H100-SXM5-80GB" in tail:
        mean = evaluate_candidates([_spec("m", "H100-SXM5-80GB", itl_sla_s=0.08)], predictor)[0]
        assert tail["H100-SXM5-80GB"].max_requests_per_s_per_replica <= (
            mean.max_requests_per_s_per_replica + 1e-9
        )
