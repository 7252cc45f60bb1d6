"""The serving model on rows that repeat: each distinct (curves, rate) or (curves, SLA) once.

Disaggregated units share their decode workers: the units of one model entry that differ only
in their prefill side or worker counts hold the same decode-worker curves
(:class:`predictors.serving.curves.ServingCurves` rows), and a decode-bound unit puts each
worker at the same rate whatever its worker count. :func:`curve_groups` finds the rows whose
inputs are identical; :func:`at_rates` and :func:`capacity_rows` evaluate
:func:`predictors.serving.operating.at_rate` and :func:`~predictors.serving.operating.capacity`
once per distinct (group, rate) or (group, SLA) and give every row its group's result. The
numbers are those of the row-by-row call (the same function on the same inputs, to the last bit
of rounding, which numpy's vectorised sums let vary with an array's length); only the work is
shared.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from predictors.serving.curves import FloatArray, ServingCurves, take_curves
from predictors.serving.operating import OperatingPoint, at_rate, capacity

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class CurveGroups:
    """Rows with identical serving inputs: ``first[g]`` is a row of group ``g`` and
    ``group[i]`` the group of row ``i``."""

    first: IntArray
    group: IntArray


def curve_groups(c: ServingCurves) -> CurveGroups:
    """The groups of identical rows of *c* (every per-row array compared exactly)."""
    columns = [
        np.asarray(getattr(c, f.name), dtype=np.float64).reshape(c.rows, -1)
        for f in fields(c)
        if f.name != "batch" and getattr(c, f.name) is not None
    ]
    keys = np.ascontiguousarray(np.concatenate(columns, axis=1))
    # exact comparison of the bit patterns (NaN equal to itself, -0.0 apart from 0.0: a
    # difference only splits a group, never merges two)
    raw = keys.view(np.uint64)
    _, first, group = np.unique(raw, axis=0, return_index=True, return_inverse=True)
    return CurveGroups(first.astype(np.int64), group.reshape(-1).astype(np.int64))


def _distinct_pairs(group: IntArray, values: FloatArray) -> tuple[IntArray, FloatArray, IntArray]:
    """Distinct (group, value) pairs of the flat arrays: (their groups, their values, the pair
    of every input). Values are told apart as numbers (NaN equal to NaN, 0.0 to -0.0: the
    serving model gives them the same result)."""
    levels, value_id = np.unique(values, return_inverse=True)
    key = group.astype(np.int64) * np.int64(max(levels.size, 1)) + value_id.reshape(-1)
    uniq, inverse = np.unique(key, return_inverse=True)
    g, v = np.divmod(uniq, np.int64(max(levels.size, 1)))
    return g, levels[v], inverse.reshape(-1).astype(np.int64)


def at_rates(c: ServingCurves, lam: FloatArray, groups: CurveGroups) -> OperatingPoint:
    """:func:`~predictors.serving.operating.at_rate` of every row of *c* at each of its rates
    *lam* (N, M): fields (N, M)."""
    lam = np.asarray(lam, dtype=np.float64)
    n, m = lam.shape
    g, rate, inverse = _distinct_pairs(np.repeat(groups.group, m), lam.reshape(-1))
    point = at_rate(take_curves(c, groups.first[g]), rate)
    shaped = [np.asarray(getattr(point, f.name))[inverse].reshape(n, m) for f in fields(point)]
    return OperatingPoint(*shaped)


@dataclass(frozen=True)
class RowCapacity:
    """Per row (N,): the fields of :class:`~predictors.serving.operating.Capacity` the
    disaggregated model reads."""

    max_requests_per_s: FloatArray
    decoding_at_capacity: FloatArray
    limit: list[str]


def capacity_rows(
    c: ServingCurves, itl_sla_s: FloatArray, percentile: float | None, groups: CurveGroups
) -> RowCapacity:
    """:func:`~predictors.serving.operating.capacity` of every row of *c* under its ITL SLA
    *itl_sla_s* (N,; may hold inf) and no TTFT SLA."""
    g, sla, inverse = _distinct_pairs(groups.group, np.asarray(itl_sla_s, dtype=np.float64))
    cap = capacity(take_curves(c, groups.first[g]), sla, np.full(sla.size, np.inf), percentile)
    limits = np.asarray(cap.limit, dtype=object)[inverse]
    return RowCapacity(
        cap.max_requests_per_s[inverse], cap.decoding_at_capacity[inverse], limits.tolist()
    )


__all__ = ["CurveGroups", "RowCapacity", "at_rates", "capacity_rows", "curve_groups"]
