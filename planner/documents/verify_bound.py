"""The plan JSON check (:mod:`planner.documents.verify`) of the solve's bound: ``solve.bound``
against ``solve.objective`` and ``solve.gap``.

Every objective is minimised, so the bound the solver proves is at most the objective it reached
(to rounding: :data:`RELATIVE_TOLERANCE`), and the gap is the solver's own
:func:`planner.solve.accounting.relative_gap` of the two, ``max(0, objective − bound) /
max(|objective|, 1e-9)`` (0 when the bound is above the objective within rounding; null when
either is unknown). A bound of ten times the objective under status ``optimal`` and gap 0 was
read without a word; only ``solve.gap`` was compared, with ``solve.relative_gap``
(:mod:`.verify_provenance`).

A plan that found none (``infeasible``, ``time_limit``) states no objective, bound or gap;
``bound`` null is an unknown (or infinite) bound: then no gap can be stated but 0 (an infinite
bound's, which :func:`relative_gap` clamps to 0). Run once ``solve.objective`` recomputes from
the allocations (:mod:`.verify_objective`), so a line names the bound or the gap, not an edited
objective.
"""

from __future__ import annotations

from typing import Any

from planner.documents.json_values import is_number
from planner.documents.verify_pools import RELATIVE_TOLERANCE
from planner.solve.accounting import relative_gap
from predictors.core.escape import short_repr

#: Absolute slack of a recomputed gap (a relative figure: rounding of the objective and bound).
GAP_ROUNDING = 1e-9


def _float(value: Any) -> float | None:
    """*value* as a finite float (None: not a number, or a whole number beyond a float's range)."""
    if not is_number(value):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def bound_problems(data: dict[str, Any]) -> list[str]:
    """``solve.bound`` above ``solve.objective``, or a ``solve.gap`` that is not the solver's gap
    of the two (module doc); one line naming the field, or none."""
    solve = data.get("solve")
    if not isinstance(solve, dict):
        return []
    objective, bound = _float(solve.get("objective")), _float(solve.get("bound"))
    raw_gap: Any = solve.get("gap")
    gap = _float(raw_gap)
    if objective is None or bound is None:
        if raw_gap is not None and (gap != 0 or objective is None):
            missing = "solve.objective" if objective is None else "solve.bound"
            return [
                f"solve.gap: {short_repr(raw_gap)}, but {missing} is not a number: a gap is "
                "(objective − bound) / |objective|, and there is nothing to measure it from"
            ]
        return []
    if bound - objective > RELATIVE_TOLERANCE * max(abs(objective), abs(bound)) + 1e-12:
        return [
            f"solve.bound: {short_repr(solve.get('bound'))} is above solve.objective "
            f"{objective:.6g}; every objective is minimised, and its bound is at most the "
            "objective reached"
        ]
    again = relative_gap(objective, bound)
    assert again is not None  # both are numbers
    if gap is None or abs(gap - again) > RELATIVE_TOLERANCE * max(abs(again), abs(gap)) + (
        GAP_ROUNDING
    ):
        return [
            f"solve.gap: {short_repr(raw_gap)}, but solve.objective {objective:.6g} and "
            f"solve.bound {bound:.6g} give {again:.6g} (max(0, objective − bound) / |objective|)"
        ]
    return []
