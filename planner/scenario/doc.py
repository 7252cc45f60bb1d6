"""Markdown reference of the scenario fields, generated from the models' field docstrings.

``tools/scenario_reference.py`` writes it into ``docs/scenarios.md``; a test checks it is current.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from planner.scenario.disclosure import Disclosure
from planner.scenario.model import Scenario
from planner.scenario.regions import RegionGpu, RegionSpec
from planner.scenario.sections import (
    Failover,
    GpuOffer,
    LayoutOption,
    Load,
    ModelEntry,
    Objective,
    ObjectiveWeights,
    Sla,
)
from planner.scenario.sweep_block import AxisRange, SweepBlock, SweepGrid
from planner.scenario.tco import Tco


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Literal:
        return " \\| ".join(repr(a) for a in get_args(annotation)).replace("'", "")
    if origin in (Union, types.UnionType):
        return " \\| ".join(_type_name(a) for a in get_args(annotation))
    if origin is Annotated:
        return _type_name(get_args(annotation)[0])
    if origin in (list, dict):
        inner = ", ".join(_type_name(a) for a in get_args(annotation))
        return f"{origin.__name__}[{inner}]"
    if annotation is type(None):
        return "null"
    return getattr(annotation, "__name__", str(annotation))


def _yaml_default(value: Any) -> str:
    if isinstance(value, BaseModel):
        value = value.model_dump(exclude_none=True)
    if value is None:
        return "`null` (omitted)"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value == "":
        return '`""`'
    if isinstance(value, dict):
        return "`{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}`"
    return f"`{value}`"


def _num(value: float) -> str:
    """*value* as ``:g`` writes it, or whole where that would change it (2**63 - 1)."""
    short = f"{value:g}"
    return short if float(short) == value else f"{value:,}"


def _bounds(metadata: Any) -> str:
    """'0 < x ≤ 1e+06' from ge/gt/le/lt constraints ('' when there are none)."""
    low = high = ""
    for item in metadata:
        for attr, op in (("ge", "≤"), ("gt", "<")):
            if getattr(item, attr, None) is not None:
                low = f"{_num(getattr(item, attr))} {op} "
        for attr, op in (("le", "≤"), ("lt", "<")):
            if getattr(item, attr, None) is not None:
                high = f" {op} {_num(getattr(item, attr))}"
    return f"{low}x{high}" if low or high else ""


def _inner_metadata(hint: Any) -> list[Any]:
    """The constraints of an ``Annotated`` type inside *hint* (``GridValue | None``)."""
    if get_origin(hint) is Annotated:
        found: list[Any] = []
        for item in get_args(hint)[1:]:
            found.extend(getattr(item, "metadata", [item]))
        return found
    return [m for arg in get_args(hint) for m in _inner_metadata(arg)]


def _range(info: Any, hint: Any = None) -> str:
    """' (0 < x ≤ 1e+06)' from a field's constraints, or those of its type (a list's: 'each
    0 ≤ x ≤ 5000'); '' when it has none."""
    own = _bounds(info.metadata)
    if own:
        return f" ({own})"
    inner = _bounds(_inner_metadata(hint))
    if not inner:
        return ""
    listed = any(get_origin(a) is list for a in (hint, *get_args(hint)))
    return f" ({'each ' if listed else ''}{inner})"


def field_reference() -> str:
    """Markdown tables of every scenario model's fields (name, type, default, description)."""
    parts: list[str] = []
    for cls in (
        Scenario,
        ObjectiveWeights,
        Objective,
        GpuOffer,
        LayoutOption,
        ModelEntry,
        Load,
        Sla,
        Failover,
        RegionSpec,
        RegionGpu,
        Tco,
        Disclosure,
        SweepBlock,
        SweepGrid,
        AxisRange,
    ):
        parts.append(f"### {cls.__name__}\n\n{(cls.__doc__ or '').strip()}\n")
        parts.append("| field | type | default | description |\n|---|---|---|---|")
        hints = typing.get_type_hints(cls, include_extras=True)
        for name, info in cls.model_fields.items():
            if info.is_required():
                default = "required"
            else:
                value = info.get_default(call_default_factory=True, validated_data={})
                default = _yaml_default(value)
            desc = " ".join((info.description or "").split()).replace("|", "\\|")
            kind = _type_name(hints[name]) + _range(info, hints[name])
            parts.append(f"| `{name}` | {kind} | {default} | {desc} |")
        parts.append("")
    return "\n".join(parts)
