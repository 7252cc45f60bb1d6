"""The regions of a plan JSON: each region's PUE, prices, grid, limits, weights and totals.

A plan with regions (:mod:`planner.inputs.regions`) carries them as its last key, ``regions``
(:class:`RegionDocument`); every allocation and candidate names its ``region``. Without regions
the key is omitted and the plan is as before. :func:`region_documents` writes them from a solved
plan, :func:`regions_of` reads them back into optimiser inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.documents.base import Document, dataclass_values
from planner.documents.plan_parts import AllocationDocument, AssumptionsDocument, TotalsDocument
from planner.inputs import Region
from planner.result import Plan, region_totals
from planner.solve.coefficients import objective_weights


class RegionDocument(Document):
    """One region of a plan with regions: what its energy costs there, its limits, and the
    weights of its kWh and kg in the objective (docs/method.md §4 recomputes the plan from
    these)."""

    name: str
    pue: float
    """Power usage effectiveness of the region's sites."""
    electricity_usd_per_kwh: float
    grid_g_co2_per_kwh: float
    """Grid carbon intensity (g CO2e per facility kWh; flat)."""
    grid_g_co2_per_kwh_by_period: list[float] | None
    """Grid intensity per period (the region's hourly profile; null when flat)."""
    power_cap_kw: float | None
    """Facility power cap of the region in every period (kW; null: none)."""
    inventory: dict[str, int | None]
    """GPU type -> GPUs available in the region (null: unlimited)."""
    grid_region: str | None
    """Catalog grid region of the carbon factor (null: an explicit figure)."""
    usd_per_facility_kwh_weight: float
    """Weight of one facility kWh of the region in the objective."""
    carbon_kg_weight: float
    """Weight of one kg CO2e of the region in the objective (0 when folded into the kWh
    weight: a flat grid)."""
    totals: TotalsDocument
    """The totals of the region's allocations."""


def region_documents(plan: Plan) -> list[RegionDocument] | None:
    """The plan's regions with their weights and totals (None without regions)."""
    inputs = plan.inputs
    if not inputs.regions:
        return None
    totals = region_totals(plan.allocations, inputs)
    out = []
    for r in inputs.regions:
        weights = objective_weights(inputs, r)
        t = totals[r.name]
        out.append(
            RegionDocument(
                name=r.name,
                pue=r.pue,
                electricity_usd_per_kwh=r.electricity_usd_per_kwh,
                grid_g_co2_per_kwh=r.grid_g_co2_per_kwh,
                grid_g_co2_per_kwh_by_period=(
                    None
                    if r.grid_g_co2_per_kwh_by_period is None
                    else list(r.grid_g_co2_per_kwh_by_period)
                ),
                power_cap_kw=r.power_cap_kw,
                inventory=dict(r.inventory),
                grid_region=r.grid_region,
                usd_per_facility_kwh_weight=weights.per_facility_kwh,
                carbon_kg_weight=weights.per_carbon_kg,
                totals=TotalsDocument(**dataclass_values(t), cost_usd=t.cost_usd),
            )
        )
    return out


def entry_site(
    regions: Sequence[RegionDocument] | None,
    allocations: Sequence[AllocationDocument],
    name: str,
    assumptions: AssumptionsDocument,
) -> tuple[float, float]:
    """(PUE, flat grid) of the region model entry *name*'s allocations run in (an entry is placed
    in one region), else the *assumptions*' (without regions, or without allocations)."""
    by_name = {r.name: r for r in regions or ()}
    for a in allocations:
        region = by_name.get(a.region or "") if a.name == name else None
        if region is not None:
            return region.pue, region.grid_g_co2_per_kwh
    return assumptions.pue, assumptions.grid_g_co2_per_kwh


def regions_of(regions: Sequence[RegionDocument] | None) -> tuple[Region, ...]:
    """The optimiser's regions of a saved plan (empty without regions)."""
    return tuple(
        Region(
            r.name,
            r.pue,
            r.electricity_usd_per_kwh,
            r.grid_g_co2_per_kwh,
            None
            if r.grid_g_co2_per_kwh_by_period is None
            else tuple(r.grid_g_co2_per_kwh_by_period),
            r.power_cap_kw,
            dict(r.inventory),
            r.grid_region,
        )
        for r in regions or ()
    )
