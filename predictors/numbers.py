"""Numeric input columns of the batch contract: how a cell is read and how it is written back.

:func:`number` reads one column (an empty cell the default, text that is no number null or, for a
layout degree, NaN: both reported per row by :meth:`predictors.api.Predictor.predict`);
:func:`whole_numbers_as_int` writes the columns back as read: integers when every finite value is
whole, a cell that is not finite or too large for a float to hold its digits empty, so one bad
cell never changes how the others are written.
"""

from __future__ import annotations

import polars as pl

from predictors.catalog.row_checks import NUMERIC_COLUMNS


def number(cells: pl.Series, default: float | None) -> pl.Series:
    """A numeric input column as Float64: an empty cell is *default* (a layout degree: null,
    the engines' usual layout), text that is not a number NaN for a layout degree and null
    otherwise (both reported per row). Cells that parse as they are (the common case) are cast
    once; only a column with padded or unparseable text takes the stripping path."""
    if cells.dtype.is_numeric():
        return _filled(cells.cast(pl.Float64), default).alias(cells.name)
    text = cells.cast(pl.String)
    number = text.cast(pl.Float64, strict=False)
    if not bool((number.is_null() & text.is_not_null()).any()):
        return _filled(number, default).alias(cells.name)
    raw = text.str.strip_chars()
    number = raw.cast(pl.Float64, strict=False)
    if default is None:
        number = number.fill_null(float("nan"))
    blank = raw.is_null() | (raw == "")
    number = pl.select(
        pl.when(blank).then(pl.lit(default, pl.Float64)).otherwise(number)
    ).to_series()
    return number.alias(cells.name)


def _filled(number: pl.Series, default: float | None) -> pl.Series:
    return number if default is None else number.fill_null(default)


#: From this magnitude (2**53) a float no longer holds every whole number: a number cell there
#: is beyond every bound (its row's error quotes it as given) and is written empty, not with
#: other digits (``1.2345678901234567e+19`` for ``12345678901234567890``; fuzz round 27).
EXACT_BELOW = 2.0**53


def whole_number_columns(rows: pl.DataFrame) -> list[str]:
    """The numeric input columns of normalised *rows* whose every value is whole (shown as
    integers: 1, not 1.0); a cell written empty (not finite, or from :data:`EXACT_BELOW` on)
    does not count."""
    whole = []
    for col in NUMERIC_COLUMNS:
        values = rows[col].drop_nulls()
        values = values.filter(values.is_finite() & (values.abs() < EXACT_BELOW))
        if values.len() and bool((values == values.floor()).all()):
            whole.append(col)
    return whole


def shown_number(col: str, whole: bool) -> pl.Expr:
    """Numeric input column *col* as written: empty where not finite or from
    :data:`EXACT_BELOW` on (a bad cell, its row's error says why), as integers when every other
    value is whole."""
    value = pl.col(col).cast(pl.Float64)
    held = pl.when(value.is_finite() & (value.abs() < EXACT_BELOW)).then(value).otherwise(None)
    return held.cast(pl.Int64 if whole else pl.Float64).alias(col)


def whole_numbers_as_int(rows: pl.DataFrame) -> pl.DataFrame:
    """Show numeric input columns as integers when every value is whole (1, not 1.0), a cell
    that is not finite empty: one bad cell never changes how the others are written."""
    whole = set(whole_number_columns(rows))
    return rows.with_columns(shown_number(col, col in whole) for col in NUMERIC_COLUMNS)
