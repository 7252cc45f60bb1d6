"""CLI command ``schema``: print the JSON Schema of an output (the documented contract)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from planner.cli.printing import shown_path
from planner.documents import SCHEMA_NAMES
from predictors.core.output import write_output


def schema(
    name: Annotated[
        str, typer.Argument(help=f"Output whose schema to print: {', '.join(SCHEMA_NAMES)}.")
    ],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """JSON Schema of a wattgpu output (plan, report, forecast, pareto, model-card, sweep, diff)."""
    from planner.documents import schema_text

    text = schema_text(name)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_output(output, text)
    typer.echo(f"wrote {shown_path(output)}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``schema`` to *app*."""
    app.command("schema")(schema)
