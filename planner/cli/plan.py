"""``wattgpu plan`` and ``wattgpu compare``: solve a scenario file, or compare GPUs for one model.

``plan`` runs :func:`planner.pipeline.plan_file` and prints the plan as a rich table (default),
JSON (the stable contract of :func:`planner.documents.plan.plan_json`), Markdown or CSV
(:mod:`planner.report.plan_view`). ``compare`` builds a one-model scenario internally and ranks
the best fleet of each GPU type (:mod:`planner.analysis.compare`). Heavy libraries (polars,
xgboost, OR-Tools, rich tables) are imported inside the commands so that ``wattgpu --help``
starts fast.

Exit codes of both commands: 0 = a plan (optimal, or feasible within the time limit); 1 = bad
input, or no plan exists (infeasible: the reasons are printed); 2 = the plan failed its
invariant checks (status ``error``), or a malformed command line (reported by typer); 3 = no
plan found within the time limit and none proven impossible (status ``time_limit``).
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, get_args

import typer

from planner.cli.catalog import UserCatalogOpt
from planner.cli.predictors_option import ModelsOpt, chosen_predictor
from planner.cli.validate import OverlayOption, SetOption
from planner.scenario.limits import (
    MAX_CONTEXT_TOKENS,
    MAX_HORIZON_HOURS,
    MAX_LATENCY_MS,
    MAX_REQUESTS_PER_S,
    MAX_TIME_LIMIT_S,
    MAX_USD_PER_KWH,
    MIN_HORIZON_HOURS,
)
from predictors.core.errors import WattgpuError, did_you_mean
from predictors.core.output import check_output_path
from predictors.core.vocab import canonical_engine, canonical_precision

if TYPE_CHECKING:
    from planner.text import Section

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


class CompareFormat(enum.StrEnum):
    """Output formats of ``wattgpu compare``."""

    table = "table"
    json = "json"
    csv = "csv"


class CompareDeployment(enum.StrEnum):
    """Which deployments ``wattgpu compare`` ranks."""

    aggregated = "aggregated"
    disaggregated = "disaggregated"
    both = "both"


class RankBy(enum.StrEnum):
    """What ``wattgpu compare`` ranks by."""

    energy = "energy"
    cost = "cost"


OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write the output to this file instead of stdout."),
]


def print_width(*, wide: bool) -> int:
    """Width of tables printed to a pipe or file: compact 100 columns, --wide 140."""
    from planner.text import COMPACT_WIDTH, FILE_WIDTH

    return FILE_WIDTH if wide else COMPACT_WIDTH


def _print_sections(sections: list[Section], *, wide: bool = False) -> None:
    from rich.console import Console

    from planner.text import sections_to_rich

    console = Console()
    if not console.is_terminal:
        console = Console(width=print_width(wide=wide))
    sections_to_rich(sections, console)


def _emit(text: str, output: Path | None, what: str, inputs: Sequence[Path | None] = ()) -> None:
    from predictors.core.output import write_output

    if output is None:
        sys.stdout.write(text)
        return
    write_output(output, text, inputs=inputs)
    typer.echo(f"wrote {what} to {output}", err=True)


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
    from planner.report.plan_view import plan_sections, render_plan
    from planner.result import PlanStatus
    from planner.scenario.bundled import find_scenario
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
    if fmt == PlanFormat.table and output is None:
        sections = plan_sections(result, candidates=candidates is not None, wide=wide, flags=flags)
        _print_sections(sections, wide=wide)
    else:
        _emit(
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


def _check_precision(precision: str | None) -> None:
    from predictors.core.vocab import Precision

    choices = list(get_args(Precision))
    if precision is not None and precision not in choices:
        raise WattgpuError(
            f"--precision: unknown precision '{precision}'{did_you_mean(precision, choices)} "
            f"— use one of {', '.join(choices)}"
        )


def compare(
    model: Annotated[str, typer.Option("--model", "-m", help="Catalog LLM id or alias.")],
    requests_per_s: Annotated[
        float,
        typer.Option(
            "--requests-per-s", min=0.0, max=MAX_REQUESTS_PER_S, help="Mean request rate (req/s)."
        ),
    ],
    itl_ms: Annotated[
        float,
        typer.Option(
            "--itl-ms", min=0.001, max=MAX_LATENCY_MS, help="Inter-token latency SLA (ms)."
        ),
    ],
    ttft_ms: Annotated[
        float | None,
        typer.Option(
            "--ttft-ms", min=0.001, max=MAX_LATENCY_MS, help="Time-to-first-token SLA (ms)."
        ),
    ] = None,
    input_tokens: Annotated[
        float,
        typer.Option(
            "--input-tokens",
            min=1.0,
            max=MAX_CONTEXT_TOKENS,
            help="Mean prompt length (tokens).",
        ),
    ] = 1024.0,
    output_tokens: Annotated[
        float,
        typer.Option(
            "--output-tokens",
            min=1.0,
            max=MAX_CONTEXT_TOKENS,
            help="Mean completion length (tokens).",
        ),
    ] = 256.0,
    gpus: Annotated[
        str | None,
        typer.Option(
            "--gpus",
            help="Comma-separated GPU ids or aliases (default: every catalog GPU with a price).",
        ),
    ] = None,
    by: Annotated[RankBy, typer.Option("--by", help="Rank by energy or by cost.")] = RankBy.energy,
    precision: Annotated[
        str | None,
        typer.Option(
            "--precision",
            help="Weight precision (default: the checkpoint's, e.g. int4 for an AWQ name, else "
            "the model's catalog dtype).",
        ),
    ] = None,
    engine: Annotated[str, typer.Option("--engine", help="Serving engine.")] = "vllm",
    region: Annotated[
        str, typer.Option("--region", help="Grid region for CO2 and the output note.")
    ] = "US",
    hours: Annotated[
        float,
        typer.Option(
            "--hours",
            min=MIN_HORIZON_HOURS,
            max=MAX_HORIZON_HOURS,
            help="Horizon of the energy and cost totals.",
        ),
    ] = 8760.0,
    electricity: Annotated[
        float,
        typer.Option(
            "--electricity-usd-per-kwh",
            min=0.0,
            max=MAX_USD_PER_KWH,
            help="Electricity price ($/kWh).",
        ),
    ] = 0.12,
    fmt: Annotated[
        CompareFormat, typer.Option("--format", "-f", help="table, json or csv.")
    ] = CompareFormat.table,
    output: OutputOption = None,
    deployment: Annotated[
        CompareDeployment,
        typer.Option(
            "--deployment",
            help="Rows of aggregated replicas (default), disaggregated prefill/decode units "
            "(per GPU type, or prefill → decode types) or both.",
        ),
    ] = CompareDeployment.aggregated,
    user_catalog: UserCatalogOpt = None,
    models: ModelsOpt = None,
) -> None:
    """Rank GPU types for one model, load and SLA: the best fleet of each type (no scenario file).

    Exit code 0 when at least one GPU type meets the SLA, 1 for bad input or when none does.
    """
    from planner.analysis.compare import CompareRequest, compare_csv_columns, no_fit_message
    from planner.analysis.compare import compare as run_compare
    from planner.analysis.compare_view import compare_section
    from planner.text import rows_to_csv, sections_to_text, to_json

    if output is not None:  # before the work: a bad path loses nothing
        check_output_path(output)
    if precision is not None:  # the spellings predict and a scenario take (bfloat16, FP8)
        precision = canonical_precision(precision) or precision
    engine = canonical_engine(engine) or engine
    _check_precision(precision)
    gpu_list = None
    if gpus is not None:
        gpu_list = tuple(g.strip() for g in gpus.split(",") if g.strip())
        if not gpu_list:
            raise WattgpuError("--gpus: no GPU named — give e.g. --gpus L4,A100-SXM4-80GB")
        if len(gpu_list) < len(gpus.split(",")):
            raise WattgpuError(f"--gpus {gpus!r}: an empty name between commas — remove it")
    request = CompareRequest(
        model=model,
        requests_per_s=requests_per_s,
        itl_ms=itl_ms,
        ttft_ms=ttft_ms,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        gpus=gpu_list,
        by=by.value,
        precision=precision,
        engine=engine,
        region=region,
        hours=hours,
        electricity_usd_per_kwh=electricity,
        deployment=deployment.value,
    )
    result = run_compare(request, chosen_predictor(models, user_catalog))
    if fmt == CompareFormat.json:
        _emit(to_json(result.to_json_dict()), output, "comparison")
    elif fmt == CompareFormat.csv:
        rows = [r.__dict__ for r in result.rows]
        _emit(rows_to_csv(rows, compare_csv_columns(result)), output, "comparison")
    elif output is not None:
        _emit(sections_to_text([compare_section(result)]), output, "comparison")
    else:
        _print_sections([compare_section(result)], wide=True)
    if not any(r.fits for r in result.rows):
        raise WattgpuError(no_fit_message(result))


def register(app: typer.Typer) -> None:
    """Add ``plan`` and ``compare`` to *app*."""
    app.command("plan")(plan)
    app.command("compare")(compare)
