"""Rows at a rate (a ``requests_per_s`` value) in the batch contract: their ``batch_size`` is
ignored (docs/contracts.md), so it must not refuse, bound or change them.

The at-batch pass that precedes the serving model (:mod:`predictors.serving.at_load`) predicts
such rows at batch 1 (:func:`at_batch_one`): a batch the row never states cannot make it "not
fit" in memory, fall outside the trained range or carry an error of its own; the output still
shows the ``batch_size`` cell as given (:func:`shown_as_given`). The row's TTFT columns are then
the serving model's at its load (:func:`ttft_at_load`), the same TTFT as ``ttft_s_at_load``,
not the at-batch estimator's at a batch the row does not run.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from predictors.api import TTFT_COLUMNS, numeric_inputs, shown_number, whole_number_columns
from predictors.catalog.row_checks import NUMERIC_COLUMNS

_BATCH = "batch_size"


def at_batch_one(rows: pl.DataFrame, rate: pl.Series) -> pl.DataFrame:
    """*rows* with ``batch_size`` 1 where *rate* (the parsed rate column) is given."""
    if _BATCH not in rows.columns or not rate.is_not_null().any():
        return rows
    given = rows[_BATCH]
    one = pl.lit("1") if given.dtype in (pl.String, pl.Null) else pl.lit(1).cast(given.dtype)
    column = given.cast(pl.String) if given.dtype == pl.Null else pl.col(_BATCH)
    return rows.with_columns(
        pl.when(pl.lit(rate.is_not_null())).then(one).otherwise(column).alias(_BATCH)
    )


def shown_as_given(out: pl.DataFrame, original: pl.DataFrame, rate: pl.Series) -> pl.DataFrame:
    """*out* (predicted from :func:`at_batch_one`'s rows) showing the ``batch_size`` of the
    *original* rows, parsed as every numeric input is (whole numbers as integers)."""
    if _BATCH not in original.columns or _BATCH not in out.columns:
        return out
    if not rate.is_not_null().any():
        return out
    parsed = numeric_inputs(original)[_BATCH].to_numpy()
    shown = out[_BATCH].cast(pl.Float64).to_numpy()
    merged = pl.Series(_BATCH, np.where(rate.is_not_null().to_numpy(), parsed, shown))
    merged = merged.fill_nan(None)
    numbers = out.select(pl.col(c).cast(pl.Float64) for c in NUMERIC_COLUMNS)
    whole = _BATCH in whole_number_columns(numbers.with_columns(merged))
    return out.with_columns(merged).with_columns(shown_number(_BATCH, whole))


def ttft_at_load(
    ttft: pl.DataFrame, idx: np.ndarray, mean: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> pl.DataFrame:
    """*ttft* (the :data:`~predictors.api.TTFT_COLUMNS`) with rows *idx* set to the serving
    model's TTFT at their load: *mean*, and the interval curves' *lo* / *hi* around it (empty
    where the upper curves cannot carry the rate, as ``itl_s_hi``)."""
    values = {
        TTFT_COLUMNS[0]: mean,
        TTFT_COLUMNS[1]: np.fmin(lo, mean),
        TTFT_COLUMNS[2]: np.where(np.isnan(hi), np.nan, np.fmax(hi, mean)),  # empty stays empty
    }
    columns = []
    for name, at in values.items():
        full = ttft[name].cast(pl.Float64).to_numpy().copy()
        full[idx] = at
        columns.append(pl.Series(name, full).fill_nan(None))
    return ttft.with_columns(columns)
