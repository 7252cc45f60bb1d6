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
    """*plan* itself, unless on an instance with a limit that links the entries it found nothing
    (``time_limit``): then the first plan that *solve* finds for another objective within the
    time left since *start* (:func:`time.perf_counter`), priced on the scenario's objective; or
    it is a ``feasible`` plan under a budget that the least-cost plan beats on the scenario's
    objective: then that plan (:func:`cheaper_within_budget`)."""
    if not inputs.linked:
        return plan
    if plan.status == PlanStatus.FEASIBLE:
        return cheaper_within_budget(inputs, plan, start, solve)
    if plan.status != PlanStatus.TIME_LIMIT:
        return plan
    own = inputs.objective.minimize
    for kind in RESCUE_OBJECTIVES:
        left = inputs.time_limit_s - (time.perf_counter() - start)
        if kind == own or left < MIN_SECONDS_LEFT:
            continue
        other = solve(replace(inputs, objective=Objective(kind), time_limit_s=left))
        found = _priced(inputs, other, kind, start, None)
        if found is None:
            continue
        why = (
            f"the search for the least {own} stopped without a plan within the limits; this "
            f"plan is the least-{kind} plan, which meets every limit, priced for {own}: a "
            "feasible plan whose gap to the optimum is unknown"
        )
        info: SolveInfo = replace(found.solve, messages=(why, *found.solve.messages))
        return replace(found, status=PlanStatus.FEASIBLE, solve=info)
    return plan


def cheaper_within_budget(
    inputs: PlanningInputs, plan: Plan, start: float, solve: Callable[[PlanningInputs], Plan]
) -> Plan:
    """*plan* (``feasible``, not proven optimal) or, under a budget and another objective than
    cost, the least-cost plan where it has less of the objective: the least-cost plan keeps
    every budget its cost is within, so a looser budget never returns a plan worse than it
    (fuzz round 23: at 5,950 $ column generation's plan drew 772.9 kWh where the least-cost plan,
    returned at 5,880 $, drew 725.3). Its bound stays *plan*'s, valid for every plan of
    *inputs*."""
    own = inputs.objective.minimize
    left = inputs.time_limit_s - (time.perf_counter() - start)
    objective = plan.solve.objective
    if inputs.budget_usd is None or own == "cost" or objective is None or left < MIN_SECONDS_LEFT:
        return plan
    cheapest = solve(replace(inputs, objective=Objective("cost"), time_limit_s=left))
    found = _priced(inputs, cheapest, "cost", start, plan.solve.bound)
    if found is None or found.solve.objective is None:
        return plan
    if found.solve.objective >= objective * (1 - 1e-9):
        return plan
    why = (
        f"the search for the least {own} within the limits found a plan of {objective:,.6g}; "
        f"the least-cost plan, which keeps every limit, has less {own}: this plan"
    )
    return replace(found, solve=replace(found.solve, messages=(why, *plan.solve.messages)))


def _priced(
    inputs: PlanningInputs, other: Plan, kind: str, start: float, bound: float | None
) -> Plan | None:
    """*other* (a plan of *inputs* solved for *kind*) priced on the scenario's objective, with
    *bound* (a valid lower bound of it, or None); None when *other* has no plan."""
    if not other.has_solution:
        return None
    allocations = other.allocations
    raw = RawSolution(
        PlanStatus.FEASIBLE,
        time.perf_counter() - start,
        None,
        bound,
        [a.replicas for a in allocations],
        [tuple(a.requests_per_s_by_period) for a in allocations],
    )
    solver = f"{other.solve.solver}, solved for {kind} and priced for {inputs.objective.minimize}"
    found = plan_from(inputs, [a.candidate for a in allocations], raw, solver, relaxed=True)
    return found if found.has_solution else None
