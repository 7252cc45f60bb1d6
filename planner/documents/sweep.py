"""The sweep JSON (``wattgpu sweep --format json``) as a typed document.

Nothing in it depends on the engine, the worker count or the wall clock, so the same sweep
gives the same bytes everywhere (docs/sweep.md). Quantiles are P10/P50/P90 over the draws that
produced a result (linear interpolation, numpy's default); ``None`` where no draw did. What no
sweep writes is refused on reading, and its JSON Schema says the same bounds
(:mod:`planner.documents.sweep_values`): shares outside [0, 1], negative amounts and counts,
quantiles out of order, an unknown status, sampler or tornado source.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, ValidationInfo, field_validator, model_validator

from planner.documents.base import Document
from planner.documents.flags import FlagDocument
from planner.documents.pools import absent
from planner.documents.sweep_values import (
    Amount,
    Amounts,
    Count,
    Share,
    ascending,
    bad,
    bounded,
    one_of,
)
from planner.documents.verify_sweep import sweep_problems

#: Samplers of the draws (``sweep.sampler``, :func:`planner.sweep.draws.standard_normals`).
SAMPLERS = ("sobol", "lhs")
#: A record's ``status``: the re-optimisation's plan status, or ``failed`` (with ``error``).
STATUSES = ("optimal", "feasible", "infeasible", "error", "time_limit", "failed")
MAX_SEED = 2**63 - 1
"""The largest seed ``sweep.seed`` takes."""


class QuantilesDocument(Document):
    """P10, P50, P90 and the mean over the draws (P10 <= P50 <= P90)."""

    p10: float | None
    p50: float | None
    p90: float | None
    mean: float | None

    @model_validator(mode="after")
    def _ordered(self) -> Any:
        ascending((self.p10, self.p50, self.p90), "p10, p50, p90")
        if (self.mean is None) != (self.p50 is None):
            raise bad("mean must be null exactly when the quantiles are")
        return self


class AmountQuantilesDocument(QuantilesDocument):
    """Quantiles of a quantity that is never negative (energy, cost, carbon, objective)."""

    p10: Amount | None
    p50: Amount | None
    p90: Amount | None
    mean: Amount | None


class FiguresDocument(Document):
    """Quantiles of the totals over the horizon."""

    energy_kwh: AmountQuantilesDocument
    facility_energy_kwh: AmountQuantilesDocument
    cost_usd: AmountQuantilesDocument
    carbon_kg: AmountQuantilesDocument
    objective: AmountQuantilesDocument


class OutcomeDocument(Document):
    """One fleet under one draw or grid point."""

    energy_kwh: Amount
    facility_energy_kwh: Amount
    cost_usd: Amount
    carbon_kg: Amount
    objective: Amount
    peak_facility_power_kw: Amount
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
    gpus: dict[str, Count]


class RecordDocument(Document):
    """One draw or grid point: the status of its re-optimisation and both outcomes."""

    index: Count
    status: Annotated[str, *one_of(STATUSES, "status")]
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
    point: dict[str, Amounts] | None = None
    """The grid point (grid records only)."""


class AlternativeDocument(Document):
    """A fleet or GPU mix and the share of draws whose optimum it is."""

    fleet: str
    gpus: dict[str, Count]
    share: Share


class StabilityDocument(Document):
    """How often the re-optimised fleet equals the base fleet, and what else is chosen."""

    same_fleet_share: Share | None
    same_gpu_mix_share: Share | None
    alternatives: list[AlternativeDocument]
    """The most frequent re-optimised fleets (at most 10), most frequent first."""
    gpu_mix_frequency: list[AlternativeDocument]
    """Every re-optimised GPU mix (``fleet``: the mix as text, ``GPU×n, ...``), most frequent
    first."""


class FanDocument(Document):
    """Per period: quantiles of facility energy (kWh) over the draws."""

    period_hours: list[Amount]
    base_p10: list[Amount]
    base_p50: list[Amount]
    base_p90: list[Amount]
    optimal_p10: list[Amount]
    optimal_p50: list[Amount]
    optimal_p90: list[Amount]

    @model_validator(mode="after")
    def _per_period(self) -> Any:
        n = len(self.period_hours)
        for which in ("base", "optimal"):
            bands = [getattr(self, f"{which}_p{q}") for q in (10, 50, 90)]
            if any(len(band) != n for band in bands):
                raise bad("{which}_p10/p50/p90 must have one value per period", which=which)
            for p, values in enumerate(zip(*bands, strict=True)):
                ascending(values, f"{which}_p10, {which}_p50, {which}_p90 of period {p}")
        return self


class TornadoBarDocument(Document):
    """Mean re-optimised cost with a factor low and high (draws: lowest and highest fifth of
    its normal; grid: the axis's first and last value, averaged over the grid points matched at
    both ends)."""

    factor: str
    source: Annotated[str, *one_of(("draws", "grid"), "source")]
    """``draws`` or ``grid``."""
    low_cost_usd: Amount
    high_cost_usd: Amount
    swing_usd: float
    points_left_out: Count | None = Field(None, exclude_if=absent)
    """Grid bars: the grid points at the axis's first and last value left out of the two means.
    The means are over matched pairs (the points at the two ends with the same values on every
    other axis, both with a plan); a point without a plan, or whose pair has none, is left out
    (omitted for draw bars, and in sweeps written before the count)."""


class SummaryDocument(Document):
    """What the draws say: quantiles, probabilities, regret, stability, fan, tornado."""

    draws: Count
    draws_with_plan: Count
    draws_infeasible: Count
    draws_failed: Count
    optimal: FiguresDocument
    """The re-optimised plans."""
    base: FiguresDocument
    """The base plan re-evaluated."""
    sla_probability: dict[str, Share | None]
    """Per model entry: the share of draws in which the base plan meets its SLA."""
    power_cap_probability: Share | None
    budget_probability: Share | None
    all_met_probability: Share | None
    """Every SLA, the cap and the budget together."""
    regret_objective: QuantilesDocument
    """Base objective − re-optimised objective, over the draws with a plan in which the base plan
    meets every SLA, the cap and the budget."""
    regret_relative: QuantilesDocument
    """Regret / re-optimised objective."""
    stability: StabilityDocument
    fan: FanDocument
    tornado: list[TornadoBarDocument]
    draws_time_limit: Count = 0
    """Draws whose re-optimisation stopped at the time limit with no plan found and none proven
    impossible (0 in sweeps written before the count)."""


class RobustCandidateDocument(Document):
    """One fleet the robust choice considered, evaluated on every draw."""

    fleet: str
    gpus: dict[str, Count]
    seen_share: Share
    """Share of draws whose optimum this fleet is (the base plan: its own share)."""
    is_base: bool
    expected_objective: Amount
    expected_cost_usd: Amount
    sla_probability: dict[str, Share]
    power_cap_probability: Share
    budget_probability: Share
    qualifies: bool
    """Whether :attr:`all_met_probability` is at least the robust choice's probability."""
    all_met_probability: Share | None = None
    """Share of the draws in which every SLA, the cap and the budget hold together (in the
    same draw); None in sweeps written before it."""


class RobustDocument(Document):
    """``--choose robust``: the least expected objective among the fleets seen that meet
    every SLA, the cap and the budget together (in the same draw) in at least
    ``sla_probability`` of the draws."""

    sla_probability: Share
    chosen: RobustCandidateDocument | None
    reason: str
    considered: list[RobustCandidateDocument]


class SweepDocument(Document):
    """A sweep: settings, the base plan, per draw and grid point results, and the summary."""

    scenario: str
    method: str
    seed: Annotated[int, *bounded(0, MAX_SEED, "in [0, 2**63 - 1]")]
    sampler: Annotated[str, *one_of(SAMPLERS, "sampler")]
    draws: Count
    sigmas: dict[str, dict[str, Amounts]]
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

    def to_json_dict(self) -> dict[str, Any]:
        """The document as plain JSON values, a grid point's ``gpu_available`` counts as the
        whole numbers they are (the document holds every amount as a float)."""
        data = super().to_json_dict()
        for record in data["grid"]:
            counts = (record.get("point") or {}).get("gpu_available")
            if isinstance(counts, dict):
                record["point"]["gpu_available"] = {g: _whole(n) for g, n in counts.items()}
        return data

    def saved_problems(self) -> list[str]:
        """The summary's figures and the flags' SLA probabilities against the records, the
        tornado and the robust choice against the rest of the file
        (:func:`planner.documents.verify_sweep.sweep_problems`)."""
        return sweep_problems(self.model_dump(mode="json"))

    @field_validator("summary")
    @classmethod
    def _summary(cls, value: SummaryDocument | None, info: ValidationInfo) -> Any:
        draws = info.data.get("draws")
        if draws is None:  # draws itself is invalid (reported)
            return value
        if draws == 0 and value is not None:
            raise bad("must be null when draws is 0 (a summary is of the draws)")
        if draws > 0 and value is None:
            raise bad("is null but draws is {draws}; a sweep with draws has a summary", draws=draws)
        if value is not None and value.draws != draws:
            raise bad("counts {n} draws but draws is {draws}", n=value.draws, draws=draws)
        if value is not None and (
            value.draws_with_plan
            + value.draws_infeasible
            + value.draws_failed
            + value.draws_time_limit
            > draws
        ):
            raise bad(
                "draws_with_plan + draws_infeasible + draws_failed + draws_time_limit exceed "
                "draws ({draws})",
                draws=draws,
            )
        return value

    @field_validator("grid")
    @classmethod
    def _grid(cls, value: list[RecordDocument]) -> list[RecordDocument]:
        _in_order(value, "grid point")
        return value

    @field_validator("records")
    @classmethod
    def _records(cls, value: list[RecordDocument], info: ValidationInfo) -> Any:
        draws = info.data.get("draws")
        if draws is not None and len(value) != draws:
            raise bad(
                "holds {n} records but draws is {draws}; every draw has one record",
                n=len(value),
                draws=draws,
            )
        _in_order(value, "draw")
        summary = info.data.get("summary")
        if summary is not None and len(value) == summary.draws:
            counted = {
                "draws_with_plan": sum(r.optimal is not None for r in value),
                "draws_infeasible": sum(r.status == "infeasible" for r in value),
                "draws_failed": sum(r.status == "failed" for r in value),
                "draws_time_limit": sum(
                    r.status == "time_limit" and r.optimal is None for r in value
                ),
            }
            for key, n in counted.items():
                if getattr(summary, key) != n:
                    raise bad(
                        "{n} of them count as {key}, the summary says {said}",
                        n=n,
                        key=key,
                        said=getattr(summary, key),
                    )
        return value


def _whole(value: Any) -> Any:
    """*value* as an int when it is a whole float (a GPU count), else as it is."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _in_order(records: list[RecordDocument], what: str) -> None:
    """Each record's index is its position (draw and grid order)."""
    for i, r in enumerate(records):
        if r.index != i:
            raise bad(
                "entry {i} has index {index}; each {what}'s index is its position in the list",
                i=i,
                index=r.index,
                what=what,
            )
