"""Low / median / high bands for a plan's energy, cost and carbon from the predictors' intervals.

Arithmetic on the plan alone (its JSON document), stated in every output by :data:`METHOD`:

1. Every candidate of the plan records, at its operating batch (saturated replica), the power
   predictor's point prediction ``P`` and its split-conformal interval ``[P_lo, P_hi]`` (90 % by
   default; see the model card), plus the catalog idle power ``P_idle`` and TDP of its GPU.
2. The bounds are clipped to what a GPU can draw: ``P`` to at least ``P_idle``; ``P_lo`` to
   ``[P_idle, P]`` and ``P_hi`` to ``[P, TDP]`` (never beyond the point prediction itself).
3. Per allocation and period, the GPU power above idle (the plan's ``power_w_by_period`` minus
   replicas × idle power) is scaled by ``(P_bound − P_idle) / (P − P_idle)``; idle power, replicas
   and load shares are unchanged. Whatever the plan's load model, the load-dependent power is
   proportional to how far the saturated power lies above idle, so this is the plan's own model
   evaluated at the bound power. For the linear model it equals re-computing the energy per
   request ``TP · (P_bound − P_idle) / saturated req/s``.
4. Energy (GPU and facility), electricity cost, carbon price and CO2e are re-accounted with the
   plan's PUE, prices and grid factor (per period on its grid profile, when it has one);
   GPU-hour cost does not change. The median is the plan's
   own figure (point prediction).

Not included: the ITL interval (it changes replicas, not the energy of a fixed plan; plan with
``robust: true`` to size replicas on the upper ITL bound), idle-power, PUE and grid-factor
uncertainty. Bands of different models are summed (fully correlated errors: one predictor).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.analysis.forecast import (
    allocation_economics,
    allocation_power_w,
    figures_from_energy,
)
from planner.documents.forecast import ZERO_FIGURES, FiguresDocument
from planner.documents.plan import PlanDocument, as_document
from planner.documents.plan_parts import AllocationDocument, CandidateDocument
from planner.documents.uncertainty import (
    AllocationBandDocument,
    BandDocument,
    BandsDocument,
    FigureBandsDocument,
)
from planner.inputs import drawn_grid_g_co2_per_kwh
from planner.result import Plan
from predictors.core.errors import WattgpuError

METHOD = (
    "Each allocation's GPU power above idle is rescaled by the power predictor's "
    "split-conformal interval recorded in the plan at its operating point (model, GPU, TP, "
    "batch, engine, precision, token lengths): with P the point prediction and [P_lo, P_hi] its "
    "bounds, clipped to catalog idle power .. TDP, the power above idle of every period is "
    "multiplied by (P_bound − P_idle)/(P − P_idle) with replicas and load shares fixed (for the "
    "linear load model: energy per request = TP·(P_bound − P_idle)/saturated req/s). "
    "Median = the plan's point estimate. GPU-hour cost is fixed; electricity, carbon price and "
    "CO2e follow energy. Not included: ITL, idle-power, PUE and grid-factor uncertainty; model "
    "errors are summed as fully correlated."
)


@dataclass(frozen=True)
class PowerInterval:
    """Predicted power per GPU at an allocation's operating point and its clipped bounds (W)."""

    power_w_per_gpu: float
    power_w_per_gpu_lo: float
    power_w_per_gpu_hi: float
    idle_power_w_per_gpu: float
    tdp_w: float | None

    def clipped(self) -> tuple[float, float, float]:
        """(lo, point, hi) clipped to [idle, TDP] and ordered lo <= point <= hi."""
        point = max(self.power_w_per_gpu, self.idle_power_w_per_gpu)
        lo = min(max(self.power_w_per_gpu_lo, self.idle_power_w_per_gpu), point)
        hi = (
            self.power_w_per_gpu_hi
            if self.tdp_w is None
            else min(self.power_w_per_gpu_hi, self.tdp_w)
        )
        return lo, point, max(hi, point)

    def factors(self) -> tuple[float, float]:
        """(low, high) multipliers of the power above idle: (P_bound − idle) / (P − idle)."""
        lo, point, hi = self.clipped()
        above = point - self.idle_power_w_per_gpu
        if above <= 0:
            return 1.0, 1.0
        idle = self.idle_power_w_per_gpu
        return (lo - idle) / above, (hi - idle) / above


#: Appended to :data:`METHOD` in plans with disaggregated units that record no interval (plans
#: written before units recorded their pools' interval, docs/method.md).
UNIT_NOTE = (
    " Disaggregated units of this plan record no power interval (it was written before they "
    "did): their band is their point estimate."
)


def _no_interval(c: CandidateDocument) -> bool:
    """A disaggregated unit without a recorded power interval."""
    return c.deployment == "disaggregated" and c.power_w_per_gpu_predicted is None


def power_interval(c: CandidateDocument) -> PowerInterval:
    """The interval a candidate recorded (a disaggregated unit without one: its point power per
    GPU at capacity, :data:`UNIT_NOTE`); a clear error when the plan predates the fields."""
    if _no_interval(c) and c.idle_power_w_per_gpu is not None:
        p = c.power_w_per_gpu_at_capacity
        return PowerInterval(p, p, p, c.idle_power_w_per_gpu, c.tdp_w_per_gpu)
    values = (c.power_w_per_gpu_predicted, c.power_w_per_gpu_lo, c.power_w_per_gpu_hi)
    if any(v is None for v in values) or c.idle_power_w_per_gpu is None:
        raise WattgpuError(
            f"plan candidate {c.name},{c.gpu},{c.tp}: no power interval "
            "(power_w_per_gpu_predicted/_lo/_hi, idle_power_w_per_gpu); re-run `wattgpu plan` "
            "with this version to record them"
        )
    point, lo, hi = (float(v) for v in values)  # type: ignore[arg-type]
    return PowerInterval(point, lo, hi, float(c.idle_power_w_per_gpu), c.tdp_w_per_gpu)


def _band(lo: float, mid: float, hi: float) -> BandDocument:
    return BandDocument(low=min(lo, mid, hi), median=mid, high=max(lo, mid, hi))


def _figure_bands(
    lo: FiguresDocument, mid: FiguresDocument, hi: FiguresDocument
) -> FigureBandsDocument:
    return FigureBandsDocument(
        energy_kwh=_band(lo.energy_kwh, mid.energy_kwh, hi.energy_kwh),
        facility_energy_kwh=_band(
            lo.facility_energy_kwh, mid.facility_energy_kwh, hi.facility_energy_kwh
        ),
        cost_usd=_band(lo.total_cost_usd, mid.total_cost_usd, hi.total_cost_usd),
        carbon_kg=_band(lo.carbon_kg, mid.carbon_kg, hi.carbon_kg),
    )


def _figures(doc: PlanDocument, a: AllocationDocument, factor: float) -> FiguresDocument:
    """Horizon figures of *a* with its power above idle multiplied by *factor*."""
    c = doc.candidate(a.key)
    idle_w = a.replicas * c.idle_power_w_per_replica
    hours = doc.assumptions.period_hours
    watt_hours = [
        (idle_w + max(0.0, p - idle_w) * factor) * h
        for p, h in zip(allocation_power_w(doc, a), hours, strict=True)
    ]
    economics, grid_t = allocation_economics(doc, a)
    grid = drawn_grid_g_co2_per_kwh(watt_hours, grid_t)
    return figures_from_energy(sum(watt_hours) / 1000.0, a.gpu_cost_usd, economics, grid)


def bands(plan: Plan | PlanDocument, level: float | None = None) -> BandsDocument:
    """Low / median / high of *plan* from the power intervals its candidates recorded."""
    doc = as_document(plan)
    per_model: dict[str, list[FiguresDocument]] = {
        m.name: [ZERO_FIGURES, ZERO_FIGURES, ZERO_FIGURES] for m in doc.models
    }
    rows: list[AllocationBandDocument] = []
    for a in doc.allocations:
        c = doc.candidate(a.key)
        iv = power_interval(c)
        p_lo, p_mid, p_hi = iv.clipped()
        f_lo, f_hi = iv.factors()
        figs = [_figures(doc, a, f) for f in (f_lo, 1.0, f_hi)]
        acc = per_model[a.name]
        per_model[a.name] = [acc[i] + figs[i] for i in range(3)]
        e = c.energy_j_per_request
        rows.append(
            AllocationBandDocument(
                name=a.name,
                gpu=a.gpu,
                tp=a.tp,
                batch_size=a.batch_size,
                power_w_per_gpu=_band(p_lo, p_mid, p_hi),
                power_w_per_gpu_unclipped=BandDocument(
                    low=iv.power_w_per_gpu_lo,
                    median=iv.power_w_per_gpu,
                    high=iv.power_w_per_gpu_hi,
                ),
                idle_power_w_per_gpu=iv.idle_power_w_per_gpu,
                tdp_w=iv.tdp_w,
                energy_j_per_request=_band(e * f_lo, e, e * f_hi),
                energy_kwh=_band(figs[0].energy_kwh, figs[1].energy_kwh, figs[2].energy_kwh),
            )
        )
    totals = [ZERO_FIGURES, ZERO_FIGURES, ZERO_FIGURES]
    for figs in per_model.values():
        totals = [totals[i] + figs[i] for i in range(3)]
    units = any(_no_interval(doc.candidate(a.key)) for a in doc.allocations)
    return BandsDocument(
        method=METHOD + (UNIT_NOTE if units else ""),
        interval_level=level,
        total=_figure_bands(*totals),
        models={k: _figure_bands(*v) for k, v in per_model.items()},
        allocations=rows,
    )
