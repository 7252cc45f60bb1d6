"""``wattgpu sweep``: re-plan a scenario under uncertainty draws and what-if grids.

Parses the options, plans the point estimate (:func:`planner.pipeline.plan_file`), runs
:func:`planner.sweep.run.run_sweep` on the chosen engine and prints or writes the sweep as
Markdown (default) or JSON (the contract, ``wattgpu schema sweep``). The output is written once,
atomically, at the end: an interrupted sweep (Ctrl-C) leaves no file.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated

import typer

from planner.cli.number_options import open_ends
from planner.cli.predictors_option import ModelsOpt, chosen_predictor
from planner.cli.printing import shown_path
from planner.cli.validate import OverlayOption, SetOption
from planner.scenario.sweep_block import FORCED_MAX_DRAWS
from predictors.core.errors import did_you_mean


class SweepFormat(enum.StrEnum):
    """Output formats of ``wattgpu sweep``."""

    md = "md"
    json = "json"


def usage_checks(engine: str, choose: str, sla_probability_given: bool = False) -> None:
    """A value not among an option's choices is a malformed command line (exit 2, docs/cli.md
    "Exit codes"), with did-you-mean, and so is --sla-probability without --choose robust, the
    only choice that reads it (fuzz round 31: it was ignored). (A --sla-probability of 0 is out
    of the option's range, which leaves 0 out: :func:`planner.cli.number_options.open_ends`.)"""
    if sla_probability_given and choose == "none":
        raise typer.BadParameter(
            "only --choose robust reads it — add --choose robust, or leave it out",
            param_hint="'--sla-probability'",
        )
    from planner.sweep.executors import ENGINES
    from planner.sweep.spec import CHOICES

    for option, value, allowed in (("--engine", engine, ENGINES), ("--choose", choose, CHOICES)):
        if value not in allowed:
            raise typer.BadParameter(
                f"unknown {value!r}{did_you_mean(value, allowed)}; use {', '.join(allowed)}",
                param_hint=f"'{option}'",
            )


def sweep(
    ctx: typer.Context,
    file: Annotated[
        Path | None,
        typer.Argument(
            help="Scenario YAML file or a bundled example's name (default: enterprise-fleet)."
        ),
    ] = None,
    draws: Annotated[
        int | None,
        typer.Option(
            "--draws",
            "-n",
            min=0,
            max=FORCED_MAX_DRAWS,
            help=(
                "Uncertainty draws (default: the sweep block's; max 100,000 without --force, "
                "1,000,000 with it)."
            ),
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, max=2**63 - 1, help="Seed of the draws.")
    ] = None,
    engine: Annotated[
        str, typer.Option("--engine", help="local (default), dask or ray.")
    ] = "local",
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            "-w",
            min=1,
            max=4096,
            help="Worker processes (local, or a local Dask/Ray).",
        ),
    ] = 1,
    address: Annotated[
        str | None,
        typer.Option(
            "--address", help="Dask scheduler (tcp://host:8786) or Ray cluster (host:6379) address."
        ),
    ] = None,
    choose: Annotated[str, typer.Option("--choose", help="none (default) or robust.")] = "none",
    sla_probability: Annotated[
        float,
        open_ends(
            typer.Option(
                "--sla-probability",
                min=0.0,
                max=1.0,
                help=(
                    "--choose robust: least share of draws meeting every SLA, cap and budget "
                    "(above 0, at most 1)."
                ),
            ),
            low=True,
            low_reason="no share of draws",
        ),
    ] = 0.95,
    force: Annotated[
        bool, typer.Option("--force", help="Allow more draws or grid points than the limits.")
    ] = False,
    batch_size: Annotated[
        int,
        typer.Option(
            "--batch-size", min=0, max=FORCED_MAX_DRAWS, help="Draws per task (0: automatic)."
        ),
    ] = 0,
    fmt: Annotated[
        SweepFormat, typer.Option("--format", "-f", help="md (default) or json (the contract).")
    ] = SweepFormat.md,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    set_: SetOption = None,
    overlay: OverlayOption = None,
    models: ModelsOpt = None,
) -> None:
    """Re-plan a scenario under uncertainty draws and what-if grids (docs/sweep.md)."""
    from planner.cli.given import given_options
    from planner.paths import default_scenario
    from planner.pipeline import plan_file
    from planner.report.sweep_view import sweep_markdown
    from planner.scenario.bundled import find_scenario
    from planner.sweep.executors import preflight
    from planner.sweep.run import run_sweep
    from planner.sweep.spec import field_source, settings
    from planner.text import to_json
    from predictors.core.output import check_output_path, write_output
    from predictors.core.progress import Progress

    usage_checks(engine, choose, bool(given_options(ctx, ("sla_probability",))))
    preflight(engine, address)
    path = find_scenario(file) if file is not None else default_scenario()
    if output is not None:  # before the work: a path that cannot be written loses nothing,
        # nor one the sweep reads (the scenario, its overlays, the --models files)
        read = sorted(models.glob("*")) if models is not None and models.is_dir() else []
        check_output_path(output, [path, *(overlay or []), *read], "--output")
    with Progress("sweeping") as progress:
        run = plan_file(
            path,
            set_ or [],
            overlay or [],
            predictor=chosen_predictor(models),
            baselines=False,
            progress=progress.update,
        )
        block = run.scenario.sweep
        source = field_source(path, overlay or [], set_ or [])  # the file of a sweep.* field
        s = settings(
            block,
            draws=draws,
            seed=seed,
            choose=choose,
            sla_probability=sla_probability,
            force=force,
            batch_size=batch_size,
            source=source,
        )

        def step(text: str) -> None:
            if progress.enabled:
                progress.update(text)
            else:
                typer.echo(f"  {text}", err=True)

        doc = run_sweep(
            run,
            block,
            s,
            engine=engine,
            workers=workers,
            address=address,
            force=force,
            progress=step,
            source=source,
        )
    text = to_json(doc.to_json_dict()) if fmt == SweepFormat.json else sweep_markdown(doc)
    if output is None:
        sys.stdout.write(text)
        return
    write_output(output, text, inputs=[path, *(overlay or [])])
    typer.echo(f"wrote {fmt.value} sweep to {shown_path(output)}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``sweep`` to *app*."""
    app.command("sweep")(sweep)
