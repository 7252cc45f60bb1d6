"""Make user strings safe for the place they are written to: Markdown, CSV, terminal, messages.

User strings (scenario and entry names, descriptions, catalog ids from a user catalog, extra CSV
columns, values echoed in error messages) reach four kinds of output:

* :func:`md_text` — Markdown: ``|`` cannot split a table cell, a newline cannot start a row,
  ``<script>`` and other HTML is shown as text (``&lt;script&gt;``).
* :func:`csv_cell` — CSV read by spreadsheets: a text cell starting with ``=``, ``+``, ``-``,
  ``@`` (or a tab or carriage return) gets a leading ``'`` so it is not run as a formula
  (OWASP "CSV injection"); numbers such as ``-5`` or ``-1.5e-3`` stay as they are.
  :func:`csv_safe_expr` does the same on a polars string column.
* :func:`terminal_text` — terminal: ANSI/OSC escape sequences and other control characters are
  removed, so a name cannot retitle the window, hide text or forge a hyperlink.
* :func:`short_repr` — messages: a bounded ``repr`` that never expands a huge value.
"""

from __future__ import annotations

import re
import reprlib
from typing import Any

import polars as pl

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), other two-byte ESC sequences, then any
# remaining C0/C1 control character except tab and newline.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)
#: Markdown syntax in user text: ``[``/``]`` too, or ``[a](javascript:…)`` and ``![i](url)`` in a
#: scenario's description became a live link and a remote image (fuzz round 17).
_MD_SPECIAL = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "*": "\\*", "[": "\\[", "]": "\\]"}
)


def md_text(value: Any) -> str:
    """*value* as text that stays inside one Markdown table cell or line."""
    text = terminal_text(str(value))
    return " ".join(text.translate(_MD_SPECIAL).split("\n")).replace("\t", " ")


def csv_cell(value: str) -> str:
    """*value* with a ``'`` in front when a spreadsheet would read it as a formula."""
    if value.startswith(_FORMULA_START) and not _NUMBER.match(value):
        return "'" + value
    return value


_FORMULA_PATTERN = r"^[=+\-@\t\r]"


def _risky(column: str) -> pl.Expr:
    col = pl.col(column)
    return (col.str.contains(_FORMULA_PATTERN) & ~col.str.contains(_NUMBER.pattern)).fill_null(
        False
    )


def csv_safe_expr(column: str) -> pl.Expr:
    """Polars expression applying :func:`csv_cell` to the string column *column*."""
    col = pl.col(column)
    return pl.when(_risky(column)).then(pl.lit("'") + col).otherwise(col).alias(column)


def csv_safe_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """*frame* with :func:`csv_safe_expr` applied to every string column that has a risky cell
    (the others are kept as they are, so a large frame is not copied for nothing)."""
    cols = [c for c, t in frame.schema.items() if t == pl.String]
    if not cols:
        return frame
    # most columns have no cell that starts like a formula: one cheap anchored test each
    starts = frame.select(
        pl.col(c).str.contains(_FORMULA_PATTERN).any().fill_null(False) for c in cols
    ).row(0)
    cols = [c for c, s in zip(cols, starts, strict=True) if s]
    if not cols:
        return frame
    flags = frame.select(_risky(c).any().alias(c) for c in cols).row(0, named=True)
    risky = [c for c in cols if flags[c]]
    return frame.with_columns(csv_safe_expr(c) for c in risky) if risky else frame


def terminal_text(value: str) -> str:
    """*value* without escape sequences or control characters (tabs and newlines kept)."""
    return _ESCAPES.sub("", value)


_REPR = reprlib.Repr()
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxlevel = 3


def short_repr(value: Any, limit: int = 80) -> str:
    """A ``repr`` of *value* at most about *limit* characters long, whatever its size."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    text = _REPR.repr(value)
    return terminal_text(text if len(text) <= limit else text[: limit - 1] + "…")
