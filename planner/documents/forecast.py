"""The forecast JSON (``report.forecast``) as a typed document: per model and in total, per
period, horizon, month and year."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from planner.documents.base import Document
from planner.documents.pools import PoolDocument, absent


class FiguresDocument(Document):
    """Energy, cost and carbon of one slice of a plan."""

    energy_kwh: float
    """GPU (IT) energy (kWh)."""
    facility_energy_kwh: float
    """GPU energy × PUE (kWh)."""
    electricity_cost_usd: float
    gpu_cost_usd: float
    carbon_cost_usd: float
    carbon_kg: float
    total_cost_usd: float
    """GPU-hour cost + electricity + carbon price ($)."""

    @classmethod
    def of(
        cls,
        energy_kwh: float,
        facility_energy_kwh: float,
        electricity_cost_usd: float,
        gpu_cost_usd: float,
        carbon_cost_usd: float,
        carbon_kg: float,
    ) -> FiguresDocument:
        """The figures with their ``total_cost_usd`` (GPU-hour cost + electricity + carbon)."""
        return cls(
            energy_kwh=energy_kwh,
            facility_energy_kwh=facility_energy_kwh,
            electricity_cost_usd=electricity_cost_usd,
            gpu_cost_usd=gpu_cost_usd,
            carbon_cost_usd=carbon_cost_usd,
            carbon_kg=carbon_kg,
            total_cost_usd=gpu_cost_usd + electricity_cost_usd + carbon_cost_usd,
        )

    def parts(self) -> tuple[float, float, float, float, float, float]:
        """The six figures :meth:`of` takes, in its order (the total follows from them)."""
        return (
            self.energy_kwh,
            self.facility_energy_kwh,
            self.electricity_cost_usd,
            self.gpu_cost_usd,
            self.carbon_cost_usd,
            self.carbon_kg,
        )

    def __add__(self, other: FiguresDocument) -> FiguresDocument:
        return FiguresDocument.of(
            *(a + b for a, b in zip(self.parts(), other.parts(), strict=True))
        )

    def scaled(self, factor: float) -> FiguresDocument:
        """Every figure multiplied by *factor*."""
        return FiguresDocument.of(*(a * factor for a in self.parts()))


ZERO_FIGURES = FiguresDocument.of(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


class GridDocument(Document):
    """The grid carbon intensity used, with where it comes from."""

    g_co2_per_kwh: float
    region: str | None
    year: int | None
    source: str | None

    def describe(self) -> str:
        """One line: value, region, year and source (what is unknown is said so)."""
        where = f"region {self.region}" if self.region else "explicit figure"
        year = f"year {self.year}" if self.year is not None else "year not stated"
        source = self.source or "source not stated"
        return f"{self.g_co2_per_kwh:g} gCO2e/kWh ({where}, {year}; {source})"


class DeploymentForecastDocument(Document):
    """One allocation over the horizon."""

    gpu: str
    tp: int
    replicas: int
    gpus: int
    in_domain: bool
    requests: float
    horizon: FiguresDocument
    pools: list[PoolDocument] | None = Field(None, exclude_if=absent)
    """A disaggregated unit's pools (each of one unit; omitted for aggregated replicas)."""


class ModelForecastDocument(Document):
    """One model entry: horizon, month, year and per-period figures."""

    name: str
    model: str
    gpus: dict[str, int]
    requests: float
    output_tokens: float
    mean_power_w: float
    horizon: FiguresDocument
    per_month: FiguresDocument
    per_year: FiguresDocument
    by_period: list[FiguresDocument]
    deployments: list[DeploymentForecastDocument]

    @property
    def gpu_count(self) -> int:
        """GPUs used in total."""
        return sum(d.gpus for d in self.deployments)


class ForecastTotalDocument(Document):
    """The fleet: horizon, month, year and per-period figures."""

    horizon: FiguresDocument
    per_month: FiguresDocument
    per_year: FiguresDocument
    by_period: list[FiguresDocument]


class ForecastDocument(Document):
    """Budget and carbon forecast of a plan (every figure an estimate)."""

    estimated: Literal[True]
    hours: float
    period_hours: list[float]
    hours_per_month: float
    hours_per_year: float
    scaling: str
    pue: float
    electricity_usd_per_kwh: float
    carbon_usd_per_kg: float | None
    grid: GridDocument
    total: ForecastTotalDocument
    models: list[ModelForecastDocument]
    effective_site_figures: bool = False
    """True when ``pue``, ``electricity_usd_per_kwh`` and ``grid`` are the fleet's effective
    figures (a plan with regions that uses energy, each region at its own PUE, price and grid):
    facility over GPU energy, electricity cost over facility energy and carbon over facility
    energy of the horizon totals; false: the plan's own figures (``grid``: its flat factor, the
    plan's grid profile, when it has one, gives each period's)."""
    hourly_grid: bool = False
    """True when carbon is counted on an hourly grid-intensity profile (the plan's, or with
    regions a region's that an allocation runs in): each period at the profile's value, so the
    flat ``grid`` factor × facility kWh is not the carbon unless ``effective_site_figures``."""
    carbon_g_co2_per_kwh: float | None = None
    """The grid intensity the fleet's carbon was counted at: ``total.horizon`` carbon × 1000 /
    facility energy (gCO2e/kWh; null without facility energy), so facility kWh × it / 1000 gives
    the carbon of the horizon, month and year. With a flat grid (or ``effective_site_figures``)
    it is ``grid.g_co2_per_kwh``; with an hourly profile the profile's mean weighted by each
    period's facility energy."""

    def model(self, name: str) -> ModelForecastDocument:
        """The forecast of model entry *name*."""
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(name)
