"""The number options of every command, checked as typed: a value that is not a finite number.

typer reads ``--itl-ms nan`` or ``--hours inf`` as a float and then reports the range check it
fails (``Input should be less than or equal to 3600000``), which names a bound the user did not
cross. :func:`guard_number_options` makes each float option refuse NaN and infinities first,
in one line naming the option and its range (``error: --itl-ms nan: not a finite number; give
a number from 0.001 to 3,600,000``). The root command group applies it to every command once,
so a command added later is covered.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from planner.cli.outputs import command_params
from predictors.core.errors import WattgpuError


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _range(param: Any) -> str:
    lo, hi = getattr(param, "min", None), getattr(param, "max", None)
    if lo is not None and hi is not None:
        return f" from {_number(lo)} to {_number(hi)}"
    if lo is not None:
        return f" of at least {_number(lo)}"
    if hi is not None:
        return f" of at most {_number(hi)}"
    return ""


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
    process = param.process_value

    def checked(ctx: Any, value: Any) -> Any:
        texts = value if isinstance(value, list | tuple) else [value]
        if not ctx.resilient_parsing:
            for text in texts:
                if isinstance(text, str) and (problem := non_finite_problem(text, param)):
                    raise WattgpuError(problem)
        return process(ctx, value)

    param.process_value = checked


def guard_number_options(commands: Mapping[str, Any]) -> None:
    """Apply the finite-number check to every float option of *commands*, once each."""
    for _, param in command_params(commands):
        described = getattr(param, "type_descriptor", None)
        if getattr(described, "annotation", None) is not float:
            continue
        if getattr(param, "_wattgpu_number_guard", False):
            continue
        _guard(param)
        param._wattgpu_number_guard = True
