"""Check the text of a CSV file a user gives before and after a parser reads it.

A CSV parser handed UTF-16 (or UTF-32) text, or text whose lines end with a bare carriage return
(old Mac), reads one garbled header column and no rows, so the error it leads to (a missing
column) hides the real problem: :func:`text_problem` names it from the file's first bytes
(:func:`csv_head_problem` reads them). A UTF-8 byte-order mark is fine, and so are LF and CRLF.

A control character (Unicode category Cc: C0, DEL and C1, tab excepted) has no place in a CSV
cell or column name: a NUL copied to an output CSV truncates the cell for many readers, others
are invisible in a terminal. :func:`control_in_names` finds one in a header (the file is
refused); :func:`control_cell_errors` names, per row and at polars speed, the text columns whose
cell holds one (the row is refused); :func:`without_controls` replaces them in what is written.

:func:`duplicate_csv_columns` names the columns a header states twice (polars would read only
the first), :func:`header_names_problem` also two or more columns without a name;
:func:`longer_record` finds the first line with more fields than the header (polars
names no line). :func:`numbers_as_text` writes number cells one by one.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # polars is imported by the functions that use it: safe_read imports this
    import polars as pl

#: Bytes of a CSV's first line read to check its header (a longer header is not checked here).
HEADER_BYTES_MAX = 1 << 20
#: A control character (Cc) other than tab, as a regular expression (Python's and polars').
CONTROL_PATTERN = r"[\x00-\x08\x0A-\x1F\x7F-\x9F]"
#: What :func:`without_controls` writes in place of a control character.
REPLACEMENT = "\ufffd"
#: Byte-order marks of the wide encodings, the four-byte ones first (``FF FE 00 00`` starts
#: with the UTF-16 little-endian mark).
_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
#: Which of each four bytes are NUL in ASCII text in a wide encoding without a byte-order mark.
_NUL_LANES = (
    ((False, True, True, True), "UTF-32", "little-endian"),
    ((True, True, True, False), "UTF-32", "big-endian"),
    ((False, True, False, True), "UTF-16", "little-endian"),
    ((True, False, True, False), "UTF-16", "big-endian"),
)
#: Bytes looked at to recognise a wide encoding without a byte-order mark.
_SAMPLE_BYTES = 256


class Problem(NamedTuple):
    """What is wrong with a CSV file and how to fix it (``str()``: ``what; fix``)."""

    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.what}; {self.fix}"


def wide_encoding(head: bytes) -> str | None:
    """``UTF-16 text (byte-order mark FF FE)`` and the like when *head* (a file's first bytes)
    is UTF-16 or UTF-32, with or without a byte-order mark; None otherwise. Without a mark the
    pattern of NUL bytes tells it: ASCII text (a header) in UTF-16 has one in every other byte."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return f"{name} text (byte-order mark {bom.hex(' ').upper()})"
    sample = head[: min(len(head), _SAMPLE_BYTES) // 4 * 4]
    if b"\0" not in sample:
        return None
    quads = len(sample) // 4
    share = [sample[lane::4].count(0) / quads for lane in range(4)]
    for lanes, name, order in _NUL_LANES:
        if all(s >= 0.75 if nul else s <= 0.25 for s, nul in zip(share, lanes, strict=True)):
            return f"{name} text ({order}, no byte-order mark)"
    return None


def wide_problem(head: bytes) -> Problem | None:
    """``is UTF-16 text (…)`` / ``save it as UTF-8`` when a file starting with *head* is in a
    wide encoding (:func:`wide_encoding`); None otherwise. The scenario and overlay reader says
    it too (:func:`predictors.core.safe_read.decode_utf8`): ASCII in UTF-16 without a
    byte-order mark decodes as UTF-8 text full of NULs."""
    wide = wide_encoding(head)
    return None if wide is None else Problem(f"is {wide}", "save it as UTF-8")


def text_problem(head: bytes) -> Problem | None:
    """Why a CSV file starting with *head* cannot be read as UTF-8 text with LF or CRLF line
    ends (None when it can): UTF-16/UTF-32 text, or a carriage return inside the first line
    (lines ended by a bare CR; a CR right before the LF, or at the very end, is fine)."""
    wide = wide_problem(head)
    if wide is not None:
        return wide
    end = head.find(b"\n")
    first = head if end < 0 else head[:end]
    if b"\r" in first[:-1]:
        return Problem(
            "lines end with a bare carriage return (CR)", "save it with LF or CRLF line ends"
        )
    return None


def _head(path: Path, size: int = HEADER_BYTES_MAX) -> bytes:
    with path.open("rb") as fh:
        return fh.read(size)


def csv_head_problem(path: Path) -> Problem | None:
    """:func:`text_problem` of the first bytes of *path* (a regular file), or why it cannot be
    opened."""
    try:
        head = _head(path)
    except OSError as exc:
        return Problem(f"cannot read ({exc.strerror or exc})", "check the path")
    return text_problem(head)


def code_point(text: str) -> str:
    """``U+0000``-style name of the first control character in *text* (``?`` when none)."""
    found = re.search(CONTROL_PATTERN, text)
    return f"U+{ord(found.group()):04X}" if found else "?"


def control_in_names(names: list[str]) -> Problem | None:
    """The first column name in *names* that holds a control character, as a problem."""
    from predictors.core.escape import short_repr

    for name in names:
        point = code_point(name)
        if point != "?":
            return Problem(
                f"header column {short_repr(name, 60)} holds a control character ({point})",
                "remove it",
            )
    return None


def _text_columns(frame: pl.DataFrame) -> list[str]:
    import polars as pl

    return [name for name, dtype in frame.schema.items() if dtype == pl.String]


def control_columns(frame: pl.DataFrame) -> list[str]:
    """The text columns of *frame* with a control character in some cell (one vectorised scan
    per column)."""
    import polars as pl

    columns = _text_columns(frame)
    if not columns:
        return []
    found = frame.select(pl.col(columns).str.contains(CONTROL_PATTERN).any())
    return [name for name in columns if found[name][0]]


def control_cell_errors(frame: pl.DataFrame, columns: list[str]) -> pl.Series:
    """Per row of *frame*, ``note: holds a control character (U+0000)`` for each of *columns*
    (text columns: :func:`control_columns`) whose cell holds one, joined by ``; ``; empty where
    none does. Computed by polars string expressions, no Python loop over cells."""
    import polars as pl

    parts = []
    for name in columns:
        col = pl.col(name)
        # the first control character's UTF-8 bytes in hex: its last two digits are its code
        # point (C0 and DEL are one byte, C1 is C2 80 to C2 9F)
        hex_digits = col.str.extract(f"({CONTROL_PATTERN})", 1).str.encode("hex")
        code = hex_digits.str.slice(-2).str.to_uppercase()
        parts.append(
            pl.when(col.str.contains(CONTROL_PATTERN)).then(
                pl.lit(f"{name}: holds a control character (U+00") + code + pl.lit(")")
            )
        )
    if not parts:
        return pl.Series("error", [""] * frame.height, dtype=pl.String)
    return frame.select(
        pl.concat_str(parts, separator="; ", ignore_nulls=True).fill_null("").alias("error")
    ).to_series()


def without_controls(frame: pl.DataFrame) -> pl.DataFrame:
    """*frame* with every control character (tab excepted) of its text columns replaced by
    U+FFFD, so none is copied into an output."""
    import polars as pl

    columns = control_columns(frame)
    if not columns:
        return frame
    return frame.with_columns(
        pl.col(columns).str.replace_all(CONTROL_PATTERN, REPLACEMENT, literal=False)
    )


def csv_header(path: Path) -> list[str]:
    """The names of CSV *path*'s header line (its first line; a quoted line break is not
    followed); empty when it cannot be read (the reader then gives its own error)."""
    try:
        first = _head(path).split(b"\n", 1)[0]
        return next(csv.reader([first.decode("utf-8-sig").rstrip("\r")]), [])
    except (OSError, UnicodeDecodeError, csv.Error):  # csv.Error: a name over its field limit
        return []


def duplicate_csv_columns(path: Path) -> list[str]:
    """Column names that the header line of CSV *path* states more than once, in order of first
    appearance (polars would rename the later ones ``NAME_duplicated_N`` and read the first:
    a value silently ignored). Empty when there are none or the header cannot be read (the
    reader then gives its own error)."""
    names = csv_header(path)
    seen: set[str] = set()
    twice: list[str] = []
    for name in names:
        if name in seen and name not in twice:
            twice.append(name)
        seen.add(name)
    return twice


#: Positions of unnamed columns a header problem lists (a longer list ends with how many more).
_UNNAMED_SHOWN = 5


def header_names_problem(path: Path) -> Problem | None:
    """Why the header line of CSV *path* cannot name its columns one by one (None when it can, or
    cannot be read: the reader then gives its own error): two or more columns without a name
    (a spreadsheet's empty trailing columns, ``a,b,,``; polars would call them ``""``,
    ``_duplicated_0``, … and which is which could not be written back), then a name stated twice
    (:func:`duplicate_csv_columns`). One unnamed column is named: by its empty name."""
    unnamed = [i for i, name in enumerate(csv_header(path), 1) if name == ""]
    if len(unnamed) > 1:
        shown = [str(i) for i in unnamed[:_UNNAMED_SHOWN]]
        more = len(unnamed) - len(shown)
        last = f"{more} more" if more else shown.pop()
        return Problem(
            f"columns {', '.join(shown)} and {last} have no name in the header",
            "give each a name, or delete them if they are empty (spreadsheets save empty "
            "columns as trailing commas)",
        )
    twice = duplicate_csv_columns(path)
    if twice:
        return Problem(
            f"column(s) {', '.join(map(repr, twice))} appear more than once in the header",
            "keep one of each",
        )
    return None


def longer_record(path: Path) -> tuple[int, int, int] | None:
    """(line number, fields, header columns) of the first record of CSV *path* with more fields
    than its header, by Python's csv reader (quoted line breaks kept); None when there is none
    or the file cannot be read so."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            width = len(next(reader, []))
            for record in reader:
                if len(record) > width:
                    return reader.line_num, len(record), width
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    return None


def numbers_as_text(frame: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    """*frame* with each of its number *columns* as text, cell by cell, for writing: a whole
    value as an integer (``8``, never ``8.0`` because another row holds ``8.5``), any other as
    the float it is, empty where none: how one cell is written never depends on the others."""
    import polars as pl

    exprs = []
    for name in (c for c, t in frame.schema.items() if c in columns and t.is_numeric()):
        value = pl.col(name).cast(pl.Float64)
        whole = value.is_finite() & (value == value.floor()) & (value.abs() < 2**53)
        exprs.append(
            pl.when(whole)
            .then(value.cast(pl.Int64).cast(pl.String))
            .otherwise(value.cast(pl.String))
            .alias(name)
        )
    return frame.with_columns(exprs) if exprs else frame
