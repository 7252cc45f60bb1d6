"""``wattgpu plan``: solve a scenario file (registers ``compare`` of :mod:`planner.cli.compare`).

``plan`` runs :func:`planner.pipeline.plan_file` and prints the plan as a rich table (default),
JSON (the stable contract of :func:`planner.documents.plan.plan_json`), Markdown or CSV
(:mod:`planner.report.plan_view`), with a note on stderr for each bare GPU family name the
scenario gives (``H100``: the variant assumed). Heavy libraries (polars, xgboost, OR-Tools, rich
tables) are imported inside the commands so that ``wattgpu --help`` starts fast.

Exit codes: 0 = a plan (optimal, or feasible within the time limit); 1 = bad input, or no plan
exists (infeasible: the reasons are printed); 2 = the plan failed its invariant checks (status
``error``), or a malformed command line (reported by typer); 3 = no plan found within the time
limit and none proven impossible (status ``time_limit``).
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

from planner.cli.predictors_option import ModelsOpt, chosen_predictor
from planner.cli.printing import OutputOption, emit, print_sections
from planner.cli.validate import OverlayOption, SetOption
from planner.scenario.limits import MAX_TIME_LIMIT_S

#: Exit code when the scenario has no feasible plan.
EXIT_INFEASIBLE = 1
#: Exit code when the solver returned no valid plan (invariant failure).
EXIT_ERROR = 2
#: Exit code when no plan was found and none proven impossible within the time limit.
EXIT_TIME_LIMIT = 3


class PlanFormat(enum.StrEnum):
    """Output formats of ``wattgpu plan``."""

    table = "table"
    json = "json"
    md = "md"
    csv = "csv"


class CandidatesChoice(enum.StrEnum):
    """Values of ``wattgpu plan --candidates`` (a bare ``--candidates`` is ``best``:
    :func:`planner.cli.app.bare_optional_values`)."""

    best = "best"
    all = "all"


def plan(
    file: Annotated[
        Path | None,
        typer.Argument(
            help="Scenario YAML file, or a bundled example's name (`wattgpu scenarios`; "
            "default: enterprise-fleet)."
        ),
    ] = None,
    fmt: Annotated[
        PlanFormat,
        typer.Option(
            "--format",
            "-f",
            help="table (read first), json (the stable contract), md (Markdown) or csv "
            "(one row per allocation).",
        ),
    ] = PlanFormat.table,
    output: OutputOption = None,
    set_: SetOption = None,
    overlay: OverlayOption = None,
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            min=0.001,
            max=MAX_TIME_LIMIT_S,
            help="Solver time limit in seconds (default: the scenario's time_limit_s).",
        ),
    ] = None,
    candidates: Annotated[
        CandidatesChoice | None,
        typer.Option(
            "--candidates",
            help="Table/md: also list the best feasible alternatives per model (with the "
            "objective change) and the excluded candidates with why (a bare --candidates is "
            "'best'). JSON: which candidates the file carries: 'best' (the default: the "
            "allocated ones, the 5 best feasible alternatives per model and every excluded "
            "one) or 'all'.",
        ),
    ] = None,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide", help="Table: every column (default: a compact table within 100 columns)."
        ),
    ] = False,
    models: ModelsOpt = None,
) -> None:
    """Plan a GPU fleet for a scenario: which GPUs, TP degree and replicas per model.

    Exit code 0 when a plan was found (status optimal or feasible), 1 for bad input or when no
    plan exists (status infeasible; the reasons are printed), 2 when the plan failed its own
    checks (status error) or the command line is malformed, 3 when no plan was found within
    the time limit and none was proven impossible (status time_limit).
    """
    from planner.analysis.flags import uncertainty_flags
    from planner.paths import default_scenario
    from planner.pipeline import plan_file
    from planner.report.plan_view import WRAPPING, plan_sections, render_plan
    from planner.result import PlanStatus
    from planner.scenario.bundled import find_scenario
    from planner.text import uncut
    from predictors.core.escape import terminal_text
    from predictors.core.progress import Progress

    path = find_scenario(file) if file is not None else default_scenario()
    if output is not None:  # before solving: refuse to overwrite the scenario or an overlay
        from predictors.core.output import check_not_input

        check_not_input(output, [path, *(overlay or [])], "--output")
    with Progress("planning") as progress:
        run = plan_file(
            path,
            set_ or [],
            overlay or [],
            time_limit_s=time_limit,
            predictor=chosen_predictor(models),
            progress=progress.update,
        )
        flags = None
        if fmt != PlanFormat.csv:
            flags = uncertainty_flags(run, progress=progress.update)
    result = run.plan
    for note in run.scenario.gpu_notes:
        typer.echo(terminal_text(f"note: {note}"), err=True)  # a bare GPU family name
    if fmt == PlanFormat.table and output is None:
        sections = plan_sections(result, candidates=candidates is not None, wide=wide, flags=flags)
        sections, least = uncut(sections, WRAPPING)
        print_sections(sections, wide=wide, min_width=least)
    else:
        emit(
            render_plan(
                result,
                fmt.value,
                candidates=None if candidates is None else candidates.value,
                wide=wide,
                flags=flags,
            ),
            output,
            f"{fmt.value} plan",
            inputs=[path, *(overlay or [])],
        )
    if result.status == PlanStatus.INFEASIBLE:
        raise typer.Exit(EXIT_INFEASIBLE)
    if result.status == PlanStatus.ERROR:
        raise typer.Exit(EXIT_ERROR)
    if result.status == PlanStatus.TIME_LIMIT:
        raise typer.Exit(EXIT_TIME_LIMIT)


def register(app: typer.Typer) -> None:
    """Add ``plan`` and ``compare`` (:mod:`planner.cli.compare`) to *app*."""
    from planner.cli.compare import compare

    app.command("plan")(plan)
    app.command("compare")(compare)
