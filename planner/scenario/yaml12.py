"""Safe YAML reading with YAML 1.2 scalars, duplicate-key errors and bounded size and nesting.

:class:`Yaml12Loader` is PyYAML's safe loader (the C one, ``yaml.CSafeLoader``, when libyaml is
available; the pure-Python ``yaml.SafeLoader`` otherwise) with the YAML 1.2 core schema for plain
scalars: ``1e3`` is a number, ``017`` is 17, and only ``true``/``false`` (any case form of the
spec) are booleans, so ``region: NO`` stays the text ``NO``; dates are text (no timestamps).
A mapping that repeats a key is an error instead of last-one-wins, and so is a YAML 1.1 merge key
(``<<: *anchor``), which YAML 1.2 does not have. Only safe constructors exist on it: no Python
objects.

Before anything is built, :func:`load_yaml_text` walks the parser's event stream once
(iteratively, no recursion) and refuses documents nested deeper than
:data:`predictors.core.safe_read.MAX_DEPTH` or whose aliases would expand to more than
:data:`MAX_NODES` nodes (the "billion laughs" alias bomb), counting what each anchor expands to.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any

import yaml

from predictors.core.errors import WattgpuError
from predictors.core.safe_read import MAX_DEPTH

#: Most nodes a document may expand to, aliases counted at their expanded size (the 500-entry
#: scenario has ~15 000).
MAX_NODES = 1_000_000

_BaseLoader: type[yaml.SafeLoader]
_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Parser: Any = getattr(yaml, "CBaseLoader", yaml.BaseLoader)  # events only, builds nothing

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
#: Tags whose YAML 1.1 resolvers are dropped: the four replaced by YAML 1.2's below, and
#: ``timestamp``, which YAML 1.2 does not have (``2026-01-01`` stays text, and ``2026-02-30`` is
#: the field's error rather than the loader's ValueError).
_CORE_TAGS = ("bool", "int", "float", "null", "timestamp")


class Yaml12Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loader with YAML 1.2 core-schema scalars, duplicate-key and merge-key errors."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """Mapping of *node*; a key given twice raises a ConstructorError naming both lines."""
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                # YAML 1.1's merge key: in YAML 1.2 ``<<`` is an ordinary key, and PyYAML's
                # merge picks among keys a merge list gives twice by a quirk, not by the spec
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    "merge key '<<' (YAML 1.1) is not read — write the merged keys out in this "
                    "mapping",
                    key_node.start_mark,
                )
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                continue  # the base class reports unhashable keys
            if key in seen:
                first = seen[key].start_mark.line + 1
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key '{_short(key)}' (first given on line {first}) — "
                    "keep one of them",
                    key_node.start_mark,
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """YAML 1.2 integer: decimal, ``0o`` octal or ``0x`` hexadecimal."""
        text = str(self.construct_scalar(node))
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        """YAML 1.2 float, including ``.inf``, ``-.inf`` and ``.nan`` in any listed case."""
        text = str(self.construct_scalar(node)).lower()
        if text.endswith(".inf"):
            return float("-inf") if text.startswith("-") else float("inf")
        if text == ".nan":
            return float("nan")
        return float(text)

    def construct_yaml_bool(self, node: yaml.ScalarNode) -> bool:
        """YAML 1.2 boolean: only ``true``/``false`` (any listed case), never yes/no/on/off."""
        return str(self.construct_scalar(node)).lower() == "true"


def _core_schema_resolvers() -> dict[Any, list[tuple[str, re.Pattern[str]]]]:
    """The base loader's implicit resolvers with bool/int/float/null replaced by YAML 1.2's."""
    kept: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items():
        rest = [(t, r) for t, r in resolvers if t.rsplit(":", 1)[-1] not in _CORE_TAGS]
        if rest:
            kept[first] = rest
    additions = (
        ("tag:yaml.org,2002:bool", _BOOL, list("tTfF")),
        ("tag:yaml.org,2002:int", _INT, list("-+0123456789")),
        ("tag:yaml.org,2002:float", _FLOAT, list("-+.0123456789")),
        ("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""]),
    )
    for tag, regexp, firsts in additions:
        for first in firsts:
            kept.setdefault(first, []).append((tag, regexp))
    return kept


Yaml12Loader.yaml_implicit_resolvers = _core_schema_resolvers()
Yaml12Loader.add_constructor("tag:yaml.org,2002:int", Yaml12Loader.construct_yaml_int)
Yaml12Loader.add_constructor("tag:yaml.org,2002:float", Yaml12Loader.construct_yaml_float)
Yaml12Loader.add_constructor("tag:yaml.org,2002:bool", Yaml12Loader.construct_yaml_bool)


def _short(value: Any, limit: int = 60) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_events(text: str, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> None:
    """Raise ``yaml.YAMLError`` (with a mark) when *text* nests deeper than *max_depth* or its
    aliases expand to more than *max_nodes* nodes. Walks the event stream; builds nothing."""
    # Per open collection: [nodes so far, deepest level below it, anchor]; per anchor: its
    # expanded (nodes, height).
    stack: list[list[Any]] = [[0, 0, None]]
    anchors: dict[str, tuple[int, int]] = {}
    for event in yaml.parse(text, Loader=_Parser):
        if isinstance(event, yaml.CollectionStartEvent):
            if len(stack) > max_depth:
                raise _limit_error(event, f"nested more than {max_depth} levels deep")
            stack.append([1, 0, event.anchor])
        elif isinstance(event, yaml.CollectionEndEvent):
            nodes, height, anchor = stack.pop()
            _add(stack[-1], nodes, height + 1, event, max_depth, max_nodes, len(stack))
            if anchor is not None:
                anchors[anchor] = (nodes, height + 1)
        elif isinstance(event, yaml.ScalarEvent):
            _add(stack[-1], 1, 0, event, max_depth, max_nodes, len(stack))
            if event.anchor is not None:
                anchors[event.anchor] = (1, 0)
        elif isinstance(event, yaml.AliasEvent):
            nodes, height = anchors.get(str(event.anchor), (1, 0))
            _add(stack[-1], nodes, height, event, max_depth, max_nodes, len(stack))
        elif isinstance(event, yaml.DocumentEndEvent):
            stack = [[0, 0, None]]


def _add(
    top: list[Any],
    nodes: int,
    height: int,
    event: Any,
    max_depth: int,
    max_nodes: int,
    level: int,
) -> None:
    top[0] += nodes
    top[1] = max(top[1], height)
    if top[0] > max_nodes:
        raise _limit_error(
            event, f"expands to more than {max_nodes:,} values (aliases counted expanded)"
        )
    if level - 1 + height > max_depth:
        raise _limit_error(event, f"nested more than {max_depth} levels deep (through an alias)")


def _limit_error(event: Any, what: str) -> yaml.YAMLError:
    return yaml.MarkedYAMLError(problem=what, problem_mark=event.start_mark)


def load_yaml_text(text: str) -> Any:
    """Parse one YAML document with :class:`Yaml12Loader` after the depth and expansion checks.

    Raises ``yaml.YAMLError`` (syntax, duplicate key, limits); callers add the file name.
    """
    check_events(text)
    loader = Yaml12Loader(text)  # what yaml.safe_load does, with the YAML 1.2 safe loader
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def yaml_error_text(exc: yaml.YAMLError) -> str:
    """'line L, column C: what' of a PyYAML error (one line, bounded length)."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    what = getattr(exc, "problem", None) or (str(exc).splitlines() or ["invalid YAML"])[0]
    return where + _short(what, 200)


_OWN_PROBLEMS = ("duplicate key", "merge key", "levels deep", "expands to")


def yaml_error(source: str, exc: yaml.YAMLError) -> WattgpuError:
    """One-line WattgpuError for a YAML problem in *source*."""
    text = yaml_error_text(exc)
    if any(p in text for p in _OWN_PROBLEMS):
        fix = "" if " — " in text else " — simplify the file"
        return WattgpuError(f"{source}: {text}{fix}")
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    what = text[len(where) :]
    return WattgpuError(f"{source}: {where}YAML syntax error: {what} — fix the YAML")
