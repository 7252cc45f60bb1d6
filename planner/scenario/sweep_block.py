"""The ``sweep:`` block of a scenario: grids of what-if values and the uncertainty draws.

``wattgpu sweep`` (:mod:`planner.sweep`) reads it; ``wattgpu plan`` ignores it. Every grid axis
is a list of values or a range (``{start: 1.0, stop: 1.3, steps: 4}``: ``steps`` evenly spaced
values from start to stop, both included). The grid is the cartesian product of the axes given;
each grid point is re-planned at the point estimate (no draws). Values are checked like the
scenario's own fields: finite, non-negative, below the scenario limits — a range's ``start`` and
``stop`` (hence every value between them) against the same bounds as a list's values. An error
names the field as ``--set`` writes it (``sweep.grid.load_growth[1]``,
``sweep.grid.load_growth.stop``), never the form's tag.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, TypeAdapter, ValidationError, WrapValidator
from pydantic_core import InitErrorDetails

from planner.scenario.limits import (
    MAX_BUDGET_USD,
    MAX_GPUS,
    MAX_GRID_G_CO2_PER_KWH,
    MAX_POWER_CAP_KW,
    MAX_PROFILE_MULTIPLIER,
    MAX_USD_PER_KWH,
)
from planner.scenario.sections import StrictModel

#: Most values of one grid axis range.
MAX_AXIS_STEPS = 1_000
#: Most uncertainty draws of one sweep (``--draws``; more needs ``--force``).
MAX_DRAWS = 100_000
#: Most grid points (the product of the axes' lengths) without ``--force``.
MAX_GRID_POINTS = 10_000
#: Most draws even with ``--force``: a sweep holds every draw's record in memory and writes
#: about 1 KB of JSON per draw (a 20,000-draw sweep of the paper example: 21 MB, 0.5 GB peak).
FORCED_MAX_DRAWS = 1_000_000
#: Most grid points even with ``--force`` (each point is a full plan).
FORCED_MAX_GRID_POINTS = 100_000


class AxisRange(StrictModel):
    """``steps`` evenly spaced values from ``start`` to ``stop`` (both included)."""

    start: float = Field(ge=0)
    """First value (>= 0)."""
    stop: float = Field(ge=0)
    """Last value (>= 0)."""
    steps: int = Field(ge=1, le=MAX_AXIS_STEPS)
    """Number of values (1 gives ``start`` alone)."""

    def values(self) -> tuple[float, ...]:
        """The values of the range, in order: ``start`` and ``stop`` exactly, those between
        never outside them (so within the bounds both were checked against)."""
        if self.steps == 1:
            return (self.start,)
        low, high = min(self.start, self.stop), max(self.start, self.stop)
        last = self.steps - 1
        inner = (self.start + (self.stop - self.start) * (i / last) for i in range(1, last))
        return (self.start, *(min(max(v, low), high) for v in inner), self.stop)


_TAGS = ("values", "range")


def _axis_kind(value: Any) -> str:
    return "range" if isinstance(value, dict) or isinstance(value, AxisRange) else "values"


def _details(exc: ValidationError, prefix: tuple[str | int, ...] = ()) -> list[InitErrorDetails]:
    """*exc*'s errors with *prefix* before each location and the form's tag taken out of it
    (``("values", 1)`` -> ``(1,)``, ``("range", "stop")`` -> ``("stop",)``)."""
    details: list[InitErrorDetails] = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        detail: InitErrorDetails = {
            "type": err["type"],
            "loc": prefix + (loc[1:] if loc and loc[0] in _TAGS else loc),
            "input": err["input"],
        }
        if "ctx" in err:
            detail["ctx"] = err["ctx"]
        details.append(detail)
    return details


def _untagged(exc: ValidationError) -> ValidationError:
    """*exc* without the form's tag in its locations (*exc* itself when pydantic cannot rebuild
    one of its errors)."""
    try:
        return ValidationError.from_exception_data(exc.title, _details(exc))
    except (KeyError, TypeError, ValueError):
        return exc


def _bounded(number: Any) -> WrapValidator:
    """The validator of a grid axis: the list or range as parsed (errors without the form's
    tag), then a range's ``start`` and ``stop`` checked against *number* (the bounds of the
    axis's values, as a list's are) and every value the range gives too."""
    check = TypeAdapter(number)

    def errors_of(value: float, loc: tuple[str, ...]) -> list[InitErrorDetails]:
        try:
            check.validate_python(value)
        except ValidationError as exc:
            return _details(exc, loc)
        return []

    def validate(value: Any, handler: Any) -> Any:
        try:
            axis = handler(value)
        except ValidationError as exc:
            raise _untagged(exc) from None
        if isinstance(axis, AxisRange):
            found = errors_of(axis.start, ("start",)) + errors_of(axis.stop, ("stop",))
            if not found:  # a safeguard: values() keeps each value between start and stop
                found = next((e for v in axis.values() if (e := errors_of(v, ()))), [])
            if found:
                raise ValidationError.from_exception_data("AxisRange", found)
        return axis

    return WrapValidator(validate)


Multiplier = Annotated[float, Field(ge=0, le=MAX_PROFILE_MULTIPLIER)]
Price = Annotated[float, Field(ge=0, le=MAX_USD_PER_KWH)]
Carbon = Annotated[float, Field(ge=0, le=MAX_GRID_G_CO2_PER_KWH)]
Count = Annotated[int, Field(ge=0, le=MAX_GPUS)]
Cap = Annotated[float, Field(gt=0, le=MAX_POWER_CAP_KW)]
Budget = Annotated[float, Field(gt=0, le=MAX_BUDGET_USD)]

#: A list of values or an :class:`AxisRange` within the same bounds (one error message, not one
#: per form). A range of ``gpu_available`` is checked as numbers: its values are rounded down.
LoadAxis = Annotated[
    Annotated[list[Multiplier], Field(min_length=1), Tag("values")]
    | Annotated[AxisRange, Tag("range")],
    Discriminator(_axis_kind),
    _bounded(Multiplier),
]
PriceAxis = Annotated[
    Annotated[list[Price], Field(min_length=1), Tag("values")] | Annotated[AxisRange, Tag("range")],
    Discriminator(_axis_kind),
    _bounded(Price),
]
CarbonAxis = Annotated[
    Annotated[list[Carbon], Field(min_length=1), Tag("values")]
    | Annotated[AxisRange, Tag("range")],
    Discriminator(_axis_kind),
    _bounded(Carbon),
]
CountAxis = Annotated[
    Annotated[list[Count], Field(min_length=1), Tag("values")] | Annotated[AxisRange, Tag("range")],
    Discriminator(_axis_kind),
    _bounded(Annotated[float, Field(ge=0, le=MAX_GPUS)]),
]
CapAxis = Annotated[
    Annotated[list[Cap], Field(min_length=1), Tag("values")] | Annotated[AxisRange, Tag("range")],
    Discriminator(_axis_kind),
    _bounded(Cap),
]
BudgetAxis = Annotated[
    Annotated[list[Budget], Field(min_length=1), Tag("values")]
    | Annotated[AxisRange, Tag("range")],
    Discriminator(_axis_kind),
    _bounded(Budget),
]


class SweepGrid(StrictModel):
    """Grid axes (each a list of values or a range); the grid is their cartesian product."""

    load_growth: LoadAxis | None = None
    """Multiplier of every model's load (1.3 = 30 % growth)."""
    model_load: dict[str, LoadAxis] | None = None
    """Per model entry name: a multiplier of that entry's load."""
    electricity_usd_per_kwh: PriceAxis | None = None
    """Electricity price (USD per facility kWh)."""
    grid_g_co2_per_kwh: CarbonAxis | None = None
    """Grid carbon intensity (g CO2e per kWh) in every period: a grid point replaces the
    scenario's grid profile (``disclosure.grid_profile_g_co2_per_kwh``) by this flat factor."""
    gpu_available: dict[str, CountAxis] | None = None
    """Per GPU type (catalog id as in ``gpus:``): GPUs available (a range is rounded down)."""
    power_cap_kw: CapAxis | None = None
    """Facility power cap (kW)."""
    budget_usd: BudgetAxis | None = None
    """Budget over the horizon (USD)."""


class SweepBlock(StrictModel):
    """What ``wattgpu sweep`` varies: grids and uncertainty draws (docs/sweep.md)."""

    grid: SweepGrid = Field(default_factory=SweepGrid)
    """What-if axes, re-planned at the point estimate."""
    draws: int = Field(0, ge=0, le=FORCED_MAX_DRAWS)
    """Uncertainty draws (``--draws`` overrides; at most 100,000 without ``--force``, 1,000,000
    with it)."""
    seed: int = Field(0, ge=0, le=2**63 - 1)
    """Seed of the draws (``numpy.random.SeedSequence``)."""
    sampler: Literal["sobol", "lhs"] = "sobol"
    """Quasi-random sampler of ``scipy.stats.qmc``: scrambled Sobol or Latin hypercube."""
    arrival_rate_sd: float = Field(0.1, ge=0, le=3)
    """Log-sd of each model entry's arrival rate (0.1: about ±10 % at one sd)."""
    idle_power_sd: float = Field(0.1, ge=0, le=3)
    """Log-sd of each GPU type's idle power (one draw per GPU type)."""

    @property
    def has_axis(self) -> bool:
        """True when the block gives a grid axis (so its grid has a point)."""
        return any(getattr(self.grid, key) for key in SweepGrid.model_fields)
