"""The plan JSON check (:mod:`planner.documents.verify`) of the totals: the fleet's ``totals`` and
each region's, recomputed from their allocations the way :func:`planner.result.make_totals`
adds them up (docs/method.md §4).

Every summed figure (energy, facility energy, cost, carbon) is the sum of the allocations';
``gpus`` the GPUs per type they take; ``mean_power_w`` their GPU energy × 1000 / the horizon's
hours (``assumptions.hours``); ``peak_facility_power_kw`` the highest facility power over the
periods, Σ GPU power × PUE (each allocation's region's PUE with regions). A region's mean power
and peak were only read (the peak compared with the region's cap): an edit of either, below the
cap, reported a figure its allocations do not give.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from planner.documents.json_values import is_number
from planner.documents.verify_allocations import ALLOCATION_FIGURES
from planner.documents.verify_pools import differs
from planner.documents.verify_regions import gpu_total_problems, peak_facility_kw

#: Figures the totals add up from the allocations.
SUMMED: tuple[str, ...] = tuple(ALLOCATION_FIGURES)


def _mean_power_w(data: dict[str, Any], allocations: list[dict[str, Any]]) -> float | None:
    """GPU energy of *allocations* × 1000 / the horizon's hours (None without a horizon)."""
    hours: Any = (data.get("assumptions") or {}).get("hours")
    if not is_number(hours) or hours <= 0:
        return None
    return sum(float(a.get("energy_kwh") or 0.0) for a in allocations) * 1000.0 / float(hours)


def _figures(
    data: dict[str, Any],
    where: str,
    totals: dict[str, Any],
    allocations: list[dict[str, Any]],
    per_replica: Callable[[dict[str, Any]], int],
) -> Iterator[str]:
    """The totals at *where* (``totals`` or ``regions[i].totals``) against *allocations*."""
    whose = "but the allocations" if where == "totals" else "its allocations"
    yield from gpu_total_problems(f"{where}.gpus", totals.get("gpus"), allocations, per_replica)
    for key in SUMMED:
        again = sum(float(alloc.get(key) or 0.0) for alloc in allocations)
        if key in totals and differs(totals[key], again):
            yield f"{where}.{key}: {totals[key]!r}, {whose} add up to {again:.6g}"
    mean = _mean_power_w(data, allocations)
    if "mean_power_w" in totals and mean is not None and differs(totals["mean_power_w"], mean):
        yield (
            f"{where}.mean_power_w: {totals['mean_power_w']!r}, {whose} give "
            f"{mean:.6g} (GPU kWh × 1000 / assumptions.hours)"
        )


def total_problems(
    data: dict[str, Any], per_replica: Callable[[dict[str, Any]], int]
) -> Iterator[str]:
    """The fleet's totals, then each region's, against their allocations (module doc;
    *per_replica*: an allocation record's GPUs per replica)."""
    allocations = data.get("allocations") or []
    totals = data.get("totals") or {}
    yield from _figures(data, "totals", totals, allocations, per_replica)
    if allocations:
        yield from _peak(data, "totals", totals, allocations)
    yield from _region_totals(data, data.get("regions") or [], allocations, per_replica)


def _peak(
    data: dict[str, Any], where: str, totals: dict[str, Any], allocations: list[dict[str, Any]]
) -> Iterator[str]:
    peak = peak_facility_kw(data, allocations) if allocations else 0.0
    stated = totals.get("peak_facility_power_kw")
    if differs(stated, peak):
        yield f"{where}.peak_facility_power_kw: {stated!r}, recomputed {peak:.6g}"


def _region_totals(
    data: dict[str, Any],
    regions: Sequence[Any],
    allocations: list[dict[str, Any]],
    per_replica: Callable[[dict[str, Any]], int],
) -> Iterator[str]:
    """Each region's totals from the allocations placed in it (none: all zero)."""
    for i, region in enumerate(regions):
        if not isinstance(region, dict):
            continue
        mine = [a for a in allocations if a.get("region") == region.get("name")]
        totals = region.get("totals") or {}
        yield from _figures(data, f"regions[{i}].totals", totals, mine, per_replica)
        if "peak_facility_power_kw" in totals:
            yield from _peak(data, f"regions[{i}].totals", totals, mine)
