"""A loaded scenario's regions as the optimiser's :class:`~planner.inputs.Region` s, and its
candidates placed in them (:mod:`planner.scenario.regions` is the section).

:func:`region_sites` fills every field a region leaves out from the top level;
:func:`placed_candidates` gives every candidate once per region its entry may use that offers
its GPU type, at that region's GPU price; :func:`price_bases` says where each type's prices come
from, the regions' own included.
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


def _rates(candidates: Sequence[Candidate]) -> dict[str, float]:
    """$/GPU-hour of each GPU type as the candidates on one type alone are priced (every type
    a mixed disaggregated unit uses also has units of its own, :mod:`planner.disagg.units`)."""
    out: dict[str, float] = {}
    for c in candidates:
        use = c.gpu_use
        if len(use) == 1 and use[0][1] > 0:
            out.setdefault(use[0][0], c.usd_per_hour_per_replica / use[0][1])
    return out


def _price(s: Scenario, region: str, c: Candidate, rates: dict[str, float]) -> float:
    """$/hour of one replica of *c* in *region*: each GPU type it takes at the region's price
    of that type where the region gives one, else as the scenario priced it."""
    spec = (s.regions or {})[region]
    usd = c.usd_per_hour_per_replica
    for gpu, count in c.gpu_use:
        item = (spec.gpus or {}).get(gpu)
        if item is None or item.usd_per_hour is None:
            continue
        own = usd / count if len(c.gpu_use) == 1 else rates.get(gpu)
        if own is None:
            own = s.gpu_offers[gpu].usd_per_hour or 0.0
        usd += (item.usd_per_hour - own) * count
    return max(usd, 0.0)


def placed_candidates(
    s: Scenario, candidates: Sequence[Candidate], sites: Sequence[Region]
) -> list[Candidate]:
    """Every candidate once per region its entry may use that offers every GPU type it takes
    (both pools' types for a disaggregated unit), priced at that region's GPU prices (region
    order within each candidate)."""
    allowed = {e.name: set(e.regions) if e.regions is not None else None for e in s.models}
    rates = _rates(candidates)
    out = []
    for c in candidates:
        types = [g for g, _ in c.gpu_use]
        for r in sites:
            mine = allowed[c.name]
            if (mine is None or r.name in mine) and all(g in r.inventory for g in types):
                price = _price(s, r.name, c, rates)
                out.append(dataclasses.replace(c, region=r.name, usd_per_hour_per_replica=price))
    return out


def price_bases(scenario: Scenario) -> dict[str, str]:
    """Where each GPU type's price comes from: its offer's basis (the catalog's rental price,
    TCO or the scenario's ``usd_per_hour``) and every region that sets its own price for it
    (fuzz round 31: a region's ``usd_per_hour`` was costed but the disclosure named the
    catalog's median)."""
    out = {}
    for gpu, offer in scenario.gpu_offers.items():
        basis = offer.price_basis or "scenario usd_per_hour"
        regional = [
            f"{name}: scenario usd_per_hour {item.usd_per_hour:g} $/h "
            f"(regions.{name}.gpus.{gpu}.usd_per_hour)"
            for name, spec in (scenario.regions or {}).items()
            if (item := (spec.gpus or {}).get(gpu)) is not None and item.usd_per_hour is not None
        ]
        out[gpu] = basis + (f"; in region {'; in region '.join(regional)}" if regional else "")
    return out
