"""The plan JSON check (:mod:`planner.documents.verify`) of a candidate's power figures against its
power curve, as the planner writes them.

A candidate's curve (``load_curve_requests_per_s``, ``power_curve_w_per_replica``) is the replica's
power from no load to its capacity. The planner writes the figures beside it from the curve
(:mod:`planner.capacity`, :mod:`planner.disagg.evaluate`): ``idle_power_w_per_replica`` is its
first knot and ``idle_power_w_per_gpu`` that over the replica's ``gpus_per_replica``,
``max_requests_per_s_per_replica`` its last rate, ``power_w_per_gpu_at_capacity`` its last power
over the GPUs, and ``energy_j_per_request`` the least watts above idle per req/s over the knots
after the first (0 at least; :func:`planner.inputs.candidate.least_slope_w`). A disaggregated
unit's pools are written the same way from their own curves (``idle_power_w`` the first knot,
``power_w_at_capacity`` the last; the pools' curves add up to the unit's, :mod:`.verify_pools`).
The report reads these figures (the idle per GPU sets the uncertainty bands, the energy per request
the disclosure's), so an edited one (``idle_power_w_per_gpu`` 36.34 -> 29.07 W beside 36.34 W per
1-GPU replica, a pool idling at 1 W, a prefill pool at 99,999 W at capacity) was reported as
written; each is now one line naming the field, to :data:`.verify_pools.RELATIVE_TOLERANCE`. A
hand-built candidate without a curve is linear (its figures are the curve) and is not compared.
Works on the plain JSON mapping, like the rest of the check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planner.documents.verify_pools import differs
from planner.inputs.candidate import least_slope_w


def _curve(where: str, c: dict[str, Any]) -> Iterator[str]:
    """The figures of candidate record *c* its curve gives."""
    xs, ps = c.get("load_curve_requests_per_s") or [], c.get("power_curve_w_per_replica") or []
    if not ps or len(xs) != len(ps):
        return
    gpus = int(c.get("gpus_per_replica") or 1)
    idle, top = float(ps[0]), float(ps[-1])
    stored = c.get("idle_power_w_per_replica")
    if differs(stored, idle):
        yield (
            f"{where}.idle_power_w_per_replica: {stored!r} W, but its power_curve_w_per_replica "
            f"starts at {idle:.6g} W (the replica's power at no load)"
        )
    per_gpu = c.get("idle_power_w_per_gpu")
    if per_gpu is not None and differs(per_gpu, idle / gpus):
        yield (
            f"{where}.idle_power_w_per_gpu: {per_gpu!r} W, but the replica's idle {idle:.6g} W "
            f"(idle_power_w_per_replica) over its {gpus} GPU(s) is {idle / gpus:.6g} W"
        )
    stored = c.get("max_requests_per_s_per_replica")
    if differs(stored, float(xs[-1])):
        yield (
            f"{where}.max_requests_per_s_per_replica: {stored!r} req/s, but its curve ends at "
            f"{float(xs[-1]):.6g} req/s (the capacity is its last knot)"
        )
    stored = c.get("power_w_per_gpu_at_capacity")
    if differs(stored, top / gpus):
        yield (
            f"{where}.power_w_per_gpu_at_capacity: {stored!r} W, but its power at capacity "
            f"{top:.6g} W (the curve's last knot) over its {gpus} GPU(s) is {top / gpus:.6g} W"
        )
    again = least_slope_w(xs, ps)
    stored = c.get("energy_j_per_request")
    if differs(stored, again):
        yield (
            f"{where}.energy_j_per_request: {stored!r} J, but its curve gives {again:.6g} J "
            "(the least watts above idle per req/s over its knots)"
        )


def _pools(where: str, c: dict[str, Any]) -> Iterator[str]:
    """Each pool's idle and power at capacity against its own curve."""
    pools = c.get("pools") if c.get("deployment") == "disaggregated" else None
    for j, p in enumerate(pools if isinstance(pools, list) else ()):
        curve = p.get("power_curve_w") if isinstance(p, dict) else None
        if not curve:
            continue  # a hand-built pool: its bounds (verify_catalog)
        for key, knot, what in (
            ("idle_power_w", 0, "starts at"),
            ("power_w_at_capacity", -1, "ends at"),
        ):
            if differs(p.get(key), float(curve[knot])):
                yield (
                    f"{where}.pools[{j}].{key}: {p.get(key)!r} W, but its power_curve_w {what} "
                    f"{float(curve[knot]):.6g} W"
                )


def power_problems(data: dict[str, Any]) -> list[str]:
    """Every candidate figure of the plan JSON *data* that its curve does not give (module doc),
    one line per field."""
    out: list[str] = []
    for i, c in enumerate(data.get("candidates") or []):
        if isinstance(c, dict):
            out.extend(_curve(f"candidates[{i}]", c))
            out.extend(_pools(f"candidates[{i}]", c))
    return out
