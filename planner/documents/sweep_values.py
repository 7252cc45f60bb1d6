"""The value types of the sweep JSON (:mod:`planner.documents.sweep`): each states its bounds
once, as both the JSON Schema's ``minimum``/``maximum``/``enum`` and the loader's check, whose
error reads ``must be WORDS, got VALUE`` (``wattgpu report --sweep`` names the file and the
field before it). Shares and probabilities lie in [0, 1]; energy, cost, carbon, objective,
power, hours, sds and counts are never negative (the objective's weights and every price are
non-negative); quantiles are in ascending order (the loader's alone: a schema cannot say it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, Field
from pydantic.json_schema import JsonDict
from pydantic_core import PydanticCustomError


def bad(message: str, **context: Any) -> PydanticCustomError:
    """A validation error whose message reads as the file's problem (no "Value error, "):
    *message* formatted with *context* by ``str.format`` (so ``{value!r}`` works)."""
    return PydanticCustomError("sweep_value", "{message}", {"message": message.format(**context)})


def bounded(low: float, high: float | None, words: str) -> tuple[Any, Any]:
    """The metadata of a number in [*low*, *high*] (no upper bound: None): the JSON Schema's
    ``minimum``/``maximum`` and the loader's check, ``must be WORDS, got VALUE``, from the same
    bounds."""

    def check(value: float) -> float:
        finite = not isinstance(value, float) or math.isfinite(value)  # an int may be huge
        if not (finite and low <= value and (high is None or value <= high)):
            raise bad("must be {words}, got {value}", words=words, value=_shown(value))
        return value

    bounds: JsonDict = {"minimum": low}
    if high is not None:
        bounds["maximum"] = high
    return AfterValidator(check), Field(json_schema_extra=bounds)


def _shown(value: float) -> str:
    """*value* as the message shows it (a huge integer cut short)."""
    text = str(value)
    return text if len(text) <= 24 else f"{text[:20]}… ({len(text)} digits)"


def _amounts(value: float | dict[str, float]) -> float | dict[str, float]:
    """A non-negative number, or a JSON object of them (an sd per GPU, a grid point's value
    per model entry)."""
    for key, v in value.items() if isinstance(value, dict) else [("", value)]:
        if not (math.isfinite(v) and v >= 0):
            where = f"{key}: " if key else ""
            raise bad("{where}must be >= 0, got {v}", where=where, v=_shown(v))
    return value


def _amounts_schema(schema: JsonDict) -> None:
    """The schema of :data:`Amounts`: each number of either branch has ``minimum`` 0."""
    branches = schema.get("anyOf")
    for branch in branches if isinstance(branches, list) else []:
        if isinstance(branch, dict):
            inner = branch.get("additionalProperties")
            target = inner if isinstance(inner, dict) else branch
            target["minimum"] = 0.0


def one_of(values: Sequence[str], what: str) -> tuple[Any, Any]:
    """The metadata of a text that is one of *values*: the schema's ``enum`` and the check."""

    def check(value: str) -> str:
        if value not in values:
            known = ", ".join(values)
            raise bad(
                "unknown {what} {value!r}; one of {known}", what=what, value=value, known=known
            )
        return value

    return AfterValidator(check), Field(json_schema_extra={"enum": list(values)})


Share = Annotated[float, *bounded(0.0, 1.0, "a share in [0, 1]")]
"""A share of the draws or a probability."""
Amount = Annotated[float, *bounded(0.0, None, ">= 0")]
"""Energy, cost, carbon, power, hours, an objective (non-negative weights and prices)."""
Count = Annotated[int, *bounded(0, None, ">= 0")]
Amounts = Annotated[
    float | dict[str, float],
    AfterValidator(_amounts),
    Field(json_schema_extra=_amounts_schema),
]
"""A non-negative number or a JSON object of them."""


def ascending(values: Sequence[float | None], names: str) -> None:
    """*values* (p10, p50, p90) all null or all numbers, in ascending order."""
    if any(v is None for v in values) and any(v is not None for v in values):
        raise bad("{names} must all be numbers or all null", names=names)
    numbers = [v for v in values if v is not None]
    if any(a > b for a, b in zip(numbers, numbers[1:], strict=False)):
        shown = ", ".join(f"{v:g}" for v in numbers)
        raise bad("{names} must be in ascending order, got {shown}", names=names, shown=shown)
