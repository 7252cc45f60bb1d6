"""The plan JSON check (:mod:`planner.documents.verify`) of what a plan says of where its figures
come from: the grid region of its carbon factor, and the status its solve claims.

A scenario that names a grid ``region`` gets the factor, year and source of that region's row
of ``catalogs/grid_carbon.csv`` (:func:`planner.scenario.load.fill_defaults`): the plan records
them as ``assumptions.grid_region``, ``grid_g_co2_per_kwh``, ``grid_year`` and ``grid_source``
(``catalogs/grid_carbon.csv US: codecarbon …``). ``grid_region`` edited from ``US`` to ``FR``
alone was reported as France's grid at the factor of the United States; it is now named when
``grid_source`` is not that region's row, or when the catalog's row of the region, of the
year and source the plan states, gives another factor (a catalog of another year or source, or
a region the catalog no longer has, is not compared). A region of a plan with regions that
names the same grid region as the assumptions has their factor.

A solve is ``optimal`` only within the relative gap it was asked for (``solve.relative_gap``:
:mod:`planner.solve` says ``feasible`` above it); ``solve.gap`` 0.5 under ``optimal`` is named.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planner.documents.json_values import is_number
from planner.documents.verify_pools import differs
from predictors.core.errors import WattgpuError
from predictors.core.escape import short_repr

#: How ``grid_source`` names a catalog row: ``catalogs/grid_carbon.csv REGION: SOURCE``.
CATALOG_FILE = "catalogs/grid_carbon.csv"
#: Relative slack of ``solve.gap`` over ``solve.relative_gap`` (rounding of the two).
GAP_SLACK = 1e-6


def _catalog_row(region: str) -> dict[str, Any] | None:
    """The catalog's grid row of *region* (an id or alias), None when the catalog cannot be
    read or has no such region (then nothing is compared)."""
    from predictors.catalog.store import load_catalog

    try:
        return load_catalog().region(region)
    except WattgpuError:
        return None


def _grid(a: dict[str, Any]) -> Iterator[str]:
    """``assumptions.grid_region`` against ``grid_source`` and the catalog's row."""
    region, source = a.get("grid_region"), a.get("grid_source")
    if not isinstance(region, str) or not region:
        return
    prefix = f"{CATALOG_FILE} {region}: "
    if not (isinstance(source, str) and source.startswith(prefix)):
        yield (
            f"assumptions.grid_region: {short_repr(region)}, but grid_source "
            f"{short_repr(source, 60)} is not that region's catalog row ({prefix}…)"
        )
        return
    row = _catalog_row(region)
    if row is None or source != prefix + str(row.get("source")):
        return
    if row.get("year") != a.get("grid_year"):
        return
    factor = float(row["g_co2_per_kwh"])
    if differs(a.get("grid_g_co2_per_kwh"), factor):
        yield (
            f"assumptions.grid_region: {short_repr(region)} is {factor:g} g CO2e/kWh in "
            f"{CATALOG_FILE} ({row.get('year')}), but grid_g_co2_per_kwh is "
            f"{short_repr(a.get('grid_g_co2_per_kwh'))}"
        )


def _region_grids(data: dict[str, Any], a: dict[str, Any]) -> Iterator[str]:
    """A region on the assumptions' grid region has the assumptions' factor."""
    region: Any = a.get("grid_region")
    factor: Any = a.get("grid_g_co2_per_kwh")
    if not isinstance(region, str) or not region or not is_number(factor):
        return
    for r, site in enumerate(data.get("regions") or []):
        if isinstance(site, dict) and site.get("grid_region") == region:
            if differs(site.get("grid_g_co2_per_kwh"), float(factor)):
                yield (
                    f"regions[{r}].grid_g_co2_per_kwh: {short_repr(site.get('grid_g_co2_per_kwh'))}"
                    f", but its grid_region {short_repr(region)} is {factor:g} g CO2e/kWh in the "
                    "assumptions"
                )


def _gap(data: dict[str, Any]) -> Iterator[str]:
    """An ``optimal`` status within ``solve.relative_gap``."""
    solve = data.get("solve")
    if data.get("status") != "optimal" or not isinstance(solve, dict):
        return
    gap: Any = solve.get("gap")
    target: Any = solve.get("relative_gap")
    if is_number(gap) and is_number(target) and gap > target * (1 + GAP_SLACK) + 1e-12:
        yield (
            f"solve.gap: {short_repr(gap)} is above the plan's relative_gap {target:g}, but its "
            "status is 'optimal' (a plan is optimal only within its relative gap)"
        )


def provenance_problems(data: dict[str, Any]) -> list[str]:
    """The grid region and the solve status of the plan JSON *data* against what they must be
    (module doc), one line per field."""
    a = data.get("assumptions")
    a = a if isinstance(a, dict) else {}
    return [*_grid(a), *_region_grids(data, a), *_gap(data)]
