"""The planning periods of a scenario and each model entry's request rate per period.

The capacity stage (:mod:`planner.build`) splits the horizon with :func:`periods` and reads each
entry's load with :func:`requests_per_s_by_period`.
"""

from __future__ import annotations

from planner.scenario.limits import HOURS_PER_DAY
from planner.scenario.model import Scenario
from planner.scenario.sections import ModelEntry
from predictors.core.errors import WattgpuError


def periods(scenario: Scenario) -> tuple[int, float]:
    """Number of planning periods and hours per period.

    24 periods (one per hour of the day, each standing for ``horizon_hours / 24`` hours) when any
    model has a daily profile; ``len(requests_per_s_by_period)`` when per-period loads are given;
    otherwise one period covering the horizon.
    """
    count = 1
    for entry in scenario.models:
        if entry.load.daily_profile is not None:
            count = HOURS_PER_DAY
        elif entry.load.requests_per_s_by_period is not None:
            count = len(entry.load.requests_per_s_by_period)
    return count, scenario.horizon_hours / count


def requests_per_s_by_period(entry: ModelEntry, period_count: int) -> list[float]:
    """The request rate of *entry* in each of *period_count* periods (requests/s)."""
    load = entry.load
    if load.requests_per_s_by_period is not None:
        if len(load.requests_per_s_by_period) != period_count:
            raise WattgpuError(
                f"model {entry.name}: {len(load.requests_per_s_by_period)} per-period rates for "
                f"{period_count} periods — give {period_count} values"
            )
        return list(load.requests_per_s_by_period)
    assert load.requests_per_s is not None  # guaranteed by Load._one_rate
    if load.daily_profile is not None:
        return [load.requests_per_s * m for m in load.daily_profile]
    return [load.requests_per_s] * period_count
