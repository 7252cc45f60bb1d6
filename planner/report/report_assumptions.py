"""The report's assumptions (:class:`~planner.documents.report.Assumptions`) of a plan document
and its forecast: horizon, PUE, grid, prices, objective, engine, limits and loads.

The PUE, grid and electricity price are the forecast's (:func:`planner.analysis.forecast.
forecast`): the plan's own, or in a plan with regions that uses energy the fleet's effective
figures, labelled so (``effective_site_figures``), with each region's own figures under
``regions``; facility kWh × grid and × price then give the report's carbon and electricity cost.
"""

from __future__ import annotations

from planner.documents.forecast import ForecastDocument
from planner.documents.plan import PlanDocument
from planner.documents.report import Assumptions, Load, RegionAssumptions
from planner.report.blocks import profile_text

EFFECTIVE_PUE_SOURCE = (
    "effective figure of a plan with regions: the fleet's facility energy over its GPU energy, "
    "each region at its own PUE"
)


def mean_requests_per_s(x: list[float], hours: list[float]) -> float:
    """The hour-weighted mean of the per-period arrival rates *x*."""
    return sum(v * h for v, h in zip(x, hours, strict=True)) / sum(hours)


def effective_grid_text(fc: ForecastDocument, doc: PlanDocument) -> str:
    """The line of an effective grid figure: its value and how it follows from the regions'."""
    names = ", ".join(r.name for r in doc.regions or ())
    return (
        f"{fc.grid.g_co2_per_kwh:.4g} gCO2e/kWh, effective: the fleet's carbon over its facility "
        f"energy, each region on its own grid (regions {names})"
    )


def _regions(doc: PlanDocument) -> list[RegionAssumptions] | None:
    if not doc.regions:
        return None
    return [
        RegionAssumptions(
            name=r.name,
            pue=r.pue,
            electricity_usd_per_kwh=r.electricity_usd_per_kwh,
            grid_g_co2_per_kwh=r.grid_g_co2_per_kwh,
            grid_g_co2_per_kwh_by_period=r.grid_g_co2_per_kwh_by_period,
            grid_region=r.grid_region,
            power_cap_kw=r.power_cap_kw,
        )
        for r in doc.regions
    ]


def assumptions_of(doc: PlanDocument, fc: ForecastDocument) -> Assumptions:
    """The assumptions of plan *doc* with forecast *fc* (module doc)."""
    a = doc.assumptions
    effective = fc.effective_site_figures
    return Assumptions(
        horizon_hours=a.hours,
        periods=a.periods,
        period_hours=a.period_hours[0] if a.period_hours else None,
        pue=fc.pue,
        pue_source=EFFECTIVE_PUE_SOURCE
        if effective
        else (a.pue_source or "set in the scenario file"),
        grid=fc.grid,
        grid_text=effective_grid_text(fc, doc)
        if effective
        else fc.grid.describe() + profile_text(doc),
        electricity_usd_per_kwh=fc.electricity_usd_per_kwh,
        carbon_usd_per_tonne=None if a.carbon_usd_per_kg is None else a.carbon_usd_per_kg * 1000,
        engine=a.engine,
        robust=a.robust,
        capacity_headroom=a.capacity_headroom,
        objective=a.objective,
        objective_text=a.objective.describe(),
        power_cap_kw=a.power_cap_kw,
        budget_usd=a.budget_usd,
        loads=[
            Load(
                name=m.name,
                model=m.model,
                precision=m.precision,
                mean_requests_per_s=mean_requests_per_s(m.requests_per_s_by_period, a.period_hours),
                peak_requests_per_s=max(m.requests_per_s_by_period),
                input_tokens=m.input_tokens,
                output_tokens=m.output_tokens,
                itl_sla_ms=m.itl_sla_s * 1000.0,
                ttft_sla_ms=None if m.ttft_sla_s is None else m.ttft_sla_s * 1000.0,
                min_replicas=m.min_replicas,
            )
            for m in doc.models
        ],
        effective_site_figures=effective,
        regions=_regions(doc),
    )
