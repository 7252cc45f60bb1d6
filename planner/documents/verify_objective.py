"""The plan JSON check (:mod:`planner.documents.verify`) of the objective: what the plan says it
minimised (``assumptions.objective``), the weights of the objective's terms, the breakdown and the
objective value, recomputed from the allocations the way the planner accounts them
(:func:`planner.solve.accounting.plan_from`).

The weights follow from ``assumptions.objective`` and the prices and grid of the plan (each
region's with regions; :func:`planner.solve.coefficients.objective_weights`); the breakdown's
facility energy, GPU rent (and carbon, with an hourly grid profile) are the allocations' sums;
its objective, and ``solve.objective``, the weighted sum (per region with regions:
Σ regions kWh weight × facility kWh + kg weight × carbon kg, + rent weight × GPU rent). An
``assumptions.objective`` edited to another kind is named as such (the plan's weights are those
of the kind it was solved for), so a report never labels a plan with an objective it was not
solved for. Run on a plan whose allocations and totals recompute, like the limits' check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from planner.documents.verify_pools import differs
from planner.inputs import Objective, PlanningInputs, Region
from planner.inputs.objective import OBJECTIVE_KINDS, ObjectiveKind
from planner.solve.coefficients import objective_weights
from predictors.core.errors import WattgpuError

#: The breakdown's figures that are the allocations' sums (``carbon_kg`` with a grid profile).
BREAKDOWN_SUMS = ("facility_energy_kwh", "gpu_cost_usd", "carbon_kg")


def _profile(site: dict[str, Any]) -> tuple[float, ...] | None:
    profile = site.get("grid_g_co2_per_kwh_by_period")
    return None if profile is None else tuple(float(v) for v in profile)


def _inputs(data: dict[str, Any], objective: Objective) -> PlanningInputs:
    """The plan's prices, grid and regions with *objective* (no model entry or candidate: the
    weights depend on none)."""
    a = data["assumptions"]
    regions = tuple(
        Region(
            r["name"],
            r["pue"],
            r["electricity_usd_per_kwh"],
            r["grid_g_co2_per_kwh"],
            _profile(r),
        )
        for r in data.get("regions") or []
    )
    return PlanningInputs(
        scenario=str(data.get("scenario") or ""),
        models=(),
        candidates=(),
        inventory={},
        period_hours=tuple(float(h) for h in a["period_hours"]),
        pue=a["pue"],
        electricity_usd_per_kwh=a["electricity_usd_per_kwh"],
        grid_g_co2_per_kwh=a["grid_g_co2_per_kwh"],
        carbon_usd_per_kg=a.get("carbon_usd_per_kg"),
        objective=objective,
        grid_g_co2_per_kwh_by_period=_profile(a),
        regions=regions,
    )


def _weights(data: dict[str, Any], objective: Objective) -> dict[str, float]:
    """JSON field -> the weight *objective* gives it at the plan's prices and grid."""
    inputs = _inputs(data, objective)
    if not inputs.regions:
        w = objective_weights(inputs)
        out = {
            "objective_breakdown.usd_per_facility_kwh_weight": w.per_facility_kwh,
            "objective_breakdown.gpu_rent_weight": w.per_rent_usd,
        }
        if not w.folded:
            out["objective_breakdown.carbon_kg_weight"] = w.per_carbon_kg
        return out
    out = {"objective_breakdown.gpu_rent_weight": objective_weights(inputs).per_rent_usd}
    for i, region in enumerate(inputs.regions):
        w = objective_weights(inputs, region)
        out[f"regions[{i}].usd_per_facility_kwh_weight"] = w.per_facility_kwh
        out[f"regions[{i}].carbon_kg_weight"] = w.per_carbon_kg
    return out


def _stored(data: dict[str, Any], field: str) -> Any:
    """The value at the JSON path *field* (``objective_breakdown.x`` or ``regions[i].x``)."""
    head, key = field.split(".", 1)
    if head == "objective_breakdown":
        return (data.get("objective_breakdown") or {}).get(key)
    index = int(head.removeprefix("regions[").removesuffix("]"))
    return (data.get("regions") or [])[index].get(key)


def _stated(objective: Any) -> str:
    kind = objective.get("minimize") if isinstance(objective, dict) else None
    weights = objective.get("weights") if isinstance(objective, dict) else None
    return f"minimise {kind}" + (f" {weights}" if kind == "weighted" and weights else "")


def _weight_problems(data: dict[str, Any], objective: Objective) -> Iterator[str]:
    """The stored weights against those of the stated *objective*: when they are all another
    kind's, ``assumptions.objective`` is the edit; otherwise each weight that differs."""
    want = _weights(data, objective)
    wrong = [f for f, w in want.items() if differs(_stored(data, f), w)]
    if not wrong:
        return
    stated = _stated(data["assumptions"].get("objective"))
    for kind in OBJECTIVE_KINDS:
        if kind == "weighted" or kind == objective.minimize:
            continue
        other = _weights(data, Objective(minimize=cast(ObjectiveKind, kind)))
        if other.keys() == want.keys() and not any(
            differs(_stored(data, f), w) for f, w in other.items()
        ):
            where = "objective_breakdown, regions" if data.get("regions") else "objective_breakdown"
            yield (
                f"assumptions.objective: {stated}, but the plan's objective weights ({where}) "
                f"are those of minimise {kind}: it was solved for {kind}"
            )
            return
    for f in wrong:
        yield f"{f}: {_stored(data, f)!r}, but assumptions.objective ({stated}) gives {want[f]:.6g}"


def _objective_value(data: dict[str, Any], want: dict[str, float], sums: dict[str, float]) -> float:
    """The objective of the allocations at the weights *want* (per region with regions)."""
    rent = want["objective_breakdown.gpu_rent_weight"]
    regions = data.get("regions") or []
    if not regions:
        return (
            want["objective_breakdown.usd_per_facility_kwh_weight"] * sums["facility_energy_kwh"]
            + want.get("objective_breakdown.carbon_kg_weight", 0.0) * sums["carbon_kg"]
            + rent * sums["gpu_cost_usd"]
        )
    value = rent * sums["gpu_cost_usd"]
    allocations = data.get("allocations") or []
    for i, region in enumerate(regions):
        mine = [a for a in allocations if a.get("region") == region.get("name")]
        value += want[f"regions[{i}].usd_per_facility_kwh_weight"] * sum(
            float(a.get("facility_energy_kwh") or 0.0) for a in mine
        ) + want[f"regions[{i}].carbon_kg_weight"] * sum(
            float(a.get("carbon_kg") or 0.0) for a in mine
        )
    return value


def objective_problems(data: dict[str, Any]) -> list[str]:
    """Every figure of the objective that does not recompute (module doc), one line per field;
    none for a plan without an objective breakdown and allocations (no plan was found)."""
    breakdown = data.get("objective_breakdown") or {}
    allocations = data.get("allocations") or []
    if not breakdown:
        if allocations:
            return ["objective_breakdown: empty, but the plan has allocations"]
        return []
    stated = (data.get("assumptions") or {}).get("objective") or {}
    kind = stated.get("minimize")
    if kind not in OBJECTIVE_KINDS:
        return []  # named by the input checks (verify_inputs)
    try:
        objective = Objective(cast(ObjectiveKind, kind), dict(stated.get("weights") or {}))
        want = _weights(data, objective)
        out = list(_weight_problems(data, objective))
    except (WattgpuError, KeyError, TypeError, ValueError, IndexError):
        return []  # assumptions or regions the input checks name (verify_inputs)
    sums = {k: sum(float(a.get(k) or 0.0) for a in allocations) for k in BREAKDOWN_SUMS}
    for key, again in sums.items():
        needed = key != "carbon_kg" or "objective_breakdown.carbon_kg_weight" in want
        if (needed or key in breakdown) and differs(breakdown.get(key), again):
            out.append(
                f"objective_breakdown.{key}: {breakdown.get(key)!r}, but the allocations add up "
                f"to {again:.6g}"
            )
    if out:
        return out
    again = _objective_value(data, want, sums)
    if differs(breakdown.get("objective"), again):
        out.append(
            f"objective_breakdown.objective: {breakdown.get('objective')!r}, but the "
            f"allocations give {again:.6g}"
        )
    objective_value = (data.get("solve") or {}).get("objective")
    if objective_value is not None and allocations and differs(objective_value, again):
        out.append(f"solve.objective: {objective_value!r}, but the totals give {again:.6g}")
    return out
