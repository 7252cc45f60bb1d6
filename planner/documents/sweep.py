"""The sweep JSON (``wattgpu sweep --format json``) as a typed document.

Nothing in it depends on the engine, the worker count or the wall clock, so the same sweep
gives the same bytes everywhere (docs/sweep.md). Quantiles are P10/P50/P90 over the draws that
produced a result (linear interpolation, numpy's default); ``None`` where no draw did.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from planner.documents.base import Document
from planner.documents.flags import FlagDocument

#: Samplers of the draws (``sweep.sampler``, :func:`planner.sweep.draws.standard_normals`).
SAMPLERS = ("sobol", "lhs")
MAX_SEED = 2**63 - 1
"""The largest seed ``sweep.seed`` takes."""


def _bad(message: str, **context: Any) -> PydanticCustomError:
    """A validation error whose message reads as the file's problem (no "Value error, "):
    *message* formatted with *context* by ``str.format`` (so ``{value!r}`` works)."""
    return PydanticCustomError("sweep_value", "{message}", {"message": message.format(**context)})


def _share(value: float | None, what: str) -> None:
    if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise _bad("{what} must be a share in [0, 1], got {value}", what=what, value=value)


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
    draws_time_limit: int = 0
    """Draws whose re-optimisation stopped at the time limit with no plan found and none proven
    impossible (0 in sweeps written before the count)."""

    @field_validator(
        "draws", "draws_with_plan", "draws_infeasible", "draws_failed", "draws_time_limit"
    )
    @classmethod
    def _count(cls, value: int) -> int:
        if value < 0:
            raise _bad("must be >= 0, got {value}", value=value)
        return value

    @field_validator("power_cap_probability", "budget_probability", "all_met_probability")
    @classmethod
    def _probability(cls, value: float | None) -> float | None:
        _share(value, "a probability")
        return value

    @field_validator("sla_probability")
    @classmethod
    def _probabilities(cls, value: dict[str, float | None]) -> dict[str, float | None]:
        for name, share in value.items():
            _share(share, f"the probability of {name!r}")
        return value


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

    @field_validator("seed")
    @classmethod
    def _seed(cls, value: int) -> int:
        if not 0 <= value <= MAX_SEED:
            raise _bad("must be in [0, 2**63 - 1], got {value}", value=value)
        return value

    @field_validator("sampler")
    @classmethod
    def _sampler(cls, value: str) -> str:
        if value not in SAMPLERS:
            raise _bad("unknown sampler {value!r}; sobol or lhs", value=value)
        return value

    @field_validator("draws")
    @classmethod
    def _draws(cls, value: int) -> int:
        if value < 0:
            raise _bad("must be >= 0, got {value}", value=value)
        return value

    @field_validator("summary")
    @classmethod
    def _summary(cls, value: SummaryDocument | None, info: ValidationInfo) -> Any:
        draws = info.data.get("draws")
        if draws is None:  # draws itself is invalid (reported)
            return value
        if draws == 0 and value is not None:
            raise _bad("must be null when draws is 0 (a summary is of the draws)")
        if draws > 0 and value is None:
            raise _bad(
                "is null but draws is {draws}; a sweep with draws has a summary", draws=draws
            )
        if value is not None and value.draws != draws:
            raise _bad("counts {n} draws but draws is {draws}", n=value.draws, draws=draws)
        if value is not None and (
            value.draws_with_plan
            + value.draws_infeasible
            + value.draws_failed
            + value.draws_time_limit
            > draws
        ):
            raise _bad(
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
            raise _bad(
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
                    raise _bad(
                        "{n} of them count as {key}, the summary says {said}",
                        n=n,
                        key=key,
                        said=getattr(summary, key),
                    )
        return value


def _in_order(records: list[RecordDocument], what: str) -> None:
    """Each record's index is its position (draw and grid order)."""
    for i, r in enumerate(records):
        if r.index != i:
            raise _bad(
                "entry {i} has index {index}; each {what}'s index is its position in the list",
                i=i,
                index=r.index,
                what=what,
            )
