"""Budget and carbon forecast of a plan: per model and in total, per period, month and year.

Accounting is the one of :mod:`planner.result` (so the forecast's horizon totals equal the
plan's totals): ``n`` replicas of candidate ``c`` serving ``x`` requests/s draw
``n · curve(x / n)`` watts at the GPUs (the candidate's power curve); GPU energy over a
period of ``h`` hours is that × h / 1000 kWh; facility energy = GPU energy × PUE; electricity
cost = facility kWh × $/kWh; GPU-hour cost = replicas × $/hour per replica × hours; carbon
(operational, scope 2 location-based) = facility kWh × grid gCO2e/kWh / 1000; the carbon price
(when the scenario sets one) is a cost of its own.

Month and year figures assume the planned horizon is representative (the load profile repeats):
they are the horizon figures scaled to :data:`HOURS_PER_MONTH` (730 h = 8760 / 12) and
:data:`HOURS_PER_YEAR` (8760 h). Every figure is an estimate from the shipped predictors.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from planner.inputs import PlanningInputs
from planner.result import Plan, period_power_w
from planner.scenario.model import Scenario

HOURS_PER_YEAR = 8760.0
"""Hours of a (non-leap) year."""
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0
"""Hours of an average month (730 h)."""
SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class Figures:
    """Energy, cost and carbon of one slice of a plan (a period, a model, the horizon, ...)."""

    energy_kwh: float
    """GPU (IT) energy (kWh)."""
    facility_energy_kwh: float
    """GPU energy × PUE (kWh)."""
    electricity_cost_usd: float
    gpu_cost_usd: float
    """GPU-hour (rent) cost ($)."""
    carbon_cost_usd: float
    """Carbon price × carbon ($; 0 without a carbon price)."""
    carbon_kg: float
    """Operational CO2e (kg)."""

    @property
    def total_cost_usd(self) -> float:
        """GPU-hour cost + electricity + carbon price ($)."""
        return self.gpu_cost_usd + self.electricity_cost_usd + self.carbon_cost_usd

    def __add__(self, other: Figures) -> Figures:
        return Figures(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(Figures)))

    def scaled(self, factor: float) -> Figures:
        """Every figure multiplied by *factor*."""
        return Figures(*(getattr(self, f.name) * factor for f in fields(Figures)))

    def to_dict(self) -> dict[str, float]:
        """Plain dict with ``total_cost_usd`` added."""
        out = {f.name: float(getattr(self, f.name)) for f in fields(Figures)}
        out["total_cost_usd"] = self.total_cost_usd
        return out


ZERO = Figures(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class GridFactor:
    """The grid carbon intensity used, with where it comes from."""

    g_co2_per_kwh: float
    region: str | None = None
    year: int | None = None
    source: str | None = None

    def describe(self) -> str:
        """One line: value, region, year and source (what is unknown is said so)."""
        where = f"region {self.region}" if self.region else "explicit figure"
        year = f"year {self.year}" if self.year is not None else "year not stated"
        source = self.source or "source not stated"
        return f"{self.g_co2_per_kwh:g} gCO2e/kWh ({where}, {year}; {source})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "g_co2_per_kwh": self.g_co2_per_kwh,
            "region": self.region,
            "year": self.year,
            "source": self.source,
        }


def grid_factor(scenario: Scenario) -> GridFactor:
    """The loaded scenario's grid factor: the catalog region row (value, year, source) or the
    explicit ``grid_g_co2_per_kwh`` with its ``grid_year`` / ``grid_source``."""
    return GridFactor(
        g_co2_per_kwh=scenario.grid_value_g_co2_per_kwh,
        region=scenario.region,
        year=scenario.grid_year,
        source=scenario.grid_source,
    )


@dataclass(frozen=True)
class DeploymentForecast:
    """One allocation (model entry on one GPU type and TP degree)."""

    gpu: str
    tp: int
    replicas: int
    gpus: int
    in_domain: bool
    horizon: Figures
    requests: float
    """Requests served over the horizon."""


@dataclass(frozen=True)
class ModelForecast:
    """One model entry of the scenario."""

    name: str
    model: str
    deployments: tuple[DeploymentForecast, ...]
    by_period: tuple[Figures, ...]
    horizon: Figures
    requests: float
    """Requests over the horizon (Σ_t requests/s × hours × 3600)."""
    output_tokens: float
    """Output tokens over the horizon (requests × mean output tokens)."""
    mean_power_w: float
    """Time-weighted mean GPU power over the horizon (W)."""

    @property
    def gpus(self) -> dict[str, int]:
        """GPUs used by type."""
        out: dict[str, int] = {}
        for d in self.deployments:
            out[d.gpu] = out.get(d.gpu, 0) + d.gpus
        return dict(sorted(out.items()))

    @property
    def gpu_count(self) -> int:
        """GPUs used in total."""
        return sum(d.gpus for d in self.deployments)


@dataclass(frozen=True)
class Forecast:
    """The plan's budget and carbon forecast."""

    hours: float
    period_hours: tuple[float, ...]
    pue: float
    electricity_usd_per_kwh: float
    carbon_usd_per_kg: float | None
    grid: GridFactor
    models: tuple[ModelForecast, ...]
    by_period: tuple[Figures, ...]
    horizon: Figures

    @property
    def per_month(self) -> Figures:
        """Horizon figures scaled to an average month (730 h)."""
        return self.horizon.scaled(HOURS_PER_MONTH / self.hours)

    @property
    def per_year(self) -> Figures:
        """Horizon figures scaled to a year (8760 h)."""
        return self.horizon.scaled(HOURS_PER_YEAR / self.hours)

    def model(self, name: str) -> ModelForecast:
        """The forecast of model entry *name*."""
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(name)

    def to_json_dict(self) -> dict[str, Any]:
        """Everything as plain JSON values (per model and total; period, horizon, month, year)."""
        month = HOURS_PER_MONTH / self.hours
        year = HOURS_PER_YEAR / self.hours
        return {
            "estimated": True,
            "hours": self.hours,
            "period_hours": list(self.period_hours),
            "hours_per_month": HOURS_PER_MONTH,
            "hours_per_year": HOURS_PER_YEAR,
            "scaling": "month and year = horizon figures × (730 h or 8760 h) / horizon hours",
            "pue": self.pue,
            "electricity_usd_per_kwh": self.electricity_usd_per_kwh,
            "carbon_usd_per_kg": self.carbon_usd_per_kg,
            "grid": self.grid.to_dict(),
            "total": {
                "horizon": self.horizon.to_dict(),
                "per_month": self.per_month.to_dict(),
                "per_year": self.per_year.to_dict(),
                "by_period": [f.to_dict() for f in self.by_period],
            },
            "models": [
                {
                    "name": m.name,
                    "model": m.model,
                    "gpus": m.gpus,
                    "requests": m.requests,
                    "output_tokens": m.output_tokens,
                    "mean_power_w": m.mean_power_w,
                    "horizon": m.horizon.to_dict(),
                    "per_month": m.horizon.scaled(month).to_dict(),
                    "per_year": m.horizon.scaled(year).to_dict(),
                    "by_period": [f.to_dict() for f in m.by_period],
                    "deployments": [
                        {
                            "gpu": d.gpu,
                            "tp": d.tp,
                            "replicas": d.replicas,
                            "gpus": d.gpus,
                            "in_domain": d.in_domain,
                            "requests": d.requests,
                            "horizon": d.horizon.to_dict(),
                        }
                        for d in m.deployments
                    ],
                }
                for m in self.models
            ],
        }


def figures_from_energy(energy_kwh: float, gpu_cost_usd: float, inputs: PlanningInputs) -> Figures:
    """The one place GPU energy becomes facility energy, electricity cost, carbon and its price."""
    facility = energy_kwh * inputs.pue
    carbon = facility * inputs.grid_g_co2_per_kwh / 1000.0
    return Figures(
        energy_kwh=energy_kwh,
        facility_energy_kwh=facility,
        electricity_cost_usd=facility * inputs.electricity_usd_per_kwh,
        gpu_cost_usd=gpu_cost_usd,
        carbon_cost_usd=carbon * (inputs.carbon_usd_per_kg or 0.0),
        carbon_kg=carbon,
    )


def _period_figures(
    gpu_power_w: float, replicas_usd_per_hour: float, hours: float, plan: Plan
) -> Figures:
    """Figures of one period of *hours* at a constant GPU power and GPU-hour rate."""
    return figures_from_energy(
        gpu_power_w * hours / 1000.0, replicas_usd_per_hour * hours, plan.inputs
    )


def _sum(items: list[Figures]) -> Figures:
    total = ZERO
    for f in items:
        total = total + f
    return total


def forecast(plan: Plan, grid: GridFactor | None = None) -> Forecast:
    """The forecast of *plan* (an infeasible plan has no allocations: every figure is 0).

    *grid* only labels the carbon factor (value, year, source); the value used is the plan's
    ``grid_g_co2_per_kwh`` so that the forecast and the plan agree.
    """
    inputs = plan.inputs
    hours_t = inputs.period_hours
    if grid is None:
        grid = GridFactor(inputs.grid_g_co2_per_kwh)
    models: list[ModelForecast] = []
    for m in inputs.models:
        deployments: list[DeploymentForecast] = []
        periods: list[list[Figures]] = [[] for _ in hours_t]
        for a in plan.allocations:
            c = a.candidate
            if c.name != m.name:
                continue
            rent_per_h = a.replicas * c.usd_per_hour_per_replica
            power = period_power_w(c, a.replicas, a.requests_per_s_by_period)
            per_t = [
                _period_figures(p, rent_per_h, h, plan) for p, h in zip(power, hours_t, strict=True)
            ]
            for t, f in enumerate(per_t):
                periods[t].append(f)
            requests = sum(
                x * h * SECONDS_PER_HOUR
                for x, h in zip(a.requests_per_s_by_period, hours_t, strict=True)
            )
            deployments.append(
                DeploymentForecast(
                    c.gpu, c.tp, a.replicas, a.gpus, c.in_domain, _sum(per_t), requests
                )
            )
        by_period = tuple(_sum(p) for p in periods)
        horizon = _sum(list(by_period))
        requests = sum(
            x * h * SECONDS_PER_HOUR
            for x, h in zip(m.requests_per_s_by_period, hours_t, strict=True)
        )
        served = requests if deployments else 0.0
        models.append(
            ModelForecast(
                name=m.name,
                model=m.model,
                deployments=tuple(deployments),
                by_period=by_period,
                horizon=horizon,
                requests=served,
                output_tokens=served * m.output_tokens,
                mean_power_w=horizon.energy_kwh * 1000.0 / inputs.hours,
            )
        )
    by_period_total = tuple(_sum([mf.by_period[t] for mf in models]) for t in range(len(hours_t)))
    return Forecast(
        hours=inputs.hours,
        period_hours=tuple(hours_t),
        pue=inputs.pue,
        electricity_usd_per_kwh=inputs.electricity_usd_per_kwh,
        carbon_usd_per_kg=inputs.carbon_usd_per_kg,
        grid=grid,
        models=tuple(models),
        by_period=by_period_total,
        horizon=_sum(list(by_period_total)),
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
