"""A loaded scenario's regions as the optimiser's :class:`~planner.inputs.Region` s, and its
candidates placed in them (:mod:`planner.scenario.regions` is the section).

:func:`region_sites` fills every field a region leaves out from the top level;
:func:`placed_candidates` gives every candidate once per region its entry may use that offers
its GPU type, at that region's GPU price.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from planner.inputs import Candidate, Region
from planner.scenario.model import Scenario
from planner.scenario.regions import RegionSpec


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
