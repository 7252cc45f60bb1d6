"""What a plan with regions adds to its tables: a region column and the regions' own table.

With more than one region (:mod:`planner.inputs.regions`) the allocation table gains a
``region`` column after the model entry (:func:`with_regions`), :func:`regions_section`
lists every region's PUE, electricity price, grid, power cap, inventory use and totals, and
the header's economics are the fleet's effective figures (:func:`region_economics`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from planner.analysis.forecast import forecast
from planner.inputs import PlanningInputs
from planner.result import Plan, region_totals
from planner.text import Section, num

REGION_COLUMNS: tuple[str, ...] = (
    "region",
    "PUE",
    "$/kWh",
    "gCO2e/kWh",
    "cap kW",
    "peak kW",
    "GPUs",
    "facility kWh",
    "cost $",
    "CO2e kg",
)


def region_lines(inputs: PlanningInputs) -> tuple[tuple[str, str], ...]:
    """The header's line naming the regions (none without regions)."""
    if not inputs.regions:
        return ()
    names = ", ".join(r.name for r in inputs.regions)
    return (("regions", f"{names} (each with its own PUE, prices, grid and power cap)"),)


def region_economics(plan: Plan) -> str | None:
    """The header's economics of a plan with regions (None without): each entry is accounted at
    its region's figures, so the header states the fleet's effective PUE, price and grid, the
    forecast's and the report's (:func:`planner.analysis.forecast.forecast`); without energy to
    weigh them by, the defaults the regions were filled from, said to be so."""
    i = plan.inputs
    if not i.regions:
        return None
    fc = forecast(plan)
    if not fc.effective_site_figures:
        return (
            f"per region (defaults PUE {i.pue:g}, electricity {i.electricity_usd_per_kwh:g} "
            f"$/kWh, grid {num(i.grid_g_co2_per_kwh)} gCO2e/kWh)"
        )
    return (
        f"per region (effective fleet PUE {fc.pue:.3g}, electricity "
        f"{fc.electricity_usd_per_kwh:.3g} $/kWh, grid {fc.grid.g_co2_per_kwh:.3g} gCO2e/kWh)"
    )


def with_regions(plan: Plan, section: Section, regions: Sequence[str]) -> Section:
    """*section* with a ``region`` column after its first one (*regions*: one per row) when
    *plan* has more than one region; else *section*."""
    if len(plan.inputs.regions) <= 1:
        return section

    def insert(row: tuple[str, ...], value: str) -> tuple[str, ...]:
        return (row[0], value, *row[1:])

    return replace(
        section,
        columns=insert(section.columns, "region"),
        rows=tuple(insert(row, r) for row, r in zip(section.rows, regions, strict=True)),
        numeric=frozenset(i + 1 if i >= 1 else i for i in section.numeric),
        footer=None if section.footer is None else insert(section.footer, ""),
    )


def regions_section(plan: Plan) -> Section | None:
    """Per region: its PUE, electricity price, grid (mean of its profile when hourly), power cap,
    and the plan's peak facility power, GPUs, facility energy, cost and carbon there (None
    without regions)."""
    inputs = plan.inputs
    if not inputs.regions:
        return None
    totals = region_totals(plan.allocations, inputs)
    rows = []
    for r in inputs.regions:
        t = totals[r.name]
        grid = r.grid_by_period(inputs.periods)
        grid_text = num(r.grid_g_co2_per_kwh)
        if r.grid_g_co2_per_kwh_by_period is not None:
            grid_text = f"{num(min(grid))}–{num(max(grid))} hourly"
        rows.append(
            (
                r.name,
                f"{r.pue:g}",
                f"{r.electricity_usd_per_kwh:g}",
                grid_text,
                num(r.power_cap_kw),
                num(t.peak_facility_power_kw),
                ", ".join(f"{n} × {g}" for g, n in t.gpus.items()) or "—",
                num(t.facility_energy_kwh),
                num(t.cost_usd),
                num(t.carbon_kg),
            )
        )
    note = (
        "each model entry is placed in one region (all its replicas); its energy is priced and "
        "its carbon counted at that region's PUE, electricity price and grid"
    )
    return Section(
        "regions", REGION_COLUMNS, tuple(rows), frozenset({1, 2, 4, 5, 7, 8, 9}), (note,)
    )
