"""The optimiser's result: :class:`Plan`, its accounting and invariant checks.

Its JSON contract is :func:`planner.documents.plan.plan_document` (documents sit above results).

Accounting (one place, shared by the optimiser's objective, the plan and the baselines):

* GPU power of ``n`` replicas of a candidate serving x req/s together (spread evenly):
  ``n · curve(x / n)``, the candidate's power curve (linear between its knots; for hand-built
  candidates without a curve ``idle_power_w_per_replica + energy_j_per_request · rate``).
  Energy over a period of h hours: W × h / 1000 = kWh.
* ``energy_kwh`` = GPU (IT) energy; ``facility_energy_kwh`` = GPU energy × PUE.
* ``gpu_cost_usd`` = replicas × usd_per_hour_per_replica × horizon hours;
  ``energy_cost_usd`` = facility kWh × electricity $/kWh;
  ``carbon_cost_usd`` = carbon kg × carbon $/kg (0 without a carbon price);
  ``cost_usd`` = the sum of the three.
* ``carbon_kg`` = Σ_t facility kWh in period t × the grid's gCO2e/kWh in period t / 1000 (the
  grid profile when the scenario has one, else the flat factor: facility kWh × gCO2e/kWh / 1000;
  :mod:`planner.inputs.grid`).
* With regions (:mod:`planner.inputs.regions`) each allocation is accounted at its region's
  PUE, electricity price and grid; the power cap and the inventory hold per region.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from planner.inputs import (
    Candidate,
    PlanningInputs,
    grid_carbon_kg,
    surviving_capacity,
)

LOAD_TOLERANCE = 1e-5
"""Relative tolerance (of max(1, value)) of the invariant checks."""
LIMIT_RTOL = 1e-9
"""Relative tolerance to which a plan holds the budget (and the solver the power cap)."""


def over_limit(value: float, limit: float) -> float:
    """How far *value* lies above *limit* beyond :data:`LIMIT_RTOL` of it (0 within)."""
    return value - limit if value > limit + LIMIT_RTOL * abs(limit) else 0.0


class PlanStatus(StrEnum):
    """Outcome of a solve."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    ERROR = "error"
    """An internal failure only (a plan that breaks its own invariants)."""
    TIME_LIMIT = "time_limit"
    """No plan found and none proven impossible within the time limit (messages say why)."""


@dataclass(frozen=True)
class SolveInfo:
    """How the solve went."""

    seconds: float
    gap: float | None
    bound: float | None
    objective: float | None
    solver: str
    messages: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Accounting:
    """Energy, cost and carbon over the horizon (of an allocation or the fleet)."""

    energy_kwh: float
    """GPU (IT) energy (kWh)."""
    facility_energy_kwh: float
    """GPU energy × PUE (kWh)."""
    gpu_cost_usd: float
    energy_cost_usd: float
    carbon_cost_usd: float
    carbon_kg: float

    @property
    def cost_usd(self) -> float:
        """GPU rent + electricity + carbon price ($)."""
        return self.gpu_cost_usd + self.energy_cost_usd + self.carbon_cost_usd


@dataclass(frozen=True, kw_only=True)
class Allocation(Accounting):
    """Replicas of one candidate and the load they serve, with their accounting."""

    candidate: Candidate
    replicas: int
    requests_per_s_by_period: tuple[float, ...]
    power_w_per_gpu: float
    """Time-weighted mean GPU power per GPU (W)."""

    @property
    def gpus(self) -> int:
        """GPUs used: replicas × GPUs per replica."""
        return self.replicas * self.candidate.gpus_per_replica

    @property
    def itl_s_at_served_load(self) -> float:
        """Mean ITL (s) at the load each replica serves in the busiest period."""
        return max(
            itl_s_at_served_load(self.candidate, self.replicas, self.requests_per_s_by_period),
            default=self.candidate.itl_s_at_capacity,
        )


@dataclass(frozen=True, kw_only=True)
class Totals(Accounting):
    """Fleet totals over the horizon."""

    mean_power_w: float
    """Time-weighted mean GPU power of the fleet (W)."""
    peak_facility_power_kw: float
    gpus: dict[str, int]


@dataclass(frozen=True)
class BaselineResult:
    """A naive fleet planned by the same machinery."""

    name: str
    description: str
    feasible: bool
    status: str
    reason: str = ""
    totals: Totals | None = None


@dataclass(frozen=True)
class Plan:
    """Result of :func:`planner.solve.optimize.solve`."""

    inputs: PlanningInputs
    status: PlanStatus
    solve: SolveInfo
    allocations: tuple[Allocation, ...] = ()
    totals: Totals | None = None
    objective_breakdown: dict[str, float] = field(default_factory=dict)
    baselines: tuple[BaselineResult, ...] = ()

    @property
    def has_solution(self) -> bool:
        """True when the plan has allocations to report (optimal or feasible)."""
        return self.status in (PlanStatus.OPTIMAL, PlanStatus.FEASIBLE)


def period_power_w(c: Candidate, replicas: int, x_by_period: tuple[float, ...]) -> list[float]:
    """GPU power (W) of *replicas* replicas of *c* serving ``x_by_period`` req/s."""
    if replicas <= 0:
        return [0.0 for _ in x_by_period]
    return [replicas * c.power_w_per_replica(x / replicas) for x in x_by_period]


def itl_s_at_served_load(
    c: Candidate, replicas: int, x_by_period: tuple[float, ...]
) -> list[float]:
    """Mean ITL (s) per period of *replicas* replicas of *c* serving ``x_by_period`` req/s."""
    return [c.itl_s_at(x / replicas if replicas else 0.0) for x in x_by_period]


def make_allocation(
    c: Candidate, replicas: int, x_by_period: tuple[float, ...], inputs: PlanningInputs
) -> Allocation:
    """Account energy, cost and carbon of one allocation (see the module docstring)."""
    power_w = period_power_w(c, replicas, x_by_period)
    site = inputs.site(c)
    energy_kwh = sum(p * h for p, h in zip(power_w, inputs.period_hours, strict=True)) / 1000.0
    facility_kwh = energy_kwh * site.pue
    carbon_kg = grid_carbon_kg(
        [p * h / 1000.0 * site.pue for p, h in zip(power_w, inputs.period_hours, strict=True)],
        facility_kwh,
        site.grid_by_period(inputs.periods),
    )
    gpus = replicas * c.gpus_per_replica
    return Allocation(
        candidate=c,
        replicas=replicas,
        requests_per_s_by_period=x_by_period,
        energy_kwh=energy_kwh,
        facility_energy_kwh=facility_kwh,
        gpu_cost_usd=replicas * c.usd_per_hour_per_replica * inputs.hours,
        energy_cost_usd=facility_kwh * site.electricity_usd_per_kwh,
        carbon_cost_usd=carbon_kg * (inputs.carbon_usd_per_kg or 0.0),
        carbon_kg=carbon_kg,
        power_w_per_gpu=energy_kwh * 1000.0 / inputs.hours / gpus if gpus else 0.0,
    )


def make_totals(allocations: tuple[Allocation, ...], inputs: PlanningInputs) -> Totals:
    """Sum allocations into fleet totals."""
    gpus: dict[str, int] = {}
    peak_w = [0.0] * inputs.periods
    pue = inputs.pue
    for a in allocations:
        for gpu, held in a.candidate.gpu_use:  # a disaggregated unit: both pools' types
            gpus[gpu] = gpus.get(gpu, 0) + a.replicas * held
        scale = inputs.site(a.candidate).pue if inputs.regions else 1.0  # facility W by site
        for t, p in enumerate(period_power_w(a.candidate, a.replicas, a.requests_per_s_by_period)):
            peak_w[t] += p * scale if inputs.regions else p
    if inputs.regions:
        pue = 1.0  # peak_w holds facility watts already
    energy_kwh = sum(a.energy_kwh for a in allocations)
    return Totals(
        energy_kwh=energy_kwh,
        facility_energy_kwh=sum(a.facility_energy_kwh for a in allocations),
        gpu_cost_usd=sum(a.gpu_cost_usd for a in allocations),
        energy_cost_usd=sum(a.energy_cost_usd for a in allocations),
        carbon_cost_usd=sum(a.carbon_cost_usd for a in allocations),
        carbon_kg=sum(a.carbon_kg for a in allocations),
        mean_power_w=energy_kwh * 1000.0 / inputs.hours,
        peak_facility_power_kw=max(peak_w, default=0.0) * pue / 1000.0,
        gpus=dict(sorted(gpus.items())),
    )


def region_totals(allocations: tuple[Allocation, ...], inputs: PlanningInputs) -> dict[str, Totals]:
    """Per region (in the inputs' order), the totals of its allocations (empty without
    regions)."""
    out: dict[str, Totals] = {}
    for site in inputs.regions:
        mine = tuple(a for a in allocations if a.candidate.region == site.name)
        out[site.name] = make_totals(mine, inputs)
    return out


def _close(value: float, limit: float) -> bool:
    """value <= limit within the relative tolerance."""
    return value <= limit + LOAD_TOLERANCE * max(1.0, abs(limit))


@dataclass
class _Tally:
    """What a plan's allocations add up to, per model entry, GPU type and period."""

    served: dict[str, list[float]]
    replicas: dict[str, int]
    gpus: dict[str, int]
    """GPUs used per :func:`~planner.inputs.stock_key` (GPU type, per region with regions)."""
    power_w: dict[str, list[float]]
    """Per site (region; ``""`` without regions), GPU watts per period."""
    regions: dict[str, set[str]] = field(default_factory=dict)
    """Per model entry, the regions its allocations run in."""


def _allocation_problems(a: Allocation, inputs: PlanningInputs, tally: _Tally) -> list[str]:
    """Problems of one allocation (SLA, sign, capacity) after adding it to *tally*."""
    c = a.candidate
    m = inputs.model(c.name)
    problems: list[str] = []
    if not c.feasible:
        problems.append(f"allocation {c.label}: uses an infeasible candidate ({c.reason})")
    if c.itl_s_at_capacity > m.itl_sla_s * (1 + LOAD_TOLERANCE):
        problems.append(f"SLA {c.label}: ITL {c.itl_s_at_capacity:.4g} s > SLA {m.itl_sla_s:.4g} s")
    if a.replicas < 0:
        problems.append(f"allocation {c.label}: negative replicas {a.replicas}")
    tally.replicas[c.name] += a.replicas
    for key, held in c.stock_use:  # a disaggregated unit: both pools' types, in its site
        tally.gpus[key] = tally.gpus.get(key, 0) + a.replicas * held
    if a.replicas > 0:
        tally.regions.setdefault(c.name, set()).add(c.region)
    cap = a.replicas * c.max_requests_per_s_per_replica
    for t, x in enumerate(a.requests_per_s_by_period):
        if x < -LOAD_TOLERANCE:
            problems.append(f"load {c.label} period {t}: negative load {x:.6g} req/s")
        if not _close(x, cap):
            problems.append(f"capacity[{c.label},{t}]: serves {x:.6g} req/s > {cap:.6g}")
        tally.served[c.name][t] += x
    site_w = tally.power_w[c.region]
    for t, p in enumerate(period_power_w(c, a.replicas, a.requests_per_s_by_period)):
        site_w[t] += p
    return problems


def _demand_problems(inputs: PlanningInputs, tally: _Tally) -> list[str]:
    """Load served per model and period, and minimum replicas."""
    problems: list[str] = []
    for m in inputs.models:
        for t, (want, got) in enumerate(
            zip(m.requests_per_s_by_period, tally.served[m.name], strict=True)
        ):
            if abs(want - got) > LOAD_TOLERANCE * max(1.0, want):
                problems.append(
                    f"load_served[{m.name},{t}]: serves {got:.6g} req/s of {want:.6g} req/s"
                )
        if tally.replicas[m.name] == 0 and max(m.requests_per_s_by_period, default=0.0) > 0:
            problems.append(f"load_served[{m.name}]: a load > 0 with no replica")
        if tally.replicas[m.name] < m.min_replicas:
            problems.append(
                f"min_replicas[{m.name}]: {tally.replicas[m.name]} replicas < {m.min_replicas}"
            )
    return problems


def failover_capacity(plan: Plan, name: str) -> float | None:
    """Capacity (req/s) model entry *name* keeps after its worst failover losses (None when it
    has no failover; :mod:`planner.inputs.failover`)."""
    inputs = plan.inputs
    failover = inputs.model(name).failover
    if failover is None:
        return None
    mine = [a for a in plan.allocations if a.candidate.name == name]
    caps = [a.candidate.max_requests_per_s_per_replica for a in mine]
    per_unit = [inputs.replicas_per_unit(a.candidate) for a in mine]
    left = surviving_capacity(caps, per_unit, failover.count, [a.replicas for a in mine])
    return float(left[0])


def _failover_problems(plan: Plan, inputs: PlanningInputs) -> list[str]:
    """Model entries whose capacity after the worst failover losses is below their peak."""
    problems = []
    for m in inputs.models:
        left = failover_capacity(plan, m.name)
        peak = max(m.requests_per_s_by_period)
        if left is not None and m.failover is not None and not _close(peak, left):
            problems.append(
                f"failover[{m.name}]: {left:.6g} req/s left after losing "
                f"{m.failover.text} < peak {peak:.6g} req/s"
            )
    return problems


def _fleet_problems(plan: Plan, inputs: PlanningInputs, tally: _Tally) -> list[str]:
    """Inventory, facility power cap per period and budget."""
    problems: list[str] = []
    for gpu, used in sorted(tally.gpus.items()):
        available = inputs.stock.get(gpu)
        if available is not None and used > available:
            problems.append(f"inventory[{gpu}]: uses {used} GPUs, has {available}")
    for site in inputs.sites:
        cap = site.power_cap_kw
        if cap is None:
            continue
        where = f"{site.name}," if site.name else ""
        for t, p in enumerate(tally.power_w[site.name]):
            kw = p * site.pue / 1000.0
            if not _close(kw, cap):
                problems.append(f"power_cap[{where}{t}]: {kw:.6g} kW > cap {cap:.6g} kW")
    for name, regions in sorted(tally.regions.items()):
        if len(regions) > 1:
            problems.append(f"regions[{name}]: placed in {sorted(regions)}, not in one region")
    if inputs.budget_usd is not None and plan.totals is not None:
        cost, budget = plan.totals.cost_usd, inputs.budget_usd
        if over_limit(cost, budget):  # as the solver holds it, not LOAD_TOLERANCE
            problems.append(f"budget: costs {cost:.10g} $ > budget {budget:.10g} $")
    return problems


def check_invariants(plan: Plan, inputs: PlanningInputs) -> list[str]:
    """Every violated invariant of *plan*, one message each ([] when the plan is sound).

    Checked independently of the solver: load served per model and period, capacity
    (x <= replicas × capacity), SLA (only feasible candidates with ITL at capacity within the
    SLA), integral replicas, inventory, facility power cap per period, budget, minimum replicas
    and failover (capacity after the worst losses covers the peak); with regions, inventory and
    power cap per region and every entry in one region.
    """
    if not plan.has_solution:
        return []
    tally = _Tally(
        served={m.name: [0.0] * inputs.periods for m in inputs.models},
        replicas={m.name: 0 for m in inputs.models},
        gpus={},
        power_w={site.name: [0.0] * inputs.periods for site in inputs.sites},
    )
    problems: list[str] = []
    by_key = {  # the allocated entries' candidates only (a key starts with its entry's name)
        c.key: c
        for name in dict.fromkeys(a.candidate.name for a in plan.allocations)
        for c in inputs.candidates_of(name)
    }
    for a in plan.allocations:
        if by_key.get(a.candidate.key) != a.candidate:
            problems.append(f"allocation {a.candidate.label}: not one of the inputs' candidates")
            continue
        problems += _allocation_problems(a, inputs, tally)
    return (
        problems
        + _demand_problems(inputs, tally)
        + _fleet_problems(plan, inputs, tally)
        + _failover_problems(plan, inputs)
    )
