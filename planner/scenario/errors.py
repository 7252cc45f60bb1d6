"""Turn scenario problems into one-line messages: field paths, pydantic errors, fixes.

Each problem is a ``(field path, "what is wrong — how to fix")`` pair; the loader prefixes the
file name. Field paths use the ``--set`` syntax: ``models[0].load.requests_per_s``.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from planner.scenario.model import Scenario
from planner.scenario.text import escape_bidi
from predictors.core.errors import WattgpuError, did_you_mean, escape_breaks, misspelt_required
from predictors.core.escape import short_repr

Problem = tuple[str, str]  # (field path, "what is wrong — how to fix")


def format_path(parts: Iterable[str | int]) -> str:
    """``("models", 0, "load")`` → ``models[0].load``; keys with dots are written ``["a.b"]``,
    a key holding a ``"`` as its ``repr`` (``['"L4"']``: no ``--set`` path can name it)."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[^.\[\]=\"]+", str(part)):
            out += ("." if out else "") + str(part)
        elif '"' in str(part):
            out += f"[{short_repr(str(part), 60)}]"
        else:
            out += f'["{part}"]'
    return out or "(top level)"


def _bare(tp: Any) -> Any:
    """*tp* without ``Annotated`` metadata."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _model_member(tp: Any) -> Any:
    """The one pydantic model of the union *tp* (a sweep axis: a list of values or a range
    mapping), else *tp*: a mapping's keys are that model's."""
    tp = _bare(tp)
    if typing.get_origin(tp) not in (typing.Union, types.UnionType):
        return tp
    models = [
        m
        for m in map(_bare, typing.get_args(tp))
        if isinstance(m, type) and issubclass(m, BaseModel)
    ]
    return models[0] if len(models) == 1 else tp


def _model_at(loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The pydantic model class at *loc* inside a Scenario (None when loc ends in a value)."""
    cls: Any = Scenario
    for key in loc:
        if isinstance(key, str):
            cls = _model_member(cls)
        if isinstance(cls, type) and issubclass(cls, BaseModel) and isinstance(key, str):
            if key not in cls.model_fields:
                return None
            cls = cls.model_fields[key].annotation
        elif typing.get_origin(cls) in (list, dict):
            cls = typing.get_args(cls)[-1]
        else:
            return None
        args = [a for a in typing.get_args(cls) if a is not type(None)]
        if typing.get_origin(cls) not in (list, dict) and len(args) == 1:
            cls = args[0]  # Optional[X] -> X
    cls = _model_member(cls)
    return cls if isinstance(cls, type) and issubclass(cls, BaseModel) else None


_TYPE_NAMES = {
    "float_type": "a number",
    "float_parsing": "a number",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "string_type": "text",
    "list_type": "a list [ ... ]",
    "dict_type": "a mapping { key: value }",
    "model_type": "a mapping { key: value }",
    "model_attributes_type": "a mapping { key: value }",
}


def _renames(errors: Sequence[Any]) -> dict[tuple, str]:
    """A misspelt required key: the unknown key -> the required key it stands for, where a
    mapping has exactly one unknown and one missing key, or an unknown key whose did-you-mean
    names exactly one of its missing keys (``sla: {itl: 30}``: ``itl`` for ``itl_ms``;
    ``{gpus: 16}`` in a layout: ``gpus`` for ``gpu_count``; the rule the catalog's header
    shares, :func:`predictors.core.errors.misspelt_required`). Keyed by the unknown key's
    location."""
    unknown: dict[tuple, list[tuple]] = {}
    missing: dict[tuple, list[str]] = {}
    for err in errors:
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden" and loc:
            unknown.setdefault(loc[:-1], []).append(loc)
        elif err["type"] == "missing" and loc:
            missing.setdefault(loc[:-1], []).append(str(loc[-1]))
    out: dict[tuple, str] = {}
    for parent, keys in unknown.items():
        names = {str(k[-1]): k for k in keys}
        for name, meant in misspelt_required(
            list(names), missing.get(parent, []), alone=True
        ).items():
            out[names[name]] = meant
    return out


def _unknown_key(loc: Sequence[str | int], meant: str | None) -> str:
    """The message of the unknown key at *loc*: remove it, or rename it to the required key
    *meant* it stands for (:func:`_renames`); with the keys allowed there."""
    parent = _model_at(loc[:-1])
    fields = sorted(parent.model_fields) if parent else []
    key = str(loc[-1])
    msg = f"unknown key '{key}'{did_you_mean(key, fields)} — remove it"
    if meant is not None:
        msg = f"unknown key '{key}', and {meant} is required here — rename it to {meant}"
    return msg + (f" (allowed here: {', '.join(fields)})" if fields else "")


def pydantic_problems(exc: ValidationError) -> list[Problem]:
    """One (path, message) per pydantic error; rule errors expand into one per broken rule, and a
    misspelt required key is one problem, not a missing and an unknown key (:func:`_renames`)."""
    problems: list[Problem] = []
    errors = exc.errors()
    renames = _renames(errors)
    renamed = {(*loc[:-1], key) for loc, key in renames.items()}
    for err in errors:
        loc = list(err["loc"])
        if err["type"] == "missing" and tuple(loc) in renamed:
            continue  # said by the unknown key it is misspelt as
        kind = err["type"]
        value = err.get("input")
        ctx = err.get("ctx") or {}
        if kind == "rule":
            for sub, msg in ctx.get("problems", [("", err["msg"])]):
                prefix = format_path(loc) if loc else ""
                joint = "" if sub.startswith("[") else "."  # an index follows without a dot
                full = (
                    f"{prefix}{joint}{sub}" if prefix and sub else (prefix or sub or "(top level)")
                )
                problems.append((full, msg))
            continue
        path = format_path(loc)
        if kind == "extra_forbidden":
            msg = _unknown_key(loc, renames.get(tuple(loc)))
        elif kind == "missing":
            msg = "required but missing — add it (see docs/scenarios.md: wattgpu docs scenarios)"
        elif kind in _TYPE_NAMES and type(value) is int and kind.startswith("float"):
            msg = f"{_show(value)} is too large for a number — give a smaller value"
        elif kind in _TYPE_NAMES:
            msg = f"expected {_TYPE_NAMES[kind]}, got {_show(value)} — give {_TYPE_NAMES[kind]}"
            msg += _mapping_hint(loc, value) if kind.startswith("model") else ""
        elif kind == "finite_number":
            msg = f"{_show(value)} is not a finite number — give a finite value"
        elif kind == "literal_error":
            expected = str(ctx.get("expected", ""))
            choices = re.findall(r"'([^']*)'", expected)
            hint = did_you_mean(str(value)[:100], choices) if choices else ""
            shown = short_repr(value, 60) if isinstance(value, str) else _show(value)
            msg = f"{shown} is not allowed{hint} — use one of {expected}"
        elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
            bound = err["msg"].replace("Input should be", "give a value")
            msg = f"{_show(value)} is out of range — {bound}"
        elif kind == "too_short" and ctx.get("actual_length") == 0:
            msg = "empty — give at least one value"
        elif kind in ("too_short", "too_long", "string_too_short", "string_too_long"):
            msg = f"{err['msg']} — fix the length"
        else:
            msg = f"{err['msg']} (got {_show(value)}) — fix the value"
        problems.append((path, msg))
    return problems


def _choices(tp: Any) -> tuple[str, ...]:
    """The text values of a ``Literal`` field type *tp* (``Optional`` and ``Annotated`` looked
    through); empty for any other type."""
    tp = _bare(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return tuple(c for a in typing.get_args(tp) for c in _choices(a))
    if typing.get_origin(tp) is typing.Literal:
        return tuple(str(a) for a in typing.get_args(tp) if isinstance(a, str))
    return ()


def _mapping_hint(loc: Sequence[str | int], value: Any) -> str:
    """What a mapping given as a bare value should look like: ``{minimize: energy}`` where one
    key of the mapping takes that text as a choice (``objective: energy``), else the mapping's
    keys; '' when the mapping at *loc* is not a scenario section."""
    cls = _model_at(loc)
    if cls is None or not cls.model_fields:
        return ""
    if isinstance(value, str):
        text = value.strip()
        for name, field in cls.model_fields.items():
            if text in _choices(field.annotation):
                return f" such as {{{name}: {text}}}"
    return f" with the keys {', '.join(cls.model_fields)}"


def _show(value: Any) -> str:
    """The offending value, bounded: a huge (or alias-expanded) value is never fully rendered."""
    if isinstance(value, str):
        return f"text {short_repr(value, 60)}"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict | list):
        text = short_repr(value, 41)
        return type(value).__name__ if len(text) > 40 else text
    return short_repr(value, 60)


def as_error(source: str | Callable[[str], str], problems: list[Problem]) -> WattgpuError:
    """One WattgpuError with a ``source: field: what is wrong — fix`` line per problem; a
    callable *source* names each field's own file (:func:`planner.scenario.origin.origin_of`)."""
    name = source if callable(source) else (lambda _: source)
    # a value echoed in one problem (a path with a line break) never splits its line, and a
    # bidirectional override in the file name or --set text never reverses it (as in a value)
    return WattgpuError(
        "\n".join(
            escape_bidi(escape_breaks(f"{name(path)}: {path}: {msg}")) for path, msg in problems
        )
    )
