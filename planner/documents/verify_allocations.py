"""One allocation of a plan JSON recomputed from its candidate's curve (docs/method.md §4):
power per period ``n · interp(x_t / n, load curve, power curve)``, energy, facility energy,
cost and carbon on the grid factor of every period, the load per replica ``x_t / n`` and the
ITL at it ``interp(x_t / n, load curve, ITL curve)`` (the ITL at capacity without an ITL curve);
each figure that differs is one problem line naming its field (:mod:`.verify` gathers them with
the plan-wide checks).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from planner.documents.verify_pools import differs
from planner.documents.verify_regions import site_figures
from planner.inputs import grid_by_period, grid_carbon_kg

#: Figures of an allocation recomputed from its candidate, in the order they are checked.
ALLOCATION_FIGURES = (
    "energy_kwh",
    "facility_energy_kwh",
    "gpu_cost_usd",
    "energy_cost_usd",
    "carbon_kg",
    "carbon_cost_usd",
    "cost_usd",
)


def curve_of(candidate: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(rates, replica power) knots; a hand-built candidate without curves is linear."""
    xs = candidate.get("load_curve_requests_per_s") or []
    ps = candidate.get("power_curve_w_per_replica") or []
    if ps:
        return np.asarray(xs, dtype=np.float64), np.asarray(ps, dtype=np.float64)
    cap = float(candidate["max_requests_per_s_per_replica"])
    idle = float(candidate["idle_power_w_per_replica"])
    return np.asarray([0.0, cap]), np.asarray(
        [idle, idle + candidate["energy_j_per_request"] * cap]
    )


def _recomputed(
    data: dict[str, Any], alloc: dict[str, Any], candidate: dict[str, Any], n: int
) -> tuple[np.ndarray, dict[str, float]]:
    """Power per period and the figures of *n* replicas of *candidate* serving *alloc*'s load."""
    a = {**data["assumptions"], **site_figures(data, alloc)}
    hours = np.asarray(a["period_hours"], dtype=np.float64)
    x = np.asarray(alloc["requests_per_s_by_period"], dtype=np.float64)
    xs, ps = curve_of(candidate)
    power = n * np.interp(x / n, xs, ps) if n > 0 else np.zeros_like(x)
    energy = float(power @ hours) / 1000.0
    facility = energy * a["pue"]
    grid = grid_by_period(a["grid_g_co2_per_kwh"], a.get("grid_g_co2_per_kwh_by_period"), x.size)
    carbon = grid_carbon_kg([float(v) for v in power * hours / 1000.0 * a["pue"]], facility, grid)
    figures = {
        "energy_kwh": energy,
        "facility_energy_kwh": facility,
        "gpu_cost_usd": n * candidate["usd_per_hour_per_replica"] * a["hours"],
        "energy_cost_usd": facility * a["electricity_usd_per_kwh"],
        "carbon_kg": carbon,
        "carbon_cost_usd": carbon * (a.get("carbon_usd_per_kg") or 0.0),
    }
    figures["cost_usd"] = (
        figures["gpu_cost_usd"] + figures["energy_cost_usd"] + figures["carbon_cost_usd"]
    )
    return power, figures


def _mismatches(
    i: int, alloc: dict[str, Any], power: np.ndarray, figures: dict[str, float]
) -> Iterator[str]:
    stored_power = list(alloc.get("power_w_by_period") or [])
    if len(stored_power) != power.size:
        yield (
            f"allocations[{i}].power_w_by_period: {len(stored_power)} values for "
            f"{power.size} periods"
        )
    for t, (stored, again) in enumerate(zip(stored_power, power, strict=False)):
        if differs(stored, float(again)):
            yield (
                f"allocations[{i}].power_w_by_period[{t}]: {stored!r} W, but the candidate's "
                f"curve gives {again:.6g} W"
            )
            break
    for key in ALLOCATION_FIGURES:
        if differs(alloc.get(key), figures[key]):
            yield f"allocations[{i}].{key}: {alloc.get(key)!r}, recomputed {figures[key]:.6g}"


def _served(i: int, alloc: dict[str, Any], candidate: dict[str, Any], n: int) -> Iterator[str]:
    """The load per replica and the ITL at it, per period, and the busiest period's ITL, as
    :func:`planner.result.itl_s_at_served_load` gives them (null in older plans: not read)."""
    x = np.asarray(alloc["requests_per_s_by_period"], dtype=np.float64)
    load = x / n if n > 0 else np.zeros_like(x)
    xs, itls = candidate.get("load_curve_requests_per_s") or [], candidate.get("itl_curve_s")
    at_capacity = candidate.get("itl_s_at_capacity")
    itl = np.interp(load, xs, itls) if itls else np.full_like(load, float(at_capacity or 0.0))
    for key, again, unit in (
        ("requests_per_s_per_replica_by_period", load, "req/s"),
        ("itl_s_at_served_load_by_period", itl, "s"),
    ):
        stored = alloc.get(key)
        if stored is None:
            continue
        if len(stored) != again.size:
            yield f"allocations[{i}].{key}: {len(stored)} values for {again.size} periods"
            continue
        for t, (value, want) in enumerate(zip(stored, again.tolist(), strict=True)):
            if differs(value, want):
                yield (
                    f"allocations[{i}].{key}[{t}]: {value!r} {unit}, but {n} replica(s) serving "
                    f"{x[t]:.6g} req/s give {want:.6g} {unit}"
                )
                break
    cap = candidate.get("max_requests_per_s_per_replica")
    if isinstance(cap, int | float) and load.size and float(load.max()) > cap * (1 + 1e-6) + 1e-12:
        t = int(load.argmax())
        yield (
            f"allocations[{i}].requests_per_s_by_period[{t}]: {x[t]:.6g} req/s on {n} replica(s) "
            f"is {load[t]:.6g} req/s each, above the candidate's capacity {cap:.6g} req/s"
        )
    busiest = alloc.get("itl_s_at_served_load")
    again_busiest = float(itl.max()) if itl.size else float(at_capacity or 0.0)
    if busiest is not None and differs(busiest, again_busiest):
        yield (
            f"allocations[{i}].itl_s_at_served_load: {busiest!r} s, but {n} replica(s) give "
            f"{again_busiest:.6g} s in the busiest period"
        )


#: An allocation's copies of its candidate's facts: (allocation field, candidate field). The
#: layout degrees are null in plans written before layouts (a null candidate degree is 1).
COPIED = (
    ("batch_size", "batch_size"),
    ("itl_s", "itl_s_at_capacity"),
    ("itl_s_at_capacity", "itl_s_at_capacity"),
    ("tensor_parallel", "tp"),
    ("pipeline_parallel", "pipeline_parallel"),
    ("data_parallel", "data_parallel"),
    ("expert_parallel", "expert_parallel"),
    ("nodes", "nodes"),
)
_DEGREES = {"pipeline_parallel", "data_parallel", "expert_parallel", "nodes"}


def _copies(
    i: int, alloc: dict[str, Any], candidate: dict[str, Any], energy_kwh: float, hours: float
) -> Iterator[str]:
    """The allocation's copies of its candidate's facts, and its mean power per GPU."""
    for field, source in COPIED:
        value, want = alloc.get(field), candidate.get(source)
        if field in _DEGREES and want is None:
            want = 1
        if value is None or want is None:  # older plans, an excluded candidate's ITL
            continue
        if differs(value, float(want)):
            yield (f"allocations[{i}].{field}: {value!r}, but its candidate's {source} is {want!r}")
    gpus = alloc["replicas"] * candidate["gpus_per_replica"]
    mean = energy_kwh * 1000.0 / hours / gpus if gpus and hours > 0 else 0.0
    if "power_w_per_gpu" in alloc and differs(alloc["power_w_per_gpu"], mean):
        yield (
            f"allocations[{i}].power_w_per_gpu: {alloc['power_w_per_gpu']!r} W, but its energy "
            f"over {hours:g} h on {gpus} GPU(s) gives {mean:.6g} W"
        )


def allocation_problems(
    data: dict[str, Any], i: int, alloc: dict[str, Any], candidate: dict[str, Any]
) -> Iterator[str]:
    """Recompute one allocation's power per period and figures from its candidate's curve.

    When only ``replicas`` disagrees (its ``gpus``, power and figures all recompute for another
    replica count), that one field is named instead of every figure that follows from it."""
    n, per = alloc["replicas"], candidate["gpus_per_replica"]
    gpus = alloc.get("gpus")
    if isinstance(gpus, int) and per > 0 and gpus != n * per and gpus % per == 0:
        m = gpus // per
        again = _recomputed(data, alloc, candidate, m)
        if not any(_mismatches(i, alloc, *again)) and not any(_served(i, alloc, candidate, m)):
            yield (
                f"allocations[{i}].replicas: {n!r}, but its gpus ({gpus}), power and figures "
                f"are those of {m} replica(s) of {per} GPU(s)"
            )
            return
    power, figures = _recomputed(data, alloc, candidate, n)
    yield from _mismatches(i, alloc, power, figures)
    yield from _served(i, alloc, candidate, n)
    hours = float({**data["assumptions"], **site_figures(data, alloc)}["hours"])
    yield from _copies(i, alloc, candidate, figures["energy_kwh"], hours)
    if gpus != n * per:
        yield f"allocations[{i}].gpus: {gpus!r}, but {n} replicas of {per} GPU(s) are {n * per}"
