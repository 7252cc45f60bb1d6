"""``wattgpu compare``: rank GPU types for one model, load and SLA (no scenario file).

Builds a one-model scenario internally and ranks the best fleet of each GPU type
(:mod:`planner.analysis.compare`); the table is compact by default and has every column with
``--wide`` (:mod:`planner.analysis.compare_view`); JSON and CSV always carry every field. A bare
GPU family name in ``--gpus`` (``H100``) is resolved as ``predict`` resolves it, with the same
note on stderr. Exit code 0 when at least one GPU type meets the SLA, 1 for bad input or when
none does, 2 for a malformed command line.
"""

from __future__ import annotations

import enum
from typing import Annotated, get_args

import typer

from planner.cli.catalog import UserCatalogOpt
from planner.cli.predictors_option import ModelsOpt, chosen_predictor
from planner.cli.printing import OutputOption, emit, print_sections, print_width
from planner.scenario.limits import (
    MAX_CONTEXT_TOKENS,
    MAX_HORIZON_HOURS,
    MAX_LATENCY_MS,
    MAX_REQUESTS_PER_S,
    MAX_USD_PER_KWH,
    MIN_HORIZON_HOURS,
)
from predictors.core.errors import WattgpuError, did_you_mean
from predictors.core.escape import terminal_text
from predictors.core.output import check_output_path
from predictors.core.vocab import canonical_engine, canonical_precision


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


def _check_precision(precision: str | None) -> None:
    from predictors.core.vocab import Precision

    choices = list(get_args(Precision))
    if precision is not None and precision not in choices:
        raise WattgpuError(
            f"--precision: unknown '{precision}'{did_you_mean(precision, choices)}; use one of "
            f"{', '.join(choices)}"  # as predict words it (the catalog's row check)
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
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="Table: every column (default: a compact table; numbers are never cut).",
        ),
    ] = False,
    user_catalog: UserCatalogOpt = None,
    models: ModelsOpt = None,
) -> None:
    """Rank GPU types for one model, load and SLA: the best fleet of each type (no scenario file).

    Exit code 0 when at least one GPU type meets the SLA, 1 for bad input or when none does.
    """
    from planner.analysis.compare import CompareRequest, compare_csv_columns
    from planner.analysis.compare import compare as run_compare
    from planner.analysis.compare_view import compare_section, no_fit_message
    from planner.text import least_width, rows_to_csv, sections_to_text, to_json
    from predictors.api import Predictor

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
    predictor = chosen_predictor(models, user_catalog) or Predictor.load()
    result = run_compare(request, predictor)
    for name in dict.fromkeys(gpu_list or ()):  # a bare family name: the note predict prints
        note = predictor.catalog.gpu_name_note(name)
        if note:
            typer.echo(terminal_text(f"note: {note}"), err=True)
    if fmt == CompareFormat.json:
        emit(to_json(result.to_json_dict()), output, "comparison")
    elif fmt == CompareFormat.csv:
        rows = [r.__dict__ for r in result.rows]
        emit(rows_to_csv(rows, compare_csv_columns(result)), output, "comparison")
    else:
        section = compare_section(result, wide=wide)
        least = least_width(section)
        if output is not None:
            text = sections_to_text([section], max(print_width(wide=wide), least))
            emit(text, output, "comparison")
        else:
            print_sections([section], wide=wide, min_width=least)
    if not any(r.fits for r in result.rows):
        raise WattgpuError(no_fit_message(result))
