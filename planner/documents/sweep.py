"""The sweep JSON (``wattgpu sweep --format json``) as a typed document.

Nothing in it depends on the engine, the worker count or the wall clock, so the same sweep
gives the same bytes everywhere (docs/sweep.md). Quantiles are P10/P50/P90 over the draws that
produced a result (linear interpolation, numpy's default); ``None`` where no draw did.
"""

from __future__ import annotations

from planner.documents.base import Document
from planner.documents.flags import FlagDocument


class QuantilesDocument(Document):
    """P10, P50, P90 and the mean over the draws."""

    p10: float | None
    p50: float | None
    p90: float | None
    mean: float | None


class FiguresDocument(Document):
    """Quantiles of the totals over the horizon."""

    energy_kwh: QuantilesDocument
    facility_energy_kwh: QuantilesDocument
    cost_usd: QuantilesDocument
    carbon_kg: QuantilesDocument
    objective: QuantilesDocument


class OutcomeDocument(Document):
    """One fleet under one draw or grid point."""

    energy_kwh: float
    facility_energy_kwh: float
    cost_usd: float
    carbon_kg: float
    objective: float
    peak_facility_power_kw: float
    sla_met: dict[str, bool]
    """Per model entry: every deployment's load per replica within its drawn capacity."""
    power_cap_met: bool
    budget_met: bool
    inventory_met: bool
    """The fleet's GPUs per type within the inventory (grid points may lower it)."""


class FleetDocument(Document):
    """A fleet: its deployments and GPUs per type."""

    fleet: str
    """``entry GPU tpN xREPLICAS; ...`` in the plan's candidate order."""
    gpus: dict[str, int]


class RecordDocument(Document):
    """One draw or grid point: the status of its re-optimisation and both outcomes."""

    index: int
    status: str
    """The re-optimised plan's status, or ``failed`` (with ``error``)."""
    error: str | None = None
    messages: list[str] = []
    """Why the re-optimisation found no plan (infeasible draws)."""
    fleet: FleetDocument | None = None
    """The re-optimised fleet (None without a plan)."""
    optimal: OutcomeDocument | None = None
    """The re-optimised plan under this draw."""
    base: OutcomeDocument | None = None
    """The base (point-estimate) plan re-evaluated under this draw."""
    point: dict[str, float | dict[str, float]] | None = None
    """The grid point (grid records only)."""


class AlternativeDocument(Document):
    """A fleet or GPU mix and the share of draws whose optimum it is."""

    fleet: str
    gpus: dict[str, int]
    share: float


class StabilityDocument(Document):
    """How often the re-optimised fleet equals the base fleet, and what else is chosen."""

    same_fleet_share: float | None
    same_gpu_mix_share: float | None
    alternatives: list[AlternativeDocument]
    """The most frequent re-optimised fleets (at most 10), most frequent first."""
    gpu_mix_frequency: list[AlternativeDocument]
    """Every re-optimised GPU mix (``fleet`` empty), most frequent first."""


class FanDocument(Document):
    """Per period: quantiles of facility energy (kWh) over the draws."""

    period_hours: list[float]
    base_p10: list[float]
    base_p50: list[float]
    base_p90: list[float]
    optimal_p10: list[float]
    optimal_p50: list[float]
    optimal_p90: list[float]


class TornadoBarDocument(Document):
    """Mean re-optimised cost with a factor low and high (draws: lowest and highest fifth of
    its normal; grid: the axis's first and last value, averaged over the other axes)."""

    factor: str
    source: str
    """``draws`` or ``grid``."""
    low_cost_usd: float
    high_cost_usd: float
    swing_usd: float


class SummaryDocument(Document):
    """What the draws say: quantiles, probabilities, regret, stability, fan, tornado."""

    draws: int
    draws_with_plan: int
    draws_infeasible: int
    draws_failed: int
    optimal: FiguresDocument
    """The re-optimised plans."""
    base: FiguresDocument
    """The base plan re-evaluated."""
    sla_probability: dict[str, float | None]
    """Per model entry: the share of draws in which the base plan meets its SLA."""
    power_cap_probability: float | None
    budget_probability: float | None
    all_met_probability: float | None
    """Every SLA, the cap and the budget together."""
    regret_objective: QuantilesDocument
    """Base objective − re-optimised objective, over the draws with a plan in which the base plan
    meets every SLA, the cap and the budget."""
    regret_relative: QuantilesDocument
    """Regret / re-optimised objective."""
    stability: StabilityDocument
    fan: FanDocument
    tornado: list[TornadoBarDocument]


class RobustCandidateDocument(Document):
    """One fleet the robust choice considered, evaluated on every draw."""

    fleet: str
    gpus: dict[str, int]
    seen_share: float
    """Share of draws whose optimum this fleet is (the base plan: its own share)."""
    is_base: bool
    expected_objective: float
    expected_cost_usd: float
    sla_probability: dict[str, float]
    power_cap_probability: float
    budget_probability: float
    qualifies: bool


class RobustDocument(Document):
    """``--choose robust``: the least expected objective among the fleets seen that meet
    every SLA, the cap and the budget in at least ``sla_probability`` of the draws."""

    sla_probability: float
    chosen: RobustCandidateDocument | None
    reason: str
    considered: list[RobustCandidateDocument]


class SweepDocument(Document):
    """A sweep: settings, the base plan, per draw and grid point results, and the summary."""

    scenario: str
    method: str
    seed: int
    sampler: str
    draws: int
    sigmas: dict[str, dict[str, float | dict[str, float]]]
    """Log-sds the draws used: per target gpu_sd (per GPU), llm_sd, row_sd_light/heavy; and
    arrival_rate_sd, idle_power_sd."""
    base: FleetDocument
    base_outcome: OutcomeDocument
    """The base plan at the point estimate."""
    summary: SummaryDocument | None
    """None without draws."""
    grid_axes: list[str]
    grid: list[RecordDocument]
    robust: RobustDocument | None
    records: list[RecordDocument]
    """Every draw, in draw order (failed draws with their error)."""
    flags: list[FlagDocument] = []
    """Base-plan allocations flagged for uncertainty (docs/sweep.md)."""
