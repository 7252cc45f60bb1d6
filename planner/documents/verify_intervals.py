"""The plan JSON check (:mod:`.verify_candidates`) of a candidate's intervals: its power per GPU
and its ITL, each a 90 % interval around the point the plan uses.

The report's uncertainty bands and the disclosure's P10/P90 come from a candidate's
``power_w_per_gpu_lo`` and ``_hi`` around ``power_w_per_gpu_predicted``
(:mod:`planner.analysis.uncertainty`), the uncertainty flags and a robust plan's SLA from its
``itl_s_hi``. The bands clip what they read into [idle, TDP] and order it, so a swapped interval
(``lo`` above the prediction above ``hi``) or one outside [idle, TDP] collapsed the bands to
zero width and the report said the estimate was certain. The planner writes every interval
around its point (the ITL's by construction, :func:`planner.capacity`; the power's from the
serving curves clipped to [idle, TDP], :func:`predictors.serving.curves.monotone_curves`), so
each is now checked on reading: ``lo <= point <= hi`` (relative 1e-6) and every bound a finite
number >= 0. A power bound past idle or the TDP is allowed: a hand-built candidate's interval
may reach beyond them, and the bands clip it (``power_w_per_gpu_unclipped``). A disaggregated
unit records its pools' power interval and no lower ITL (null: nothing to check; plans written
before 2026-12-06 evening record no power interval for units either). A vectorised pass
(:func:`_clear`) leaves the field-by-field checks to the few records it cannot clear.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from planner.documents.json_values import is_non_negative
from predictors.core.escape import short_repr

#: (lower bound, point, upper bound) of a candidate's power per GPU (W) and its ITL (s).
POWER = ("power_w_per_gpu_lo", "power_w_per_gpu_predicted", "power_w_per_gpu_hi")
ITL = ("itl_s_lo", "itl_s_at_capacity", "itl_s_hi")
#: Relative slack of the order and of [idle, TDP] (the rounding of the plan's figures).
SLACK = 1e-6


def _shown(value: Any, unit: str) -> str:
    return f"{short_repr(value)}{unit}"


def _interval(
    where: str, c: dict[str, Any], keys: tuple[str, str, str], unit: str
) -> Iterator[str]:
    """One interval: each bound a finite number >= 0, the lower at most the point, the upper
    at least it."""
    lo_key, point_key, hi_key = keys
    point = c.get(point_key)
    for key, above in ((lo_key, False), (hi_key, True)):
        value = c.get(key)
        if value is None:
            continue
        if not is_non_negative(value):
            yield f"{where}.{key}: {_shown(value, unit)} is impossible (negative or not finite)"
        elif is_non_negative(point):
            slack = SLACK * max(value, point)
            if (value < point - slack) if above else (value > point + slack):
                side = "below" if above else "above"
                yield (
                    f"{where}.{key}: {_shown(value, unit)} is {side} {point_key} "
                    f"{_shown(point, unit)} (the interval holds its point: "
                    f"{lo_key} <= {point_key} <= {hi_key})"
                )


def record_interval_problems(where: str, c: dict[str, Any]) -> list[str]:
    """Every problem of the intervals of candidate record *c* (at *where*), one per field."""
    return list(_interval(where, c, POWER, " W")) + list(_interval(where, c, ITL, " s"))


def _clear(records: list[Any]) -> np.ndarray:
    """True for each record :func:`record_interval_problems` has nothing to say of (a record of
    other types than the plan document's is never cleared)."""
    keys = (*POWER, *ITL)
    try:
        rows = [[r.get(k) for k in keys] for r in records]
        table = np.array(rows, dtype=np.float64).reshape(len(records), len(keys))
    except (AttributeError, TypeError, ValueError, OverflowError):
        return np.zeros(len(records), dtype=bool)
    if any(isinstance(v, bool) for row in rows for v in row):
        return np.zeros(len(records), dtype=bool)
    ok = np.ones(len(records), dtype=bool)
    with np.errstate(invalid="ignore"):
        for start in (0, 3):
            lo, point, hi = table[:, start], table[:, start + 1], table[:, start + 2]
            for bound in (lo, hi):
                ok &= np.isnan(bound) | (np.isfinite(bound) & (bound >= 0))
            known = np.isfinite(point) & (point >= 0)
            ok &= ~known | np.isnan(lo) | (lo <= point + SLACK * np.fmax(lo, point))
            ok &= ~known | np.isnan(hi) | (hi >= point - SLACK * np.fmax(hi, point))
    return ok


def interval_problems(records: list[Any]) -> list[str]:
    """Every problem of the intervals of the candidate *records* (module doc), one line per
    field, ``candidates[i].…``."""
    out: list[str] = []
    for i in np.flatnonzero(~_clear(records)).tolist():
        if isinstance(records[i], dict):
            out.extend(record_interval_problems(f"candidates[{i}]", records[i]))
    return out
