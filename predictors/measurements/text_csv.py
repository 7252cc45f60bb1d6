"""Read a CSV measurement source (Watt Counts, aiconfigurator) as text columns, line by line
where a line is malformed (:func:`read_text_csv`, :func:`text_lines`).

A file that is no UTF-8 text with LF or CRLF line ends is refused in one line naming the fix
(:func:`text_problem`): read as UTF-8, a file whose lines end with a bare carriage return (old
Mac) is one line, whose cells polars takes for header names (a duplicate column, or a column it
lacks, named before), and UTF-16 or UTF-32 text is one garbled column.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from predictors.core.csv_text import csv_head_problem
from predictors.core.errors import DataError, WattgpuError
from predictors.core.ragged import read_records


def text_problem(path: Path) -> DataError | None:
    """A :class:`DataError` naming *path*, what is wrong and the fix when it is no UTF-8 text
    with LF or CRLF line ends (the message ``predict --input`` gives: ``lines end with a bare
    carriage return (CR); save it with LF or CRLF line ends``); None when it is."""
    problem = csv_head_problem(path)
    return None if problem is None else DataError(f"{path}: {problem}")


#: Hidden columns of :func:`read_text_csv` when it read a file line by line: each record's line
#: and its problem (None: read as written); :func:`text_lines` takes them out.
LINE_COLUMN, PROBLEM_COLUMN = "__wattgpu_line", "__wattgpu_problem"


def read_text_csv(path: Path) -> pl.DataFrame:
    """A source CSV as text columns. A malformed line (more cells than the header, a stray
    quote, a byte that is not UTF-8) is its own problem, never the file's
    (:func:`predictors.core.ragged.read_records`; :func:`text_lines` gives each line's); a
    :class:`DataError` naming the file and the line only when nothing can be read: a quote
    never closed, no header line, or a column named twice in it, and :func:`text_problem`."""
    refused = text_problem(path)
    if refused is not None:
        raise refused
    try:
        raw = pl.read_csv(path, infer_schema_length=0)
    except (pl.exceptions.PolarsError, UnicodeDecodeError):
        pass  # a malformed line: read line by line
    else:  # polars reads the first of two columns of one name, the second as NAME_duplicated_N
        twice = [m[1] for c in raw.columns if (m := _DUPLICATE.match(c)) and m[1] in raw.columns]
        if twice:
            raise DataError(f"{path}: {_twice(twice)}")
        return raw
    try:
        records = read_records(path, bad_bytes=True)
    except (WattgpuError, OSError) as exc:
        raise DataError(f"{path}: cannot read as CSV: {exc}") from None
    twice = [c for i, c in enumerate(records.header) if c in records.header[:i]]
    if twice:
        raise DataError(f"{path}: {_twice(twice)}")
    return records.frame().with_columns(
        pl.Series(LINE_COLUMN, records.lines, dtype=pl.Int64),
        pl.Series(PROBLEM_COLUMN, records.problems, dtype=pl.String),
    )


_DUPLICATE = re.compile(r"^(.*)_duplicated_\d+$", re.DOTALL)


def _twice(names: list[str]) -> str:
    return (
        f"column(s) {', '.join(map(repr, dict.fromkeys(names)))} appear more than once in the "
        "header (which one holds the values is not known); keep one of each"
    )


def text_lines(raw: pl.DataFrame) -> Iterator[tuple[int, dict[str, Any], str | None]]:
    """(line number, cells by column, problem or None) of each record of a
    :func:`read_text_csv` frame (line = record index + 2 when it was read whole)."""
    for i, cells in enumerate(raw.iter_rows(named=True)):
        line = cells.pop(LINE_COLUMN, None)
        yield (i + 2 if line is None else line), cells, cells.pop(PROBLEM_COLUMN, None)
