"""The keys catalog names are matched by: spelling-insensitive (case, punctuation, spaces), with
the splits between digits that tell ``Qwen2.5-7B`` from ``Qwen2-57B``."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=65536)
def normalize_name(name: str) -> str:
    """Key used for matching: lower case, letters and digits only (any script); memoised, since
    a candidate build resolves the same few names ~10⁵ times."""
    return "".join(ch for ch in name.casefold() if ch.isalnum())


def digit_splits(name: str) -> frozenset[int]:
    """Where punctuation or spaces alone split two digits of *name*, as positions in its digit
    sequence: ``Qwen2.5-7B`` -> {1, 2}, ``Qwen2-57B`` -> {1}, ``H100SXM580GB`` -> {}. Two
    names with one :func:`normalize_name` key have the same digits; these tell ``2.5 7`` from
    ``2 57``."""
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
        else:
            gap = True
    return frozenset(splits)
