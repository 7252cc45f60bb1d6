"""The batch row contract of ``wattgpu predict --input ROWS.csv``.

Input columns :data:`INPUT_COLUMNS` (all but ``model`` and ``gpu`` optional, defaults in
:data:`DEFAULTS`; extra columns are kept), output = the input rows in order plus
:data:`OUTPUT_COLUMNS`. A row without a ``requests_per_s`` is predicted at its ``batch_size``
(:meth:`predictors.api.Predictor.predict`); a row with one at that Poisson load per replica of
``gpu_count`` GPUs, by the serving model (:mod:`predictors.serving.at_load`), which also fills
:data:`LOAD_COLUMNS`. A row that cannot be predicted gets a one-line ``error`` and empty
predictions; the others are still predicted (a control character in a text cell is such an
error, and is written out as U+FFFD). :func:`read_rows_csv` reads the ``--input`` CSV.
docs/contracts.md states the contract for users.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import polars as pl

from predictors import row_header
from predictors.api import (
    BATCH_INPUT_COLUMNS,
    DEFAULTS,
    FIT_COLUMNS,
    LAYOUT_OUTPUT_COLUMNS,
    PREDICTION_COLUMNS,
    TTFT_COLUMNS,
    Predictor,
    normalise_rows,
    numeric_inputs,
    shown_number,
    whole_number_columns,
)
from predictors.catalog.quantised import fill_implied_precision, without_unused_precision
from predictors.catalog.row_checks import LAYOUT_COLUMNS, NUMERIC_COLUMNS
from predictors.catalog.row_controls import without_name_errors
from predictors.core.csv_text import (
    control_cell_errors,
    control_columns,
    control_in_names,
    csv_head_problem,
    header_names_problem,
    numbers_as_text,
    without_controls,
)
from predictors.core.errors import WattgpuError
from predictors.core.escape import csv_safe_frame
from predictors.core.ragged import RAGGED_COLUMN, ragged_errors, read_rows_text
from predictors.core.safe_read import MAX_PREDICT_CSV_BYTES, collector_paused, file_size_problem
from predictors.numbers import EXACT_BELOW
from predictors.row_header import header_problem, stated_layout_on_errors, tensor_parallel_errors
from predictors.row_identity import IDENTITY_COLUMNS, identity_columns
from predictors.serving.at_load import at_load
from predictors.serving.rate_rows import at_batch_one, shown_as_given

__all__ = [
    "DEFAULTS",
    "INPUT_COLUMNS",
    "LOAD_COLUMNS",
    "OUTPUT_COLUMNS",
    "csv_pieces",
    "predict_rows",
    "predicted_chunks",
    "read_rows_csv",
    "write_csv_chunks",
]

#: ``requests_per_s`` has no default: empty means "predict at ``batch_size``"; the layout columns
#: neither: empty means the engines' usual layout (the resolved one is in the output).
INPUT_COLUMNS: tuple[str, ...] = (*BATCH_INPUT_COLUMNS, "requests_per_s", *LAYOUT_COLUMNS)
#: Output columns filled only for rows with a ``requests_per_s`` (null otherwise).
LOAD_COLUMNS: tuple[str, ...] = ("concurrency", "ttft_s_at_load", "itl_s_p90")
OUTPUT_COLUMNS: tuple[str, ...] = (
    *PREDICTION_COLUMNS,
    *LOAD_COLUMNS,
    *LAYOUT_OUTPUT_COLUMNS,
    *IDENTITY_COLUMNS,
)
_RATE = "requests_per_s"
#: ``domain_reason`` of a row with an error (as :mod:`predictors.api` writes it).
INVALID_ROW = "invalid row (see error)"
_RATE_ERROR = "requests_per_s: must be a positive number (or empty)"


def _rates(rows: pl.DataFrame) -> pl.Series:
    """The rate column as numbers: null where empty, NaN where the text is not a number."""
    if _RATE not in rows.columns:
        return pl.Series(_RATE, [None] * rows.height, dtype=pl.Float64)
    text = rows[_RATE].cast(pl.String).str.strip_chars()
    return (
        rows.select(
            pl.when(text.is_null() | (text == ""))
            .then(None)
            .otherwise(text.cast(pl.Float64, strict=False).fill_null(float("nan")))
            .alias(_RATE)
        )
    ).to_series()


def read_rows_csv(path: Path, option: str = "--input") -> pl.DataFrame:
    """The rows CSV *path* as text columns; a one-line WattgpuError naming *option* and the file
    when it is missing, huge, not UTF-8 text with LF or CRLF line ends (UTF-16, bare CR), has a
    control character, a repeated name or two unnamed columns in its header, is malformed or
    lacks model or gpu. Lines without a value in any column are dropped."""
    where = f"{option}: {path}"
    problem = file_size_problem(path, MAX_PREDICT_CSV_BYTES) or csv_head_problem(path)
    problem = problem or row_header.separator_problem(path, INPUT_COLUMNS)  # ';' or tab
    problem = problem or header_names_problem(path)  # unnamed or repeated columns
    if problem is not None:
        raise WattgpuError(f"{where}: {problem}")
    try:
        rows = read_rows_text(path, where)  # a malformed line (stray quote…): that row's error
    except pl.exceptions.PolarsError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise WattgpuError(
            f"{where}: cannot read CSV ({first}) — save it as comma-separated UTF-8 with one "
            "header line"
        ) from None
    bad_name = control_in_names(rows.columns)
    if bad_name is not None:
        raise WattgpuError(f"{where}: {bad_name}")
    problem = header_problem(
        rows.columns, INPUT_COLUMNS, (*PREDICTION_COLUMNS, *LOAD_COLUMNS, *IDENTITY_COLUMNS)
    )
    if problem is not None:
        raise WattgpuError(f"{where}: {problem}")
    missing = [c for c in ("model", "gpu") if c not in rows.columns]
    if missing:
        raise WattgpuError(f"{where}: missing column(s) {', '.join(missing)}; add them")

    # a line with no value (a blank line at the end, only commas) is no row, as csv and pandas
    def empty(col: pl.Expr) -> pl.Expr:
        return col.is_null() | (col.str.strip_chars() == "")

    if not rows.select(empty(pl.col("model")).any()).item():  # the cheap test: one column
        return rows
    return rows.filter(~pl.all_horizontal(empty(pl.all())))


def _with_rate_errors(out: pl.DataFrame, rate: pl.Series) -> pl.DataFrame:
    """*out* where a bad rate adds its error and empties the row's predictions."""
    bad = rate.is_not_null() & (~rate.is_finite() | (rate <= 0))
    return _with_row_errors(out, bad, pl.lit(_RATE_ERROR))


#: Characters of a bad cell quoted in its row's error (a longer cell ends with ``…``).
_SHOWN_CHARS = 40


def _with_given_values(out: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """*out* where each ``COLUMN: must be …`` error of a number or layout column quotes the cell
    as the user gave it (``batch_size: must be a whole number from 1 to 65,536 (got 'abc')``):
    the output's number column cannot show a cell that is no number (it is written empty)."""
    err = pl.col("error")
    fixes = []
    for column in (*NUMERIC_COLUMNS, *LAYOUT_COLUMNS, _RATE):
        if column not in rows.columns:
            continue
        pattern = f"(?s)^(.*?(?:^|; ){column}: must be [^;]*)(.*)$"
        given = pl.lit(rows[column].cast(pl.String).fill_null(""))
        cut = given.str.slice(0, _SHOWN_CHARS)
        cut = pl.when(given.str.len_chars() > _SHOWN_CHARS).then(cut + "…").otherwise(cut)
        fixes.append((pattern, pl.lit(" (got '") + cut + pl.lit("')")))
    if not fixes or not out.select((err != "").any()).item():
        return out
    for pattern, shown in fixes:
        out = out.with_columns(
            pl.when(err.str.contains(pattern))
            .then(err.str.extract(pattern, 1) + shown + err.str.extract(pattern, 2))
            .otherwise(err)
            .alias("error")
        )
    return out


def _with_control_errors(out: pl.DataFrame, rows: pl.DataFrame, by: Predictor) -> pl.DataFrame:
    """*out* (predicted from *rows*) where a text cell holding a control character refuses its
    row, the error naming it (:mod:`~predictors.catalog.row_controls`), and none is written."""
    columns = control_columns(rows)
    if not columns:
        return out
    errors = control_cell_errors(rows, columns)
    out = without_name_errors(out, rows, by.catalog)
    return without_controls(_with_row_errors(out, errors != "", pl.lit(errors)))


def _with_row_errors(out: pl.DataFrame, bad: pl.Series, message: pl.Expr) -> pl.DataFrame:
    """*out* where the rows flagged by *bad* add *message* to their error and have their
    predictions emptied."""
    if not bad.any():
        return out
    bad_col = pl.lit(bad)
    numeric = [
        c
        for c in (*PREDICTION_COLUMNS[:7], *TTFT_COLUMNS, *LAYOUT_OUTPUT_COLUMNS)
        if c in out.columns
    ]
    return out.with_columns(
        *(pl.when(bad_col).then(None).otherwise(pl.col(c)).alias(c) for c in numeric),
        *(
            pl.when(bad_col).then(False).otherwise(pl.col(c)).alias(c)
            for c in ("in_domain", "gpu_measured")
        ),
    ).with_columns(
        pl.when(bad_col & (pl.col("error") != ""))
        .then(pl.col("error") + "; " + message)
        .when(bad_col)
        .then(message)
        .otherwise(pl.col("error"))
        .alias("error"),
        pl.when(bad_col)
        .then(pl.lit(INVALID_ROW))
        .otherwise(pl.col("domain_reason"))
        .alias("domain_reason"),
        *(
            pl.when(bad_col).then(None).otherwise(pl.col(c)).alias(c)
            for c in FIT_COLUMNS
            if c in out.columns
        ),
    )


#: Rows predicted at once: the working memory of validation, features and the estimators stays
#: that of this many rows, whatever the input's size (1 M rows: 1.6 GB at once). Smaller pieces
#: also reuse freed memory rather than fault in fresh pages: 1 M rows take 0.49 GB and the least
#: CPU time at 50,000 (0.86 GB at 200,000; more CPU at 25,000, from per-piece overheads).
ROWS_CHUNK = 50_000


def predict_rows(
    predictor: Predictor,
    rows: pl.DataFrame,
    *,
    with_ttft: bool = False,
    with_fit: bool = False,
) -> pl.DataFrame:
    """The input rows (in order) plus :data:`OUTPUT_COLUMNS`; with *with_ttft* /
    *with_fit* then :data:`~predictors.api.TTFT_COLUMNS` / :data:`~predictors.api.FIT_COLUMNS`
    as :meth:`~predictors.api.Predictor.predict` gives them.

    Large inputs are predicted in chunks of :data:`ROWS_CHUNK` rows (:func:`predicted_chunks`);
    every row's prediction is independent of the others, and whether a numeric input column is
    shown as whole numbers is decided on the whole input, so the result is that of one piece
    (up to the last bit of a float now and then: numpy's vectorised loops may treat a row at
    another offset with another instruction sequence)."""
    parts = list(predicted_chunks(predictor, rows, with_ttft=with_ttft, with_fit=with_fit))
    return parts[0] if len(parts) == 1 else pl.concat(parts, how="vertical")


def predicted_chunks(
    predictor: Predictor,
    rows: pl.DataFrame,
    *,
    with_ttft: bool = False,
    with_fit: bool = False,
) -> Iterator[pl.DataFrame]:
    """:func:`predict_rows` in pieces of at most :data:`ROWS_CHUNK` rows, in order, each
    predicted when asked for: their concatenation is :func:`predict_rows`' result (the same
    columns and types in every piece), so a writer holds one piece at a time."""
    if rows.height <= ROWS_CHUNK:
        with collector_paused():  # frames and expressions: no reference cycles
            part = _predict_chunk(predictor, rows, with_ttft=with_ttft, with_fit=with_fit)
        yield part
        return
    whole = set(whole_number_columns(numeric_inputs(rows)))
    for start in range(0, rows.height, ROWS_CHUNK):
        with collector_paused():
            part = _predict_chunk(
                predictor, rows.slice(start, ROWS_CHUNK), with_ttft=with_ttft, with_fit=with_fit
            )
        yield part.with_columns(shown_number(c, c in whole) for c in NUMERIC_COLUMNS)


def csv_piece(chunk: pl.DataFrame, *, header: bool) -> bytes:
    """*chunk* (of :func:`predicted_chunks`) as UTF-8 CSV, every text cell made safe for
    spreadsheets (:func:`~predictors.core.escape.csv_safe_frame`, a per-cell rule, so pieces
    joined are the bytes of the whole frame written at once)."""
    piece = io.BytesIO()
    _write_piece(chunk, piece, header=header)
    return piece.getvalue()


def _write_piece(chunk: pl.DataFrame, sink: BinaryIO, *, header: bool) -> None:
    """:func:`csv_piece`'s bytes written straight into *sink* (no copy in between), header
    names escaped as the cells are (:func:`~predictors.row_header.escaped_header`)."""
    line = row_header.escaped_header(chunk.columns) if header else None
    sink.write(line or b"")
    numbers = numbers_as_text(chunk, (*NUMERIC_COLUMNS, _RATE))  # 8 beside 8.5, not 8.0
    csv_safe_frame(numbers).write_csv(sink, include_header=header and line is None)


def csv_pieces(chunks: Iterable[pl.DataFrame]) -> Iterator[bytes]:
    """*chunks* as the pieces of one CSV (:func:`csv_piece`), the header once."""
    for i, chunk in enumerate(chunks):
        yield csv_piece(chunk, header=i == 0)


def write_csv_chunks(chunks: Iterable[pl.DataFrame], sink: BinaryIO) -> tuple[int, int]:
    """Write *chunks* to *sink* as one CSV (:func:`csv_pieces`); return the number of rows and
    of rows with an error."""
    n_rows = n_bad = 0
    for i, chunk in enumerate(chunks):
        _write_piece(chunk, sink, header=i == 0)
        n_rows += chunk.height
        n_bad += int((chunk["error"] != "").sum())
    return n_rows, n_bad


def _predict_chunk(
    predictor: Predictor,
    rows: pl.DataFrame,
    *,
    with_ttft: bool,
    with_fit: bool,
) -> pl.DataFrame:
    ragged = rows[RAGGED_COLUMN] if RAGGED_COLUMN in rows.columns else None
    rows = rows.drop(RAGGED_COLUMN) if ragged is not None else rows
    rate = _rates(rows)
    position = rows.columns.index(_RATE) if _RATE in rows.columns else None
    batch_rows = rows.drop(_RATE) if position is not None else rows
    # inputs named like an output are replaced by it (the CLI refuses them in its header)
    replaced = {
        *LOAD_COLUMNS,
        *IDENTITY_COLUMNS,
        *(TTFT_COLUMNS if with_ttft else ()),
        *(FIT_COLUMNS if with_fit else ()),
    }
    given = batch_rows.drop([c for c in batch_rows.columns if c in replaced])
    batch_rows = at_batch_one(given, rate)  # a rate row's batch_size is ignored
    out = predictor.predict(batch_rows, with_ttft=with_ttft, with_fit=with_fit)
    out = without_unused_precision(shown_as_given(out, given, rate), given, predictor.catalog)
    stated_tp = tensor_parallel_errors(rows, out["tensor_parallel"])
    out = _with_row_errors(out, stated_tp != "", pl.lit(stated_tp))
    n_inputs = out.width - len(PREDICTION_COLUMNS) - len(TTFT_COLUMNS) * with_ttft
    n_inputs -= len(FIT_COLUMNS) * with_fit + len(LAYOUT_OUTPUT_COLUMNS)
    inputs = out.columns[:n_inputs]
    # the rate's place among the inputs written back (not the layouts: resolved, at the end)
    kept = set(inputs)
    where = n_inputs if position is None else sum(c in kept for c in rows.columns[:position])
    held = rate.is_finite() & (rate.abs() < EXACT_BELOW)  # else empty, as shown_number does
    shown = pl.when(held).then(rate).otherwise(None).alias(_RATE)
    out = out.with_columns(shown).select(
        *inputs[:where], _RATE, *inputs[where:], *out.columns[n_inputs:]
    )
    out = _with_given_values(_with_rate_errors(out, rate), rows)
    out = _with_control_errors(out, rows, predictor)
    if ragged is not None:
        out = _with_row_errors(out, ragged.is_not_null(), pl.lit(ragged_errors(ragged)))
    result = out.select(
        *PREDICTION_COLUMNS, *(pl.lit(None, dtype=pl.Float64).alias(c) for c in LOAD_COLUMNS)
    )
    had_error = result["error"].fill_null("") != ""
    if rate.is_not_null().any():
        # the precision the at-batch rows were predicted at (the checkpoint's when empty)
        implied = fill_implied_precision(batch_rows, predictor.catalog)
        normalised = normalise_rows(implied).with_columns(rate)
        ttft = out.select(TTFT_COLUMNS) if with_ttft else None
        result, ttft = at_load(predictor, normalised, result, ttft)
        out = out.with_columns(ttft.get_columns()) if ttft is not None else out
    extras = [*(TTFT_COLUMNS if with_ttft else ()), *(FIT_COLUMNS if with_fit else ())]
    tail = out.select(*LAYOUT_OUTPUT_COLUMNS, *extras)
    failed = result["error"].fill_null("") != ""  # a rate one replica cannot carry, too
    if failed.any():  # as every other row with an error (_with_row_errors)
        blank = [c for c in (*LAYOUT_OUTPUT_COLUMNS, *TTFT_COLUMNS) if c in tail.columns]
        tail = tail.with_columns(
            pl.when(pl.lit(failed)).then(None).otherwise(pl.col(c)).alias(c) for c in blank
        )
        result = result.with_columns(
            *(
                pl.when(pl.lit(failed)).then(False).otherwise(pl.col(c)).alias(c)
                for c in ("in_domain", "gpu_measured")
            ),
            pl.when(pl.lit(failed & ~had_error))  # a rate one replica cannot carry
            .then(pl.lit(INVALID_ROW))
            .otherwise(pl.col("domain_reason"))
            .alias("domain_reason"),
        )
    identity = identity_columns(
        predictor.catalog,
        rows,
        str(predictor.card.get("reference_source") or ""),
        rate.is_not_null(),
        result["error"].fill_null("") == "",
    )
    return pl.concat(
        [
            out.select(*inputs[:where], _RATE, *inputs[where:]),
            result,
            stated_layout_on_errors(
                tail.select(*LAYOUT_OUTPUT_COLUMNS), rows, result["error"].fill_null("") != ""
            ),
            identity,
            tail.select(extras),
        ],
        how="horizontal",
    )
