"""A plan for a linked instance whose search found none for its objective.

The searches are exact on their model but not complete within their budgets: under a tight power
cap, budget or inventory the energy search can stop (on its own, or at the time limit) without a
combination that meets every limit while another objective's search finds one (fuzz round 23:
Llama-3.1-8B and Llama-3.2-1B on H100, A100 and L40S at a 7.72 kW cap ended ``time_limit`` for
energy, carbon and weighted, while the least-cost plan, 7.71 kW, meets every limit). Every
objective shares the constraints, so a plan found for another objective is a plan of this one:
:func:`rescued` re-solves for the other plain objectives in turn, in the time left, and prices
the first plan found on the scenario's own objective. The plan is ``feasible`` (never claimed
optimal: its gap is unknown), and its messages say how it was found.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from planner.inputs import Objective, ObjectiveKind, PlanningInputs
from planner.result import Plan, PlanStatus, SolveInfo
from planner.solve.accounting import plan_from
from planner.solve.milp import RawSolution

#: The objectives tried, in order (the scenario's own is skipped).
RESCUE_OBJECTIVES: tuple[ObjectiveKind, ...] = ("cost", "energy", "carbon")
#: Least time left (s) worth a re-solve.
MIN_SECONDS_LEFT = 1.0


def rescued(
    inputs: PlanningInputs,
    plan: Plan,
    start: float,
    solve: Callable[[PlanningInputs], Plan],
) -> Plan:
    """*plan* itself unless it found nothing (``time_limit``) on an instance with a limit that
    links the entries; else the first plan that *solve* finds for another objective within the
    time left since *start* (:func:`time.perf_counter`), priced on the scenario's objective."""
    linked = (
        inputs.has_power_cap
        or inputs.budget_usd is not None
        or any(v is not None for v in inputs.stock.values())
    )
    if plan.status != PlanStatus.TIME_LIMIT or not linked:
        return plan
    own = inputs.objective.minimize
    for kind in RESCUE_OBJECTIVES:
        left = inputs.time_limit_s - (time.perf_counter() - start)
        if kind == own or left < MIN_SECONDS_LEFT:
            continue
        other = solve(replace(inputs, objective=Objective(kind), time_limit_s=left))
        if not other.has_solution:
            continue
        allocations = other.allocations
        raw = RawSolution(
            PlanStatus.FEASIBLE,
            time.perf_counter() - start,
            None,
            None,
            [a.replicas for a in allocations],
            [tuple(a.requests_per_s_by_period) for a in allocations],
        )
        solver = f"{other.solve.solver}, solved for {kind} and priced for {own}"
        found = plan_from(inputs, [a.candidate for a in allocations], raw, solver, relaxed=True)
        if not found.has_solution:
            continue
        why = (
            f"the search for the least {own} stopped without a plan within the limits; this "
            f"plan is the least-{kind} plan, which meets every limit, priced for {own}: a "
            "feasible plan whose gap to the optimum is unknown"
        )
        info: SolveInfo = replace(found.solve, messages=(why, *found.solve.messages))
        return replace(found, status=PlanStatus.FEASIBLE, solve=info)
    return plan
