"""``wattgpu validate FILE``: check a scenario file and report every problem at once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Override a field: PATH=VALUE, e.g. models[0].load.requests_per_s=5 (repeatable).",
    ),
]
OverlayOption = Annotated[
    list[Path] | None,
    typer.Option("--overlay", help="YAML file deep-merged over the scenario (repeatable)."),
]


def validate(
    file: Annotated[
        Path,
        typer.Argument(
            help="Scenario YAML file, or a bundled example's name (`wattgpu scenarios`)."
        ),
    ],
    set_: SetOption = None,
    overlay: OverlayOption = None,
) -> None:
    """Check a scenario file: prints 'FILE: ok (...)' or every problem, one per line (exit 1)."""
    from planner.layouts import LayoutError
    from planner.pipeline import stated_layout_problems
    from planner.scenario.bundled import find_scenario
    from planner.scenario.load import load_scenario
    from planner.sweep.spec import sweep_block_problems
    from predictors.core.escape import terminal_text

    path = find_scenario(file)
    scenario = load_scenario(path, overrides=set_ or [], overlays=overlay or [])
    problems = [f"{path}: {line}" for line in stated_layout_problems(scenario, path)]
    problems += sweep_block_problems(scenario, path, overlay or [], set_ or [])
    if problems:
        raise LayoutError("\n".join(problems))
    n_models = len(scenario.models)
    n_gpus = len(scenario.gpu_offers)
    models = "1 model" if n_models == 1 else f"{n_models} models"
    gpus = "1 GPU type" if n_gpus == 1 else f"{n_gpus} GPU types"
    label = str(file) if path == file else f"{file} (bundled example {path.name})"
    for note in scenario.gpu_notes:
        typer.echo(terminal_text(f"note: {note}"), err=True)
    typer.echo(terminal_text(f"{label}: ok ({models}, {gpus})"))


def register(app: typer.Typer) -> None:
    """Add ``validate`` to *app*."""
    app.command("validate")(validate)
