"""How the table commands print: a terminal at its width, a pipe or file at a fixed one, or a
file given with ``--output`` (``plan`` and ``compare``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from planner.text import Section

OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write the output to this file instead of stdout."),
]


def print_width(*, wide: bool) -> int:
    """Width of tables printed to a pipe or file: compact 100 columns, --wide 140."""
    from planner.text import COMPACT_WIDTH, FILE_WIDTH

    return FILE_WIDTH if wide else COMPACT_WIDTH


def table_console(*, wide: bool = False, min_width: int = 0) -> Console:
    """A rich console for tables: a terminal at its width, a pipe or file at
    :func:`print_width` (whatever ``$COLUMNS`` says); never narrower than *min_width*."""
    from rich.console import Console

    console = Console()
    width = console.width if console.is_terminal else print_width(wide=wide)
    if not console.is_terminal or width < min_width:
        console = Console(width=max(width, min_width))
    return console


def print_sections(sections: list[Section], *, wide: bool = False, min_width: int = 0) -> None:
    """Print *sections* on the terminal at its width, or to a pipe or file at
    :func:`print_width`; never narrower than *min_width* (a table that would otherwise cut its
    numbers runs past a narrow terminal's edge instead)."""
    from planner.text import sections_to_rich

    sections_to_rich(sections, table_console(wide=wide, min_width=min_width))


def shown_path(path: Path | str) -> str:
    """*path* for a status line: its line breaks escaped and escape sequences dropped, as an
    ``error:`` line shows it (``wrote … to a\\nb.json`` stays one line)."""
    from predictors.core.errors import escape_breaks
    from predictors.core.escape import terminal_text

    return terminal_text(escape_breaks(str(path)))


def emit(text: str, output: Path | None, what: str, inputs: Sequence[Path | None] = ()) -> None:
    """Write *text* to stdout, or to *output* (checked against *inputs*) saying so on stderr."""
    from predictors.core.output import write_output

    if output is None:
        sys.stdout.write(text)
        return
    write_output(output, text, inputs=inputs)
    typer.echo(f"wrote {what} to {shown_path(output)}", err=True)
