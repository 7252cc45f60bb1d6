"""The best feasible alternatives per model: what the objective would be on another deployment.

For each model entry of a solved plan, every feasible candidate is priced as the model's only
deployment — the fewest replicas that carry its peak load (and its ``min_replicas``) serving all
of its load — with the same accounting and objective prices as the plan
(:func:`planner.result.make_allocation`, :func:`planner.solve.coefficients.objective_weights`). Its
*objective delta* is that value minus what the model's allocations contribute to the plan's
objective, with every other model left as planned: exact for that swap, so a negative delta
can only come from a fleet limit (inventory, power cap, budget) that the swap would break,
which :attr:`Alternative.breaks` names, or from a plan within the solver's gap.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.inputs import MAX_REPLICAS_PER_CANDIDATE, Candidate, PlanningInputs
from planner.result import Allocation, Plan, make_allocation, period_power_w
from planner.solve.coefficients import objective_weights, replicas_needed
from planner.text import apart

#: Alternatives listed per model entry (besides the plan's own deployment).
ALTERNATIVES_PER_MODEL = 3


@dataclass(frozen=True)
class Alternative:
    """One model entry served by one candidate alone, priced like the plan."""

    candidate: Candidate
    replicas: int
    objective: float
    """The model's contribution to the objective on this deployment."""
    delta: float
    """objective minus the model's contribution in the plan (positive = worse)."""
    chosen: bool
    """The plan serves the model with exactly this deployment."""
    breaks: tuple[str, ...]
    """Fleet limits the swap would exceed, with the rest of the plan kept ('' = none)."""


def allocation_objective(a: Allocation, inputs: PlanningInputs) -> float:
    """What one allocation contributes to the plan's objective (at its region's weights)."""
    weights = objective_weights(inputs, inputs.site(a.candidate))
    return weights.of(a.facility_energy_kwh, a.carbon_kg, a.gpu_cost_usd)


def _breaks(plan: Plan, alt: Allocation, inputs: PlanningInputs) -> tuple[str, ...]:
    """The fleet limits that serving *alt*'s model with *alt* alone (the rest as planned)
    exceeds."""
    others = [a for a in plan.allocations if a.candidate.name != alt.candidate.name]
    out = []
    for (gpu, _), (key, held) in zip(alt.candidate.gpu_use, alt.candidate.stock_use, strict=True):
        available = inputs.stock.get(key)
        if available is not None:
            used = alt.replicas * held + sum(
                a.replicas * k for a in others for g, k in a.candidate.stock_use if g == key
            )
            if used > available:
                out.append(f"inventory of {gpu} ({used} > {available})")
    site = inputs.site(alt.candidate)
    if site.power_cap_kw is not None:  # the cap of the site (region) it would run in
        watts = [0.0] * inputs.periods
        for a in [*others, alt]:
            if a.candidate.region != site.name:
                continue
            power = period_power_w(a.candidate, a.replicas, a.requests_per_s_by_period)
            watts = [w + p for w, p in zip(watts, power, strict=True)]
        peak_kw = max(watts, default=0.0) * site.pue / 1000.0
        if peak_kw > site.power_cap_kw * (1 + 1e-9):
            peak, cap = apart(peak_kw, site.power_cap_kw, 2)
            out.append(f"power cap ({peak} > {cap} kW)")
    if inputs.budget_usd is not None:
        cost = alt.cost_usd + sum(a.cost_usd for a in others)
        if cost > inputs.budget_usd * (1 + 1e-9):
            spent, budget = apart(cost, inputs.budget_usd, 0)
            out.append(f"budget ({spent} > {budget} $)")
    return tuple(out)


def best_of_each_deployment(
    options: list[Alternative], kept: list[Alternative]
) -> list[Alternative]:
    """The best aggregated and the best disaggregated option (*options* sorted best first)
    that *kept* lacks, when the model entry has options of both deployments."""
    best: dict[str, Alternative] = {}
    for o in options:
        best.setdefault(o.candidate.deployment, o)
    if len(best) < 2:
        return []
    return [o for o in best.values() if o not in kept]


def alternatives(
    plan: Plan, per_model: int = ALTERNATIVES_PER_MODEL
) -> dict[str, list[Alternative]]:
    """Per model entry with allocations: the plan's own single deployment (if it uses one) and
    the *per_model* best other feasible candidates, by objective delta; with options of both
    deployments also the best aggregated and the best disaggregated one."""
    inputs = plan.inputs
    out: dict[str, list[Alternative]] = {}
    for m in inputs.models:
        mine = [a for a in plan.allocations if a.candidate.name == m.name]
        if not mine:
            continue
        current = sum(allocation_objective(a, inputs) for a in mine)
        options = []
        for c in inputs.candidates:
            if c.name != m.name or not c.feasible:
                continue
            n = replicas_needed(inputs, c)
            if n <= 0 or n > MAX_REPLICAS_PER_CANDIDATE:
                continue  # it cannot serve the model alone within the replica limit
            alt = make_allocation(c, n, m.requests_per_s_by_period, inputs)
            value = allocation_objective(alt, inputs)
            chosen = len(mine) == 1 and mine[0].candidate.key == c.key and mine[0].replicas == n
            breaks = () if chosen else _breaks(plan, alt, inputs)
            options.append(Alternative(c, n, value, value - current, chosen, breaks))
        options.sort(key=lambda o: (not o.chosen, o.delta, o.candidate.key))
        kept = [o for o in options if o.chosen]
        kept += [o for o in options if not o.chosen][:per_model]
        out[m.name] = kept + best_of_each_deployment(options, kept)
    return out
