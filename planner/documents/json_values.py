"""What a value read from a plan JSON is, for the checks of the raw records
(:mod:`.verify_candidates`, :mod:`.verify_inputs`, :mod:`.verify_periods`, :mod:`.verify_units`):
JSON's ``true``/``false`` are Python bools, which are ints, so each test excludes them; and
where a parsed document holds an infinite number (:func:`non_finite_field`) or a whole number too
long to read (:func:`long_integer_field`)."""

from __future__ import annotations

import json
import math
import sys
from itertools import chain
from typing import Any

#: The lead of a saved-file problem that an earlier wattgpu wrote the file (a rule it followed
#: has changed), not that the file was edited: :func:`planner.documents.base.load_document` then
#: asks for the file to be made again instead of calling it edited or damaged.
OUTDATED_LEAD = "written by an earlier wattgpu: "


def is_whole(value: Any, least: int | None = None) -> bool:
    """True for a whole number (not a boolean), at least *least* when given."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    return whole and (least is None or value >= least)


def is_number(value: Any) -> bool:
    """True for a finite number (not a boolean; a whole number of any size is finite, and
    ``math.isfinite`` cannot take one beyond a float's range)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def is_non_negative(value: Any) -> bool:
    """True for a finite number >= 0 (not a boolean)."""
    return is_number(value) and value >= 0


def _finite_sum(values: list[Any]) -> bool | None:
    """True when the numbers *values* add up to a finite number (then none is infinite), False
    when not (one may be, or finite ones may add up beyond a float's range), None when *values*
    holds something other than numbers."""
    try:
        return math.isfinite(sum(values))
    except TypeError:  # not numbers only
        return None
    except OverflowError:  # whole numbers beyond a float's range: looked at one by one
        return False


def _may_hold_non_finite(data: Any) -> bool:
    """False when no number of the parsed JSON *data* is infinite: C-speed sums over each
    object's and array's numbers (a list of records: their values together; about 50 ms on the
    22 MB plan of ``large-generated``), True when one may be (:func:`non_finite_field` then
    looks value by value)."""
    stack = [data]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            values: list[Any] = list(node.values())
        elif node and all(type(r) is dict for r in node):
            values = list(chain.from_iterable(map(dict.values, node)))
        else:
            values = node
        finite = _finite_sum(values)
        if finite is None:  # not numbers only: the numbers apart, the containers looked into
            numbers = [v for v in values if type(v) is float or type(v) is int]
            finite = _finite_sum(numbers)
            stack.extend(v for v in values if type(v) is dict or type(v) is list)
        if not finite:
            return True
    return False


def _children(node: Any, path: str) -> list[tuple[Any, str]]:
    """The values inside a parsed JSON object or array *node* at *path*, each with its own path
    (``path.key``, ``path[3]``), in order; none for any other value."""
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    return [
        (v, f"{path}[{k}]" if isinstance(k, int) else f"{path}.{k}" if path else str(k))
        for k, v in items
    ]


def _non_finite(node: Any, path: str) -> str | None:
    if isinstance(node, float) and not math.isfinite(node):
        return path or "(top level)"
    for value, where in _children(node, path):
        found = _non_finite(value, where)
        if found is not None:
            return found
    return None


def non_finite_field(data: Any) -> str | None:
    """The field of the parsed JSON *data* (``assumptions.pue``, ``candidates[3].
    load_curve_requests_per_s[2]``) whose number is infinite, None when none is: a literal
    beyond a float's range (``1e400``) parses as infinity where ``Infinity`` itself is refused
    (:func:`predictors.core.safe_read.load_json`)."""
    return _non_finite(data, "") if _may_hold_non_finite(data) else None


class _LongInteger:
    """A whole number of the JSON text longer than Python reads (its digit count)."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _integer(text: str) -> int | _LongInteger:
    limit = sys.get_int_max_str_digits()
    digits = len(text.lstrip("-"))
    return _LongInteger(digits) if limit and digits > limit else int(text)


def long_integer_field(text: str) -> tuple[str, int] | None:
    """(field, digits) of the first whole number of the JSON *text* with more digits than Python
    converts (``sys.get_int_max_str_digits()``, 4,300 by default: ``int()`` refuses it with a
    message that names no field), None when none has (or the text is no JSON for another
    reason). For the error path of a JSON read that failed: the text is parsed again."""
    try:
        data = json.loads(text, parse_int=_integer)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _LongInteger):
            return path or "(top level)", node.digits
        children = _children(node, path)
        stack.extend(reversed(children))
    return None
