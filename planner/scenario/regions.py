"""The scenario's optional ``regions:`` — sites a model entry may be placed in — and their use.

Each region has its own grid carbon intensity (a catalog ``region`` or ``grid_g_co2_per_kwh``,
and an hourly ``grid_profile_g_co2_per_kwh`` when given), PUE, electricity price, power cap and
GPU inventory and prices; a field a region leaves out takes the scenario's top-level value (the
top-level ``power_cap_kw`` is not allowed with regions: every region has its own). A model
entry's ``regions: [...]`` lists where it may be placed (default: every region). The planner
places each entry in one of them (all its replicas there; docs/method.md "Regions").

:class:`RegionSpec` is the section and :func:`region_problems` its cross-field rules;
:mod:`planner.scenario.placement` resolves the regions and places the candidates in them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Annotated

from pydantic import Field

from planner.scenario.limits import (
    MAX_GPUS,
    MAX_GRID_G_CO2_PER_KWH,
    MAX_PERIODS,
    MAX_POWER_CAP_KW,
    MAX_PUE,
    MAX_USD_PER_GPU_HOUR,
    MAX_USD_PER_KWH,
)
from planner.scenario.sections import ModelEntry, StrictModel
from predictors.catalog.unknown_names import close_names, unknown_name
from predictors.core.errors import did_you_mean

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
    the scenario's ``gpus``; at least one); omitted = every type of ``gpus`` with its
    ``available`` count."""


def region_problems(
    regions: dict[str, RegionSpec] | None,
    entries: Sequence[ModelEntry],
    gpus: Collection[str] | None,
    power_cap_kw: float | None,
    periods: int,
) -> list[tuple[str, str]]:
    """The cross-field rules of ``regions`` (the scenario's *gpus* listed, its top-level
    *power_cap_kw*, its *periods*) and of the *entries*' ``regions`` lists."""
    if regions is not None and not regions:
        return [("regions", "no regions listed — list at least one, or omit regions")]
    problems: list[tuple[str, str]] = []
    names = list(regions or {})
    for i, entry in enumerate(entries):
        for j, name in enumerate(entry.regions or ()):
            if regions is None:
                problems.append(
                    (
                        f"models[{i}].regions",
                        "the scenario has no regions — add regions: or remove this list",
                    )
                )
                break
            if name not in regions:
                problems.append(
                    (
                        f"models[{i}].regions[{j}]",
                        f"{unknown_name('region', name)}{close_names(name, names)} — use a name "
                        f"listed under regions ({', '.join(names)})",
                    )
                )
        if entry.regions is not None and not entry.regions:
            problems.append((f"models[{i}].regions", "empty — omit it to allow every region"))
    if regions is None:
        return problems
    if power_cap_kw is not None:
        problems.append(
            ("power_cap_kw", "not used with regions — give each region's power_cap_kw instead")
        )
    if any(not name.strip() for name in names):
        problems.append(("regions", "blank region name — give every region a name, e.g. eu"))
    for name, spec in regions.items():
        problems += _spec_problems(f"regions.{name}", spec, gpus, periods)
    return problems


def _spec_problems(
    where: str, spec: RegionSpec, gpus: Collection[str] | None, periods: int
) -> list[tuple[str, str]]:
    """The cross-field rules of one region *spec* (named *where*)."""
    problems: list[tuple[str, str]] = []
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
    if spec.gpus is not None and not spec.gpus:  # as the top-level gpus: nothing to place
        problems.append(
            (
                f"{where}.gpus",
                "no GPU types listed — list at least one, or omit gpus (the region then "
                "offers every type listed under the top-level gpus)",
            )
        )
    for gpu in spec.gpus or {}:
        if gpus is not None and gpu not in gpus:
            problems.append(
                (
                    f"{where}.gpus.{gpu}",
                    f"{gpu} is not listed under gpus{did_you_mean(gpu, list(gpus))} — add "
                    "it to gpus or remove it here",
                )
            )
    return problems
