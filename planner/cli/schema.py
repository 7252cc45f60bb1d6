"""CLI command ``schema``: print the JSON Schema of an output (the documented contract)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from planner.documents import SCHEMA_NAMES
from predictors.core.errors import WattgpuError


def schema(
    name: Annotated[
        str, typer.Argument(help=f"Output whose schema to print: {', '.join(SCHEMA_NAMES)}.")
    ],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """JSON Schema of a wattgpu output (plan, report, forecast, pareto, model-card)."""
    from planner.documents import schema_text

    text = schema_text(name)
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise WattgpuError(
            f"--output {output}: cannot write ({exc.strerror}); fix the path"
        ) from None
    typer.echo(f"wrote {output}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``schema`` to *app*."""
    app.command("schema")(schema)
