"""What the solver adds for regions: the objective by site and the cheap power-cap proofs.

With regions (:mod:`planner.inputs.regions`) a model entry is placed in one of its regions; the
decomposition has one block per (entry, region) and one convexity row per entry
(:class:`planner.solve.columns.Decomposition`), so column generation, its Lagrangian bound and
the master MILP are exact on the same curves as without regions. This module holds the parts
that are specific to regions:

* :func:`regional_objective`: the objective of allocations, each site's facility kWh, carbon
  and rent weighted by that site's prices (:func:`planner.solve.coefficients.objective_weights`);
* :func:`regional_power_messages`: proofs, before any solver, that the regions' power caps
  cannot be met. For entry m in region r let ``w_mrt`` be the least facility kW m draws in
  period t there (:func:`planner.solve.bounds.least_model_w` × the region's PUE). An entry
  whose every allowed region has ``max_t w_mrt`` above its cap cannot be placed; and when every
  region has a cap, ``Σ_m min_r w_mrt > Σ_r cap_r`` in some period proves that no plan exists.
  Both are valid lower bounds, and the messages quote them as such.
"""

from __future__ import annotations

from collections.abc import Iterable

from planner.inputs import Candidate, PlanningInputs
from planner.result import Accounting, Allocation, make_totals
from planner.solve.bounds import least_model_w
from planner.solve.coefficients import objective_weights


def by_region(allocations: Iterable[Allocation]) -> dict[str, list[Allocation]]:
    """Allocations grouped by region (input order kept)."""
    out: dict[str, list[Allocation]] = {}
    for a in allocations:
        out.setdefault(a.candidate.region, []).append(a)
    return out


def regional_objective(inputs: PlanningInputs, parts: dict[str, Accounting]) -> float:
    """Σ over regions of the region's objective weights × its accounting (*parts*: region ->
    the accounting of its allocations)."""
    sites = {r.name: r for r in inputs.sites}
    total = 0.0
    for name, acc in parts.items():
        weights = objective_weights(inputs, sites[name])
        total += weights.of(acc.facility_energy_kwh, acc.carbon_kg, acc.gpu_cost_usd)
    return total


def _least_kw(inputs: PlanningInputs) -> dict[str, dict[str, list[float]]]:
    """Entry -> region -> least facility kW per period (regions where it has candidates)."""
    cands: dict[tuple[str, str], list[Candidate]] = {}
    for c in inputs.feasible_candidates():
        cands.setdefault((c.name, c.region), []).append(c)
    out: dict[str, dict[str, list[float]]] = {}
    for m in inputs.models:
        mine = out.setdefault(m.name, {})
        for r in inputs.regions:
            here = cands.get((m.name, r.name))
            if here:
                mine[r.name] = [w * r.pue / 1000.0 for w in least_model_w(m, here)]
    return out


def _fits(kw: float, cap: float | None) -> bool:
    return cap is None or kw <= cap * (1 + 1e-9)


def regional_power_messages(inputs: PlanningInputs) -> list[str]:
    """The proofs of the module docstring that the regions' power caps cannot be met ([] when
    they prove nothing, or without regions)."""
    if not inputs.regions or not inputs.has_power_cap:
        return []
    caps = {r.name: r.power_cap_kw for r in inputs.regions}
    least = _least_kw(inputs)
    messages = []
    for m in inputs.models:
        options = least[m.name]
        fits = [r for r, kw in options.items() if _fits(max(kw), caps[r])]
        if options and not fits:
            needs = ", ".join(
                f"{r} {max(kw):,.6g} kW > cap {caps[r]:g} kW" for r, kw in options.items()
            )
            messages.append(
                f"power cap: {m.name} draws at least this much facility power in every region it "
                f"may use (valid lower bounds): {needs} — raise a region's power_cap_kw or allow "
                "another region"
            )
    if messages or any(cap is None for cap in caps.values()):
        return messages
    total_cap = sum(cap or 0.0 for cap in caps.values())
    for t in range(inputs.periods):
        need = sum(
            min(kw[t] for kw in least[m.name].values()) for m in inputs.models if least[m.name]
        )
        if need > total_cap * (1 + 1e-9):
            return [
                f"power cap: in period {t} the entries draw at least {need:,.6g} kW facility power "
                f"together, wherever they are placed (a valid lower bound), above the "
                f"{total_cap:,.6g} kW of every region's power_cap_kw together — raise the caps"
            ]
    return []


def regional_breakdown(
    inputs: PlanningInputs, allocations: tuple[Allocation, ...], totals: Accounting
) -> dict[str, float]:
    """The objective breakdown of a plan with regions: the fleet's facility kWh and GPU rent, the
    rent weight and the objective summed over regions at each region's weights (the weights of
    a kWh and a kg differ by region: ``regions`` of the plan JSON carries them)."""
    parts = {
        name: make_totals(tuple(mine), inputs) for name, mine in by_region(allocations).items()
    }
    return {
        "facility_energy_kwh": totals.facility_energy_kwh,
        "gpu_cost_usd": totals.gpu_cost_usd,
        "gpu_rent_weight": objective_weights(inputs).per_rent_usd,
        "objective": regional_objective(inputs, dict(parts)),
    }
