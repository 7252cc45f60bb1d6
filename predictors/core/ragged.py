"""A CSV with a malformed line: that line is refused, not the file.

polars refuses a whole file for one line with more cells than its header ("found more fields
than defined in 'Schema'"), one cell with a stray quote (``"a"b``: "not properly escaped") or,
in a measurement file, one byte that is not UTF-8, so 10,000 good rows were lost to one line.
:func:`read_records` reads such a file line by line with Python's csv reader (quotes and quoted
line breaks kept) and gives each record its problem, if any (:class:`Records`):

- more cells than the header: read to the header's width (an unquoted comma in a cell?);
- a stray quote (a quote after a closing quote, ``"a"b``): read as Python's csv reads it (``ab``);
- bytes that are not UTF-8 (when *bad_bytes* allows them): written as U+FFFD.

A line with fewer cells than the header is read with the missing cells empty, and a blank line
as a record of empty cells, as polars reads them. Only a quote that opens and is never closed
refuses the file: the rest of the file would be one cell (the error names the line it opens on).

:func:`read_rows_text` is the batch predictor's reader: polars, and this reader where the file
holds a quote or a header that is not UTF-8 (polars may read those otherwise than Python's csv)
or polars refuses the file for one of those lines; each such row carries its one-line error in
:data:`RAGGED_COLUMN`, which the batch predictor turns into that row's error
(:func:`ragged_errors`) and never writes.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from predictors.core.errors import WattgpuError

#: The hidden column that holds the error of a malformed line (its line number and the fix).
RAGGED_COLUMN = "__wattgpu_line_with_more_cells"
#: What polars says of the lines :func:`read_records` reads one by one.
_POLARS_LINE_ERRORS = ("more fields", "not properly escaped", "invalid utf-8")
#: The fixes, appended to each problem.
QUOTE_FIX = 'quote the whole cell and write each quote inside it twice ("a""b")'
COMMA_FIX = 'its extra cells were not read — quote that cell ("a, b")'
BYTES_FIX = "save the file as UTF-8"


@dataclass(frozen=True)
class Records:
    """A CSV read line by line: the header, every record as text cells (``None`` where empty,
    as many as the header), the line each record starts on, and each record's problem (``None``
    where it was read as written)."""

    header: list[str]
    rows: list[list[str | None]]
    lines: list[int]
    problems: list[str | None]

    def frame(self) -> pl.DataFrame:
        """The records as a frame of text columns named by the header."""
        columns = {name: [row[i] for row in self.rows] for i, name in enumerate(self.header)}
        return pl.DataFrame(columns, schema=dict.fromkeys(self.header, pl.String))


class _Lines:
    """The physical lines of a text (ending in ``\\n``, as polars counts them), keeping the ones
    the csv reader has taken for the record it is reading (:attr:`taken`)."""

    def __init__(self, text: str) -> None:
        self._lines: Iterator[str] = iter(io.StringIO(text, newline="\n"))
        self.taken: list[str] = []

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        self.taken.append(line)
        return line


def stray_quote_column(raw: str) -> int | None:
    """The index of the cell of one CSV record *raw* that has a character after its closing
    quote (``"a"b``), or None."""
    column, start, quoted, closed = 0, True, False, False
    for char in raw:
        if quoted:
            quoted, closed = char != '"', char == '"'
        elif closed and char == '"':  # a doubled quote inside a quoted cell
            quoted, closed = True, False
        elif char == ",":
            column, start, closed = column + 1, True, False
        elif closed and char not in "\r\n":
            return column
        elif start and char == '"':
            quoted, start = True, False
        else:
            start = False
    return None


#: A byte that is not UTF-8, as :meth:`bytes.decode` with ``surrogateescape`` keeps it.
_BAD_BYTE = re.compile("[\udc80-\udcff]")


def _clean(cell: str) -> str:
    """*cell* with each byte that is not UTF-8 as U+FFFD."""
    return cell.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _bad_bytes(cells: list[str], header: list[str]) -> str | None:
    for i, cell in enumerate(cells):
        bad = _BAD_BYTE.search(cell)
        if bad is not None:
            name = header[i] if i < len(header) else f"cell {i + 1}"
            byte = ord(bad.group()) - 0xDC00
            return f"not UTF-8 text (byte 0x{byte:02x} in column {name!r}); {BYTES_FIX}"
    return None


def _misread(error: str, raw: str, header: list[str], start: int) -> tuple[list[str], str]:
    """The cells and the problem of a record *raw* (from line *start*) that the strict csv
    reader refused with *error*: a stray quote (or a quote closed lines later, by the next
    line's), a carriage return that does not end the line (no cell is over the csv module's
    size limit: :func:`read_records` raises it to the text's length)."""
    lone_cr = "new-line character" in error
    text = raw.replace("\r\n", "\n").replace("\r", "") if lone_cr else raw
    cells = next(csv.reader(io.StringIO(text, newline="")), [])
    if lone_cr:
        return cells, "a carriage return inside the line; end lines with LF or CRLF only"
    column = stray_quote_column(raw)
    cell = f"column {header[column]!r}" if column is not None and column < len(header) else ""
    end = start + raw.count("\n", 0, len(raw.rstrip("\r\n")))
    if end > start:  # the quote was not closed on its line: the next line's closed it
        return cells, (
            f"a quote in {cell or 'a cell'} is not closed on its line (lines {start}-{end} read "
            "as one); close it"
        )
    return cells, f"a stray quote in {cell or 'a cell'} (text after its closing quote); {QUOTE_FIX}"


def read_records(path: Path, *, bad_bytes: bool = False) -> Records:
    """*path* read line by line (module doc). A :class:`WattgpuError` naming the line (no path)
    when a quote is never closed, the header cannot be read, or (without *bad_bytes*) the file
    is not UTF-8."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig", "surrogateescape" if bad_bytes else "strict")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise WattgpuError(
            f"line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); {BYTES_FIX}"
        ) from None
    has_bad = _BAD_BYTE.search(text) is not None
    limit = csv.field_size_limit(max(len(text), csv.field_size_limit()))  # any cell polars reads
    try:
        return _records(text, has_bad)
    finally:
        csv.field_size_limit(limit)


def _records(text: str, has_bad: bool) -> Records:
    """The records of the decoded *text* (:func:`read_records`)."""
    lines = _Lines(text)
    reader = csv.reader(lines, strict=True)
    header: list[str] | None = None
    out = Records([], [], [], [])
    while True:
        start, lines.taken = reader.line_num + 1, []
        try:
            cells = next(reader)
            problem = None
        except StopIteration:
            break
        except csv.Error as exc:
            raw = "".join(lines.taken)
            if "unexpected end of data" in str(exc):
                raise WattgpuError(
                    f"line {start}: a quote opens a cell and is never closed, so the rest of "
                    'the file would be that cell; close the quote (a quote inside a cell is "")'
                ) from None
            cells, problem = _misread(str(exc), raw, header or [], start)
        if header is None:
            if problem is not None or not cells:
                why = problem or "it is blank"
                raise WattgpuError(f"line {start}: the header line cannot be read: {why}")
            header = [_clean(c) for c in cells]
            problem = _bad_bytes(cells, []) if has_bad else None
            if problem is not None:
                raise WattgpuError(f"line {start}: the header line is {problem}")
            continue
        if problem is None and len(cells) > len(header):
            problem = f"more cells than the header (an unquoted comma in a cell?); {COMMA_FIX}"
        if has_bad:
            problem = problem or _bad_bytes(cells, header)
            cells = [_clean(c) for c in cells]
        row = [c or None for c in cells[: len(header)]]
        out.rows.append(row + [None] * (len(header) - len(row)))
        out.lines.append(start)
        out.problems.append(problem)
    if header is None:
        raise WattgpuError("line 1: no header line (the file is empty)")
    return Records(header, out.rows, out.lines, out.problems)


def needs_line_reader(path: Path) -> bool:
    """Whether polars may read *path* otherwise than Python's csv (fuzz round 33), so that
    :func:`read_records` reads it: a quote anywhere (polars reads one inside an unquoted cell,
    ``12" panel``, as opening a quoted cell, which can swallow the rest of the file without an
    error, and keeps a header name's doubled quotes) or a header line that is not UTF-8
    (polars decodes it lossily)."""
    with path.open("rb") as f:
        head = f.readline()
        try:
            head.decode("utf-8-sig")
        except UnicodeDecodeError:
            return True
        if b'"' in head:
            return True
        while chunk := f.read(1 << 24):
            if b'"' in chunk:
                return True
    return False


def read_rows_text(path: Path, where: str | None = None) -> pl.DataFrame:
    """*path* read with every column as text (by polars, or by :func:`read_records` where the file
    holds a quote or its header is not UTF-8); a malformed line (module doc) is read as well as
    it can be, its error in :data:`RAGGED_COLUMN`. polars' error when it fails for another
    reason; a :class:`WattgpuError` starting with *where* (default: the path) when a quote is
    never closed."""
    if not needs_line_reader(path):
        try:
            return pl.read_csv(path, infer_schema=False)
        except pl.exceptions.PolarsError as exc:
            if not any(e in str(exc) for e in _POLARS_LINE_ERRORS):
                raise
    try:
        records = read_records(path)
    except WattgpuError as exc:
        raise WattgpuError(f"{where or path}: {exc}") from None
    flags = [
        None if p is None else f"line {line}: {p}"
        for line, p in zip(records.lines, records.problems, strict=True)
    ]
    return records.frame().with_columns(pl.Series(RAGGED_COLUMN, flags, dtype=pl.String))


def read_whole_or_problem(path: Path) -> pl.DataFrame | tuple[int | None, str]:
    """*path* read by :func:`read_records` as text columns, or, for a file that must be read
    whole (a catalog), the first malformed line and its problem ('what; fix'), the line None
    where the file as a whole cannot be read."""
    try:
        records = read_records(path)
    except WattgpuError as exc:
        found = re.match(r"line (\d+): (.*)", str(exc))
        return (int(found[1]), found[2]) if found else (None, str(exc))
    for line, why in zip(records.lines, records.problems, strict=True):
        if why is not None:
            return line, why
    return records.frame()


def ragged_errors(flags: pl.Series) -> pl.Series:
    """The error of each flagged row ('' elsewhere)."""
    return flags.fill_null("").alias("error")
