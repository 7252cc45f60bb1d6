"""Which candidates a plan JSON carries: every one (``--candidates all``) or, by default, the
allocated ones, the best feasible alternatives of every model entry and every excluded one.

A large scenario has tens of thousands of feasible candidates, each with its power and ITL
curves; carrying them all made the 500-entry plan 167 MB. The default keeps what a reader and
the plan's own checks need: the allocated candidates (their curves re-compute every figure,
``docs/method.md`` §4), up to :data:`BEST_ALTERNATIVES` other feasible candidates per model
entry ranked by the plan's objective per request/s at full load (the options a what-if would
move to first), the best at minimum cost and at minimum energy (the ends of the report's Pareto
front), with both deployments the best aggregated and the best disaggregated one, and the
excluded candidates (no curves; they say why each option was refused).
:class:`CandidateCounts` records how many there were, so nothing is dropped silently.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Literal

from planner.inputs import (
    MAX_REPLICAS_PER_CANDIDATE,
    Candidate,
    CandidateKey,
    Objective,
    PlanningInputs,
    Region,
)
from planner.result import Plan, make_allocation
from planner.solve.coefficients import (
    facility_kw_coefficients,
    mean_kwh_weight,
    objective_weights,
    replicas_needed,
)

#: What ``wattgpu plan --candidates`` accepts: the default selection, or every candidate.
CandidateSelection = Literal["best", "all"]
CANDIDATE_SELECTIONS: tuple[str, ...] = ("best", "all")
#: Feasible alternatives kept per model entry besides its allocated candidates.
BEST_ALTERNATIVES = 5


@dataclass(frozen=True)
class CandidateCounts:
    """How many candidates the plan considered and how many its JSON carries."""

    total: int
    feasible: int
    feasible_out_of_domain: int
    kept: int


def ranking_weights(inputs: PlanningInputs, site: Region | None = None) -> tuple[float, float]:
    """(weight of a facility kWh, weight of a rent $) of the inputs' objective, for ranking
    (at *site*'s prices; default: the inputs' first site)."""
    return mean_kwh_weight(inputs, site), objective_weights(inputs).per_rent_usd


def objective_per_request(
    inputs: PlanningInputs, c: Candidate, weights: tuple[float, float] | None = None
) -> float:
    """The plan's objective per hour and per request/s of *c* at full load (ranking only);
    *weights*: :func:`ranking_weights` of *inputs* when the caller ranks many candidates (with
    regions each candidate's region's own weights are used)."""
    if inputs.regions:
        weights = ranking_weights(inputs, inputs.site(c))
    per_kwh, per_usd = weights or ranking_weights(inputs)
    kw_n, kw_x = facility_kw_coefficients(inputs, c)
    capacity = c.max_requests_per_s_per_replica
    if capacity <= 0.0:
        return math.inf
    hourly = per_kwh * (kw_n + kw_x * capacity) + per_usd * c.usd_per_hour_per_replica
    return hourly / capacity


def _alone(
    inputs: PlanningInputs, c: Candidate, weights: tuple[float, float], load: tuple[float, float]
) -> float:
    """The objective per hour of serving an entry's *load* (peak, mean requests/s) with *c*
    alone: the replicas its peak needs, their idle power and the mean load's energy (ranking
    only; with regions at *c*'s region's weights)."""
    capacity = c.max_requests_per_s_per_replica
    if capacity <= 0.0:
        return math.inf
    peak, mean = load
    n = max(1.0, math.ceil(peak / capacity - 1e-9))
    per_kwh, per_usd = ranking_weights(inputs, inputs.site(c)) if inputs.regions else weights
    kw_n, kw_x = facility_kw_coefficients(inputs, c)
    return per_kwh * (kw_n * n + kw_x * mean) + per_usd * c.usd_per_hour_per_replica * n


#: Candidates per entry and front end shortlisted on the linear estimate of :func:`_alone`, of
#: which the one best on its power curves is kept (:func:`_on_curves`).
END_SHORTLIST = 8


def _on_curves(inputs: PlanningInputs, c: Candidate, demand: tuple[float, ...]) -> float:
    """The objective of serving an entry's per-period *demand* with *c* alone on its power
    curves: the fewest replicas that carry its peak (inf above the replica limit)."""
    n = replicas_needed(inputs, c)
    if n <= 0 or n > MAX_REPLICAS_PER_CANDIDATE:
        return math.inf
    a = make_allocation(c, n, demand, inputs)
    return objective_weights(inputs, inputs.site(c)).of(
        a.facility_energy_kwh, a.carbon_kg, a.gpu_cost_usd
    )


def kept_candidates(plan: Plan, selection: CandidateSelection = "best") -> tuple[Candidate, ...]:
    """The candidates a plan JSON carries, in the plan's candidate order (see module doc)."""
    inputs = plan.inputs
    if selection == "all":
        return inputs.candidates
    allocated = {a.candidate.key for a in plan.allocations}
    by_model: dict[str, list[Candidate]] = defaultdict(list)
    for c in inputs.candidates:
        if c.feasible and c.key not in allocated:
            by_model[c.name].append(c)
    best: set[CandidateKey] = set()
    weights = ranking_weights(inputs)
    # the ends of the energy-cost front (the report's Pareto front of a saved plan re-solves
    # over the kept candidates): each entry's best option alone at minimum cost and at minimum
    # energy
    ends = [replace(inputs, objective=Objective(minimize=m)) for m in ("cost", "energy")]
    end_weights = [(end, ranking_weights(end)) for end in ends]
    hours = inputs.period_hours
    loads = {
        m.name: (
            max(m.requests_per_s_by_period, default=0.0),
            sum(x * h for x, h in zip(m.requests_per_s_by_period, hours, strict=True))
            / max(sum(hours), 1e-12),
        )
        for m in inputs.models
    }
    for options in by_model.values():
        ranked = sorted(options, key=lambda c: (objective_per_request(inputs, c, weights), c.key))
        best.update(c.key for c in ranked[:BEST_ALTERNATIVES])
        firsts = {c.deployment: c for c in reversed(ranked)}  # the best of each deployment
        best.update(c.key for c in firsts.values())
        load = loads.get(options[0].name, (0.0, 0.0))
        demand = inputs.model(options[0].name).requests_per_s_by_period
        for end, w in end_weights:
            # shortlisted on the linear estimate, chosen on the power curves (the linear one
            # alone kept an H100 over the L4 TP8 that is 17 % less energy: the saved plan's
            # front lost its minimum-energy end)
            short = sorted(options, key=lambda c: (_alone(end, c, w, load), c.key))
            short = short[:END_SHORTLIST]
            best.add(min(short, key=lambda c: (_on_curves(end, c, demand), c.key)).key)
    return tuple(
        c for c in inputs.candidates if not c.feasible or c.key in allocated or c.key in best
    )


def candidate_counts(plan: Plan, kept: tuple[Candidate, ...]) -> CandidateCounts:
    """Counts of the plan's candidates (all of them) and of those *kept*."""
    cands = plan.inputs.candidates
    return CandidateCounts(
        total=len(cands),
        feasible=sum(c.feasible for c in cands),
        feasible_out_of_domain=sum(c.feasible and not c.in_domain for c in cands),
        kept=len(kept),
    )
