"""A saved plan's allocations against the limits it states: its power cap (or each region's),
its budget and each model entry's minimum replicas. The planner checks the same before it writes
a plan (:func:`planner.result.check_invariants`, the same tolerance); a plan that breaks one was
edited or damaged, as one above its inventory is.

Run on a plan whose totals were recomputed and found consistent, so its peak power and cost are
its allocations'.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planner.result import LOAD_TOLERANCE


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _above(value: float | None, limit: float | None) -> bool:
    """*value* above *limit* beyond the planner's own tolerance (False when either is unknown)."""
    if value is None or limit is None:
        return False
    return value > limit + LOAD_TOLERANCE * max(1.0, abs(limit))


def limit_problems(data: dict[str, Any]) -> Iterator[str]:
    """One line per stated limit the plan's allocations break (module doc)."""
    allocations = [a for a in data.get("allocations") or [] if isinstance(a, dict)]
    if data.get("status") not in ("optimal", "feasible") or not allocations:
        return
    assumptions = data.get("assumptions") or {}
    totals = data.get("totals") or {}
    cap = _number(assumptions.get("power_cap_kw"))
    peak = _number(totals.get("peak_facility_power_kw"))
    if _above(peak, cap):
        yield (
            f"assumptions.power_cap_kw: {cap:g} kW, but the plan's peak facility power is "
            f"{peak:.6g} kW"
        )
    for i, region in enumerate(data.get("regions") or []):
        if not isinstance(region, dict):
            continue
        cap = _number(region.get("power_cap_kw"))
        peak = _number((region.get("totals") or {}).get("peak_facility_power_kw"))
        if _above(peak, cap):
            yield (
                f"regions[{i}].power_cap_kw: {cap:g} kW, but the region's peak facility power "
                f"is {peak:.6g} kW"
            )
    budget = _number(assumptions.get("budget_usd"))
    cost = _number(totals.get("cost_usd"))
    if _above(cost, budget):
        yield f"assumptions.budget_usd: {budget:,.2f} $, but the plan costs {cost:,.2f} $"
    replicas: dict[Any, int] = {}
    for a in allocations:
        count = a.get("replicas")
        if isinstance(count, int) and not isinstance(count, bool):
            replicas[a.get("name")] = replicas.get(a.get("name"), 0) + count
    for i, m in enumerate(data.get("models") or []):
        if not isinstance(m, dict):
            continue
        least = m.get("min_replicas")
        if isinstance(least, int) and not isinstance(least, bool) and least > 0:
            got = replicas.get(m.get("name"), 0)
            if got < least:
                yield (
                    f"models[{i}].min_replicas: {least}, but the plan allocates {got} "
                    f"replica{'s' if got != 1 else ''} of {m.get('name')!r}"
                )
