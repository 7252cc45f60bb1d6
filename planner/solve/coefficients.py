"""The prices of the fleet problem: what one replica and one request/s of a candidate cost.

:func:`objective_prices` weighs facility kWh against GPU rent for the scenario's objective;
:func:`facility_kw_coefficients` and :func:`cost_coefficients` give a candidate's facility power
and its dollars over the horizon (carbon price included); :func:`replica_bound` is the most
replicas of a candidate a plan can need. The MILP (:mod:`planner.solve.milp`) and the
decomposition (:mod:`planner.solve.columns`) both build their rows from these.
"""

from __future__ import annotations

import math

from planner.inputs import MAX_REPLICAS_PER_CANDIDATE, Candidate, PlanningInputs


def kg_co2_per_kwh(inputs: PlanningInputs) -> float:
    """kg of CO2 per kWh of the inputs' grid."""
    return inputs.grid_g_co2_per_kwh / 1000.0


def usd_per_facility_kwh(inputs: PlanningInputs) -> float:
    """$ per facility kWh: the electricity price plus the carbon price of the grid's CO2."""
    return inputs.electricity_usd_per_kwh + (inputs.carbon_usd_per_kg or 0.0) * kg_co2_per_kwh(
        inputs
    )


def objective_prices(inputs: PlanningInputs) -> tuple[float, float]:
    """(weight per facility kWh, weight per $ of GPU rent) of the objective.

    energy: (1, 0); carbon: (kg/kWh, 0); cost: ($/kWh + carbon $/kg · kg/kWh, 1);
    weighted: w_energy_kwh + w_cost_usd · cost's kWh price + w_carbon_kg · kg/kWh, w_cost_usd.
    """
    kg_per_kwh = kg_co2_per_kwh(inputs)
    usd_per_kwh = usd_per_facility_kwh(inputs)
    obj = inputs.objective
    if obj.minimize == "energy":
        return 1.0, 0.0
    if obj.minimize == "carbon":
        return kg_per_kwh, 0.0
    if obj.minimize == "cost":
        return usd_per_kwh, 1.0
    w_cost = obj.weight("cost_usd")
    per_kwh = obj.weight("energy_kwh") + w_cost * usd_per_kwh + obj.weight("carbon_kg") * kg_per_kwh
    return per_kwh, w_cost


def facility_kw_coefficients(inputs: PlanningInputs, c: Candidate) -> tuple[float, float]:
    """(facility kW per replica, facility kW per req/s) of candidate c."""
    return (
        inputs.pue * c.idle_power_w_per_replica / 1000.0,
        inputs.pue * c.energy_j_per_request / 1000.0,
    )


def cost_coefficients(inputs: PlanningInputs, c: Candidate) -> tuple[float, list[float]]:
    """($ per replica, [$ per req/s in period t]) over the horizon, carbon price included."""
    usd_per_kwh = usd_per_facility_kwh(inputs)
    kw_n, kw_x = facility_kw_coefficients(inputs, c)
    per_n = c.usd_per_hour_per_replica * inputs.hours + kw_n * inputs.hours * usd_per_kwh
    return per_n, [kw_x * h * usd_per_kwh for h in inputs.period_hours]


def replica_bound(inputs: PlanningInputs, c: Candidate) -> int:
    """Most replicas of *c* a plan can need: its model's peak load (or minimum replicas) at
    *c*'s capacity — with failover k, k loss units more (:func:`single_deployment_replicas`) —
    capped at :data:`~planner.inputs.MAX_REPLICAS_PER_CANDIDATE`. It is also the fewest
    replicas with which *c* alone serves its model."""
    m = inputs.model(c.name)
    peak = max(m.requests_per_s_by_period)
    k = m.failover.count if m.failover is not None else 0
    need = single_deployment_replicas(
        peak, c.max_requests_per_s_per_replica, k, inputs.replicas_per_unit(c), m.min_replicas
    )
    return min(need, MAX_REPLICAS_PER_CANDIDATE)


def single_deployment_replicas(
    peak: float, cap: float, k: int, per_unit: int, min_replicas: int
) -> int:
    """Fewest replicas of one deployment (capacity *cap*, *per_unit* replicas per loss unit)
    that carry *peak* alone with any *k* units lost, and at least *min_replicas*: the peak's
    replicas plus k whole units (fewer leave, after losing k full units, less than the peak);
    more never help cover it."""
    need = math.ceil(peak / cap)
    if need > 0:
        need += k * per_unit
    return max(need, min_replicas)
