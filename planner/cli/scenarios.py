"""``wattgpu scenarios``: list the bundled example scenarios, or copy one out to edit."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from planner.scenario.bundled import BundledScenario

#: GPU types listed by name up to this many; more are counted.
GPU_NAMES_SHOWN = 4
#: Width of the listing (descriptions are cut to fit).
LIST_WIDTH = 100


class ListFormat(enum.StrEnum):
    """Output formats of ``wattgpu scenarios``."""

    table = "table"
    json = "json"


def _gpus_text(gpus: tuple[str, ...] | None) -> str:
    if gpus is None:
        return "every priced catalog GPU"
    if len(gpus) <= GPU_NAMES_SHOWN:
        return ", ".join(gpus)
    return f"{len(gpus)} GPU types"


def _models_text(models: tuple[str, ...]) -> str:
    distinct = sorted(set(models))
    if len(distinct) == 1:
        return distinct[0] if len(models) == 1 else f"{len(models)} entries of {distinct[0]}"
    return f"{len(models)} model entries ({len(distinct)} LLMs)"


def listing_lines(found: list[BundledScenario]) -> list[str]:
    """Two lines per example: name, models and GPUs; then the one-line description."""
    width = max((len(s.name) for s in found), default=0)
    lines = []
    for s in found:
        lines.append(f"{s.name:<{width}}  {_models_text(s.models)} on {_gpus_text(s.gpus)}")
        room = LIST_WIDTH - width - 2
        summary = s.summary if len(s.summary) <= room else s.summary[: room - 1].rstrip() + "…"
        lines.append(f"{'':<{width}}  {summary}")
    lines += [
        "",
        "plan one:         wattgpu plan NAME   (also validate, report, pareto)",
        "copy one to edit: wattgpu scenarios --copy NAME [DIR]",
    ]
    return lines


def scenarios(
    copy: Annotated[
        str | None,
        typer.Option(
            "--copy",
            metavar="NAME",
            help="Copy this example (name from the list) to DIR to edit it.",
        ),
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Argument(
            metavar="DIR", help="With --copy: the directory to copy into (default: current)."
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="With --copy: overwrite an existing file.")
    ] = False,
    fmt: Annotated[ListFormat, typer.Option("--format", "-f", help="table or json.")] = (
        ListFormat.table
    ),
) -> None:
    """List the bundled example scenarios; `wattgpu plan NAME` plans one, --copy copies it."""
    from predictors.core.errors import WattgpuError

    if copy is not None:
        from planner.scenario.bundled import copy_scenario

        target = copy_scenario(copy, directory or Path("."), force=force)
        typer.echo(f"copied {copy} to {target} — edit it, then: wattgpu plan {target}")
        return
    if directory is not None:
        raise WattgpuError(
            f"{directory}: a directory is only used with --copy NAME — to copy an example: "
            f"wattgpu scenarios --copy NAME {directory}; to plan one: wattgpu plan NAME"
        )
    from planner.scenario.bundled import bundled_scenarios
    from planner.text import to_json

    found = bundled_scenarios()
    if fmt == ListFormat.json:
        typer.echo(to_json([s.to_json_dict() for s in found]), nl=False)
        return
    typer.echo("\n".join(listing_lines(found)))


def register(app: typer.Typer) -> None:
    """Add ``scenarios`` to *app*."""
    app.command("scenarios")(scenarios)
