"""CLI command ``docs``: list the shipped documentation, or print one document."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from planner.cli.printing import emit


def docs(
    name: Annotated[
        str | None,
        typer.Argument(help="Document to print (method, scenarios, cli, ...); none: list them."),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """The documentation the error messages cite (docs/NAME.md), from any directory."""
    from planner.guides import doc_path, listing

    if name is None:
        emit(listing(), output, "the list of documents")
    else:
        path = doc_path(name)
        emit(path.read_text(encoding="utf-8"), output, f"docs/{path.name}")


def register(app: typer.Typer) -> None:
    """Add ``docs`` to *app*."""
    app.command("docs")(docs)
