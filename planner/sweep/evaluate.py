"""One draw or grid point: re-optimise, and re-evaluate fixed fleets under it.

A :class:`Fleet` is a plan's replicas per candidate and, per period, the share of its model's
load each deployment carries. :func:`evaluate_fleet` prices a fleet under a draw's inputs with
the plan accounting of :mod:`planner.result` (replica power on the drawn curve at the load per
replica, held at the curve's end above capacity; rent, electricity, carbon) and checks each
model's SLA (every deployment's load per replica within its drawn capacity, the candidate
feasible under the draw where it carries load, and with a failover the peak still carried after
its worst losses; a deployment carrying no load in a period, such as the standby replicas of an
entry without load, is not judged there), the power cap and the budget. :func:`run_item` is the
body of the task every engine runs (:func:`run_batch`): the solver through its public entry
point :func:`planner.solve.optimize.solve`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.inputs import (
    Candidate,
    CandidateKey,
    PlanningInputs,
    deployment_text,
    grid_carbon_kg,
    stock_key,
    surviving_capacity,
)
from planner.result import Plan
from planner.solve.optimize import objective_weights, solve
from planner.sweep.table import CandidateTable, GridPoint, drawn_inputs

Key = CandidateKey
CAPACITY_TOLERANCE = 1e-6
"""Relative slack of the load-within-capacity check."""


@dataclass(frozen=True)
class Fleet:
    """Replicas per candidate and each deployment's share of its model's load per period."""

    replicas: tuple[tuple[Key, int], ...]
    shares: tuple[tuple[float, ...], ...]
    gpu_use: tuple[tuple[tuple[str, int], ...], ...] = ()
    """Per deployment, (GPU type, GPUs) one replica holds (a disaggregated unit: both pools);
    empty: its key's GPU, TP × PP × DP."""

    @property
    def identity(self) -> tuple[tuple[str, str, int, int, int, int, str, int], ...]:
        """(model entry, GPU, TP, PP, DP, EP, region, replicas) of every deployment: what makes
        two fleets equal."""
        return tuple((*k, n) for k, n in self.replicas)

    def label(self) -> str:
        """The deployments as text: ``entry GPU tpTP xreplicas; ...`` (``tp8×PP2`` etc.)."""
        return "; ".join(deployment_text(k, n) for k, n in self.replicas)

    def held(self, i: int) -> tuple[tuple[str, int], ...]:
        """(GPU type, GPUs) one replica of deployment *i* holds (a unit: both pools)."""
        (_, gpu, tp, pp, dp, _, _), _ = self.replicas[i]
        return (self.gpu_use[i] if self.gpu_use else ()) or ((gpu, tp * pp * dp),)

    def gpu_mix(self) -> dict[str, int]:
        """GPUs per type (replicas × TP × PP × DP)."""
        out: dict[str, int] = {}
        for i, (_, n) in enumerate(self.replicas):
            for g, k in self.held(i):
                out[g] = out.get(g, 0) + n * k
        return dict(sorted(out.items()))


def fleet_of(plan: Plan) -> Fleet:
    """The :class:`Fleet` of a solved *plan*."""
    totals: dict[str, np.ndarray] = {}
    for a in plan.allocations:
        load = np.asarray(a.requests_per_s_by_period, dtype=np.float64)
        totals[a.candidate.name] = totals.get(a.candidate.name, 0.0) + load
    replicas, shares = [], []
    for a in plan.allocations:
        load = np.asarray(a.requests_per_s_by_period, dtype=np.float64)
        total = totals[a.candidate.name]
        share = np.divide(load, total, out=np.zeros_like(load), where=total > 0)
        replicas.append((a.candidate.key, a.replicas))
        shares.append(tuple(float(s) for s in share))
    use = tuple(a.candidate.gpu_use if a.candidate.pools else () for a in plan.allocations)
    return Fleet(tuple(replicas), tuple(shares), use if any(use) else ())


def _even_shares(fleet: Fleet) -> list[tuple[float, ...]]:
    """Shares with periods where a model had no load split by replicas instead."""
    count: dict[str, int] = {}
    for (name, *_), n in fleet.replicas:
        count[name] = count.get(name, 0) + n
    sums: dict[str, np.ndarray] = {}
    for ((name, *_), _), share in zip(fleet.replicas, fleet.shares, strict=True):
        sums[name] = sums.get(name, 0.0) + np.asarray(share)
    out = []
    for ((name, *_), n), share in zip(fleet.replicas, fleet.shares, strict=True):
        even = n / count[name]
        out.append(tuple(s if sums[name][p] > 0 else even for p, s in enumerate(share)))
    return out


def _keeps_failover(
    fleet: Fleet, by_key: dict[Key, Candidate], inputs: PlanningInputs, name: str
) -> bool:
    """Whether model entry *name*'s deployments still carry its peak after the worst losses
    of its failover (replicas or nodes down) at their drawn capacities, as the plan must."""
    demand = inputs.model(name)
    assert demand.failover is not None
    mine = [(by_key[k], n) for k, n in fleet.replicas if k[0] == name]
    caps = [c.max_requests_per_s_per_replica if c.feasible else 0.0 for c, _ in mine]
    per_unit = [inputs.replicas_per_unit(c) for c, _ in mine]
    left = surviving_capacity(caps, per_unit, demand.failover.count, [n for _, n in mine])
    peak = max(demand.requests_per_s_by_period)
    return bool(float(left[0]) >= peak * (1 - CAPACITY_TOLERANCE) - 1e-12)


def evaluate_fleet(fleet: Fleet, inputs: PlanningInputs) -> dict[str, Any]:
    """Energy, cost, carbon, per-period facility energy and the SLA/cap/budget checks; each
    deployment's energy at its site's PUE, price and grid, each site's power within its cap and
    its GPUs within its inventory (inputs without regions: the one site of the top-level
    fields)."""
    by_key: dict[Key, Candidate] = {c.key: c for c in inputs.candidates}
    hours = np.asarray(inputs.period_hours)
    sites = {r.name: r for r in inputs.sites}
    power_w = {name: np.zeros(len(hours)) for name in sites}
    rent = dict.fromkeys(sites, 0.0)
    held: dict[str, int] = {}
    served = {m.name: False for m in inputs.models}
    sla = {m.name: True for m in inputs.models}
    for i, ((key, n), share) in enumerate(zip(fleet.replicas, _even_shares(fleet), strict=True)):
        c = by_key[key]
        demand = inputs.model(key[0])
        served[key[0]] = True
        rent[c.region] += n * c.usd_per_hour_per_replica * inputs.hours
        for gpu, k in fleet.held(i):
            held[stock_key(c, gpu)] = held.get(stock_key(c, gpu), 0) + n * k
        for p, rate in enumerate(demand.requests_per_s_by_period):
            per_replica = share[p] * rate / n
            cap = c.max_requests_per_s_per_replica
            # only load is judged: a deployment carrying none in a period (standby replicas of
            # an entry without load) meets its SLA there, feasible under the draw or not
            over = per_replica > cap * (1 + CAPACITY_TOLERANCE) + 1e-12
            if per_replica > 0 and (not c.feasible or over):
                sla[key[0]] = False
            power_w[c.region][p] += n * c.power_w_per_replica(min(per_replica, cap))
    for m in inputs.models:
        if not served[m.name] and max(m.requests_per_s_by_period) > 0:
            sla[m.name] = False
        if m.failover is not None and not _keeps_failover(fleet, by_key, inputs, m.name):
            sla[m.name] = False
    energy_by_period = np.zeros(len(hours))
    facility_by_period = np.zeros(len(hours))
    facility_kw = np.zeros(len(hours))  # every site together, as the plan's peak
    facility = carbon_kg = cost = objective = 0.0
    cap_ok = True
    for name, site in sites.items():
        site_energy = power_w[name] * hours / 1000.0
        site_facility = site_energy * site.pue
        kwh = float(site_facility.sum())
        kg = grid_carbon_kg([float(v) for v in site_facility], kwh, site.grid_by_period(len(hours)))
        energy_by_period = energy_by_period + site_energy
        facility_by_period = facility_by_period + site_facility
        facility += kwh
        carbon_kg += kg
        cost += (
            rent[name] + kwh * site.electricity_usd_per_kwh + kg * (inputs.carbon_usd_per_kg or 0.0)
        )
        objective += objective_weights(inputs, site).of(kwh, kg, rent[name])
        site_kw = power_w[name] * site.pue / 1000.0
        facility_kw = facility_kw + site_kw
        site_peak_kw = float(site_kw.max(initial=0.0))
        limit_kw = site.power_cap_kw
        cap_ok = cap_ok and (limit_kw is None or site_peak_kw <= limit_kw * (1 + 1e-9))
    inventory_ok = all(
        inputs.stock.get(g) is None or n <= (inputs.stock.get(g) or 0) for g, n in held.items()
    )
    budget_ok = inputs.budget_usd is None or cost <= inputs.budget_usd * (1 + 1e-9)
    return {
        "energy_kwh": float(energy_by_period.sum()),
        "facility_energy_kwh": facility,
        "cost_usd": cost,
        "carbon_kg": carbon_kg,
        "objective": objective,
        "peak_facility_power_kw": float(facility_kw.max(initial=0.0)),
        "facility_energy_kwh_by_period": [float(v) for v in facility_by_period],
        "sla_met": sla,
        "power_cap_met": cap_ok,
        "budget_met": budget_ok,
        "inventory_met": inventory_ok,
    }


@dataclass(frozen=True)
class Pass:
    """What a pass does with every item: re-optimise or not, and the fleets it re-evaluates
    (small: it goes with every task, while the candidate table goes to each worker once)."""

    base: Fleet
    fleets: tuple[Fleet, ...] = ()
    """Extra fleets to evaluate on every item (the robust choice's second pass)."""
    optimise: bool = True
    """False: only evaluate the fleets (the robust pass needs no re-optimisation)."""


@dataclass(frozen=True)
class Shared:
    """One item's context on a worker: the candidate table and the pass's fleets."""

    table: CandidateTable
    base: Fleet
    fleets: tuple[Fleet, ...] = ()
    optimise: bool = True


@dataclass(frozen=True)
class Item:
    """One draw (``z`` set) or grid point (``z`` None) to run."""

    kind: str
    index: int
    z: np.ndarray | None
    point: GridPoint


def run_item(shared: Shared, item: Item) -> dict[str, Any]:
    """Re-optimise and re-evaluate under *item*; a failure is recorded with its error."""
    record: dict[str, Any] = {"kind": item.kind, "index": item.index}
    try:
        inputs = drawn_inputs(shared.table, item.z, item.point)
        if shared.optimise:
            plan = solve(inputs, baselines=False)
            record["status"] = plan.status.value
            if plan.has_solution:
                fleet = fleet_of(plan)
                record["optimal"] = evaluate_fleet(fleet, inputs)
                record["fleet"] = fleet
            else:
                record["messages"] = list(plan.solve.messages)
        record["base"] = evaluate_fleet(shared.base, inputs)
        if shared.fleets:
            record["fleets"] = [evaluate_fleet(f, inputs) for f in shared.fleets]
    except Exception as exc:  # recorded, never dropped: the sweep reports failed draws
        record["status"] = "failed"
        record["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return record


def run_batch(table: CandidateTable, task: tuple[Pass, list[Item]]) -> list[dict[str, Any]]:
    """:func:`run_item` over a batch of one pass, in order (the task every engine runs; the
    engine sent *table* to the worker once)."""
    spec, items = task
    shared = Shared(table, spec.base, spec.fleets, spec.optimise)
    return [run_item(shared, item) for item in items]
