"""A rows CSV with a line of more cells than its header (an unquoted comma in a note): that row
is refused, not the file.

polars refuses the whole file ("found more fields than defined in 'Schema'"), so 10,000 good
rows were lost to one line. :func:`read_rows_text` reads such a file to the header's width and
flags each longer line in :data:`RAGGED_COLUMN` (its line number, as text); the batch predictor
turns the flag into that row's error (:func:`ragged_errors`) and never writes the column.
A line with fewer cells than the header is read with the missing cells empty, as before.
"""

from __future__ import annotations

import csv
from pathlib import Path

import polars as pl

from predictors.core.errors import WattgpuError

#: The hidden column that flags a line with more cells than the header (its line number).
RAGGED_COLUMN = "__wattgpu_line_with_more_cells"


def _longer_lines(path: Path) -> tuple[list[int], list[int], int]:
    """(indices of the data records with more cells than the header, their line numbers, the
    number of data records), by Python's csv reader (quotes and embedded line breaks kept)."""
    index, lines, records = [], [], 0
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh)
        width = len(next(reader, []))
        for record in reader:
            if len(record) > width:
                index.append(records)
                lines.append(reader.line_num)
            records += 1
    return index, lines, records


def read_rows_text(path: Path) -> pl.DataFrame:
    """*path* read with every column as text, lines of more cells than the header flagged in
    :data:`RAGGED_COLUMN` (module doc); polars' error when it fails for another reason."""
    try:
        return pl.read_csv(path, infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        if "more fields" not in str(exc):
            raise
    index, lines, records = _longer_lines(path)
    rows = pl.read_csv(path, infer_schema=False, truncate_ragged_lines=True)
    if not index or rows.height != records:  # the two readers disagree: name the first line
        first = f"line {lines[0]}" if lines else "a line"
        raise WattgpuError(
            f"{path}: {first} has more cells than the header (an unquoted comma in a cell?); "
            'quote that cell ("a, b")'
        )
    flag: list[str | None] = [None] * rows.height
    for i, line in zip(index, lines, strict=True):
        flag[i] = str(line)
    return rows.with_columns(pl.Series(RAGGED_COLUMN, flag, dtype=pl.String))


def ragged_errors(flags: pl.Series) -> pl.Series:
    """The error of each flagged row ('' elsewhere)."""
    return (
        pl.select(
            pl.when(flags.is_not_null())
            .then(
                pl.format(
                    "line {}: more cells than the header (an unquoted comma in a cell?); its "
                    'extra cells were not read — quote that cell ("a, b")',
                    flags,
                )
            )
            .otherwise(pl.lit(""))
        )
        .to_series()
        .alias("error")
    )
