"""Accounting a solver's raw solution into a checked :class:`~planner.result.Plan`.

:func:`plan_from` orders the allocations as the inputs' candidates, totals them, breaks the
objective down (per region with regions), re-prices a linear relaxation's plan on the curves,
and runs :func:`planner.result.check_invariants`; any mismatch with the solver's objective
makes the plan's status ``error``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from planner.inputs import Candidate, PlanningInputs
from planner.result import (
    Plan,
    PlanStatus,
    SolveInfo,
    check_invariants,
    make_allocation,
    make_totals,
)
from planner.solve.coefficients import objective_weights
from planner.solve.explain import loosen_limit
from planner.solve.milp import RawSolution
from planner.solve.regions import regional_breakdown


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """(objective − bound) / |objective|, at least 0; None when either is unknown."""
    if objective is None or bound is None:
        return None
    return max(0.0, objective - bound) / max(abs(objective), 1e-9)


def _positions(inputs: PlanningInputs) -> Callable[[Candidate], int]:
    """Each candidate's position in *inputs* (by identity; by its unique key when a copy)."""
    by_id = {id(c): i for i, c in enumerate(inputs.candidates)}
    by_key: dict[tuple[object, ...], int] = {}

    def position(c: Candidate) -> int:
        if id(c) in by_id and inputs.candidates[by_id[id(c)]] is c:
            return by_id[id(c)]
        if not by_key:
            by_key.update((d.key, i) for i, d in enumerate(inputs.candidates))
        return by_key[c.key]

    return position


def plan_from(
    inputs: PlanningInputs,
    candidates: list[Candidate],
    raw: RawSolution,
    solver: str,
    *,
    relaxed: bool = False,
) -> Plan:
    """Account, order (input candidate order) and check the solution *raw*.

    *relaxed*: *raw* comes from the MILP relaxation of curve candidates (linear under-estimate
    of power): its plan is re-priced on the curves, the relaxation's bound kept.
    """
    position = _positions(inputs)
    used = sorted(
        (
            (position(c), c, n, x)
            for c, n, x in zip(candidates, raw.replicas, raw.loads, strict=True)
            if n > 0
        ),
        key=lambda entry: entry[0],
    )
    allocations = tuple(make_allocation(c, n, x, inputs) for _, c, n, x in used)
    totals = make_totals(allocations, inputs)
    weights = objective_weights(inputs)
    breakdown = {
        "facility_energy_kwh": totals.facility_energy_kwh,
        "gpu_cost_usd": totals.gpu_cost_usd,
        "usd_per_facility_kwh_weight": weights.per_facility_kwh,
        "gpu_rent_weight": weights.per_rent_usd,
        "objective": weights.of(totals.facility_energy_kwh, totals.carbon_kg, totals.gpu_cost_usd),
    }
    if inputs.regions:  # each region's energy and carbon at its own prices (the weights vary)
        breakdown = regional_breakdown(inputs, allocations, totals)
    elif not weights.folded:  # hourly grid profile: carbon (on the hourly factors) weighted apart
        breakdown["carbon_kg"] = totals.carbon_kg
        breakdown["carbon_kg_weight"] = weights.per_carbon_kg
    if relaxed:
        gap = relative_gap(breakdown["objective"], raw.bound)
        # optimal only when the re-priced plan is within the target gap of the relaxation's
        # bound (the relaxation's own "optimal" says nothing of the re-priced plan)
        ok = gap is not None and gap <= inputs.relative_gap
        status = PlanStatus.OPTIMAL if ok else PlanStatus.FEASIBLE
        raw = replace(raw, status=status, objective=breakdown["objective"])
    info = SolveInfo(
        raw.seconds, relative_gap(raw.objective, raw.bound), raw.bound, raw.objective, solver
    )
    plan = Plan(inputs, raw.status, info, allocations, totals, breakdown)
    problems = check_invariants(plan, inputs)
    if raw.objective is not None and abs(breakdown["objective"] - raw.objective) > 1e-5 * max(
        1.0, abs(raw.objective)
    ):
        problems.append(
            f"objective: accounting gives {breakdown['objective']:.6g}, solver {raw.objective:.6g}"
        )
    if problems and relaxed:  # not a failure: no plan found, none proven impossible
        message = (
            f"no plan found within the time limit of {inputs.time_limit_s:g} s, and none proven "
            "impossible: column generation found no combination within the limits and the "
            "linear relaxation's plan breaks them on the power curves"
        )
        if raw.seconds < 0.5 * inputs.time_limit_s:  # it stopped on its own: more time is no help
            message = (
                "no plan found, and none proven impossible: column generation found no "
                "combination within the limits and the linear relaxation's plan breaks them on "
                "the power curves; the search stopped on its own within half the "
                f"{inputs.time_limit_s:g} s time limit, so more time is no help — "
                f"{loosen_limit(inputs)}"
            )
        if raw.bound is not None and math.isfinite(raw.bound):
            message += f"; every plan has an objective of at least {raw.bound:,.6g} (a valid bound)"
        info = SolveInfo(raw.seconds, None, None, None, solver, (message, *problems[:3]))
        return Plan(inputs, PlanStatus.TIME_LIMIT, info)
    if problems:
        info = replace(info, messages=tuple(problems))
        return Plan(inputs, PlanStatus.ERROR, info, allocations, totals, breakdown)
    return plan
