"""Energy ↔ cost Pareto front of a scenario by the ε-constraint method (each point a solved plan).

Method (:data:`METHOD`): the two ends are the plan of minimum total cost and the plan of minimum
facility energy (same constraints as the scenario: load, SLA, inventory, power cap, budget).
Between them the cost axis is cut into ``points`` evenly spaced caps ε_k, from the minimum cost
to the cost of the minimum-energy plan, and each point minimises facility energy subject to
total cost ≤ ε_k. The cost cap is the solver's own budget constraint (the scenario's budget, when
it has one, stays the upper limit), so every point is solved by :func:`planner.solve.optimize.solve`
on a copy of the inputs (``dataclasses.replace``); no private solver hook is needed. This traces
the same front as "minimise cost subject to energy ≤ ε": both are ε-constraint scalarisations of
the same two objectives. Dominated or repeated points (solver gap, ties) are dropped, so along
the front cost rises and facility energy falls. The last cap is the minimum-energy plan's own
cost, so that point is the minimum-energy plan (not solved again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from planner.documents.pareto import MarkerDocument, ParetoDocument, ParetoPointDocument
from planner.documents.plan import PlanDocument, as_document
from planner.inputs import Objective, PlanningInputs
from planner.result import Plan
from planner.scenario.limits import MAX_PARETO_POINTS
from planner.solve.optimize import solve

METHOD = (
    "ε-constraint: the ends are the minimum-cost and the minimum-facility-energy plans; between "
    "them each point minimises facility energy subject to total cost ≤ ε (the solver's budget "
    "constraint), ε evenly spaced from the minimum cost to the cost of the minimum-energy plan. "
    "All scenario constraints apply to every point; dominated and repeated points are dropped."
)
EPS_SLACK = 1e-7
"""Relative slack added to each cost cap so the end plans stay feasible at their own cost."""


def _point(label: str, eps: float | None, plan: Plan) -> ParetoPointDocument | None:
    t = plan.totals
    if not plan.has_solution or t is None:
        return None
    return ParetoPointDocument(
        label=label,
        epsilon_usd=eps,
        status=plan.status.value,
        facility_energy_kwh=t.facility_energy_kwh,
        energy_kwh=t.energy_kwh,
        cost_usd=t.cost_usd,
        carbon_kg=t.carbon_kg,
        gpus=dict(t.gpus),
    )


def _marker(
    label: str, facility_energy_kwh: float, cost_usd: float, carbon_kg: float
) -> MarkerDocument:
    return MarkerDocument(
        label=label, facility_energy_kwh=facility_energy_kwh, cost_usd=cost_usd, carbon_kg=carbon_kg
    )


def _markers(
    chosen: Plan | PlanDocument, objective: str
) -> tuple[MarkerDocument | None, list[MarkerDocument]]:
    """The chosen plan's marker (when it has a solution) and one per feasible baseline."""
    doc = as_document(chosen)
    mine = None
    t = doc.totals
    if t is not None and doc.has_solution:
        mine = _marker(f"chosen ({objective})", t.facility_energy_kwh, t.cost_usd, t.carbon_kg)
    baselines = []
    for b in doc.baselines:
        if b.energy_kwh is None or b.cost_usd is None or b.carbon_kg is None:
            continue
        facility = b.facility_energy_kwh
        if facility is None:  # a plan written before the key existed
            facility = b.energy_kwh * doc.assumptions.pue
        baselines.append(_marker(f"baseline: {b.name}", facility, b.cost_usd, b.carbon_kg))
    return mine, baselines


def nondominated(points: list[ParetoPointDocument]) -> list[ParetoPointDocument]:
    """Points no other point beats on both cost and facility energy (one per tie), cost
    ascending. Tolerance: 1e-6 relative, so solver round-off does not split a point."""

    def le(a: float, b: float) -> bool:
        return a <= b + 1e-6 * max(1.0, abs(b))

    kept: list[ParetoPointDocument] = []
    for p in sorted(points, key=lambda q: (q.cost_usd, q.facility_energy_kwh)):
        if kept and le(kept[-1].facility_energy_kwh, p.facility_energy_kwh):
            continue  # costs at least as much, saves no energy
        kept.append(p)
    return kept


def pareto_front(
    inputs: PlanningInputs,
    points: int = 7,
    chosen: Plan | PlanDocument | None = None,
    *,
    on_point: Callable[[int, int], None] | None = None,
) -> ParetoDocument:
    """Solve the ε-constraint front of *inputs* with *points* cost caps between the ends.

    *chosen*: the scenario's own plan (with baselines) to mark; its baselines are marked too.
    *on_point*: called with (plans solved, plans to solve) after each solve (progress display).
    """
    if points > MAX_PARETO_POINTS:
        raise ValueError(f"points: {points} is more than the {MAX_PARETO_POINTS} allowed")
    points = max(2, points)
    total = points + 2
    report = on_point or (lambda done, of: None)
    messages: list[str] = []
    lo_plan = solve(replace(inputs, objective=Objective(minimize="cost")), baselines=False)
    report(1, total)
    hi_plan = solve(replace(inputs, objective=Objective(minimize="energy")), baselines=False)
    report(2, total)
    ends = [_point("min cost", None, lo_plan), _point("min energy", None, hi_plan)]
    found = [p for p in ends if p is not None]
    if len(found) < 2:
        status = lo_plan if not lo_plan.has_solution else hi_plan
        messages.append(f"no front: the scenario is {status.status.value}")
        messages.extend(status.solve.messages)
    else:
        c_lo, c_hi = found[0].cost_usd, found[1].cost_usd
        energy_inputs = replace(inputs, objective=Objective(minimize="energy"))
        for k in range(points):
            eps = c_lo + (c_hi - c_lo) * k / (points - 1)
            cap = eps * (1 + EPS_SLACK)
            if inputs.budget_usd is not None:
                cap = min(cap, inputs.budget_usd)
            if k == points - 1 and cap >= c_hi:
                # the minimum-energy plan meets this cap and no plan uses less energy: it is
                # this point's optimum, so it is not solved a second time
                plan = hi_plan
            else:
                plan = solve(replace(energy_inputs, budget_usd=cap), baselines=False)
            report(k + 3, total)
            p = _point(f"ε{k + 1}", eps, plan)
            if p is None:
                messages.append(
                    f"cost cap {eps:,.2f} $: {plan.status.value} "
                    f"({'; '.join(plan.solve.messages) or 'no solution'})"
                )
                continue
            found.append(p)
    chosen_marker, baselines = (
        _markers(chosen, inputs.objective.minimize) if chosen is not None else (None, [])
    )
    counts = chosen.candidate_counts if isinstance(chosen, PlanDocument) else None
    method = METHOD
    if counts is not None and len(inputs.candidates) < counts.total:  # a saved plan's "best"
        method += (
            f" Re-solved over the {len(inputs.candidates):,} of {counts.total:,} candidates "
            "the plan file keeps: a front over every candidate may reach lower energy or cost "
            "(save the plan with `wattgpu plan --candidates all`)."
        )
    return ParetoDocument(
        scenario=inputs.scenario,
        estimated=True,
        method=method,
        points=nondominated(found),
        chosen=chosen_marker,
        baselines=baselines,
        messages=messages,
    )
