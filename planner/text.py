"""Format-neutral tables and their text forms: rich, plain text, Markdown, CSV and JSON.

A :class:`Section` is a titled table (or key/value lines, or a list of notes) of already
formatted cells; :func:`sections_to_rich`, :func:`sections_to_text` and
:func:`sections_to_markdown` print the same sections as rich tables, plain text or Markdown, so
every command shows the same numbers in every format. :func:`num` and :func:`pct` format numbers
for people; :func:`to_json` and :func:`rows_to_csv` write machine-readable forms that never
contain NaN or Infinity. Used by :mod:`planner.report.plan_view` (plans),
:mod:`planner.analysis.compare` and the report commands.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from predictors.core.escape import csv_cell, md_text, terminal_text

if TYPE_CHECKING:
    from rich.console import Console

#: Width of a table rendered to a file (no terminal to measure).
FILE_WIDTH = 140
#: Width of the compact (default) plan table printed to a pipe or file.
COMPACT_WIDTH = 100
#: Magnitudes below this are solver round-off and shown as 0 (e.g. the load of an idle replica).
ZERO_BELOW = 1e-9


@dataclass(frozen=True)
class Section:
    """One titled table (or a titled list of lines when ``columns`` is empty)."""

    title: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    numeric: frozenset[int] = frozenset()
    """Indexes of right-aligned (numeric) columns."""
    notes: tuple[str, ...] = ()
    """Lines printed under the table (or the body of a column-less section)."""
    footer: tuple[str, ...] | None = None
    """A totals row, set apart from the body."""
    style: str = ""
    """Rich style of the title (e.g. ``red`` for an infeasible plan)."""
    lines: tuple[tuple[str, str], ...] = field(default=())
    """Key/value lines (header sections)."""
    whole: frozenset[int] = frozenset()
    """Indexes of columns a narrow table never wraps or cuts (ids: two GPUs cut to
    ``A100-SXM4…`` read the same); the others give way."""


def numbers_whole(section: Section, wraps: Collection[str] = ()) -> Section:
    """*section* with its numeric columns :attr:`~Section.whole`, but those named in *wraps*
    (layouts such as ``P 1×4 → D 1×8``, which wrap at spaces)."""
    keep = {k for k in section.numeric if section.columns[k] not in wraps}
    return replace(section, whole=section.whole | frozenset(keep))


# --- numbers -------------------------------------------------------------------------------------


def num(value: float | None, unit: str = "") -> str:
    """A readable number: thousands separators from 100 on, 2-3 significant digits below;
    magnitudes below :data:`ZERO_BELOW` are shown as 0."""
    if value is None or not math.isfinite(value):
        return "—"
    a = abs(value)
    if a < ZERO_BELOW:
        value = a = 0.0
    if a >= 100 or a == 0:
        text = f"{value:,.0f}"
    elif a >= 10:
        text = f"{value:.1f}"
    elif a >= 1:
        text = f"{value:.2f}"
    elif a >= 0.1:
        text = f"{value:.2f}"
    elif a >= 0.01:
        text = f"{value:.2g}"
    else:
        text = f"{value:.2g}"
    return f"{text} {unit}".rstrip()


def given(value: float | None, unit: str = "") -> str:
    """A number the user gave (a horizon, a PUE, a price): every digit it was given, with
    thousands separators (12.25 h, PUE 1.125), where :func:`num` rounds what wattgpu computed
    (fuzz round 31: a 12.25 h horizon read "12.2 h", PUE 1.125 "1.12")."""
    if value is None or not math.isfinite(value):
        return num(value, unit)
    return f"{value:,.12g} {unit}".rstrip()


def apart(need: float, limit: float, decimals: int = 1) -> tuple[str, str]:
    """*need* and *limit* with thousands separators, at least *decimals* decimals and two
    significant digits, and more (up to 6 past the larger's first) until they read apart, so a
    message never reads "needs 0.1 kW, cap is 0.1 kW" for 0.097 against 0.05."""
    small = min((abs(v) for v in (need, limit) if v != 0), default=1.0)
    digits = max(decimals, min(12, 1 - math.floor(math.log10(small))))
    most = max(digits, 6 - math.floor(math.log10(max(abs(need), abs(limit), small))))
    while need != limit and digits < most and f"{need:,.{digits}f}" == f"{limit:,.{digits}f}":
        digits += 1
    return f"{need:,.{digits}f}", f"{limit:,.{digits}f}"


def kw_apart(need: float, cap: float) -> tuple[str, str]:
    """*need* and *cap* kW as :func:`apart` writes them, but a positive cap that
    would read 0 (``0.000000000000`` for 1e-300) with its significant digits (``1e-300``), the
    need then as it reads on its own (``0.081``)."""
    drawn, shown = apart(need, cap)
    if cap == 0 or float(shown.replace(",", "")) != 0:
        return drawn, shown
    drawn = apart(need, need)[0]
    return (drawn if float(drawn.replace(",", "")) else f"{need:.3g}"), f"{cap:.3g}"


def pct(value: float | None) -> str:
    """``12.3 %`` or ``—``."""
    return "—" if value is None or not math.isfinite(value) else f"{value:.1f} %"


def json_safe(value: Any) -> Any:
    """*value* with every non-finite float replaced by None (JSON has no NaN/Infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def to_json(value: Any, *, expand_depth: int | None = None) -> str:
    """Indented JSON (keys in insertion order), never NaN or Infinity (they become null).

    *expand_depth* None indents every level. Otherwise objects and arrays are spread over lines
    down to that depth and written on one line below it, so a long list of records is one
    record per line (:func:`records_json`); the values are the same either way.
    """
    if expand_depth is None:
        return json.dumps(json_safe(value), indent=2, sort_keys=False, allow_nan=False) + "\n"
    out: list[str] = []
    _write(value, 0, expand_depth, out)
    out.append("\n")
    return "".join(out)


def _inline(value: Any) -> str:
    """One line of JSON, by the C encoder (non-finite numbers -> null)."""
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError:  # a NaN or an Infinity somewhere below: replace, then encode
        return json.dumps(json_safe(value), allow_nan=False)


def _write(value: Any, depth: int, expand_depth: int, out: list[str]) -> None:
    container = isinstance(value, dict | list | tuple)
    if depth >= expand_depth or not container or not value:
        out.append(_inline(value))
        return
    pad = "\n" + "  " * (depth + 1)
    if isinstance(value, dict):
        out.append("{")
        for k, (key, item) in enumerate(value.items()):
            out.append(("," if k else "") + pad + json.dumps(str(key)) + ": ")
            _write(item, depth + 1, expand_depth, out)
        out.append("\n" + "  " * depth + "}")
        return
    out.append("[")
    for k, item in enumerate(value):
        out.append(("," if k else "") + pad)
        _write(item, depth + 1, expand_depth, out)
    out.append("\n" + "  " * depth + "]")


def records_json(value: Any) -> str:
    """JSON of a document with long lists of records (a plan): its top-level keys and their
    direct members on their own lines, each member (a candidate, an allocation) on one line.
    Much faster and smaller than indenting every level, and one record per line diffs well."""
    return to_json(value, expand_depth=2)


def sections_to_rich(sections: Sequence[Section], console: Console) -> None:
    """Print *sections* as rich tables on *console*."""
    from rich.table import Table
    from rich.text import Text

    def safe(cell: str) -> Text:  # user strings: no markup, no escape sequences
        return Text(terminal_text(cell))

    for section in sections:
        title = Text(terminal_text(section.title), style=f"bold {section.style}".strip())
        if section.lines:
            grid = Table.grid(padding=(0, 2))
            grid.add_column(style="bold")
            grid.add_column()
            for key, value in section.lines:
                grid.add_row(safe(key), safe(value))
            console.print(title)
            console.print(grid)
        elif section.columns:
            table = Table(title=title, title_justify="left", show_footer=section.footer is not None)
            fixed = _wrap_widths(section, console.width) if section.whole else {}
            for k, column in enumerate(section.columns):
                foot = section.footer[k] if section.footer is not None else ""
                widest = max((len(terminal_text(r[k])) for r in section.rows), default=0)
                table.add_column(
                    safe(column),
                    footer=safe(foot),
                    justify="right" if k in section.numeric else "left",
                    no_wrap=k in section.whole,
                    min_width=widest if k in section.whole else None,
                    width=fixed.get(k),
                )
            for row in section.rows:
                table.add_row(*(safe(cell) for cell in row))
            console.print(table)
        else:
            console.print(title)
        for note in section.notes:
            prefix = "  " if section.columns or section.lines else "- "
            console.print(Text(prefix + terminal_text(note)))
        console.print()


def _extents(section: Section) -> tuple[list[int], list[int]]:
    """Per column of *section*'s table: its widest line and its longest word (heading, cells
    and footer, as the terminal shows them)."""
    from rich.cells import cell_len

    widest, word = [], []
    for k, column in enumerate(section.columns):
        cells = [terminal_text(c) for c in (column, *(row[k] for row in section.rows))]
        cells += [terminal_text(section.footer[k])] if section.footer is not None else []
        widest.append(max(cell_len(line) for c in cells for line in c.splitlines() or [""]))
        word.append(max((cell_len(w) for c in cells for w in c.split()), default=1))
    return widest, word


def least_width(section: Section) -> int:
    """The least console width that prints *section*'s table with no cell cut: its
    :attr:`~Section.whole` columns at their widest line, the others at their longest word, plus
    rich's padding (2 per column) and borders (one per column and one more); 0 without a
    table."""
    if not section.columns:
        return 0
    widest, word = _extents(section)
    return 1 + sum((widest if k in section.whole else word)[k] + 3 for k in range(len(widest)))


def uncut(sections: Sequence[Section], wraps: Collection[str] = ()) -> tuple[list[Section], int]:
    """*sections* with their numbers :attr:`~Section.whole` (but the columns named in *wraps*,
    :func:`numbers_whole`) and the least width that prints them with no cell cut
    (:func:`least_width`): other cells wrap at spaces, never inside a word (a GPU id, a model
    entry's name). A table wider than its console then runs past the console's width, on a
    terminal, to a pipe and in a file alike."""
    whole = [numbers_whole(s, wraps) for s in sections]
    return whole, max((least_width(s) for s in whole), default=0)


def uncut_text(sections: Sequence[Section], width: int, wraps: Collection[str] = ()) -> str:
    """*sections* as plain text (:func:`sections_to_text`) at *width*, or wider where their ids
    and numbers need it (:func:`uncut`)."""
    whole, least = uncut(sections, wraps)
    return sections_to_text(whole, max(width, least))


def _wrap_widths(section: Section, width: int) -> dict[int, int]:
    """Widths of the wrapping columns of a table with :attr:`~Section.whole` columns that is
    wider than *width*: the widest narrowed first, as rich does, but none below its longest
    word (rich's own narrowing cuts words, ``rag-relaxed-…``, once two columns wrap); empty
    when the table fits."""
    widest, word = _extents(section)
    excess = 1 + sum(w + 3 for w in widest) - width
    wraps = {k: widest[k] for k in range(len(widest)) if k not in section.whole}
    if excess <= 0 or not wraps:
        return {}
    while excess > 0:
        narrower = [k for k, w in wraps.items() if w > word[k]]
        if not narrower:
            break  # every wrapping column at its longest word: the table runs past *width*
        wraps[max(narrower, key=lambda k: wraps[k])] -= 1
        excess -= 1
    return wraps


def sections_to_text(sections: Sequence[Section], width: int = FILE_WIDTH) -> str:
    """*sections* as plain text tables (what ``--format table --output FILE`` writes)."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False)
    sections_to_rich(sections, console)
    return buffer.getvalue()


def _md_cell(text: str) -> str:
    return md_text(text)


def sections_to_markdown(sections: Sequence[Section]) -> str:
    """*sections* as GitHub-flavoured Markdown (a heading and a table per section)."""
    out: list[str] = []
    for n, section in enumerate(sections):
        out.append(f"{'#' if n == 0 else '##'} {md_text(section.title)}\n")
        if section.lines:
            out.extend(f"- **{_md_cell(key)}**: {_md_cell(value)}" for key, value in section.lines)
            out.append("")
        if section.columns:
            out.append("| " + " | ".join(_md_cell(c) for c in section.columns) + " |")
            out.append(
                "|"
                + "|".join(
                    "---:" if k in section.numeric else "---" for k in range(len(section.columns))
                )
                + "|"
            )
            cells = [[_md_cell(v) for v in row] for row in section.rows]
            if section.footer is not None:  # the values escaped, the bold markers not
                cells.append([f"**{_md_cell(v)}**" if v else "" for v in section.footer])
            out.extend("| " + " | ".join(row) + " |" for row in cells)
            out.append("")
        if section.notes:
            out.extend(f"- {_md_cell(note)}" for note in section.notes)
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def rows_to_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """CSV text with *columns*; lists and dicts are written as JSON, None as an empty cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        cells = []
        for key in columns:
            value = json_safe(row.get(key))
            if isinstance(value, list | dict):
                cells.append(json.dumps(value))
            elif value is None:
                cells.append("")
            elif isinstance(value, str):
                cells.append(csv_cell(value))
            else:
                cells.append(str(value).lower() if isinstance(value, bool) else str(value))
        writer.writerow(cells)
    return buffer.getvalue()
