"""The regions of a plan JSON, and the inventory, in its check (:mod:`planner.documents.verify`).

With regions each allocation is recomputed at its region's PUE, electricity price and grid
(:func:`site_figures`); GPUs count against the region's inventory; the peak facility power adds
every allocation's power × its region's PUE; each region's totals add up its allocations
(:mod:`.verify_totals`; the objective over the regions, Σ regions (kWh weight × facility kWh +
kg weight × carbon kg) + rent weight × rent, is :mod:`.verify_objective`'s).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from planner.documents.verify_pools import gpus_by_type


def regions_by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The plan's regions by name ({} without regions)."""
    return {str(r.get("name")): r for r in data.get("regions") or [] if isinstance(r, dict)}


def site_figures(data: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """The figures of the region *record* runs in that replace the assumptions' (PUE,
    electricity price, grid); {} without regions."""
    region = regions_by_name(data).get(str(record.get("region") or ""))
    if region is None:
        return {}
    keys = ("pue", "electricity_usd_per_kwh", "grid_g_co2_per_kwh")
    site = {k: region[k] for k in keys}
    site["grid_g_co2_per_kwh_by_period"] = region.get("grid_g_co2_per_kwh_by_period")
    return site


def inventory_problems(
    data: dict[str, Any],
    per_replica: dict[tuple[Any, ...], int],
    key_of: Callable[[dict[str, Any]], tuple[Any, ...]],
) -> Iterator[str]:
    """GPUs per type (per type and region with regions), counted from the replicas (and from the
    stored ``gpus``; *key_of*: a record's candidate key), against the inventory (the
    region's)."""
    used: dict[tuple[str, str], int] = {}
    for alloc in data.get("allocations") or []:
        region = str(alloc.get("region") or "")
        # a disaggregated unit takes its pools' GPU types (planner.documents.verify_pools)
        for gpu, count in gpus_by_type(alloc, per_replica.get(key_of(alloc), 1)).items():
            used[(gpu, region)] = used.get((gpu, region), 0) + count
    regions = regions_by_name(data)
    for (gpu, region), count in sorted(used.items()):
        if region in regions:
            yield from region_inventory_problems(regions[region], gpu, count)
            continue
        available = (data.get("inventory") or {}).get(gpu)
        if available is not None and count > available:
            yield f"allocations: {count} {gpu} GPUs allocated, the inventory has {available}"


def region_inventory_problems(region: dict[str, Any], gpu: str, count: int) -> Iterator[str]:
    """*count* GPUs of type *gpu* allocated in *region* against its inventory."""
    available = (region.get("inventory") or {}).get(gpu)
    if available is not None and count > available:
        yield (
            f"allocations: {count} {gpu} GPUs allocated in region {region.get('name')}, its "
            f"inventory has {available}"
        )


def peak_facility_kw(data: dict[str, Any], allocations: list[dict[str, Any]]) -> float:
    """Highest facility kW over the periods: Σ GPU power × PUE (each region's with regions)."""
    if not data.get("regions"):
        periods = np.sum([alloc.get("power_w_by_period", []) for alloc in allocations], axis=0)
        return float(np.max(periods)) * data["assumptions"]["pue"] / 1000.0
    facility = np.sum(
        [
            np.asarray(alloc.get("power_w_by_period", []), dtype=np.float64)
            * site_figures(data, alloc).get("pue", data["assumptions"]["pue"])
            for alloc in allocations
        ],
        axis=0,
    )
    return float(np.max(facility)) / 1000.0


def gpus_of(
    allocations: list[dict[str, Any]], per_replica: Callable[[dict[str, Any]], int]
) -> dict[str, int]:
    """GPUs per type the *allocations* take (*per_replica*: a record's GPUs per replica)."""
    out: dict[str, int] = {}
    for alloc in allocations:
        for gpu, count in gpus_by_type(alloc, per_replica(alloc)).items():
            out[gpu] = out.get(gpu, 0) + count
    return dict(sorted(out.items()))


def gpu_total_problems(
    where: str,
    stated: Any,
    allocations: list[dict[str, Any]],
    per_replica: Callable[[dict[str, Any]], int],
) -> Iterator[str]:
    """``totals.gpus`` (at *where*) against the GPUs per type *allocations* take."""
    if stated is None:
        return
    again = gpus_of(allocations, per_replica)
    mine = {str(k): v for k, v in stated.items()} if isinstance(stated, dict) else stated
    if mine != again:
        yield f"{where}: {stated!r}, but the allocations take {again!r}"
