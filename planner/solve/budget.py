"""No plan found under a budget: the least-cost plan settles it.

The least cost of any plan within the other limits (the scenario solved with the cost objective
and no budget; its bound is valid) either proves the budget infeasible — every plan costs more
— or gives a plan that keeps it: the least-cost plan is then a plan of the scenario itself (its
inventory, power cap and SLAs are the same), reported ``feasible`` under the scenario's own
objective. Before, column generation that found no combination within a budget ended
``time_limit`` ("no plan found") although the least-cost plan kept the budget.

The scenario's own objective without the budget bounds the budgeted plans from below (dropping a
limit only widens the choice): its plan is the answer when it keeps the budget (optimal when it
is), and otherwise its bound gives the least-cost plan its gap.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from planner.inputs import Objective, PlanningInputs
from planner.result import Plan, PlanStatus, SolveInfo, over_limit
from planner.solve.accounting import plan_from, relative_gap
from planner.solve.advice import usd_up
from planner.solve.milp import RawSolution


def budget_outcome(
    inputs: PlanningInputs, start: float, solve: Callable[[PlanningInputs], Plan]
) -> Plan | None:
    """The least cost of any plan within the other limits (*solve*: the planner, without
    baselines). Above the budget, a proof of infeasibility with the smallest budget that
    restores a plan; within it, the least-cost plan as a plan of *inputs* (module doc); None
    when it settles nothing."""
    assert inputs.budget_usd is not None
    left = max(1.0, inputs.time_limit_s - (time.perf_counter() - start))
    cheapest = solve(
        replace(inputs, objective=Objective("cost"), budget_usd=None, time_limit_s=left)
    )
    seconds = time.perf_counter() - start
    if cheapest.status == PlanStatus.INFEASIBLE:  # the plan of these inputs, budget and all
        return Plan(inputs, PlanStatus.INFEASIBLE, replace(cheapest.solve, seconds=seconds))
    bound = cheapest.solve.bound
    totals = cheapest.totals
    if totals is None or not cheapest.has_solution:
        return None
    if not over_limit(totals.cost_usd, inputs.budget_usd):
        return _within_budget(inputs, cheapest, start, solve)
    if bound is None or not over_limit(bound, inputs.budget_usd):
        return None
    message = (
        f"budget: every plan within the other limits costs at least {usd(bound)} $, above the "
        f"budget of {usd(inputs.budget_usd)} $ (a valid lower bound, proven by the solver); "
        f"the cheapest plan found costs {usd_up(totals.cost_usd)} $ (raise budget_usd to at least "
        "that)"
    )
    info = SolveInfo(seconds, None, None, None, cheapest.solve.solver, (message,))
    return Plan(inputs, PlanStatus.INFEASIBLE, info)


def _within_budget(
    inputs: PlanningInputs, cheapest: Plan, start: float, solve: Callable[[PlanningInputs], Plan]
) -> Plan:
    """The plan of *inputs* when the least-cost plan *cheapest* keeps the budget: the plan of
    the scenario's objective without the budget where it keeps the budget too, else *cheapest*
    accounted under the objective with that plan's bound (module doc)."""
    budget = inputs.budget_usd
    assert budget is not None
    left = max(1.0, inputs.time_limit_s - (time.perf_counter() - start))
    free = solve(replace(inputs, budget_usd=None, time_limit_s=left))
    keeps = (
        free.has_solution
        and free.totals is not None
        and not over_limit(free.totals.cost_usd, budget)
    )
    bound = free.solve.bound if free.status != PlanStatus.INFEASIBLE else None
    chosen = free if keeps else cheapest
    if keeps:
        solver = f"{free.solve.solver}; the plan without the budget, which keeps it"
        note = "the plan of this objective without the budget keeps the budget"
        status, objective = free.status, free.solve.objective
    else:
        solver = f"{cheapest.solve.solver}; the least-cost plan, within the budget"
        note = (
            f"no plan of lower {inputs.objective.minimize} was found within the budget; this is "
            f"the least-cost plan ({usd(cheapest.totals.cost_usd if cheapest.totals else 0.0)} $)"
            ", which keeps it"
        )
        if bound is not None:
            note += "; its gap is to the bound of the plans without the budget (a valid bound)"
        status, objective = PlanStatus.FEASIBLE, None
    allocations = chosen.allocations
    raw = RawSolution(
        status,
        time.perf_counter() - start,
        objective,
        bound if keeps else None,
        [a.replicas for a in allocations],
        [tuple(a.requests_per_s_by_period) for a in allocations],
    )
    plan = plan_from(inputs, [a.candidate for a in allocations], raw, solver)
    if not keeps and bound is not None and plan.objective_breakdown:
        value = plan.objective_breakdown["objective"]
        gap = relative_gap(value, bound)
        info = replace(plan.solve, gap=gap, bound=bound, objective=value)
        optimal = gap is not None and gap <= inputs.relative_gap
        plan = replace(plan, solve=info, status=PlanStatus.OPTIMAL if optimal else plan.status)
    return replace(plan, solve=replace(plan.solve, messages=(*plan.solve.messages, note)))


def usd(value: float) -> str:
    """Dollars to the cent, or to 3 significant digits below one dollar (a 0.004 $ budget)."""
    return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.3g}"
