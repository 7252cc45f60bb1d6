"""The plan JSON check (:mod:`planner.documents.verify`) of the assumptions, inventory, model
entries, regions and solver settings the planning inputs refuse.

A report rebuilds the plan's planning inputs (:func:`planner.documents.plan.planning_inputs_of`);
:class:`planner.inputs.PlanningInputs`, :class:`planner.inputs.ModelDemand`,
:class:`planner.inputs.Region` and :class:`planner.inputs.Objective` refuse a PUE below 1, a
negative price, grid factor or GPU count, an ITL SLA of 0, a period of no hours, and so on. With
``--trust`` such an edit stopped the report with ``planning inputs: pue: must be >= 1, got 0.5``,
naming neither the file nor the field. Each is now one line naming the field
(``assumptions.pue: 0.5 is impossible (at least 1)``), found on the plain JSON mapping before
anything is recomputed or built from it, like :mod:`.verify_candidates` does for candidates.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planner.documents.json_values import is_number
from planner.inputs.objective import OBJECTIVE_KINDS, WEIGHT_KEYS
from planner.scenario.disclosure import window_bounds
from planner.scenario.limits import (
    MAX_CONTEXT_TOKENS,
    MAX_LATENCY_MS,
    MAX_PROFILE_MULTIPLIER,
    MAX_REQUESTS_PER_S,
)
from predictors.core.escape import short_repr

#: Economics of the assumptions (and of a region): finite numbers >= 0 (null: none).
ECONOMICS = ("electricity_usd_per_kwh", "grid_g_co2_per_kwh")
OPTIONAL_ECONOMICS = ("carbon_usd_per_kg", "power_cap_kw", "budget_usd")
#: The most load per period a scenario can give (the rate times the largest profile multiplier).
MOST_LOAD = MAX_REQUESTS_PER_S * MAX_PROFILE_MULTIPLIER
#: A model entry's figures: finite numbers >= 0 (``ttft_sla_s`` may be null).
MODEL_FIGURES = ("input_tokens", "output_tokens", "ttft_sla_s")
#: The lowest SLA percentile a scenario can give (``sla.percentile``, docs/scenarios.md).
LEAST_PERCENTILE = 50.0


def _at_least(where: str, value: Any, least: float, *, above: bool = False) -> Iterator[str]:
    """A line unless *value* is a finite number >= *least* (> with *above*)."""
    if not is_number(value) or value < least or (above and value == least):
        bound = f"above {least:g}" if above else f"at least {least:g}"
        yield f"{where}: {short_repr(value)} is impossible ({bound})"


def _at_most(where: str, value: Any, most: float) -> Iterator[str]:
    """A line when the number *value* is above *most* (the scenario's bound on the field: a
    saved plan cannot hold what no scenario can)."""
    if is_number(value) and value > most:
        yield f"{where}: {short_repr(value)} is above {most:g}, the most a scenario allows"


def _figures(where: str, record: dict[str, Any], keys: tuple[str, ...], optional: bool) -> Any:
    for key in keys:
        if not (optional and record.get(key) is None):
            yield from _at_least(f"{where}.{key}", record.get(key), 0)


def _each(where: str, values: Any, least: float, *, above: bool = False) -> Iterator[str]:
    """The first value of the list *values* below *least* (a list: the plan document's type)."""
    for t, value in enumerate(values if isinstance(values, list) else []):
        line = next(_at_least(f"{where}[{t}]", value, least, above=above), None)
        if line:
            yield line
            return


def _stock(where: str, inventory: Any) -> Iterator[str]:
    """GPUs available per type: null (unlimited) or a whole number >= 0."""
    for gpu, count in (inventory if isinstance(inventory, dict) else {}).items():
        if count is not None:
            yield from _at_least(f"{where}.{gpu}", count, 0)


def _site(where: str, site: dict[str, Any]) -> Iterator[str]:
    """What a site (the assumptions, or a region) cannot be: PUE, economics, grid profile."""
    yield from _at_least(f"{where}.pue", site.get("pue"), 1)
    yield from _figures(where, site, ECONOMICS, optional=False)
    profile = f"{where}.grid_g_co2_per_kwh_by_period"
    yield from _each(profile, site.get("grid_g_co2_per_kwh_by_period"), 0)


def _objective(a: dict[str, Any]) -> Iterator[str]:
    objective = a.get("objective")
    if not isinstance(objective, dict):
        return
    minimize, weights = objective.get("minimize"), objective.get("weights") or {}
    if minimize not in OBJECTIVE_KINDS:
        yield f"assumptions.objective.minimize: {short_repr(minimize)} is not an objective"
    for key, value in weights.items():
        if key not in WEIGHT_KEYS:
            yield f"assumptions.objective.weights.{key}: not a weight ({', '.join(WEIGHT_KEYS)})"
        else:
            yield from _at_least(f"assumptions.objective.weights.{key}", value, 0)
    if minimize == "weighted" and not any(is_number(v) and v > 0 for v in weights.values()):
        yield "assumptions.objective.weights: a weighted objective needs a weight above 0"


def _assumptions(data: dict[str, Any]) -> Iterator[str]:
    a = data.get("assumptions")
    if not isinstance(a, dict):
        return
    yield from _each("assumptions.period_hours", a.get("period_hours"), 0, above=True)
    yield from _site("assumptions", a)
    yield from _figures("assumptions", a, OPTIONAL_ECONOMICS, optional=True)
    yield from _objective(a)
    yield from _window(a)
    for gpu, count in (a.get("gpus_per_node") or {}).items():
        yield from _at_least(f"assumptions.gpus_per_node.{gpu}", count, 1)
    if data.get("regions") and a.get("power_cap_kw") is not None:
        yield (
            f"assumptions.power_cap_kw: {short_repr(a['power_cap_kw'])}, but a plan with regions "
            "has a power cap per region (null here)"
        )


def _window(a: dict[str, Any]) -> Iterator[str]:
    """A reporting window whose end (``reporting_start`` + ``hours``) is past 9999-12-31: no
    date states it (a plan written before the scenario refused such a start)."""
    disclosure, hours = a.get("disclosure"), a.get("hours", 0.0)
    start = disclosure.get("reporting_start") if isinstance(disclosure, dict) else None
    if not isinstance(start, str) or not is_number(hours) or hours < 0:
        return
    try:
        bounds = window_bounds(start, hours)
    except (ValueError, OverflowError):
        return  # not a date: the plan document's own check names it
    if bounds is None:
        yield (
            f"assumptions.disclosure.reporting_start: {start!r} + {hours:,.10g} h "
            "(assumptions.hours) ends after 9999-12-31, which no date can state (give the "
            "scenario an earlier reporting_start)"
        )


def _solve(data: dict[str, Any]) -> Iterator[str]:
    solve = data.get("solve")
    if not isinstance(solve, dict):
        return
    if solve.get("time_limit_s") is not None:
        yield from _at_least("solve.time_limit_s", solve["time_limit_s"], 0, above=True)
    if solve.get("relative_gap") is not None:
        yield from _at_least("solve.relative_gap", solve["relative_gap"], 0)
    if solve.get("threads") is not None:
        yield from _at_least("solve.threads", solve["threads"], 1)


def _name(kind: str, i: int, name: Any, first: dict[Any, int], what: str) -> Iterator[str]:
    """A line when entry *i* of the list *kind* has no name, or the name of an earlier entry
    (*first*: the index of each name seen, updated)."""
    if not name:
        yield f"{kind}[{i}].name: {short_repr(name)} is impossible ({what} has a name)"
    elif first.setdefault(name, i) != i:
        yield f"{kind}[{i}].name: {short_repr(name)} is the name of {kind}[{first[name]}] too"


def _models(data: dict[str, Any]) -> Iterator[str]:
    first: dict[Any, int] = {}
    for i, m in enumerate(data.get("models") or []):
        if not isinstance(m, dict):
            continue
        where = f"models[{i}]"
        yield from _name("models", i, m.get("name"), first, "a model entry")
        yield from _each(f"{where}.requests_per_s_by_period", m.get("requests_per_s_by_period"), 0)
        yield from _at_least(f"{where}.itl_sla_s", m.get("itl_sla_s"), 0, above=True)
        yield from _figures(where, m, MODEL_FIGURES[:2], optional=False)
        yield from _figures(where, m, MODEL_FIGURES[2:], optional=True)
        for key in MODEL_FIGURES[:2]:
            yield from _at_most(f"{where}.{key}", m.get(key), MAX_CONTEXT_TOKENS)
        for key in ("itl_sla_s", "ttft_sla_s"):
            yield from _at_most(f"{where}.{key}", m.get(key), MAX_LATENCY_MS / 1000.0)
        load = m.get("requests_per_s_by_period")
        for t, value in enumerate(load if isinstance(load, list) else []):
            line = next(_at_most(f"{where}.requests_per_s_by_period[{t}]", value, MOST_LOAD), None)
            if line:
                yield line
                break
        yield from _at_least(f"{where}.min_replicas", m.get("min_replicas"), 0)
        pct = m.get("sla_percentile")
        if pct is not None and not (is_number(pct) and LEAST_PERCENTILE <= pct < 100):
            yield (
                f"{where}.sla_percentile: {short_repr(pct)} is impossible (a percentile from "
                f"{LEAST_PERCENTILE:g} to below 100, or null for the mean, as a scenario's "
                "sla.percentile)"
            )


def _regions(data: dict[str, Any]) -> Iterator[str]:
    first: dict[Any, int] = {}
    for r, region in enumerate(data.get("regions") or []):
        if not isinstance(region, dict):
            continue
        where = f"regions[{r}]"
        yield from _name("regions", r, region.get("name"), first, "a region")
        yield from _site(where, region)
        if region.get("power_cap_kw") is not None:
            yield from _at_least(f"{where}.power_cap_kw", region["power_cap_kw"], 0)
        yield from _stock(f"{where}.inventory", region.get("inventory"))


def input_problems(data: dict[str, Any]) -> list[str]:
    """Every field of the plan JSON *data* outside its candidates that the planning inputs
    refuse (module doc), one line per field."""
    return [
        *_assumptions(data),
        *_solve(data),
        *_stock("inventory", data.get("inventory")),
        *_models(data),
        *_regions(data),
    ]
