"""The checks every planning input runs on construction, with one error format.

:func:`fail` builds the ``planning inputs: WHERE: MESSAGE`` error; :func:`non_negative` rejects
a negative or non-finite number. The dataclasses of :mod:`planner.inputs` raise only these.
"""

from __future__ import annotations

import math

from predictors.core.errors import WattgpuError


def fail(where: str, message: str) -> WattgpuError:
    """The error of a bad planning input at *where*."""
    return WattgpuError(f"planning inputs: {where}: {message}")


def non_negative(where: str, **values: float | None) -> None:
    """Raise :func:`fail` unless every given value is a finite number >= 0 (None is skipped)."""
    problem = negative_problem(**values)
    if problem:
        raise fail(where, problem)


def negative_problem(**values: float | None) -> str:
    """What :func:`non_negative` says of the first value that is not a finite number >= 0
    ('' when every one is, None skipped): for callers that build *where* only on failure."""
    for key, value in values.items():
        if value is None:
            continue
        if not math.isfinite(value) or value < 0:
            return f"{key} must be a finite number >= 0, got {value!r}"
    return ""
