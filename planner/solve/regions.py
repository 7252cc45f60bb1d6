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
* :func:`regional_cap_proof`: the stronger proof run before column generation, on the entries
  whose every allowed region has a cap (an uncapped region takes any load at no cost to a
  cap): in the busiest period, each such entry's least facility kW in each of its
  regions, exact on its curves (the search of :mod:`planner.solve.proofs` at the region's PUE),
  and a placement LP (entries split fractionally over their regions) whose least uniform scale
  of the caps above 1 proves that no plan exists and says how far the caps must rise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from planner.inputs import Candidate, PlanningInputs
from planner.result import Accounting, Allocation, make_totals
from planner.solve.bounds import least_model_w
from planner.solve.coefficients import objective_weights
from planner.solve.columns import Decomposition
from planner.solve.pricing import price_block
from planner.solve.proofs import one_period

REGION_PROOF = "bounds (least facility power per region, exact on the curves; GLOP placement LP)"


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


def _busiest_period(inputs: PlanningInputs) -> int:
    total = [
        sum(m.requests_per_s_by_period[t] for m in inputs.models) for t in range(inputs.periods)
    ]
    return max(range(inputs.periods), key=lambda t: total[t])


def least_kw_by_place(
    dec: Decomposition, t: int, names: Iterable[str] | None = None
) -> dict[str, dict[str, float]]:
    """Entry -> region -> a valid lower bound on the facility kW the entry draws in period *t*
    when placed there: the exact search on its curves (:mod:`planner.solve.proofs`'s
    relaxation, only period t's load covered), at the region's PUE; of the entries *names*
    (default: every entry)."""
    inputs = dec.inputs
    wanted = {m.name for m in inputs.models} if names is None else set(names)
    out: dict[str, dict[str, float]] = {m.name: {} for m in inputs.models if m.name in wanted}
    for b, block in enumerate(dec.blocks):
        name, site = inputs.models[dec.group[b]].name, dec.site_of[b]
        if name not in wanted:
            continue
        found = price_block(one_period(block, t), dec.kw_n[b], np.asarray([dec.kw_per_e_of[b]]))
        out[name][site.name] = math.inf if found is None else found.bound
    return out


def cap_scale_needed(
    least: dict[str, dict[str, float]], caps: dict[str, float | None]
) -> float | None:
    """The least factor s such that the entries, each split fractionally over its regions, fit
    within s × every region's cap (an LP; a valid bound: every plan needs the caps scaled by at
    least s); None when the LP fails."""
    from ortools.linear_solver import pywraplp

    lp = pywraplp.Solver.CreateSolver("GLOP")
    scale = lp.NumVar(0.0, lp.infinity(), "scale")
    rows = {r: lp.Constraint(-lp.infinity(), 0.0, f"cap[{r}]") for r, cap in caps.items() if cap}
    for r, row in rows.items():
        row.SetCoefficient(scale, -float(caps[r] or 0.0))
    for name, options in least.items():
        finite = {r: kw for r, kw in options.items() if math.isfinite(kw)}
        if not finite:
            return math.inf
        conv = lp.Constraint(1.0, 1.0, f"place[{name}]")
        for r, kw in finite.items():
            x = lp.NumVar(0.0, 1.0, f"x[{name},{r}]")
            conv.SetCoefficient(x, 1.0)
            if r in rows:
                rows[r].SetCoefficient(x, kw)
    lp.Minimize(scale)
    if lp.Solve() != pywraplp.Solver.OPTIMAL:
        return None
    return float(scale.solution_value())


def regional_cap_proof(dec: Decomposition) -> list[str]:
    """A proof that the regions' power caps cannot be met (module docstring; [] when it proves
    nothing): in the busiest period, each entry's exact least facility power in each region it
    may use, and the LP that splits the entries over the regions' caps; a scale above 1 is a
    proof, with the smallest uniform raise of the caps that could restore a plan."""
    inputs = dec.inputs
    caps = {r.name: r.power_cap_kw for r in inputs.regions}
    # an entry that may use an uncapped region puts its load there at no cost to any cap: the
    # proof needs the entries whose every allowed region is capped
    places: dict[str, set[str]] = {}
    for b in range(len(dec.blocks)):
        places.setdefault(inputs.models[dec.group[b]].name, set()).add(dec.site_of[b].name)
    confined = [n for n, rs in places.items() if rs and all(caps.get(r) for r in rs)]
    if not confined:
        return []
    t = _busiest_period(inputs)
    least = least_kw_by_place(dec, t, confined)
    scale = cap_scale_needed(least, caps)
    if scale is None or scale <= 1 + 1e-9:
        return []
    need = sum(min(kw.values()) for kw in least.values())
    who = "the entries" if len(confined) == len(places) else "the entries that may use only "
    who += "" if len(confined) == len(places) else "capped regions (" + ", ".join(confined) + ")"
    return [
        f"power cap: in period {t} {who} draw at least {need:,.6g} kW facility power "
        f"together wherever they are placed (exact on their curves, a valid lower bound), and "
        f"even split fractionally over their allowed regions they need every capped region's "
        f"cap raised {scale:,.4g}× (a valid bound: raise the regions' power_cap_kw by at least "
        f"that factor)"
    ]
