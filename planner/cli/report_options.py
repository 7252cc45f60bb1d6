"""The options ``report``, ``pareto`` and ``diff`` share, and how they print a warning."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from planner.scenario.limits import MAX_TIME_LIMIT_S
from predictors.core.escape import terminal_text

ReportFileArgument = Annotated[
    Path,
    typer.Argument(
        help="Scenario YAML file (planned first), a bundled example's name (`wattgpu scenarios`) "
        "or a saved plan JSON (`wattgpu plan --format json`; reported as saved, no predictor "
        "loaded)."
    ),
]
TimeLimitOption = Annotated[
    float | None,
    typer.Option(
        "--time-limit",
        min=0.001,
        max=MAX_TIME_LIMIT_S,
        help="Solver time limit per solve in seconds (default: scenario).",
    ),
]
TrustOption = Annotated[
    bool,
    typer.Option(
        "--trust",
        help="Report a saved plan whose figures do not recompute from its allocations "
        "(hand-edited or damaged) anyway, with a warning per field, instead of refusing it; "
        "the report shows the figures its allocations recompute to.",
    ),
]


def warn(line: str) -> None:
    """Print a warning line on stderr (control characters removed)."""
    typer.echo(terminal_text(line), err=True)
