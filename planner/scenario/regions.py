"""The scenario's optional ``regions:`` — sites a model entry may be placed in — and their use.

Each region has its own grid carbon intensity (a catalog ``region`` or ``grid_g_co2_per_kwh``,
and an hourly ``grid_profile_g_co2_per_kwh`` when given), PUE, electricity price, power cap and
GPU inventory and prices; a field a region leaves out takes the scenario's top-level value (the
top-level ``power_cap_kw`` is not allowed with regions: every region has its own). A model
entry's ``regions: [...]`` lists where it may be placed (default: every region). The planner
places each entry in one of them (all its replicas there; docs/method.md "Regions").

:class:`RegionSpec` is the section, :func:`region_problems` its cross-field rules,
:func:`region_sites` the resolved :class:`~planner.inputs.Region` s and
:func:`placed_candidates` every candidate once per region its entry may use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from planner.inputs import Candidate, Region
from planner.scenario.limits import (
    MAX_GPUS,
    MAX_GRID_G_CO2_PER_KWH,
    MAX_PERIODS,
    MAX_POWER_CAP_KW,
    MAX_PUE,
    MAX_USD_PER_GPU_HOUR,
    MAX_USD_PER_KWH,
)
from planner.scenario.sections import StrictModel
from predictors.core.errors import did_you_mean

if TYPE_CHECKING:
    from planner.scenario.model import Scenario

GridValue = Annotated[float, Field(ge=0, le=MAX_GRID_G_CO2_PER_KWH)]


class RegionGpu(StrictModel):
    """A GPU type in one region: how many there are and what they cost there."""

    available: int | None = Field(None, ge=0, le=MAX_GPUS)
    """GPUs of this type in the region (null: unlimited); omitted = the scenario's
    ``gpus.<type>.available``."""
    usd_per_hour: float | None = Field(None, ge=0, le=MAX_USD_PER_GPU_HOUR)
    """Price per GPU-hour in the region; omitted = the scenario's price of the type."""


class RegionSpec(StrictModel):
    """One region (site) model entries may be placed in; omitted fields take the scenario's."""

    region: str | None = None
    """Grid region id or alias from catalogs/grid_carbon.csv; its carbon intensity is used.
    Give this or ``grid_g_co2_per_kwh``; neither = the scenario's grid."""
    grid_g_co2_per_kwh: float | None = Field(None, ge=0, le=MAX_GRID_G_CO2_PER_KWH)
    """Explicit grid carbon intensity of the region (g CO2e per kWh)."""
    grid_profile_g_co2_per_kwh: list[GridValue] | None = Field(None, max_length=MAX_PERIODS)
    """Hourly grid intensity of the region, one value per planning period (24 with a
    daily_profile); omitted = flat (the scenario's profile when the region gives no grid)."""
    pue: float | None = Field(None, ge=1, le=MAX_PUE)
    """PUE of the region's sites; omitted = the scenario's ``pue``."""
    electricity_usd_per_kwh: float | None = Field(None, ge=0, le=MAX_USD_PER_KWH)
    """Electricity price in the region (USD per facility kWh); omitted = the scenario's."""
    power_cap_kw: float | None = Field(None, gt=0, le=MAX_POWER_CAP_KW)
    """Facility power cap of the region in every period (kW); omitted = none."""
    gpus: dict[str, RegionGpu | None] | None = None
    """GPU types offered in the region, keyed by catalog id or alias (each must be listed under
    the scenario's ``gpus``); omitted = every type of ``gpus`` with its ``available`` count."""


def region_problems(s: Scenario, periods: int) -> list[tuple[str, str]]:
    """The cross-field rules of ``regions`` and of the entries' ``regions`` lists."""
    if s.regions is not None and not s.regions:
        return [("regions", "no regions listed — list at least one, or omit regions")]
    problems: list[tuple[str, str]] = []
    names = list(s.regions or {})
    for i, entry in enumerate(s.models):
        for j, name in enumerate(entry.regions or ()):
            if s.regions is None:
                problems.append(
                    (
                        f"models[{i}].regions",
                        "the scenario has no regions — add regions: or remove this list",
                    )
                )
                break
            if name not in s.regions:
                problems.append(
                    (
                        f"models[{i}].regions[{j}]",
                        f"unknown region '{name}'{did_you_mean(name, names)} — use a name "
                        f"listed under regions ({', '.join(names)})",
                    )
                )
        if entry.regions is not None and not entry.regions:
            problems.append((f"models[{i}].regions", "empty — omit it to allow every region"))
    if s.regions is None:
        return problems
    if s.power_cap_kw is not None:
        problems.append(
            ("power_cap_kw", "not used with regions — give each region's power_cap_kw instead")
        )
    for name, spec in s.regions.items():
        where = f"regions.{name}"
        if spec.region is not None and spec.grid_g_co2_per_kwh is not None:
            problems.append(
                (f"{where}.grid_g_co2_per_kwh", "given together with region — give one of them")
            )
        profile = spec.grid_profile_g_co2_per_kwh
        if profile is not None and len(profile) != periods:
            problems.append(
                (
                    f"{where}.grid_profile_g_co2_per_kwh",
                    f"{len(profile)} values for {periods} planning period(s) — give one value "
                    "per period (24 when a model has a daily_profile)",
                )
            )
        for gpu in spec.gpus or {}:
            if s.gpus is not None and gpu not in s.gpus:
                problems.append(
                    (
                        f"{where}.gpus.{gpu}",
                        f"{gpu} is not listed under gpus{did_you_mean(gpu, list(s.gpus))} — add "
                        "it to gpus or remove it here",
                    )
                )
    return problems


def _inventory(s: Scenario, spec: RegionSpec) -> dict[str, int | None]:
    offers = s.gpu_offers
    if spec.gpus is None:
        return {g: o.available for g, o in offers.items()}
    out: dict[str, int | None] = {}
    for gpu, item in spec.gpus.items():
        given = item is not None and "available" in item.model_fields_set
        out[gpu] = item.available if given and item is not None else offers[gpu].available
    return out


def region_sites(s: Scenario, profile: Sequence[float] | None) -> tuple[Region, ...]:
    """The resolved regions of a loaded scenario (empty without ``regions``); *profile* is the
    scenario's own grid profile, which a region that gives no grid inherits."""
    out = []
    for name, spec in (s.regions or {}).items():
        own_grid = spec.grid_g_co2_per_kwh is not None
        grid = spec.grid_g_co2_per_kwh if own_grid else s.grid_value_g_co2_per_kwh
        hourly = spec.grid_profile_g_co2_per_kwh
        if hourly is None and not own_grid and profile is not None:
            hourly = list(profile)
        out.append(
            Region(
                name=name,
                pue=spec.pue if spec.pue is not None else s.pue_value,
                electricity_usd_per_kwh=(
                    spec.electricity_usd_per_kwh
                    if spec.electricity_usd_per_kwh is not None
                    else s.electricity_usd_per_kwh
                ),
                grid_g_co2_per_kwh=float(grid or 0.0),
                grid_g_co2_per_kwh_by_period=None if hourly is None else tuple(hourly),
                power_cap_kw=spec.power_cap_kw,
                inventory=_inventory(s, spec),
                grid_region=spec.region if own_grid or spec.region else s.region,
            )
        )
    return tuple(out)


def _price(s: Scenario, region: str, c: Candidate) -> float:
    """$/hour of one replica of *c* in *region* (the region's GPU price, else the scenario's)."""
    spec = (s.regions or {})[region]
    item = (spec.gpus or {}).get(c.gpu)
    if item is None or item.usd_per_hour is None:
        return c.usd_per_hour_per_replica
    base = s.gpu_offers[c.gpu].usd_per_hour or 0.0
    if base > 0:
        return item.usd_per_hour * (c.usd_per_hour_per_replica / base)
    return item.usd_per_hour * c.gpus_per_replica


def placed_candidates(
    s: Scenario, candidates: Sequence[Candidate], sites: Sequence[Region]
) -> list[Candidate]:
    """Every candidate once per region its entry may use that offers its GPU type, priced at
    that region's GPU price (region order within each candidate)."""
    allowed = {e.name: set(e.regions) if e.regions is not None else None for e in s.models}
    out = []
    for c in candidates:
        for r in sites:
            mine = allowed[c.name]
            if (mine is None or r.name in mine) and c.gpu in r.inventory:
                price = _price(s, r.name, c)
                out.append(dataclasses.replace(c, region=r.name, usd_per_hour_per_replica=price))
    return out
