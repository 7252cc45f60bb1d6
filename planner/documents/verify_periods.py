"""The plan JSON check (:mod:`planner.documents.verify`) of per-period values against the plan's
periods: the hours, each model entry's and each allocation's load and power, the grid profiles.

A load per period that the periods do not match ended the recomputation of an allocation
(:mod:`.verify_allocations`) in an internal error, a model entry's made a report stop with
``planning inputs: model …``, and a shortened ``power_w_by_period`` passed ``--trust`` into an
internal error of the report; each is now one line naming the list
(``allocations[2].requests_per_s_by_period: 3 values for 24 periods (one per period)``), found
before anything is recomputed from the plan.

``assumptions.hours`` is the horizon every figure is scaled by (a GPU's rent, the mean power, the
month and year figures of the forecast): it is the sum of the periods' hours, as the planning
inputs compute it (:attr:`planner.inputs.PlanningInputs.hours`). An edit of it alone made a
report whose totals contradict its forecast, and ``0`` ended ``report --trust`` in an internal
error (a division by the horizon); it is named here, before anything is recomputed.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from planner.documents.json_values import is_number, is_whole
from predictors.core.escape import short_repr

#: Relative tolerance of ``assumptions.hours`` against the sum of ``period_hours``.
HOURS_TOLERANCE = 1e-6


def _length(value: Any) -> int | None:
    return len(value) if isinstance(value, list) else None


def period_problems(data: dict[str, Any]) -> list[str]:
    """Per-period values of the plan JSON *data* that do not match its periods: the hours, each
    model entry's and each allocation's load and power, the grid profiles. The periods are the
    count most of them share (``assumptions.periods`` among them), so that the one list an edit
    shortened is the one named; then ``assumptions.hours``, their sum (:func:`_hours`)."""
    assumptions = data.get("assumptions")
    a: dict[str, Any] = assumptions if isinstance(assumptions, dict) else {}
    lists: dict[str, int | None] = {"assumptions.period_hours": _length(a.get("period_hours"))}
    for i, m in enumerate(data.get("models") or []):
        if isinstance(m, dict):
            lists[f"models[{i}].requests_per_s_by_period"] = _length(
                m.get("requests_per_s_by_period")
            )
    for i, alloc in enumerate(data.get("allocations") or []):
        if isinstance(alloc, dict):
            for key in ("requests_per_s_by_period", "power_w_by_period"):
                if key == "requests_per_s_by_period" or alloc.get(key) is not None:
                    lists[f"allocations[{i}].{key}"] = _length(alloc.get(key))
    periods: Any = a.get("periods")
    votes = Counter(n for n in lists.values() if n)
    if is_whole(periods, 1):
        votes[periods] += 1
    if not votes:
        return _hours(a)
    count = max(votes, key=lambda n: (votes[n], n == periods))
    out = []
    if is_whole(periods, 1) and periods != count:
        out.append(f"assumptions.periods: {periods}, but the plan's lists hold {count} periods")
    grids = {"assumptions.grid_g_co2_per_kwh_by_period": a.get("grid_g_co2_per_kwh_by_period")}
    for r, region in enumerate(data.get("regions") or []):
        if isinstance(region, dict):
            grids[f"regions[{r}].grid_g_co2_per_kwh_by_period"] = region.get(
                "grid_g_co2_per_kwh_by_period"
            )
    lists.update({k: _length(v) for k, v in grids.items() if v is not None})
    for field, n in lists.items():
        if n != count:
            values = "no" if n is None else str(n)
            out.append(f"{field}: {values} values for {count} periods (one per period)")
    if lists.get("assumptions.period_hours", count) != count:
        return out  # the sum of a list of the wrong length says nothing more
    return out + _hours(a)


def _hours(a: dict[str, Any]) -> list[str]:
    """``assumptions.hours``: a number above 0, the sum of ``period_hours`` (when those are
    numbers: a bad period is named by the input checks)."""
    hours: Any = a.get("hours")
    periods: Any = a.get("period_hours")
    if not is_number(hours) or hours <= 0:
        return [
            f"assumptions.hours: {short_repr(hours)} is impossible (above 0: the sum of "
            "period_hours)"
        ]
    if not (isinstance(periods, list) and periods and all(map(is_number, periods))):
        return []
    if not all(p > 0 for p in periods):
        return []  # a period of no hours is named by the input checks
    total = math.fsum(periods)
    if abs(hours - total) > HOURS_TOLERANCE * max(abs(hours), abs(total)):
        return [
            f"assumptions.hours: {short_repr(hours)} h, but period_hours add up to {total:g} h "
            "(the horizon is their sum)"
        ]
    return []
