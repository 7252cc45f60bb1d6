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

``grid_year`` is a year a scenario can state (1990–2100). An edited year switched the factor
check off (``grid_year`` 2023 -> 2022 with a tenth of the factor reported "region US" at a made-up
factor): when the plan's ``assumptions.catalog_sha256`` is the fingerprint of the catalogs read
now (those it was made with), the year must be the catalog's year of ``grid_region``, at which
the factor is compared; catalogs that differ keep the leniency above. ``assumptions.engine``
and each ``models[].precision`` are names the predictors know (:mod:`predictors.core.vocab`),
with a did-you-mean as ``compare --precision`` gives one.

A solve is ``optimal`` only within the relative gap it was asked for (``solve.relative_gap``:
:mod:`planner.solve` says ``feasible`` above it); ``solve.gap`` 0.5 under ``optimal`` is named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from planner.documents.json_values import is_number
from planner.documents.verify_catalog import plan_catalog
from planner.documents.verify_pools import differs
from predictors.catalog.row_rules import GRID_YEARS
from predictors.core.errors import WattgpuError, did_you_mean
from predictors.core.escape import short_repr
from predictors.core.vocab import ENGINES, PRECISIONS, canonical_engine, canonical_precision

#: How ``grid_source`` names a catalog row: ``catalogs/grid_carbon.csv REGION: SOURCE``.
CATALOG_FILE = "catalogs/grid_carbon.csv"
#: Relative slack of ``solve.gap`` over ``solve.relative_gap`` (rounding of the two).
GAP_SLACK = 1e-6


def _catalog_row(a: dict[str, Any], region: str) -> tuple[dict[str, Any] | None, bool]:
    """The grid row of *region* (an id or alias) in the catalogs of the plan (the bundled ones
    plus its ``user_catalog``), and whether they are those it was made with (its
    ``catalog_sha256``); (None, False) when they cannot be read or have no such region (then
    nothing is compared)."""
    catalog, same = plan_catalog(a)
    if catalog is None:
        return None, False
    try:
        row = catalog.region(region)
    except (WattgpuError, OSError, ValueError):
        return None, False
    return row, same


def _year(a: dict[str, Any]) -> Iterator[str]:
    """``assumptions.grid_year``: null, or a year a scenario can state."""
    year, (first, last) = a.get("grid_year"), GRID_YEARS
    whole = isinstance(year, int) and not isinstance(year, bool)
    if year is not None and not (whole and first <= year <= last):
        yield (
            f"assumptions.grid_year: {short_repr(year)} is not a year a scenario can state "
            f"({first}–{last})"
        )


def _grid(a: dict[str, Any]) -> Iterator[str]:
    """``assumptions.grid_year`` in range; ``grid_region`` against ``grid_source`` and the
    catalog's row."""
    ranged = list(_year(a))
    yield from ranged
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
    row, same = _catalog_row(a, region)
    if row is None or source != prefix + str(row.get("source")):
        return
    if row.get("year") != a.get("grid_year"):
        if same and not ranged:  # the catalogs the plan was made with: only an edit
            yield (
                f"assumptions.grid_year: {short_repr(a.get('grid_year'))}, but {CATALOG_FILE} "
                f"states grid_region {short_repr(region)} for {row.get('year')}, and those are "
                "the catalogs the plan was made with (assumptions.catalog_sha256)"
            )
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


def _known(
    where: str, value: Any, known: Iterable[str], what: str, canonical: Callable[[str], str | None]
) -> Iterator[str]:
    """A line unless *value* is null or one of the *known* names of a *what*, with the name
    *canonical* gives another spelling of, else the closest names."""
    names = tuple(known)
    if value is None or value in names:
        return
    hint = ""
    if isinstance(value, str):
        meant = canonical(value)
        hint = f" (did you mean: {meant}?)" if meant else did_you_mean(value, names)
    yield f"{where}: unknown {what} {short_repr(value)}{hint}; use one of {', '.join(names)}"


def _names(data: dict[str, Any], a: dict[str, Any]) -> Iterator[str]:
    """The engine and each model entry's precision, names the predictors know."""
    yield from _known("assumptions.engine", a.get("engine"), ENGINES, "engine", canonical_engine)
    for i, m in enumerate(data.get("models") or []):
        if isinstance(m, dict):
            precision = m.get("precision")
            where = f"models[{i}].precision"
            yield from _known(where, precision, PRECISIONS, "precision", canonical_precision)


def _pues(data: dict[str, Any], a: dict[str, Any]) -> Iterator[str]:
    """A site's PUE against the facility energy of its allocations (facility = GPU energy ×
    the PUE of the allocation's site, docs/method.md §4): where every allocation of the site
    shows one other factor, the PUE was edited, and that one line names it first (fuzz round
    31: an edited ``assumptions.pue`` gave a dozen allocation lines, none naming it)."""
    regions = [r for r in data.get("regions") or [] if isinstance(r, dict)]
    sites = [("assumptions.pue", a.get("pue"), None)]
    sites += [(f"regions[{j}].pue", r.get("pue"), r.get("name")) for j, r in enumerate(regions)]
    allocations = [x for x in data.get("allocations") or [] if isinstance(x, dict)]
    for field, pue, name in sites:
        ratios = [
            x["facility_energy_kwh"] / x["energy_kwh"]
            for x in allocations
            if (x.get("region") or None) == name
            and is_number(x.get("energy_kwh"))
            and is_number(x.get("facility_energy_kwh"))
            and x["energy_kwh"] > 0
        ]
        if not is_number(pue) or not ratios or not differs(pue, ratios[0]):
            continue
        if all(not differs(r, ratios[0]) for r in ratios):
            yield (
                f"{field}: {short_repr(pue)}, but the facility energy of every allocation "
                f"there is its GPU energy × {ratios[0]:.6g} — the PUE or every allocation was "
                "edited"
            )


def provenance_problems(data: dict[str, Any]) -> list[str]:
    """The grid region, the engine and precisions, each site's PUE and the solve status of the
    plan JSON *data* against what they must be (module doc), one line per field."""
    a = data.get("assumptions")
    a = a if isinstance(a, dict) else {}
    return [*_grid(a), *_region_grids(data, a), *_pues(data, a), *_names(data, a), *_gap(data)]
