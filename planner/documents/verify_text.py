"""The plan JSON check (:mod:`planner.documents.verify`) of its text: no control character and
no bidirectional override in any string or key.

A scenario refuses them in its names and free text (:mod:`planner.scenario.text`: an ANSI escape
recolours or rewrites a terminal line, a NUL or a carriage return truncates a cell, U+202A to
U+202E and U+2066 to U+2069 make a name read as another), so no plan ``wattgpu plan`` writes
holds one. A plan edited to hold one (``"name": "chat\\u001b[31m"``) sent the raw escape into
``report -f text -o FILE``, the html, ``diff`` and ``pareto``. Every string of the plan (the
scenario, the description, each model entry's name and model, GPU types, regions, reasons,
sources) and every key of its objects is now checked on reading with the scenario's own rule
(:func:`planner.scenario.text.text_problem`): one line naming the field and the character. The
description may hold tabs and line breaks, as a scenario's may (a YAML block scalar); nothing
else may.

A pass over all the strings at once (about 70 ms on the 22 MB plan of the ``large-generated``
scenario) finds whether any holds one; the fields are named only then.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import Any

from planner.scenario.text import text_problem

#: Top-level fields that may hold tabs and line breaks (the scenario's ``description`` may).
MULTILINE = frozenset({"description"})


def _numeric(values: list[Any]) -> bool:
    """True for a list of numbers (a curve, a load per period): no text in it. The plan
    document's lists hold one type, so the first value tells."""
    first = values[0] if values else None
    return isinstance(first, int | float) and not isinstance(first, bool)


def _all_text(data: dict[str, Any]) -> list[str]:
    """Every string and object key of *data* but the multi-line fields of :data:`MULTILINE`
    (a list of records is read as one: its keys once, its values together)."""
    out: list[str] = list(data)
    stack: list[Any] = [{k: v for k, v in data.items() if k not in MULTILINE}]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            out.extend(node)
            values: Any = node.values()
        elif _numeric(node):
            continue
        elif all(type(r) is dict for r in node):
            out.extend(set(chain.from_iterable(node)))
            values = chain.from_iterable(map(dict.values, node))
        else:
            values = node
        for v in values:
            kind = type(v)
            if kind is str:
                out.append(v)
            elif kind is dict or kind is list:
                stack.append(v)
    return out


def _said(problem: str) -> str:
    """:func:`planner.scenario.text.text_problem`'s words without its fix (the plan's is to
    plan the scenario again)."""
    return problem.removesuffix(" — remove it")


def _where(path: str, key: Any) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else str(key)


def _named(node: Any, path: str = "") -> Iterator[str]:
    """One line per field of *node* (at *path*) whose text holds a refused character."""
    if isinstance(node, dict):
        for key, value in node.items():
            problem = text_problem(key) if isinstance(key, str) else None
            if problem is not None:
                yield f"{path or '(top level)'}: the key {_said(problem).removeprefix('text ')}"
                continue
            yield from _named(value, _where(path, key))
    elif isinstance(node, list) and not _numeric(node):
        for i, value in enumerate(node):
            yield from _named(value, _where(path, i))
    elif isinstance(node, str):
        problem = text_problem(node, multiline=path in MULTILINE)
        if problem is not None:
            yield f"{path}: {_said(problem)}"


def text_problems(data: dict[str, Any]) -> list[str]:
    """Every field or key of the plan JSON *data* holding a control character or a
    bidirectional override (module doc), one line per field; empty when none does."""
    found = text_problem("".join(_all_text(data)))
    for key in MULTILINE:
        value = data.get(key)
        if found is None and isinstance(value, str):
            found = text_problem(value, multiline=True)
    return [] if found is None else list(_named(data))
