"""What a value read from a plan JSON is, for the checks of the raw records
(:mod:`.verify_candidates`, :mod:`.verify_inputs`, :mod:`.verify_periods`, :mod:`.verify_units`):
JSON's ``true``/``false`` are Python bools, which are ints, so each test excludes them."""

from __future__ import annotations

import math
from typing import Any


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
