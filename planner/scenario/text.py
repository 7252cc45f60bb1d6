"""Refuse invisible characters in the scenario's free text before it reaches an output.

A scenario's names (its ``name``, every ``models[i].name``, the ``regions`` keys) and its free
text (``description``, the ``*_source`` fields) are copied into plans, CSVs, reports and the
terminal. A control character there (an ANSI escape, a carriage return, a NUL) recolours or
rewrites a terminal line and truncates a cell for many CSV readers; a bidirectional override
(U+202A to U+202E, U+2066 to U+2069) makes the text read differently from what it is. The
predict CSVs and user catalogs refuse control characters in names
(:mod:`predictors.core.csv_text`, :func:`predictors.catalog.user.check_names`); the scenario
refuses them the same way, with a message naming the field and the character.

A name and a one-line field may hold none of them; ``description`` may hold tabs and line
breaks (a YAML block scalar), nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic_core import PydanticCustomError

from predictors.core.escape import short_repr

#: Every control character (Unicode Cc: C0, DEL, C1) and the bidirectional overrides.
_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: The same, tab and line feed allowed (multi-line free text).
_MULTI_LINE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


#: The bidirectional overrides and isolates alone (U+202A to U+202E, U+2066 to U+2069).
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")


def escape_bidi(text: str) -> str:
    """*text* with every bidirectional override written as its escape (``\\u202e``), as
    :func:`~predictors.core.escape.short_repr` writes it in a value: a file name or ``--set``
    text in a message's origin cannot reverse the rest of the line on a terminal."""
    return _BIDI.sub(lambda m: repr(m.group())[1:-1], text)


def text_problem(value: str, *, multiline: bool = False) -> str | None:
    """``holds a control character (U+001B) — remove it`` when *value* holds one (or a
    bidirectional override); None when it holds none."""
    found = (_MULTI_LINE if multiline else _ONE_LINE).search(value)
    if found is None:
        return None
    point = ord(found.group())
    kind = "a bidirectional override" if point > 0x9F else "a control character"
    return f"text {short_repr(value, 60)} holds {kind} (U+{point:04X}) — remove it"


def _rule(problem: str) -> PydanticCustomError:
    """The ``rule`` error of :func:`planner.scenario.sections.rule_error` (not imported: the
    sections import this module), one problem at the field's own path."""
    return PydanticCustomError(
        "rule", "{message}", {"message": problem, "problems": [("", problem)]}
    )


def check_text(value: str | None, *, multiline: bool = False) -> str | None:
    """*value* unchanged; a pydantic ``rule`` error (reported at the field's path) when it
    holds a character :func:`text_problem` refuses."""
    if value is None:
        return None
    problem = text_problem(value, multiline=multiline)
    if problem is not None:
        raise _rule(problem)
    return value


def check_keys(keys: Iterable[str]) -> PydanticCustomError | None:
    """A ``rule`` error for the first of *keys* (names of a mapping) holding a refused
    character; None when none does."""
    for key in keys:
        problem = text_problem(key)
        if problem is not None:
            return _rule(f"key {problem}")
    return None
