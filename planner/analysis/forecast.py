"""Budget and carbon forecast of a plan: per model and in total, per period, month and year.

Accounting is the one of :mod:`planner.result` (so the forecast's horizon totals equal the
plan's totals): each allocation draws the GPU power the plan recorded for every period
(``power_w_by_period``, W); GPU energy over a period of ``h`` hours is that × h / 1000 kWh;
facility energy = GPU energy × PUE; electricity cost = facility kWh × $/kWh; GPU-hour cost =
replicas × $/hour per replica × hours; carbon (operational, scope 2 location-based) = facility
kWh × grid gCO2e/kWh / 1000 per period, on the grid profile's value of the period when the plan
has one (else the flat factor); the carbon price (when the scenario sets one) is a cost of its
own.

The forecast is a pure function of the plan's JSON document
(:class:`planner.documents.plan.PlanDocument`): each allocation's GPU power per period
(``power_w_by_period``) is read from the plan, so the forecast needs neither the scenario nor
the predictors and agrees with whatever load model the plan was solved with.

Month and year figures assume the planned horizon is representative (the load profile repeats):
they are the horizon figures scaled to :data:`HOURS_PER_MONTH` (730 h = 8760 / 12) and
:data:`HOURS_PER_YEAR` (8760 h). Every figure is an estimate from the shipped predictors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from planner.documents.forecast import (
    ZERO_FIGURES,
    DeploymentForecastDocument,
    FiguresDocument,
    ForecastDocument,
    ForecastTotalDocument,
    GridDocument,
    ModelForecastDocument,
)
from planner.documents.plan import PlanDocument, as_document
from planner.documents.plan_parts import AllocationDocument, ModelDocument
from planner.documents.pools import gpus_of
from planner.inputs import grid_by_period
from planner.result import Plan

HOURS_PER_YEAR = 8760.0
"""Hours of a (non-leap) year."""
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0
"""Hours of an average month (730 h)."""
SECONDS_PER_HOUR = 3600.0


def grid_factor(plan: PlanDocument) -> GridDocument:
    """The plan's grid factor: the catalog region row (value, year, source) or the explicit
    ``grid_g_co2_per_kwh`` with its ``grid_year`` / ``grid_source``, as the plan records them."""
    a = plan.assumptions
    return GridDocument(
        g_co2_per_kwh=a.grid_g_co2_per_kwh,
        region=a.grid_region,
        year=a.grid_year,
        source=a.grid_source,
    )


def period_grid(plan: PlanDocument) -> tuple[float, ...]:
    """The grid intensity of every period of *plan*: its grid profile, or the flat factor."""
    a = plan.assumptions
    return grid_by_period(a.grid_g_co2_per_kwh, a.grid_g_co2_per_kwh_by_period, len(a.period_hours))


class Economics(Protocol):
    """What turns GPU energy into facility energy, cost and carbon (plan assumptions)."""

    @property
    def pue(self) -> float:
        """Power usage effectiveness: facility energy / GPU energy (>= 1)."""

    @property
    def electricity_usd_per_kwh(self) -> float:
        """Electricity price, USD per facility kWh."""

    @property
    def grid_g_co2_per_kwh(self) -> float:
        """Grid carbon intensity, grams CO2 per facility kWh."""

    @property
    def carbon_usd_per_kg(self) -> float | None:
        """Carbon price, USD per kg CO2; None when carbon is not priced."""


def figures_from_energy(
    energy_kwh: float,
    gpu_cost_usd: float,
    inputs: Economics,
    g_co2_per_kwh: float | None = None,
) -> FiguresDocument:
    """The one place GPU energy becomes facility energy, electricity cost, carbon and its price.

    *g_co2_per_kwh*: the grid intensity of the period the energy is drawn in (the grid profile's
    value); None = the flat ``grid_g_co2_per_kwh``."""
    facility = energy_kwh * inputs.pue
    grid = inputs.grid_g_co2_per_kwh if g_co2_per_kwh is None else g_co2_per_kwh
    carbon = facility * grid / 1000.0
    return FiguresDocument.of(
        energy_kwh=energy_kwh,
        facility_energy_kwh=facility,
        electricity_cost_usd=facility * inputs.electricity_usd_per_kwh,
        gpu_cost_usd=gpu_cost_usd,
        carbon_cost_usd=carbon * (inputs.carbon_usd_per_kg or 0.0),
        carbon_kg=carbon,
    )


def _sum(items: list[FiguresDocument]) -> FiguresDocument:
    total = ZERO_FIGURES
    for f in items:
        total = total + f
    return total


def allocation_power_w(plan: PlanDocument, a: AllocationDocument) -> list[float]:
    """GPU power of allocation *a* in every period (W), as the plan recorded it.

    Plans written before ``power_w_by_period`` existed get the linear load model of their
    candidate: replicas × idle power per replica + energy per request × requests/s.
    """
    if a.power_w_by_period is not None:
        return list(a.power_w_by_period)
    c = plan.candidate(a.key)
    return [
        a.replicas * c.idle_power_w_per_replica + c.energy_j_per_request * x
        for x in a.requests_per_s_by_period
    ]


@dataclass(frozen=True)
class SiteEconomics:
    """The :class:`Economics` of one region of a plan with regions."""

    pue: float
    electricity_usd_per_kwh: float
    grid_g_co2_per_kwh: float
    carbon_usd_per_kg: float | None


EFFECTIVE_GRID_SOURCE = (
    "effective figure of a plan with regions: the fleet's carbon over its facility energy, each "
    "region on its own grid"
)


def _site(
    doc: PlanDocument, whole: FiguresDocument, grid: GridDocument | None
) -> tuple[float, float, GridDocument, bool]:
    """(PUE, electricity price, grid, effective) the forecast states: the plan's own; with
    regions (each at its own PUE, price and grid) and energy, the fleet's effective figures,
    facility over GPU energy, electricity cost and carbon over facility energy (so that facility
    kWh × price and × grid give the totals)."""
    a = doc.assumptions
    facility = whole.facility_energy_kwh
    if not doc.regions or whole.energy_kwh <= 0 or facility <= 0:
        return a.pue, a.electricity_usd_per_kwh, grid or grid_factor(doc), False
    effective = GridDocument(
        g_co2_per_kwh=whole.carbon_kg * 1000.0 / facility,
        region=None,
        year=None,
        source=EFFECTIVE_GRID_SOURCE,
    )
    return facility / whole.energy_kwh, whole.electricity_cost_usd / facility, effective, True


def allocation_economics(
    doc: PlanDocument, a: AllocationDocument
) -> tuple[Economics, tuple[float, ...]]:
    """The economics and per-period grid intensity that account allocation *a*: its region's
    in a plan with regions, else the plan's assumptions and grid."""
    region = doc.region(a.region)
    if region is None:
        return doc.assumptions, period_grid(doc)
    periods = len(doc.assumptions.period_hours)
    grid = grid_by_period(region.grid_g_co2_per_kwh, region.grid_g_co2_per_kwh_by_period, periods)
    site = SiteEconomics(
        region.pue,
        region.electricity_usd_per_kwh,
        region.grid_g_co2_per_kwh,
        doc.assumptions.carbon_usd_per_kg,
    )
    return site, grid


def _hourly(doc: PlanDocument) -> bool:
    """Whether some allocation's carbon is counted on an hourly grid profile (its region's, or
    the plan's without regions)."""
    for a in doc.allocations:
        region = doc.region(a.region)
        site = doc.assumptions if region is None else region
        if site.grid_g_co2_per_kwh_by_period is not None:
            return True
    return False


def _deployment(doc: PlanDocument, a: AllocationDocument) -> tuple[list[FiguresDocument], float]:
    """Figures of allocation *a* in every period and the requests it serves over the horizon."""
    hours_t = doc.assumptions.period_hours
    rent_per_h = a.replicas * doc.candidate(a.key).usd_per_hour_per_replica
    economics, grid_t = allocation_economics(doc, a)
    per_t = [
        figures_from_energy(p * h / 1000.0, rent_per_h * h, economics, g)
        for p, h, g in zip(allocation_power_w(doc, a), hours_t, grid_t, strict=True)
    ]
    return per_t, _requests(a.requests_per_s_by_period, hours_t)


def _requests(x_by_period: list[float], hours_t: list[float]) -> float:
    """Requests over the horizon: Σ_t requests/s × hours × 3600."""
    return sum(x * h * SECONDS_PER_HOUR for x, h in zip(x_by_period, hours_t, strict=True))


def _horizons(
    horizon: FiguresDocument, hours: float
) -> tuple[FiguresDocument, FiguresDocument, FiguresDocument]:
    """The horizon figures and their month and year scalings, as documents."""
    return (
        horizon,
        horizon.scaled(HOURS_PER_MONTH / hours),
        horizon.scaled(HOURS_PER_YEAR / hours),
    )


def _model(
    doc: PlanDocument, m: ModelDocument
) -> tuple[ModelForecastDocument, list[FiguresDocument]]:
    """The forecast of model entry *m* and its figures per period."""
    a_ = doc.assumptions
    deployments: list[DeploymentForecastDocument] = []
    periods: list[list[FiguresDocument]] = [[] for _ in a_.period_hours]
    for a in doc.allocations:
        if a.name != m.name:
            continue
        c = doc.candidate(a.key)
        per_t, requests = _deployment(doc, a)
        for t, f in enumerate(per_t):
            periods[t].append(f)
        deployments.append(
            DeploymentForecastDocument(
                gpu=c.gpu,
                tp=c.tp,
                replicas=a.replicas,
                gpus=a.gpus,
                in_domain=c.in_domain,
                requests=requests,
                horizon=_sum(per_t),
                pools=a.pools,
            )
        )
    by_period = [_sum(p) for p in periods]
    horizon = _sum(by_period)
    served = _requests(m.requests_per_s_by_period, a_.period_hours) if deployments else 0.0
    gpus: dict[str, int] = {}
    for d in deployments:
        for gpu, count in gpus_of(d.gpu, d.gpus, d.replicas, d.pools).items():
            gpus[gpu] = gpus.get(gpu, 0) + count
    whole, month, year = _horizons(horizon, a_.hours)
    model = ModelForecastDocument(
        name=m.name,
        model=m.model,
        gpus=dict(sorted(gpus.items())),
        requests=served,
        output_tokens=served * m.output_tokens,
        mean_power_w=horizon.energy_kwh * 1000.0 / a_.hours,
        horizon=whole,
        per_month=month,
        per_year=year,
        by_period=by_period,
        deployments=deployments,
    )
    return model, by_period


def forecast(plan: Plan | PlanDocument, grid: GridDocument | None = None) -> ForecastDocument:
    """The forecast of *plan* (an infeasible plan has no allocations: every figure is 0).

    *grid* only labels the carbon factor (value, year, source); the values used are the plan's
    (``grid_g_co2_per_kwh``, or its grid profile per period) so that the forecast and the plan
    agree. Default: the plan's label. A plan with regions that uses energy states the fleet's
    effective PUE, price and grid instead (:func:`_site`; ``effective_site_figures``). Last come
    ``hourly_grid`` (carbon counted on an hourly profile) and ``carbon_g_co2_per_kwh``, the fleet's
    carbon over its facility energy, which reproduces the carbon whatever the grid.
    """
    doc = as_document(plan)
    a_ = doc.assumptions
    models = [_model(doc, m) for m in doc.models]
    by_period = [_sum([f[t] for _, f in models]) for t in range(len(a_.period_hours))]
    whole, month, year = _horizons(_sum(by_period), a_.hours)
    pue, price, grid, effective = _site(doc, whole, grid)
    return ForecastDocument(
        estimated=True,
        hours=a_.hours,
        period_hours=list(a_.period_hours),
        hours_per_month=HOURS_PER_MONTH,
        hours_per_year=HOURS_PER_YEAR,
        scaling="month and year = horizon figures × (730 h or 8760 h) / horizon hours",
        pue=pue,
        electricity_usd_per_kwh=price,
        carbon_usd_per_kg=a_.carbon_usd_per_kg,
        grid=grid,
        total=ForecastTotalDocument(
            horizon=whole,
            per_month=month,
            per_year=year,
            by_period=by_period,
        ),
        models=[m for m, _ in models],
        effective_site_figures=effective,
        hourly_grid=_hourly(doc),
        carbon_g_co2_per_kwh=(
            whole.carbon_kg * 1000.0 / whole.facility_energy_kwh
            if whole.facility_energy_kwh > 0
            else None
        ),
    )


def per_output_tokens(energy_kwh: float, output_tokens: float, per: float = 1000.0) -> float | None:
    """Wh per *per* output tokens (None when no tokens are served)."""
    if output_tokens <= 0:
        return None
    return energy_kwh * 1000.0 / output_tokens * per


def per_request_wh(energy_kwh: float, requests: float) -> float | None:
    """Wh per request (None when no requests are served)."""
    if requests <= 0:
        return None
    return energy_kwh * 1000.0 / requests
