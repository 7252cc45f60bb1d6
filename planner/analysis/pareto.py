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
the front cost rises and facility energy falls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from planner.documents.pareto import MarkerDocument, ParetoDocument, ParetoPointDocument
from planner.documents.plan import PlanDocument
from planner.inputs import Objective, PlanningInputs
from planner.result import Plan
from planner.solve.optimize import solve

METHOD = (
    "ε-constraint: the ends are the minimum-cost and the minimum-facility-energy plans; between "
    "them each point minimises facility energy subject to total cost ≤ ε (the solver's budget "
    "constraint), ε evenly spaced from the minimum cost to the cost of the minimum-energy plan. "
    "All scenario constraints apply to every point; dominated and repeated points are dropped."
)
EPS_SLACK = 1e-7
"""Relative slack added to each cost cap so the end plans stay feasible at their own cost."""


@dataclass(frozen=True)
class ParetoPoint:
    """One solved plan on (or near) the front."""

    label: str
    epsilon_usd: float | None
    """The cost cap of this point (None for the two end plans)."""
    status: str
    facility_energy_kwh: float
    energy_kwh: float
    cost_usd: float
    carbon_kg: float
    gpus: dict[str, int]

    def document(self) -> ParetoPointDocument:
        """The typed form."""
        return ParetoPointDocument(
            label=self.label,
            epsilon_usd=self.epsilon_usd,
            status=self.status,
            facility_energy_kwh=self.facility_energy_kwh,
            energy_kwh=self.energy_kwh,
            cost_usd=self.cost_usd,
            carbon_kg=self.carbon_kg,
            gpus=dict(self.gpus),
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return self.document().to_json_dict()


@dataclass(frozen=True)
class Marker:
    """A plan shown beside the front (the scenario's chosen plan, a baseline)."""

    label: str
    facility_energy_kwh: float
    cost_usd: float
    carbon_kg: float

    def document(self) -> MarkerDocument:
        """The typed form."""
        return MarkerDocument(
            label=self.label,
            facility_energy_kwh=self.facility_energy_kwh,
            cost_usd=self.cost_usd,
            carbon_kg=self.carbon_kg,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return self.document().to_json_dict()


@dataclass(frozen=True)
class ParetoFront:
    """The front (cost ascending, facility energy descending) and the markers."""

    scenario: str
    method: str
    points: tuple[ParetoPoint, ...]
    chosen: Marker | None
    baselines: tuple[Marker, ...]
    messages: tuple[str, ...] = ()

    def document(self) -> ParetoDocument:
        """The typed form."""
        return ParetoDocument(
            scenario=self.scenario,
            estimated=True,
            method=self.method,
            points=[p.document() for p in self.points],
            chosen=self.chosen.document() if self.chosen else None,
            baselines=[b.document() for b in self.baselines],
            messages=list(self.messages),
        )

    def to_json_dict(self) -> dict[str, Any]:
        """Plain JSON values (:class:`ParetoDocument`)."""
        return self.document().to_json_dict()


def _point(label: str, eps: float | None, plan: Plan) -> ParetoPoint | None:
    t = plan.totals
    if not plan.has_solution or t is None:
        return None
    return ParetoPoint(
        label,
        eps,
        plan.status.value,
        t.facility_energy_kwh,
        t.energy_kwh,
        t.cost_usd,
        t.carbon_kg,
        dict(t.gpus),
    )


def _markers(chosen: Plan | PlanDocument, objective: str) -> tuple[Marker | None, list[Marker]]:
    """The chosen plan's marker (when it has a solution) and one per feasible baseline."""
    from planner.analysis.forecast import as_document

    doc = as_document(chosen)
    mine = None
    t = doc.totals
    if t is not None and doc.has_solution:
        mine = Marker(f"chosen ({objective})", t.facility_energy_kwh, t.cost_usd, t.carbon_kg)
    baselines = []
    for b in doc.baselines:
        if b.energy_kwh is None or b.cost_usd is None or b.carbon_kg is None:
            continue
        facility = b.facility_energy_kwh
        if facility is None:  # a plan written before the key existed
            facility = b.energy_kwh * doc.assumptions.pue
        baselines.append(Marker(f"baseline: {b.name}", facility, b.cost_usd, b.carbon_kg))
    return mine, baselines


def nondominated(points: list[ParetoPoint]) -> list[ParetoPoint]:
    """Points no other point beats on both cost and facility energy (one per tie), cost
    ascending. Tolerance: 1e-6 relative, so solver round-off does not split a point."""

    def le(a: float, b: float) -> bool:
        return a <= b + 1e-6 * max(1.0, abs(b))

    kept: list[ParetoPoint] = []
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
) -> ParetoFront:
    """Solve the ε-constraint front of *inputs* with *points* cost caps between the ends.

    *chosen*: the scenario's own plan (with baselines) to mark; its baselines are marked too.
    *on_point*: called with (plans solved, plans to solve) after each solve (progress display).
    """
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
    return ParetoFront(
        scenario=inputs.scenario,
        method=METHOD,
        points=tuple(nondominated(found)),
        chosen=chosen_marker,
        baselines=tuple(baselines),
        messages=tuple(messages),
    )
