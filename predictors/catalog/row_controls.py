"""A predict row's ``model`` or ``gpu`` cell made of control characters alone: that is its error.

:func:`predictors.rows.predict_rows` refuses a row whose text cell holds a control character
(``model: holds a control character (U+0000)``, docs/contracts.md). A model or GPU cell with
nothing but control characters (and spaces) in it (a lone NUL, the stray byte at the end of a
file) also resolves to no catalog id, and its ``model: unknown llm '\\x00'`` came first, as if a
name were misspelt. :func:`without_name_errors` drops that resolution error from such rows, so
the control character is the reason given. A cell with a name in it too (``H2OO\\x00``) keeps
its did-you-mean; every other row's error is left as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from predictors.catalog import quantised
from predictors.core.csv_text import CONTROL_PATTERN
from predictors.core.errors import UnknownIdError

if TYPE_CHECKING:
    from predictors.catalog.store import Catalog

#: The catalog each name column resolves in, as its empty cell's error names it
#: (:func:`predictors.catalog.row_checks.check_rows`).
_KINDS = {"model": "LLM", "gpu": "GPU"}


def _name_error(catalog: Catalog, column: str, name: str | None) -> str:
    """The error :func:`~predictors.catalog.row_checks.check_rows` gives the (stripped) *name*
    of *column*: '' when it resolves."""
    if name is None:
        return f"{column}: empty; give a catalog {_KINDS[column]} id"
    try:
        if column == "model":
            quantised.resolve_llm(catalog, name)
        else:
            catalog.resolve_gpu(name)
    except UnknownIdError as exc:
        return f"{column}: {exc.problem}{exc.hint}"
    return ""


def _without_part(error: str, part: str) -> str:
    """*error* ('; '-joined parts) without its part *part* (the first one, as a whole part)."""
    parts = error.split("; ")
    size = part.count("; ") + 1  # a part may hold '; ' itself (the empty cell's error does)
    for start in range(len(parts) - size + 1):
        if "; ".join(parts[start : start + size]) == part:
            return "; ".join(parts[:start] + parts[start + size :])
    return error


def without_name_errors(out: pl.DataFrame, rows: pl.DataFrame, catalog: Catalog) -> pl.DataFrame:
    """*out* (predicted from *rows*, row for row) where a ``model`` or ``gpu`` cell made of
    control characters (and spaces) alone has no resolution error in its row's ``error`` (the
    control character, named after it, is the reason): the same words, computed again for those
    cells only, are taken out."""
    columns = [c for c in _KINDS if c in rows.columns and rows.schema[c] == pl.String]
    if not columns:
        return out
    cells = pl.col(columns)
    bare = cells.str.replace_all(CONTROL_PATTERN, "").str.strip_chars() == ""  # nothing printable
    flags = rows.select((cells.str.contains(CONTROL_PATTERN) & bare).fill_null(False))
    flagged = flags.select(pl.any_horizontal(columns)).to_series()
    if not flagged.any():
        return out
    where = flagged.arg_true()
    errors = [e or "" for e in out["error"].gather(where).to_list()]
    for column in columns:
        has = flags[column].gather(where).to_list()
        # stripped, an empty cell None: the name check_rows resolved (normalise_rows)
        names = [c or None for c in rows[column].gather(where).str.strip_chars().to_list()]
        parts: dict[str | None, str] = {}
        for k, (bad, name) in enumerate(zip(has, names, strict=True)):
            if bad:  # a cell of control characters alone
                part = parts.get(name)
                if part is None:
                    part = parts[name] = _name_error(catalog, column, name)
                errors[k] = _without_part(errors[k], part) if part else errors[k]
    return out.with_columns(out["error"].scatter(where, errors))
