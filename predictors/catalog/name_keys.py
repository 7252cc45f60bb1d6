"""The keys catalog names are matched by: spelling-insensitive (case, punctuation, spaces), with
the splits between digits that tell ``Qwen2.5-7B`` from ``Qwen2-57B`` and ``opt-1.3b`` from
``opt-13b``."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable
from typing import Any


@functools.lru_cache(maxsize=65536)
def normalize_name(name: str) -> str:
    """Key used for matching: lower case, letters and digits only (any script); memoised, since
    a candidate build resolves the same few names ~10⁵ times."""
    return "".join(ch for ch in name.casefold() if ch.isalnum())


@functools.lru_cache(maxsize=65536)
def digit_splits(name: str) -> frozenset[int]:
    """Where punctuation or spaces alone split two digits of *name*, as positions in its digit
    sequence: ``Qwen2.5-7B`` -> {1, 2}, ``Qwen2-57B`` -> {1}, ``H100SXM580GB`` -> {}; a control
    or format character, unseen, splits nothing (``A3\x1b0`` -> {}). Two names with one
    :func:`normalize_name` key have the same digits; these tell ``2.5 7`` from ``2 57``."""
    splits: set[int] = set()
    digits = 0
    after_digit = gap = False  # the last letter or digit was a digit; separators since it
    for ch in name.casefold():
        if ch.isdigit():
            if after_digit and gap:
                splits.add(digits)
            digits, after_digit, gap = digits + 1, True, False
        elif ch.isalnum():
            after_digit = gap = False
        elif not unicodedata.category(ch).startswith("C"):  # an invisible character splits none
            gap = True
    return frozenset(splits)


def named_ids(name: str, entries: Iterable[tuple[frozenset[int], str]]) -> set[str]:
    """The ids *name* names among *entries*, the (:func:`digit_splits`, id) of the catalog names
    with its :func:`normalize_name` key: those whose name splits its digits where *name* does.
    Digits run together in one name and split in the other are other numbers (``opt-13b``,
    ``opt-1.3b``; ``Qwen2-57B``, ``Qwen2.5-7B``), so a name that splits them elsewhere names
    none. Only a name written as a bare key, no separator at all (``H100SXM580GB``), names any
    entry of its key where none splits alike."""
    entries = tuple(entries)
    mine = digit_splits(name)
    alike = {rid for split, rid in entries if split == mine}
    if alike or not name.strip().isalnum():
        return alike
    return {rid for _, rid in entries}


def known_spelling(
    rows: list[dict[str, Any]], known: Iterable[dict[str, Any]], column: str
) -> list[dict[str, Any]]:
    """*rows* with each *column* text that equals one in the *known* rows ignoring case written
    as there (the first spelling): a user catalog row's ``hopper`` reads as the bundled
    ``Hopper``, so every consumer sees one spelling. Other values are kept as written."""
    spelling: dict[str, str] = {}
    for row in known:
        value = row.get(column)
        if isinstance(value, str):
            spelling.setdefault(value.casefold(), value)
    out = []
    for row in rows:
        value = row.get(column)
        same = spelling.get(value.casefold(), value) if isinstance(value, str) else value
        out.append(row if same == value else {**row, column: same})
    return out
