"""The check of a saved sweep JSON's tornado and robust choice against the rest of the file
(``wattgpu report --sweep``; the summary's figures: :mod:`.verify_sweep`).

What the file's own content gives, recomputed as the sweep writer computes it
(:mod:`planner.sweep.aggregate`): each tornado bar's ``swing_usd`` is its ``high_cost_usd −
low_cost_usd``; each grid bar (``source: grid``) is the mean re-optimised cost of the grid
points at the axis's first and at its last value, over the pairs of points matched at both
ends (the same values on every other axis, both with a plan; so an edited
``grid[i].optimal.cost_usd`` of such a point shows), and its ``points_left_out`` the points at
the ends in no such pair; a robust candidate's ``all_met_probability`` (every SLA, the cap and
the budget in the same draw) is at most each of its own probabilities. Not recomputable from
the file: the draws' tornado bars (the draws' normal deviates are not written), a grid point's
cost between the axis's ends or outside the matched pairs, and any grid point's cost in a sweep
without draws (no summary, so no tornado); the robust candidates' probabilities themselves (the
second pass's outcomes are not written).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple, TypeGuard

import numpy as np

from planner.documents.json_values import OUTDATED_LEAD

#: Relative tolerance (the file's figures are rounded to 10 significant digits).
TOLERANCE = 1e-6


def _number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _off(stored: float, again: float, scale: float) -> bool:
    return abs(stored - again) > TOLERANCE * max(abs(stored), abs(again), scale) + 1e-9


def _swings(bars: list[Any]) -> Iterator[str]:
    for i, bar in enumerate(bars):
        if not isinstance(bar, dict):
            continue
        lo, hi, swing = bar.get("low_cost_usd"), bar.get("high_cost_usd"), bar.get("swing_usd")
        if _number(lo) and _number(hi) and _number(swing) and _off(swing, hi - lo, abs(hi)):
            yield (
                f"summary.tornado[{i}].swing_usd: {swing:.10g}, but its high_cost_usd − "
                f"low_cost_usd is {hi - lo:.10g} (the swing is that difference)"
            )


def _axis_values(label: str, points: list[Any]) -> list[float] | None:
    """Each grid point's value on axis *label* (``key`` or ``key.sub``); None when one lacks it."""
    key, _, sub = label.partition(".")
    values = []
    for p in points:
        v = p.get(key) if isinstance(p, dict) else None
        v = v.get(sub) if sub and isinstance(v, dict) else (None if sub else v)
        if not _number(v):
            return None
        values.append(float(v))
    return values


End = tuple[float, list[int]]
"""The mean re-optimised cost at one end of a grid axis, and the grid points it averages."""


class GridBar(NamedTuple):
    """A grid bar recomputed from the grid records: both ends and the points left out."""

    low: End
    high: End
    left_out: int


def _matched(
    values: list[float], others: list[tuple[float, ...]], costs: list[float | None]
) -> tuple[list[tuple[int, int]], int]:
    """The (first-value, last-value) pairs of grid points of one axis whose *others* (their
    values on every other axis) are equal and that both have a cost, in grid order, and how many
    points at the two ends are in no such pair."""
    lo_v, hi_v = min(values), max(values)
    first: dict[tuple[float, ...], list[int]] = {}
    last: dict[tuple[float, ...], list[int]] = {}
    for i, (v, rest) in enumerate(zip(values, others, strict=True)):
        if v == lo_v:
            first.setdefault(rest, []).append(i)
        elif v == hi_v:
            last.setdefault(rest, []).append(i)
    pairs = [
        (i, j)
        for rest, at_first in first.items()
        for i, j in zip(at_first, last.get(rest, []), strict=False)
        if costs[i] is not None and costs[j] is not None
    ]
    at_ends = sum(map(len, first.values())) + sum(map(len, last.values()))
    return pairs, at_ends - 2 * len(pairs)


def grid_bars(axes: list[Any], grid: list[Any]) -> dict[str, GridBar]:
    """Per grid axis whose first and last values differ: its bar's factor, the mean
    re-optimised cost at each end over the grid points matched at both ends (the same values on
    every other axis of ``grid_axes``, both with a cost) with their indices in ``grid``, and the
    points at the ends left out (as :func:`planner.sweep.aggregate.tornado_grid` defines the
    bar; no matched pair: no bar)."""
    records = [r if isinstance(r, dict) else {} for r in grid]
    points = [r.get("point") for r in records]
    costs = [
        float(r["optimal"]["cost_usd"])
        if isinstance(r.get("optimal"), dict) and _number(r["optimal"].get("cost_usd"))
        else None
        for r in records
    ]
    labels = list(dict.fromkeys(a for a in axes if isinstance(a, str)))
    columns = {label: _axis_values(label, points) for label in labels}
    out: dict[str, GridBar] = {}
    for label, values in columns.items():
        rest = [c for other, c in columns.items() if other != label]
        if not values or min(values) == max(values) or any(c is None for c in rest):
            continue
        others = list(zip(*rest, strict=True)) if rest else [()] * len(values)
        pairs, left_out = _matched(values, others, costs)
        if pairs:
            low, high = ([(k, costs[k]) for k in end] for end in zip(*pairs, strict=True))
            factor = f"grid {label} {min(values):g} → {max(values):g}"
            out[factor] = GridBar(_end(low), _end(high), left_out)
    return out


def _end(costs: list[tuple[int, float | None]]) -> End:
    return float(np.mean([c for _, c in costs])), [i for i, _ in costs]


def _grid(bars: list[Any], data: dict[str, Any]) -> Iterator[str]:
    axes, grid = data.get("grid_axes"), data.get("grid")
    again = grid_bars(
        axes if isinstance(axes, list) else [], grid if isinstance(grid, list) else []
    )
    stored = {
        str(b.get("factor")): i
        for i, b in enumerate(bars)
        if isinstance(b, dict) and b.get("source") == "grid"
    }
    for factor, i in stored.items():
        if factor not in again:
            yield (
                f"summary.tornado[{i}]: grid bar {factor!r}, but the grid records give no such "
                f"bar (theirs: {', '.join(map(repr, again)) or 'none'})"
            )
    for factor, bar in again.items():
        if factor not in stored:
            yield f"summary.tornado: no grid bar {factor!r}, but the grid records give one"
            continue
        i = stored[factor]
        count = bars[i].get("points_left_out")
        if count is None and bar.left_out:
            # no points_left_out: written before the grid bars paired their points, when a bar
            # averaged every point with a plan at each end (fuzz round 25): not an edit
            yield (
                f"summary.tornado[{i}]: {OUTDATED_LEAD}grid bar {factor!r} averages every grid "
                f"point with a plan at each end, where this version pairs the points ("
                f"{bar.left_out} left out); run the sweep again"
            )
            continue
        for key, (want, points), end in zip(
            ("low_cost_usd", "high_cost_usd"), bar[:2], ("first", "last"), strict=True
        ):
            have = bars[i].get(key)
            if _number(have) and _off(have, want, 0.0):
                named = ", ".join(f"grid[{p}]" for p in points)
                yield (
                    f"summary.tornado[{i}].{key}: {have:.10g}, but the optimal.cost_usd of "
                    f"{named} (the grid points at the axis's {end} value matched at its other "
                    f"end, both with a plan) give {want:.10g} (the bar is their mean)"
                )
        if count is not None and count != bar.left_out:
            yield (
                f"summary.tornado[{i}].points_left_out: {count}, but {bar.left_out} of the "
                "grid points at the axis's ends have no plan or a pair without one"
            )


def _joint(where: str, c: dict[str, Any]) -> Iterator[str]:
    together = c.get("all_met_probability")
    sla = c.get("sla_probability")
    marginals = [
        (f"sla_probability.{m}", v) for m, v in (sla if isinstance(sla, dict) else {}).items()
    ]
    marginals += [(k, c.get(k)) for k in ("power_cap_probability", "budget_probability")]
    known = [(k, float(v)) for k, v in marginals if _number(v)]
    if not _number(together) or not known:
        return
    name, low = min(known, key=lambda kv: kv[1])
    if together > low + TOLERANCE:
        yield (
            f"{where}.all_met_probability: {together:.10g}, above its {name} {low:.10g} "
            "(every SLA, the cap and the budget hold together in no more draws than any one "
            "of them)"
        )


def _robust(data: dict[str, Any]) -> Iterator[str]:
    robust = data.get("robust")
    if not isinstance(robust, dict):
        return
    if isinstance(robust.get("chosen"), dict):
        yield from _joint("robust.chosen", robust["chosen"])
    considered = robust.get("considered")
    for i, c in enumerate(considered if isinstance(considered, list) else []):
        if isinstance(c, dict):
            yield from _joint(f"robust.considered[{i}]", c)


def part_problems(data: dict[str, Any]) -> list[str]:
    """The tornado's and the robust choice's figures of the sweep JSON *data* that the rest of
    the file contradicts (module doc), one line per field; empty when they check."""
    summary = data.get("summary")
    bars = summary.get("tornado") if isinstance(summary, dict) else None
    out: list[str] = []
    if isinstance(bars, list):
        out.extend(_swings(bars))
        out.extend(_grid(bars, data))
    out.extend(_robust(data))
    return out
