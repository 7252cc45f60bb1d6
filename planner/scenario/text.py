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

A name that keys the plan's rows (``models[i].name``, the ``regions`` keys) must also read as
what it is (:func:`name_problem`): no invisible format character (Unicode category Cf, such as
the zero-width space U+200B) and no space but the ASCII one (the no-break space U+00A0 and the
other Unicode spaces and separators), or two entries could look the same and differ. Two entry
names equal once Unicode-normalised (NFC: ``café`` typed as one character or as ``e`` and a
combining accent) are one name twice (:func:`repeated_name`). Names are never changed: each of
these is an error naming the field.
"""

from __future__ import annotations

import re
import unicodedata
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


#: What :func:`name_problem` calls each Unicode category it refuses (any space but U+0020).
_INVISIBLE = {
    "Cf": ("an invisible format character", "remove it"),
    "Zs": ("a non-ASCII space", "use a plain space"),
    "Zl": ("a line separator", "remove it"),
    "Zp": ("a paragraph separator", "remove it"),
}


def name_problem(value: str) -> str | None:
    """:func:`text_problem` of a name that keys the plan's rows, which must also hold no
    invisible format character (Cf: ``U+200B``) and no non-ASCII space (``U+00A0``); None
    when it holds none."""
    problem = text_problem(value)
    if problem is not None or value.isascii():
        return problem
    for char in value:
        found = _INVISIBLE.get(unicodedata.category(char))
        if found is not None and char != " ":
            kind, fix = found
            return f"text {short_repr(value, 60)} holds {kind} (U+{ord(char):04X}) — {fix}"
    return None


def repeated_name(seen: dict[str, tuple[int, str]], index: int, name: str) -> str | None:
    """``'chat' already used by models[0] — …`` when *name* (of ``models[index]``) equals an
    earlier entry's name once both are NFC-normalised; else None, and *name* is noted in *seen*
    (NFC key -> first entry's index and name). Only the comparison normalises: names are kept."""
    key = unicodedata.normalize("NFC", name)
    first = seen.setdefault(key, (index, name))
    if first[0] == index:
        return None
    how = "" if first[1] == name else " (the same text in another Unicode form)"
    return f"'{name}' already used by models[{first[0]}]{how} — give every entry a unique name"


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


def check_name(value: str) -> str:
    """*value* unchanged; a pydantic ``rule`` error when :func:`name_problem` refuses it."""
    problem = name_problem(value)
    if problem is not None:
        raise _rule(problem)
    return value


def check_keys(keys: Iterable[str]) -> PydanticCustomError | None:
    """A ``rule`` error for the first of *keys* (names of a mapping that key the plan's rows)
    holding a character :func:`name_problem` refuses; None when none does."""
    for key in keys:
        problem = name_problem(key)
        if problem is not None:
            return _rule(f"key {problem}")
    return None
