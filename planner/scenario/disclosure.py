"""The scenario's optional ``disclosure`` section: what the report's disclosure fields need
beyond the plan (persona, reporting window, embodied-emissions lifetime and share, boundary
factors, water, marginal and market-based carbon intensity, an hourly grid profile, training
energy).

Every field is optional; an omitted one is reported as ``not_applicable`` with its reason (or
takes the stated default), never silently invented. The values travel in the plan JSON
(``assumptions.disclosure``) so that a saved plan reports exactly like the run that wrote it.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field, field_validator

from planner.scenario.limits import MAX_GRID_G_CO2_PER_KWH, MAX_PERIODS
from planner.scenario.rules import section_rule
from planner.scenario.sections import StrictModel, rule_error
from planner.scenario.text import check_text

Persona = Literal["provider", "consumer"]
Recipient = Literal["ai_office", "national_authorities", "downstream_providers"]
MarketBasis = Literal["contractual_instruments", "residual_mix"]
GridValue = Annotated[float, Field(ge=0, le=MAX_GRID_G_CO2_PER_KWH)]
ALL_RECIPIENTS: tuple[Recipient, ...] = (
    "ai_office",
    "national_authorities",
    "downstream_providers",
)
#: Embodied-emissions lifetime when the scenario does not set one (years).
DEFAULT_LIFETIME_YEARS = 5.0
#: Shortest embodied lifetime (a quarter, like ``tco.amortisation_years``): TS = window /
#: lifetime divides by it, and a denormal lifetime (1e-320) made TS and the SCI infinite.
MIN_LIFETIME_YEARS = 0.25
MAX_LIFETIME_YEARS = 30.0
MAX_TRAINING_KWH = 1e12
#: The last instant a reporting window can end at (Python's dates stop at year 9999).
LAST_INSTANT = dt.datetime.max.replace(tzinfo=dt.UTC)
#: Keys that need a source when their value is given: value key -> source key.
SOURCED: dict[str, str] = {
    "marginal_g_co2_per_kwh": "marginal_source",
    "market_g_co2_per_kwh": "market_source",
    "training_energy_kwh": "training_source",
    "wue_l_per_kwh": "wue_source",
}


class Disclosure(StrictModel):
    """Optional inputs of the report's disclosure fields (EU AI Act, SCI, GHG Protocol)."""

    persona: Persona = "provider"
    """Who discloses: ``provider`` (serves the model to others) or ``consumer`` (runs it for its
    own use)."""
    recipients: list[Recipient] = Field(
        default_factory=lambda: list(ALL_RECIPIENTS),
        min_length=1,
        max_length=3,
    )
    """Who the disclosure is for (GPAI Code of Practice Model Documentation Form tags)."""
    reporting_start: str | None = None
    """First day of the reporting window (ISO date, e.g. 2026-01-01); the window ends
    ``horizon_hours`` later. Omitted: the window is stated as the horizon only."""
    lifetime_years: float = Field(
        default=DEFAULT_LIFETIME_YEARS, ge=MIN_LIFETIME_YEARS, le=MAX_LIFETIME_YEARS
    )
    """Service life over which a GPU's embodied emissions are amortised (years; SCI ``TS`` =
    horizon / lifetime)."""
    resource_share: float = Field(default=1.0, gt=0, le=1)
    """Share of each planned GPU reserved for this fleet (SCI ``RS``; 1 = dedicated GPUs)."""
    host_overhead_factor: float | None = Field(default=None, ge=1, le=10)
    """Server energy / GPU board energy (host CPUs, memory, fans, storage); when given, host
    energy is approximated as GPU energy × (factor − 1). Omitted: host excluded."""
    wue_l_per_kwh: float | None = Field(default=None, ge=0, le=20)
    """Water usage effectiveness of the site (litres per kWh of IT energy)."""
    wue_source: str | None = None
    """Where the WUE comes from (required with ``wue_l_per_kwh``)."""
    marginal_g_co2_per_kwh: GridValue | None = None
    """Location-based marginal grid intensity (g CO2e per kWh), as SCI asks."""
    marginal_source: str | None = None
    """Source of the marginal intensity (required with ``marginal_g_co2_per_kwh``)."""
    marginal_year: int | None = Field(default=None, ge=1990, le=2100)
    """Year of the marginal intensity."""
    market_g_co2_per_kwh: GridValue | None = None
    """Market-based intensity (GHG Protocol Scope 2): of the contractual instruments (PPAs,
    certificates) or of the residual mix (g CO2e per kWh)."""
    market_basis: MarketBasis = "contractual_instruments"
    """What the market-based figure is: ``contractual_instruments`` or ``residual_mix``."""
    market_source: str | None = None
    """Source of the market-based figure (required with ``market_g_co2_per_kwh``)."""
    market_year: int | None = Field(default=None, ge=1990, le=2100)
    """Year of the market-based figure."""
    renewable_share: float | None = Field(default=None, ge=0, le=1)
    """Share of the electricity covered by renewable instruments (0–1; ESRS E1)."""
    grid_profile_g_co2_per_kwh: list[GridValue] | None = Field(
        default=None, min_length=1, max_length=MAX_PERIODS
    )
    """Grid intensity per planning period (g CO2e per kWh): 24 values for a daily profile, or one
    per period. The optimiser plans carbon on it (objective, carbon price, budget, every
    ``carbon_kg``); the disclosure shows hourly emissions from it; the plan JSON carries it."""
    grid_profile_source: str | None = None
    """Where the grid profile comes from."""
    training_energy_kwh: float | None = Field(default=None, ge=0, le=MAX_TRAINING_KWH)
    """Energy of training the served models, when known (kWh); omitted: ``not_in_scope``."""
    training_source: str | None = None
    """Source of the training energy (required with ``training_energy_kwh``)."""

    @field_validator("lifetime_years", mode="before")
    @classmethod
    def _lifetime_range(cls, value: object) -> object:
        """The range in words (a denormal such as 1e-320 made the embodied share infinite)."""
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and not MIN_LIFETIME_YEARS <= value <= MAX_LIFETIME_YEARS
        ):
            fix = f"give {MIN_LIFETIME_YEARS:g} to {MAX_LIFETIME_YEARS:g} years"
            raise rule_error([("", f"{value!r} is out of range — {fix}")])
        return value

    @field_validator(
        "wue_source", "marginal_source", "market_source", "grid_profile_source", "training_source"
    )
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        """Sources are shown in the report: no control character in them."""
        return check_text(value)

    @field_validator("reporting_start")
    @classmethod
    def _iso_date(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                dt.date.fromisoformat(value)
            except ValueError:
                raise ValueError(
                    f"{value!r} is not an ISO date — write it as YYYY-MM-DD, e.g. 2026-01-01"
                ) from None
        return value

    @section_rule
    def _sources(self) -> Disclosure:
        problems = [
            (source, f"missing — {value} needs its source")
            for value, source in SOURCED.items()
            if getattr(self, value) is not None and not getattr(self, source)
        ]
        if len(set(self.recipients)) != len(self.recipients):
            problems.append(("recipients", "a recipient is listed twice — list each once"))
        if problems:
            raise rule_error(problems)
        return self


def window_bounds(start: str, hours: float) -> tuple[dt.datetime, dt.datetime] | None:
    """(begin, end) of the reporting window that starts at midnight UTC of the ISO date *start*
    and lasts *hours*; None when it would end after 9999-12-31 (no date can state that end)."""
    begin = dt.datetime.combine(dt.date.fromisoformat(start), dt.time(), dt.UTC)
    if not hours <= (LAST_INSTANT - begin) / dt.timedelta(hours=1):  # NaN too
        return None
    try:
        return begin, begin + dt.timedelta(hours=hours)
    except OverflowError:  # within a microsecond of the last instant
        return None


def window_problem(start: str, hours: float) -> str | None:
    """Why a reporting window of *hours* from *start* cannot be stated (its end is past
    9999-12-31), with the latest start that fits; None when it can."""
    if window_bounds(start, hours) is not None:
        return None
    latest = (LAST_INSTANT - dt.timedelta(hours=hours)).date().isoformat()
    return (
        f"{start!r} + horizon_hours {hours:,.10g} ends after 9999-12-31 — give a "
        f"reporting_start of {latest} or earlier, or a shorter horizon_hours"
    )


__all__ = ["DEFAULT_LIFETIME_YEARS", "Disclosure", "window_bounds", "window_problem"]
