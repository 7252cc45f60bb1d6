"""Column generation decides small capped instances without listing every vector up front;
a scenario with limits plans on every evaluated layout.

When the generated columns combine into no plan, the enumeration above the Lagrangian bound and
the greedy plans found nothing, :mod:`planner.solve.fallback` enumerates further, ten times
wider each step, until every replica vector of every block is in the master (no plan exists)
or a plan is found; when that gives up, every covering vector goes into the master (step 4).
Before, such an instance (the fuzzer's capped 3-entry scenario, round 13) ended with neither a
plan nor a proof. Checked here against the exhaustive master (every
column, :func:`planner.solve.columns.all_columns`) on instances small enough for it: the same
verdict and the same optimum.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from planner.result import PlanStatus
from planner.solve import colgen, enumeration, fallback
from planner.solve.columns import Decomposition, all_columns
from planner.solve.decomposed import DecomposedSolution
from planner.solve.optimize import prune_dominated
from planner.solve.residual import residual_plans
from planner.solve.synthetic import random_inputs
from tests.test_fuzz_round13_monotone import CAPPED


def _capped(seed: int, room: float) -> Decomposition | None:
    """3 entries × 4 GPU types × 4 periods, the power cap *room* times the peak of the greedy
    plan without it; None when the instance links nothing."""
    inputs = random_inputs(3, 4, 4, seed=seed)
    free = Decomposition(inputs, prune_dominated(inputs, inputs.feasible_candidates()))
    zero = (np.zeros(len(free.gpus)), np.zeros(free.power_rows), 0.0)
    plans = residual_plans(free, zero, [], math.inf)
    if not plans:
        return None
    peak_kw = float(np.sum([c.power_kw for c in plans[0]], axis=0).max())
    capped = dataclasses.replace(inputs, power_cap_kw=room * peak_kw, time_limit_s=30)
    dec = Decomposition(capped, prune_dominated(capped, capped.feasible_candidates()))
    return dec if dec.linked else None


def _solve(dec: Decomposition) -> DecomposedSolution | None:
    cands = [c for b in dec.blocks for c in b.candidates]
    return colgen.solve_by_model(dec.inputs, cands, dec=dec, widen=True)


@pytest.mark.parametrize("step", ["wider", "every vector"])
@pytest.mark.slow  # about 1 s: the default run stays under 2 minutes
def test_the_fallback_decides_like_the_exhaustive_master(
    step: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Step 3 (the wider enumeration) and, with it giving up at once, step 4 (every covering
    vector in the master) reach the exhaustive master's verdict and optimum."""
    widened = {"n": 0, "every": 0}
    real_steps = enumeration.wider_steps
    real_every = fallback.all_columns

    def counted() -> Iterator[float]:
        widened["n"] += 1
        if step == "wider":
            yield from real_steps()

    def every(*args: object, **kwargs: object) -> object:
        widened["every"] += 1
        return real_every(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fallback, "wider_steps", counted)
    monkeypatch.setattr(fallback, "all_columns", every)
    verdicts = {"infeasible": 0, "optimal": 0}
    for seed in range(6):
        for room in (0.5, 0.9):
            dec = _capped(seed, room)
            if dec is None:
                continue
            assert all_columns(dec) is not None  # small enough for the exhaustive master
            exhaustive = _solve(dec)
            with monkeypatch.context() as m:
                m.setattr(colgen, "all_columns", lambda dec: None)  # as for a larger instance
                again = _solve(_capped(seed, room))  # type: ignore[arg-type]
            assert exhaustive is not None and again is not None, (seed, room)
            assert again.status == exhaustive.status, (seed, room)
            if exhaustive.status == PlanStatus.INFEASIBLE:
                verdicts["infeasible"] += 1
                continue
            verdicts["optimal"] += 1
            assert again.objective == pytest.approx(exhaustive.objective, rel=2e-4)
            assert again.bound <= exhaustive.objective * (1 + 1e-9)
    assert verdicts["infeasible"] >= 3 and verdicts["optimal"] >= 1, verdicts
    assert widened["n"] >= 1  # some verdict needed the fallback's steps
    if step == "every vector":
        assert widened["every"] >= 1


def test_the_ceiling_bounds_every_vectors_reduced_cost() -> None:
    """:func:`planner.solve.enumeration.rc_ceiling` is above the reduced cost of every vector
    (the proof of infeasibility rests on it)."""
    from planner.solve.decompose import load_watts

    checked = 0
    for seed in range(4):
        dec = _capped(seed, 0.7)
        if dec is None:
            continue
        y_gpu = np.full(len(dec.gpus), 3.0)
        y_power = np.linspace(0.5, 2.0, dec.power_rows)
        for b, block in enumerate(dec.blocks):
            price_n, price_t = dec.prices(b, y_gpu, y_power, 0.1)
            ceiling = enumeration.rc_ceiling(dec, b, price_n, price_t)
            for col in all_columns(dec) or []:
                if col.block != b:
                    continue
                rc = float(col.n @ price_n + price_t @ load_watts(block, col.n))
                assert rc <= ceiling * (1 + 1e-12), (seed, b, rc, ceiling)
                checked += 1
    assert checked >= 50, checked


@pytest.mark.slow
@pytest.mark.parametrize("objective", ["energy", "cost"])
def test_a_limit_gets_every_evaluated_layout(objective: str, tmp_path: Path) -> None:
    """Fuzz round 13's capped scenario with 8 L4: the energy objective planned it, the cost
    objective said no plan exists, because the ladder kept only the layouts that lower the
    objective at the peak (gpt-oss-120b on 4 A100 lowers power, not cost) and the power cap
    and inventory need it. With limits every evaluated layout is kept."""
    from planner.pipeline import plan_file

    path = tmp_path / "capped.yaml"
    path.write_text(CAPPED, encoding="utf-8")
    overrides = [f"objective.minimize={objective}", "gpus.L4.available=8", "time_limit_s=60"]
    run = plan_file(path, overrides, baselines=False)
    assert run.plan.status in (PlanStatus.OPTIMAL, PlanStatus.FEASIBLE), run.plan.solve.messages
    assert run.plan.totals is not None
    assert run.plan.totals.peak_facility_power_kw <= 8.7 * (1 + 1e-9)
    layouts = {(c.name, c.gpu, c.tp) for c in run.inputs.candidates}
    assert ("oss", "A100-SXM4-80GB", 4) in layouts


@pytest.mark.slow  # 1.3-2 s: the default run stays under 2 minutes
def test_the_relaxations_proof_never_fires_on_a_feasible_instance() -> None:
    """:func:`planner.solve.colgen.relaxation_infeasible` (elastic rows at a penalty far above
    any plan's objective) says no plan exists only where the exhaustive master agrees, and
    proves some of them."""
    proved = feasible = 0
    for seed in range(8):
        for room in (0.3, 0.5, 0.7, 0.9, 1.1):
            dec = _capped(seed, room)
            if dec is None or all_columns(dec) is None:
                continue
            verdict = _solve(dec)
            assert verdict is not None
            says = colgen.relaxation_infeasible(_capped(seed, room), 0.0)  # type: ignore[arg-type]
            if verdict.status != PlanStatus.INFEASIBLE:
                feasible += 1
                assert not says, (seed, room)
            proved += says
    assert feasible >= 3 and proved >= 3, (feasible, proved)
