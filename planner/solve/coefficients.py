"""The prices of the fleet problem: what one replica and one request/s of a candidate cost.

:func:`kwh_weight_by_period` weighs a facility kWh in every period for the scenario's objective
(carbon on the grid intensity of that period: the hourly profile when the scenario has one) and
:func:`objective_weights` gives the weights of the objective's terms (facility kWh, carbon kg,
GPU rent); :func:`facility_kw_coefficients` and :func:`cost_coefficients` give a candidate's
facility power and its dollars over the horizon (carbon price included); :func:`replica_bound`
is the most replicas of a candidate a plan can need (:func:`replica_limit`). The MILP
(:mod:`planner.solve.milp`) and the decomposition (:mod:`planner.solve.columns`) both build
their rows from these.

With regions every price is the site's (:mod:`planner.inputs.regions`): the functions take the
*site* (a :class:`~planner.inputs.Region`; default: the inputs' first site, which without
regions is the one made of the top-level fields) or read it from the candidate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from planner.inputs import (
    MAX_REPLICAS_PER_CANDIDATE,
    Candidate,
    Objective,
    PlanningInputs,
    Region,
    is_flat_grid,
)

Number = TypeVar("Number", float, npt.NDArray[np.float64])
"""A float, or an array of one figure per candidate."""


def _at(inputs: PlanningInputs, site: Region | None) -> Region:
    return inputs.sites[0] if site is None else site


def kg_co2_per_kwh_by_period(
    inputs: PlanningInputs, site: Region | None = None
) -> tuple[float, ...]:
    """kg of CO2 per facility kWh of the site's grid in every period (profile or flat)."""
    return tuple(g / 1000.0 for g in _at(inputs, site).grid_by_period(inputs.periods))


def usd_per_facility_kwh_by_period(
    inputs: PlanningInputs, site: Region | None = None
) -> tuple[float, ...]:
    """$ per facility kWh in every period: the site's electricity price plus the carbon price of
    its grid's CO2 in that period."""
    price = inputs.carbon_usd_per_kg or 0.0
    usd = _at(inputs, site).electricity_usd_per_kwh
    return tuple(usd + price * kg for kg in kg_co2_per_kwh_by_period(inputs, site))


def _kwh_weight(obj: Objective, kg_per_kwh: float, usd_per_kwh: float) -> float:
    """Weight of one facility kWh at *kg_per_kwh* CO2 and *usd_per_kwh* (carbon price in)."""
    if obj.minimize == "energy":
        return 1.0
    if obj.minimize == "carbon":
        return kg_per_kwh
    if obj.minimize == "cost":
        return usd_per_kwh
    return (
        obj.weight("energy_kwh")
        + obj.weight("cost_usd") * usd_per_kwh
        + obj.weight("carbon_kg") * kg_per_kwh
    )


def _rent_weight(obj: Objective) -> float:
    if obj.minimize in ("energy", "carbon"):
        return 0.0
    return 1.0 if obj.minimize == "cost" else obj.weight("cost_usd")


def flat_grid(inputs: PlanningInputs, site: Region | None = None) -> bool:
    """True when one grid intensity covers every period of the site (no profile, or a constant
    one)."""
    return is_flat_grid(_at(inputs, site).grid_by_period(inputs.periods))


def kwh_weight_by_period(inputs: PlanningInputs, site: Region | None = None) -> tuple[float, ...]:
    """Weight of one facility kWh in every period: energy 1; carbon kg/kWh_t; cost $/kWh_t
    (carbon price in); weighted w_energy_kwh + w_cost_usd · $/kWh_t + w_carbon_kg · kg/kWh_t."""
    kg_t = kg_co2_per_kwh_by_period(inputs, site)
    usd_t = usd_per_facility_kwh_by_period(inputs, site)
    return tuple(
        _kwh_weight(inputs.objective, kg, usd) for kg, usd in zip(kg_t, usd_t, strict=True)
    )


def over_horizon(
    inputs: PlanningInputs,
    weight_by_period: tuple[float, ...],
    kw: float,
    site: Region | None = None,
) -> float:
    """Weight of *kw* facility kW drawn in every hour of the horizon: Σ_t weight_t · kw · h_t,
    or weight · kw · hours when the site's grid is flat (the one-factor form, to the last bit)."""
    return Horizon.of(inputs, weight_by_period, site).times(kw)


@dataclass(frozen=True)
class Horizon:
    """A per-period weight over the horizon, summed once for many candidates of one site:
    :meth:`times` is :func:`over_horizon` (the same arithmetic)."""

    flat: bool
    first: float
    """The weight of the first period (the one factor on a flat grid)."""
    hours: float
    weighted_hours: float
    """Σ_t weight_t · h_t (read when the grid is not flat)."""

    @staticmethod
    def of(
        inputs: PlanningInputs, weight_by_period: tuple[float, ...], site: Region | None = None
    ) -> Horizon:
        """The horizon sums of *weight_by_period* at *site* (default: the first site)."""
        flat = flat_grid(inputs, site)
        weighted = (
            0.0
            if flat
            else sum(w * h for w, h in zip(weight_by_period, inputs.period_hours, strict=True))
        )
        return Horizon(flat, weight_by_period[0], inputs.hours, weighted)

    def times(self, kw: Number) -> Number:
        """Σ_t weight_t · kw · h_t (weight · kw · hours on a flat grid)."""
        if self.flat:
            return self.first * kw * self.hours
        return kw * self.weighted_hours


@dataclass(frozen=True)
class ObjectiveWeights:
    """objective = per_facility_kwh · facility kWh + per_carbon_kg · carbon kg + per_rent_usd ·
    GPU rent $. On a flat grid the carbon part is folded into the kWh weight (per_carbon_kg = 0);
    with an hourly grid profile per_facility_kwh holds the rest and carbon (kg on the hourly
    factors) is weighted on its own."""

    per_facility_kwh: float
    per_carbon_kg: float
    per_rent_usd: float
    folded: bool = True
    """True when carbon is folded into the kWh weight (flat grid)."""

    def of(self, facility_kwh: float, carbon_kg: float, gpu_cost_usd: float) -> float:
        """The objective of an accounting (an allocation, a fleet, a plan's totals)."""
        return (
            self.per_facility_kwh * facility_kwh
            + self.per_carbon_kg * carbon_kg
            + self.per_rent_usd * gpu_cost_usd
        )


def objective_weights(inputs: PlanningInputs, site: Region | None = None) -> ObjectiveWeights:
    """The objective's weights (:class:`ObjectiveWeights`) for the inputs' objective and the
    site's grid and prices."""
    obj = inputs.objective
    rent = _rent_weight(obj)
    if flat_grid(inputs, site):
        return ObjectiveWeights(kwh_weight_by_period(inputs, site)[0], 0.0, rent)
    price = inputs.carbon_usd_per_kg or 0.0
    per_kg = {"energy": 0.0, "carbon": 1.0, "cost": price}.get(
        obj.minimize, obj.weight("cost_usd") * price + obj.weight("carbon_kg")
    )
    usd = _at(inputs, site).electricity_usd_per_kwh
    return ObjectiveWeights(_kwh_weight(obj, 0.0, usd), per_kg, rent, folded=False)


def mean_kwh_weight(inputs: PlanningInputs, site: Region | None = None) -> float:
    """Hours-weighted mean weight of one facility kWh over the periods (ranking only); on a flat
    grid the one weight itself."""
    weights = kwh_weight_by_period(inputs, site)
    if flat_grid(inputs, site):
        return weights[0]
    return over_horizon(inputs, weights, 1.0, site) / inputs.hours


def facility_kw_coefficients(inputs: PlanningInputs, c: Candidate) -> tuple[float, float]:
    """(facility kW per replica, facility kW per req/s) of candidate c (its site's PUE)."""
    pue = inputs.site(c).pue
    return idle_kw(c, pue), pue * c.energy_j_per_request / 1000.0


def idle_kw(c: Candidate, pue: float) -> float:
    """Facility kW of one idle replica of *c* at *pue*."""
    return pue * c.idle_power_w_per_replica / 1000.0


def cost_coefficients(inputs: PlanningInputs, c: Candidate) -> tuple[float, list[float]]:
    """($ per replica, [$ per req/s in period t]) over the horizon, carbon price included."""
    site = inputs.site(c)
    usd_t = usd_per_facility_kwh_by_period(inputs, site)
    kw_x = facility_kw_coefficients(inputs, c)[1]
    per_n = replica_usd(c, site.pue, Horizon.of(inputs, usd_t, site))
    return per_n, [kw_x * h * u for h, u in zip(inputs.period_hours, usd_t, strict=True)]


def replica_usd(c: Candidate, pue: float, usd: Horizon) -> float:
    """$ of one replica of *c* over the horizon (:func:`cost_coefficients`' first term): its
    rent and its idle facility power at *pue*, priced by *usd* ($ per facility kWh per period,
    carbon price in)."""
    return replica_usd_of(c.usd_per_hour_per_replica, idle_kw(c, pue), usd)


def replica_usd_of(usd_per_hour: Number, kw_n: Number, usd: Horizon) -> Number:
    """:func:`replica_usd` from the replica's $/h and idle facility kW (floats, or arrays of
    many candidates: the same arithmetic element by element)."""
    rent = usd_per_hour * usd.hours
    if usd.flat:
        return rent + kw_n * usd.hours * usd.first
    return rent + kw_n * usd.weighted_hours


def replica_bound(inputs: PlanningInputs, c: Candidate) -> int:
    """Most replicas of *c* a plan can need (:func:`replica_limit` of its model's peak, failover
    and minimum replicas at *c*'s capacity and power curve), capped at
    :data:`~planner.inputs.MAX_REPLICAS_PER_CANDIDATE`."""
    m = inputs.model(c.name)
    k = m.failover.count if m.failover is not None else 0
    xs, ps = c.curve
    relief = float(relief_rates(np.asarray(xs, float), np.asarray(ps, float), [len(xs)])[0])
    limit = replica_limit(
        max(m.requests_per_s_by_period),
        c.max_requests_per_s_per_replica,
        relief,
        k,
        inputs.replicas_per_unit(c),
        m.min_replicas,
    )
    return min(limit, MAX_REPLICAS_PER_CANDIDATE)


def replicas_needed(inputs: PlanningInputs, c: Candidate) -> int:
    """The fewest replicas with which *c* alone serves its model (above
    :data:`~planner.inputs.MAX_REPLICAS_PER_CANDIDATE`, *c* cannot)."""
    m = inputs.model(c.name)
    peak = max(m.requests_per_s_by_period)
    k = m.failover.count if m.failover is not None else 0
    return single_deployment_replicas(
        peak, c.max_requests_per_s_per_replica, k, inputs.replicas_per_unit(c), m.min_replicas
    )


def relief_rates(
    xs: npt.NDArray[np.float64], ps: npt.NDArray[np.float64], sizes: Sequence[int]
) -> npt.NDArray[np.float64]:
    """Per power curve (*sizes* consecutive knots of rates *xs* and replica watts *ps* each),
    the load per replica from which one replica more can draw less: the left knot of its first
    piece whose line meets rate 0 below 0 W (inf when none).

    ``n`` replicas carrying ``x`` req/s draw ``f(n) = n · P(x / n)``; ``df/dn = P(u) − u·P'(u)``
    at ``u = x / n`` is that intercept of the piece ``u`` lies on. Below the relief rate every
    intercept is positive, so once a plan's load per replica is there each replica more draws
    more watts in every period (and rents more GPUs): :func:`replica_limit`. Only a convex end
    (power per request rising towards capacity) has a negative intercept."""
    total = int(sum(sizes))
    ends = np.cumsum(np.asarray(sizes, dtype=np.int64))
    starts = ends - np.asarray(sizes, dtype=np.int64)
    dx, dp = np.diff(xs[:total]), np.diff(ps[:total])
    inside = dx > 0
    inside[ends[:-1] - 1] = False  # the step from one curve's last knot to the next one's first
    slope = np.divide(dp, dx, out=np.zeros_like(dx), where=inside)
    intercept = ps[: total - 1] - slope * xs[: total - 1]
    tol = 1e-9 * np.maximum(np.abs(ps[: total - 1]), np.abs(ps[1:total]))
    rate = np.where(inside & (intercept < -tol), xs[: total - 1], np.inf)
    out: npt.NDArray[np.float64] = np.minimum.reduceat(np.append(rate, np.inf), starts)
    return out


def replica_limit(
    peak: float, cap: float, relief: float, k: int, per_unit: int, min_replicas: int
) -> int:
    """Most replicas of one deployment (capacity *cap*, relief rate *relief* of
    :func:`relief_rates`, failover *k* loss units of *per_unit* replicas, *min_replicas*) a
    least-cost plan can need: the fewest that carry *peak* at *relief* req/s each, failover
    and minimum included. Above it, each period's load per replica is below the relief rate
    whatever the plan routes there, so dropping a replica keeps every constraint (capacity,
    failover: the deployment alone still covers the peak) and lowers watts, rent and idle
    power. Where the curve has no convex end it is the fewest replicas that carry the peak
    (:func:`single_deployment_replicas`)."""
    fewest = single_deployment_replicas(peak, cap, k, per_unit, min_replicas)
    if not relief < cap or peak <= 0:
        return fewest
    if relief <= 0 or peak / relief > MAX_REPLICAS_PER_CANDIDATE:
        return max(fewest, MAX_REPLICAS_PER_CANDIDATE + 1)
    return max(fewest, single_deployment_replicas(peak, relief, k, per_unit, min_replicas))


def single_deployment_replicas(
    peak: float, cap: float, k: int, per_unit: int, min_replicas: int
) -> int:
    """Fewest replicas of one deployment (capacity *cap*, *per_unit* replicas per loss unit)
    that carry *peak* alone with any *k* units lost, and at least *min_replicas*: the peak's
    replicas plus k whole units (fewer leave, after losing k full units, less than the peak);
    more never help cover it."""
    need = math.ceil(peak / cap)
    if peak > 0:  # at least one, also where peak / cap underflows to 0
        need = max(need, 1)
        need += k * per_unit
    return max(need, min_replicas)
