"""The number options of every command, checked as typed: a value that is not a finite number.

typer reads ``--itl-ms nan`` or ``--hours inf`` as a float and then reports the range check it
fails (``Input should be less than or equal to 3600000``), which names a bound the user did not
cross. :func:`guard_number_options` makes each float option refuse NaN and infinities first,
in one line naming the option and its range (``error: --itl-ms nan: not a finite number; give
a number from 0.001 to 3,600,000``). The root command group applies it to every command once,
so a command added later is covered.

typer's ``min`` and ``max`` are closed bounds (``min <= x <= max``). :func:`open_ends` marks a
bound of an option as left out of its range (``--sla-probability``: above 0, at most 1): the
help shows ``0.0<x<=1.0``, and the NaN message and the range error both state the range so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from planner.cli.outputs import command_params
from predictors.core.errors import WattgpuError

_OPEN = "_wattgpu_open_ends"


def open_ends(option: Any, *, low: bool = False, high: bool = False, low_reason: str = "") -> Any:
    """*option* (a ``typer.Option`` with ``min`` and ``max``) with its low and/or high bound
    left out of its range; *low_reason* says why the low bound itself is refused (``no share
    of draws``). typer has no open bound: :func:`guard_number_options` applies it."""
    setattr(option, _OPEN, (low, high, low_reason))
    return option


def _open(param: Any) -> tuple[bool, bool, str]:
    return getattr(param, _OPEN, None) or (False, False, "")


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _range(param: Any) -> str:
    lo, hi = getattr(param, "min", None), getattr(param, "max", None)
    low_open, high_open, _ = _open(param)
    if not (low_open or high_open):
        if lo is not None and hi is not None:
            return f" from {_number(lo)} to {_number(hi)}"
        if lo is not None:
            return f" of at least {_number(lo)}"
        if hi is not None:
            return f" of at most {_number(hi)}"
        return ""
    parts = [] if lo is None else [f"{'above' if low_open else 'at least'} {_number(lo)}"]
    parts += [] if hi is None else [f"{'below' if high_open else 'at most'} {_number(hi)}"]
    return " " + ", ".join(parts)


def _help_range(param: Any) -> str | None:
    """The range in the help as typer writes it (``0.0<=x<=1.0``), an open end with ``<``."""
    lo, hi = param.min, param.max
    low_open, high_open, _ = _open(param)
    left = "" if lo is None else f"{lo}{'<' if low_open else '<='}"
    right = "" if hi is None else f"{'<' if high_open else '<='}{hi}"
    return f"{left}x{right}" if left or right else None


def range_problem(text: str, param: Any) -> str | None:
    """Why *text*, typed as the value of *param*, an option with an open end, is out of its
    range (or None: in range, or no finite number); a value of an option whose range is
    closed is left to typer's own check."""
    low_open, high_open, low_reason = _open(param)
    try:
        value = float(text)
    except ValueError:
        return None
    if not (low_open or high_open) or not math.isfinite(value):
        return None
    lo, hi = param.min, param.max
    if lo is not None and value == lo and low_open and low_reason:
        why = low_reason
    elif (lo is not None and (value < lo or (low_open and value == lo))) or (
        hi is not None and (value > hi or (high_open and value == hi))
    ):
        why = "out of range"
    else:
        return None
    return f"{text.strip()} is {why}; give a number{_range(param)}"


def non_finite_problem(text: str, param: Any) -> str | None:
    """Why *text*, typed as the value of the float option *param*, is refused (or None: a
    finite number, or text typer itself reports as no number)."""
    try:
        value = float(text)
    except ValueError:
        return None
    if math.isfinite(value):
        return None
    option = max(param.opts, key=len)
    return f"{option} {text}: not a finite number; give a number{_range(param)}"


def _guard(param: Any) -> None:
    import typer

    process = param.process_value

    def checked(ctx: Any, value: Any) -> Any:
        texts = value if isinstance(value, list | tuple) else [value]
        if not ctx.resilient_parsing:
            for text in texts:
                if isinstance(text, str) and (problem := non_finite_problem(text, param)):
                    raise WattgpuError(problem)
                if isinstance(text, str) and (problem := range_problem(text, param)):
                    raise typer.BadParameter(problem, ctx=ctx, param=param)
        return process(ctx, value)

    param.process_value = checked


def guard_number_options(commands: Mapping[str, Any]) -> None:
    """Apply the finite-number check, and an :func:`open_ends` bound, to every float option of
    *commands*, once each."""
    for _, param in command_params(commands):
        described = getattr(param, "type_descriptor", None)
        if getattr(described, "annotation", None) is not float:
            continue
        if getattr(param, "_wattgpu_number_guard", False):
            continue
        ends = getattr(getattr(described, "parameter_info", None), _OPEN, None)
        if ends is not None:
            setattr(param, _OPEN, ends)
            param._get_number_range_help_str = lambda param=param: _help_range(param)
        _guard(param)
        param._wattgpu_number_guard = True
