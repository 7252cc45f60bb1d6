"""Low / median / high bands for a plan's energy, cost and carbon from the predictors' intervals.

Method (stated in every output by :data:`METHOD`):

1. For every allocation, the shipped power predictor is asked again at the allocation's operating
   point (model, GPU, TP degree, operating batch, engine, precision, token lengths). It returns the
   point prediction ``P`` and its split-conformal interval ``[P_lo, P_hi]`` (90 % by default; see
   the model card's ``intervals``).
2. The bound powers are clipped to what a GPU can draw: at least the catalog idle power, at most
   the catalog TDP (board power limit) — never below / above the point prediction itself.
3. The plan's load-dependent power (the candidate's power curve, docs/method.md "Capacity") is
   scaled above idle by ``s = (P_bound − P_idle) / (P − P_idle)``: replica power at rate x =
   idle + s · (curve(x) − idle), per period, with the plan's replicas and load shares unchanged
   (the reported energy per request is the candidate's linear lower-bound slope times s).
4. Energy (GPU and facility), electricity cost, carbon price and CO2e are re-accounted with the
   bound coefficients; GPU-hour cost does not change. The median is the plan's own figure
   (point prediction).

Not included: the ITL interval (it changes replicas, not the energy of a fixed plan; plan with
``robust: true`` to size replicas on the upper ITL bound), idle-power, PUE and grid-factor
uncertainty. Bands of different models are summed (fully correlated errors: one predictor).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from planner.analysis.forecast import Figures, figures_from_energy
from planner.result import Allocation, Plan, period_power_w
from planner.scenario.model import Scenario
from predictors.api import Predictor
from predictors.errors import WattgpuError

METHOD = (
    "Each allocation's GPU power is re-predicted at its operating point (model, GPU, TP, batch, "
    "engine, precision, token lengths) and the power predictor's split-conformal interval "
    "bounds [P_lo, P_hi] (clipped to catalog idle power .. TDP) scale the load-dependent part "
    "of the plan's power curve (replica power = idle + s·(curve(req/s) − idle), "
    "s = (P_bound − P_idle)/(P − P_idle)) with replicas and load shares fixed. "
    "Median = the plan's point estimate. GPU-hour cost is fixed; electricity, carbon price and "
    "CO2e follow energy. Not included: ITL, idle-power, PUE and grid-factor uncertainty; model "
    "errors are summed as fully correlated."
)

Key = tuple[str, str, int]


@dataclass(frozen=True)
class PowerInterval:
    """Predicted power per GPU at an allocation's operating point and its clipped bounds (W)."""

    power_w_per_gpu: float
    power_w_per_gpu_lo: float
    power_w_per_gpu_hi: float
    idle_power_w_per_gpu: float
    tdp_w: float
    in_domain: bool = True

    def clipped(self) -> tuple[float, float, float]:
        """(lo, point, hi) clipped to [idle, TDP] and ordered lo <= point <= hi."""
        point = max(self.power_w_per_gpu, self.idle_power_w_per_gpu)
        lo = min(max(self.power_w_per_gpu_lo, self.idle_power_w_per_gpu), point)
        hi = max(min(self.power_w_per_gpu_hi, self.tdp_w), point)
        return lo, point, hi


@dataclass(frozen=True)
class Band:
    """low <= median <= high."""

    low: float
    median: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"low": self.low, "median": self.median, "high": self.high}


@dataclass(frozen=True)
class FigureBands:
    """Bands of the quantities reported."""

    energy_kwh: Band
    facility_energy_kwh: Band
    cost_usd: Band
    carbon_kg: Band

    def to_dict(self) -> dict[str, dict[str, float]]:
        return {
            "energy_kwh": self.energy_kwh.to_dict(),
            "facility_energy_kwh": self.facility_energy_kwh.to_dict(),
            "cost_usd": self.cost_usd.to_dict(),
            "carbon_kg": self.carbon_kg.to_dict(),
        }


@dataclass(frozen=True)
class Bands:
    """Uncertainty of a plan: per model entry and in total, with the method."""

    method: str
    level: float | None
    models: dict[str, FigureBands]
    total: FigureBands
    allocations: tuple[dict[str, Any], ...]

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "interval_level": self.level,
            "total": self.total.to_dict(),
            "models": {k: v.to_dict() for k, v in self.models.items()},
            "allocations": list(self.allocations),
        }


def _figures(plan: Plan, a: Allocation, scale: float) -> Figures:
    """Horizon figures of allocation *a* with its power above idle scaled by *scale*."""
    inputs = plan.inputs
    c = a.candidate
    idle = a.replicas * c.idle_power_w_per_replica
    watt_hours = sum(
        (idle + scale * (p - idle)) * h
        for p, h in zip(
            period_power_w(c, a.replicas, a.requests_per_s_by_period),
            inputs.period_hours,
            strict=True,
        )
    )
    gpu_cost = a.replicas * c.usd_per_hour_per_replica * inputs.hours
    return figures_from_energy(watt_hours / 1000.0, gpu_cost, inputs)


def power_scale(point_w: float, bound_w: float, idle_w: float) -> float:
    """s = (bound − idle) / (point − idle): the factor on power above idle (1 when point = idle)."""
    if point_w - idle_w <= 1e-12:
        return 1.0
    return max(0.0, bound_w - idle_w) / (point_w - idle_w)


def _band(lo: Figures, mid: Figures, hi: Figures, attr: str) -> Band:
    values = sorted(
        (
            getattr(lo, attr) if attr != "cost_usd" else lo.total_cost_usd,
            getattr(mid, attr) if attr != "cost_usd" else mid.total_cost_usd,
            getattr(hi, attr) if attr != "cost_usd" else hi.total_cost_usd,
        )
    )
    median = getattr(mid, attr) if attr != "cost_usd" else mid.total_cost_usd
    return Band(min(values[0], median), median, max(values[2], median))


def _figure_bands(lo: Figures, mid: Figures, hi: Figures) -> FigureBands:
    return FigureBands(
        energy_kwh=_band(lo, mid, hi, "energy_kwh"),
        facility_energy_kwh=_band(lo, mid, hi, "facility_energy_kwh"),
        cost_usd=_band(lo, mid, hi, "cost_usd"),
        carbon_kg=_band(lo, mid, hi, "carbon_kg"),
    )


def bands(plan: Plan, intervals: dict[Key, PowerInterval], level: float | None = None) -> Bands:
    """Low / median / high of *plan* given the power interval of every allocation's candidate.

    Raises WattgpuError when an allocation has no interval (a caller bug, not user input).
    """
    zero = Figures(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    per_model: dict[str, list[Figures]] = {m.name: [zero, zero, zero] for m in plan.inputs.models}
    rows: list[dict[str, Any]] = []
    for a in plan.allocations:
        c = a.candidate
        iv = intervals.get(c.key)
        if iv is None:
            raise WattgpuError(f"uncertainty: no power interval for allocation {c.label}")
        p_lo, p_mid, p_hi = iv.clipped()
        idle_w = c.idle_power_w_per_replica / c.tp
        s_lo = min(power_scale(p_mid, p_lo, idle_w), 1.0)
        s_hi = max(power_scale(p_mid, p_hi, idle_w), 1.0)
        e_mid = c.energy_j_per_request
        e_lo, e_hi = e_mid * s_lo, e_mid * s_hi
        figs = [_figures(plan, a, s) for s in (s_lo, 1.0, s_hi)]
        acc = per_model[c.name]
        per_model[c.name] = [acc[i] + figs[i] for i in range(3)]
        rows.append(
            {
                "name": c.name,
                "gpu": c.gpu,
                "tp": c.tp,
                "batch_size": c.batch_size,
                "power_w_per_gpu": {"low": p_lo, "median": p_mid, "high": p_hi},
                "power_w_per_gpu_unclipped": {
                    "low": iv.power_w_per_gpu_lo,
                    "median": iv.power_w_per_gpu,
                    "high": iv.power_w_per_gpu_hi,
                },
                "idle_power_w_per_gpu": iv.idle_power_w_per_gpu,
                "tdp_w": iv.tdp_w,
                "energy_j_per_request": {"low": e_lo, "median": e_mid, "high": e_hi},
                "energy_kwh": {
                    "low": figs[0].energy_kwh,
                    "median": figs[1].energy_kwh,
                    "high": figs[2].energy_kwh,
                },
            }
        )
    totals = [zero, zero, zero]
    for figs in per_model.values():
        totals = [totals[i] + figs[i] for i in range(3)]
    return Bands(
        method=METHOD,
        level=level,
        models={k: _figure_bands(*v) for k, v in per_model.items()},
        total=_figure_bands(*totals),
        allocations=tuple(rows),
    )


def operating_rows(plan: Plan, scenario: Scenario) -> pl.DataFrame:
    """One predictor input row per allocation (same order): its operating point."""
    entries = {e.name: e for e in scenario.models}
    records: list[dict[str, Any]] = []
    for a in plan.allocations:
        c = a.candidate
        entry = entries.get(c.name)
        if entry is None:
            raise WattgpuError(
                f"uncertainty: allocation {c.label} has no model entry {c.name!r} in scenario "
                f"{scenario.name}; plan and scenario must come from the same file"
            )
        m = plan.inputs.model(c.name)
        records.append(
            {
                "model": c.model,
                "gpu": c.gpu,
                "gpu_count": c.tp,
                "engine": scenario.engine,
                "precision": entry.precision or scenario.precision,
                "batch_size": max(1, c.batch_size),
                "input_tokens": m.input_tokens,
                "output_tokens": m.output_tokens,
            }
        )
    schema = {
        "model": pl.String,
        "gpu": pl.String,
        "gpu_count": pl.Int64,
        "engine": pl.String,
        "precision": pl.String,
        "batch_size": pl.Int64,
        "input_tokens": pl.Float64,
        "output_tokens": pl.Float64,
    }
    return pl.DataFrame(records, schema=schema)


def power_intervals(
    plan: Plan, scenario: Scenario, predictor: Predictor
) -> dict[Key, PowerInterval]:
    """The power prediction and interval of every allocation's operating point."""
    if not plan.allocations:
        return {}
    pred = predictor.predict(operating_rows(plan, scenario))
    out: dict[Key, PowerInterval] = {}
    for a, row in zip(plan.allocations, pred.iter_rows(named=True), strict=True):
        c = a.candidate
        if row.get("error"):
            raise WattgpuError(f"uncertainty: allocation {c.label}: {row['error']}")
        gpu_row = predictor.catalog.gpu(c.gpu)
        idle = c.idle_power_w_per_replica / c.tp
        point = float(row["power_w_per_gpu"])
        tdp = float(gpu_row.get("tdp_w") or max(point, idle))
        out[c.key] = PowerInterval(
            power_w_per_gpu=point,
            power_w_per_gpu_lo=float(row["power_w_per_gpu_lo"]),
            power_w_per_gpu_hi=float(row["power_w_per_gpu_hi"]),
            idle_power_w_per_gpu=idle,
            tdp_w=tdp,
            in_domain=bool(row["in_domain"]),
        )
    return out


def interval_level(card: dict[str, Any]) -> float | None:
    """The power interval's level from the model card (None when not stated)."""
    try:
        return float(card["targets"]["power"]["interval"]["level"])
    except (KeyError, TypeError, ValueError):
        return None


def plan_bands(plan: Plan, scenario: Scenario, predictor: Predictor) -> Bands:
    """:func:`bands` with the intervals of :func:`power_intervals`."""
    return bands(plan, power_intervals(plan, scenario, predictor), interval_level(predictor.card))
