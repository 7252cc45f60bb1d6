"""CLI command ``predict``: one row from options (printed as a table or JSON) or a CSV of rows
(``--input``, the batch form: CSV to stdout or ``--output``, docs/contracts.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from planner.cli.catalog import UserCatalogOpt
from planner.cli.given import given_options
from planner.cli.predictors_option import ModelsOpt, chosen_predictor
from planner.cli.printing import shown_path
from predictors.core.errors import WattgpuError, did_you_mean
from predictors.core.escape import terminal_text
from predictors.core.output import write_output

if TYPE_CHECKING:
    import polars as pl

#: Formats of the single form (the batch form writes CSV).
FORMATS = ("table", "json")
#: The single form's row options (parameter names): the batch form reads them from its CSV.
ROW_OPTIONS = (
    "model",
    "gpu",
    "gpu_count",
    "pipeline_parallel",
    "data_parallel",
    "expert_parallel",
    "engine",
    "precision",
    "batch_size",
    "input_tokens",
    "output_tokens",
    "requests_per_s",
)


def _check_form(ctx: typer.Context, input_csv: Path | None, fmt: str) -> None:
    """Refuse options the chosen form would silently ignore: row options and a non-CSV
    ``--format`` with ``--input`` (its rows come from the CSV, its output is CSV)."""
    if input_csv is None:
        if fmt == "csv":
            raise WattgpuError(
                "--format csv: only the batch form writes CSV — add --input ROWS.csv, or use "
                f"--format {' or '.join(FORMATS)}"
            )
        if fmt not in FORMATS:  # a value not among the choices: usage error, exit 2
            raise typer.BadParameter(
                f"unknown {fmt!r}; use one of {', '.join(FORMATS)}", param_hint="'--format'"
            )
        return
    row_options = given_options(ctx, ROW_OPTIONS)
    if row_options:
        raise WattgpuError(
            f"--input {input_csv}: {', '.join(row_options)} would be ignored — the batch form "
            "reads every row from the CSV's columns (docs/contracts.md); put the values in the "
            "CSV, or drop --input for the single form"
        )
    if fmt != "csv" and given_options(ctx, ("fmt",)):
        raise WattgpuError(
            f"--format {fmt}: the batch form (--input) writes CSV only — drop --format "
            "(table and json are the single form's formats)"
        )


def _catalog_id(resolve: Callable[[str], str], name: str) -> str:
    """*name*'s catalog id, or *name* as given (a quantised checkpoint's name: a note says what
    it resolves to)."""
    try:
        return resolve(name)
    except WattgpuError:
        return name


def _as_options(error: str) -> str:
    """A row *error* in the single form's words: each '; '-joined part that starts with an input
    column (``expert_parallel: …``) starts with its option (``--expert-parallel: …``)."""
    from predictors.rows import INPUT_COLUMNS

    options = {c: "--" + c.replace("_", "-") for c in INPUT_COLUMNS}
    parts = []
    for part in _suggested(error).split("; "):
        column, sep, rest = part.partition(": ")
        parts.append(f"{options[column]}: {rest}" if sep and column in options else part)
    return "; ".join(parts)


#: A vocabulary error of a row (``engine: unknown 'vlm'; use one of vllm, sglang, …``).
_UNKNOWN = re.compile(
    r"(?P<head>\w+: unknown '(?P<name>[^']*)')(?P<sep>; use one of )(?P<known>[^;]*)"
)


def _suggested(error: str) -> str:
    """*error* with a did-you-mean after each unknown engine or precision (as compare says)."""

    def hint(m: re.Match[str]) -> str:
        found = did_you_mean(m["name"], m["known"].split(", "))
        return f"{m['head']}{found}{m['sep']}{m['known']}"

    return _UNKNOWN.sub(hint, error)


#: A model or GPU no catalog name is close to (no did-you-mean follows it), and what to do; the
#: patterns read the same in Python's re and in polars.
#: A quoted name as Python's repr quotes it ('a', or "O'Reilly" where it holds a quote).
_NAME = r"""(?:'[^']*'|"[^"]*")"""
_NOT_IN_CATALOG = {
    rf"(model: unknown llm {_NAME}: an? \S+ quantised checkpoint of {_NAME}, which is not in the "
    r"catalog)(;|$)": " — use an id or alias from `wattgpu catalog llms`, or add the base model "
    "with `wattgpu catalog import-hf` (--user-catalog DIR)",
    rf"(model: unknown llm {_NAME})(;|$)": " — not in the catalog: use an id or alias from "
    "`wattgpu catalog llms`, or add it with `wattgpu catalog import-hf` (--user-catalog DIR)",
    rf"(gpu: unknown gpu {_NAME})(;|$)": " — not in the catalog: use an id or alias from "
    "`wattgpu catalog gpus`, or add its row to a user catalog's gpus.csv (--user-catalog DIR)",
}


def _as_cell(value: float) -> str:
    """A number option as the batch form's cell would hold it (512, not 512.0; 512.5 kept):
    the row rules, not the option's type, judge it, as they judge a CSV row."""
    return str(int(value)) if value.is_integer() and abs(value) < 2.0**53 else repr(value)


def _with_catalog_fix(error: str) -> str:
    """*error* with the fix after an unknown model or GPU that has no did-you-mean."""
    for pattern, fix in _NOT_IN_CATALOG.items():
        error = re.sub(pattern, rf"\g<1>{fix}\g<2>", error)
    return error


def _chunks_with_fix(chunks: Iterable[pl.DataFrame]) -> Iterator[pl.DataFrame]:
    """The batch output's chunks, their ``error`` column as the single form words it:
    :func:`_with_catalog_fix` (polars), then :func:`_suggested` on each distinct error that
    names an unknown value (the did-you-mean is Python's difflib: once per distinct text)."""
    import polars as pl

    for chunk in chunks:
        error = pl.col("error")
        for pattern, fix in _NOT_IN_CATALOG.items():
            error = error.str.replace_all(pattern, f"${{1}}{fix}${{2}}")
        errors = chunk.with_columns(error).get_column("error")
        unknown = errors.filter(errors.str.contains(_UNKNOWN.pattern)).unique().to_list()
        hints = {text: _suggested(text) for text in unknown}
        hinted = {text: fixed for text, fixed in hints.items() if fixed != text}
        yield chunk.with_columns(errors.replace(hinted) if hinted else errors)


def predict(
    ctx: typer.Context,
    model: Annotated[str | None, typer.Option("--model", "-m", help="LLM id or alias.")] = None,
    gpu: Annotated[str | None, typer.Option("--gpu", help="GPU id or alias.")] = None,
    gpu_count: Annotated[
        int, typer.Option("--gpu-count", help="GPUs of the replica (TP × PP × DP).")
    ] = 1,
    pipeline_parallel: Annotated[
        int | None,
        typer.Option("--pipeline-parallel", help="Pipeline stages (default: the usual layout)."),
    ] = None,
    data_parallel: Annotated[
        int | None,
        typer.Option(
            "--data-parallel", help="Attention data-parallel ranks (default 1; MoE models)."
        ),
    ] = None,
    expert_parallel: Annotated[
        int | None,
        typer.Option("--expert-parallel", help="Expert-parallel GPUs (default: TP × DP, MoE)."),
    ] = None,
    engine: Annotated[str, typer.Option("--engine")] = "vllm",
    precision: Annotated[
        str | None,
        typer.Option(
            "--precision",
            help="Weight precision (default: the checkpoint's: what a quantised name implies, "
            "else the catalog default_dtype, fp32 served as fp16).",
        ),
    ] = None,
    batch_size: Annotated[int, typer.Option("--batch-size")] = 1,
    input_tokens: Annotated[float, typer.Option("--input-tokens")] = 512,
    output_tokens: Annotated[float, typer.Option("--output-tokens")] = 256,
    requests_per_s: Annotated[
        float | None,
        typer.Option(
            "--requests-per-s",
            help="Predict at this Poisson arrival rate per replica instead of at --batch-size "
            "(mean power over the requests in flight, mean and p90 ITL, TTFT, concurrency; "
            "above 0).",
        ),
    ] = None,
    input_csv: Annotated[
        Path | None, typer.Option("--input", help="CSV of rows to predict (batch form).")
    ] = None,
    output_csv: Annotated[
        Path | None, typer.Option("--output", "-o", help="Where the batch form writes its CSV.")
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="table or json (single form; the batch form writes CSV)."
        ),
    ] = "table",
    user_catalog: UserCatalogOpt = None,
    models: ModelsOpt = None,
) -> None:
    """Predict power per GPU, ITL and throughput (single row, or a CSV with --input)."""
    import numpy as np
    import polars as pl

    from predictors.api import Predictor
    from predictors.catalog import quantised
    from predictors.rows import (
        csv_pieces,
        predict_rows,
        predicted_chunks,
        read_rows_csv,
        write_csv_chunks,
    )

    _check_form(ctx, input_csv, fmt)
    # a rate such as 1e308 req/s overflows numpy's products: no warning, the row's error says why
    quiet = np.errstate(over="ignore", invalid="ignore")
    if input_csv is not None:
        rows = read_rows_csv(input_csv)
        predictor = chosen_predictor(models, user_catalog) or Predictor.load()
        for note in quantised.notes(
            predictor.catalog, rows["model"].drop_nulls().unique(maintain_order=True).to_list()
        ):
            typer.echo(terminal_text(note), err=True)
        if output_csv is None:  # one piece of text at a time, the header once
            with quiet:
                for piece in csv_pieces(_chunks_with_fix(predicted_chunks(predictor, rows))):
                    typer.echo(piece.decode(), nl=False)
            return
        counts: list[tuple[int, int]] = []
        with quiet:
            write_output(
                output_csv,
                lambda out: counts.append(
                    write_csv_chunks(_chunks_with_fix(predicted_chunks(predictor, rows)), out)
                ),
                inputs=[input_csv],
            )
        n_rows, n_bad = counts[-1]
        typer.echo(f"wrote {shown_path(output_csv)}: {n_rows} rows, {n_bad} with errors")
        return
    if output_csv is not None:
        raise WattgpuError(
            f"--output {output_csv}: only the batch form writes a file — add --input ROWS.csv, "
            "or drop --output (the single form prints; --format json for JSON)"
        )
    if model is None or gpu is None:
        raise WattgpuError("predict: give --model and --gpu (or --input ROWS.csv)")
    row = pl.DataFrame(
        {
            "model": [model],
            "gpu": [gpu],
            "gpu_count": [str(gpu_count)],
            "engine": [engine],
            "precision": [precision or ""],
            "batch_size": [str(batch_size)],
            "input_tokens": [_as_cell(input_tokens)],
            "output_tokens": [_as_cell(output_tokens)],
            "requests_per_s": ["" if requests_per_s is None else _as_cell(requests_per_s)],
            **{
                name: ["" if value is None else str(value)]
                for name, value in (
                    ("pipeline_parallel", pipeline_parallel),
                    ("data_parallel", data_parallel),
                    ("expert_parallel", expert_parallel),
                )
            },
        }
    )
    predictor = chosen_predictor(models, user_catalog) or Predictor.load()
    with quiet:
        out = predict_rows(predictor, row).row(0, named=True)
    if out["error"]:
        raise WattgpuError(f"predict: {_as_options(_with_catalog_fix(out['error']))}")
    for note in quantised.notes(predictor.catalog, [model], precision):
        typer.echo(note, err=True)
    gpu_note = predictor.catalog.gpu_name_note(gpu)
    if gpu_note:
        typer.echo(f"note: {gpu_note}", err=True)
    if fmt == "json":
        typer.echo(json.dumps(out, indent=2))
        return
    # at a load the upper-interval curves cannot carry, the ITL has no upper bound
    itl_hi = "unbounded" if out["itl_s_hi"] is None else f"{out['itl_s_hi'] * 1000:.1f}"
    at_load = requests_per_s is not None
    where = f"{requests_per_s:g} req/s (Poisson)" if at_load else f"batch {batch_size}"
    load_lines = (
        f"\n  concurrency    {out['concurrency']:.2f} requests in the system on average"
        f"\n  TTFT           {out['ttft_s_at_load'] * 1000:.0f} ms"
        f"\n  p90 ITL        {out['itl_s_p90'] * 1000:.1f} ms"
        if at_load
        else ""
    )
    text = (
        f"{_catalog_id(predictor.catalog.resolve_llm, model)} on {out['gpu_count']}× "
        f"{_catalog_id(predictor.catalog.resolve_gpu, gpu)} ({out['engine']}, {out['precision']}, "
        f"{where}, {input_tokens} in / {output_tokens} out)\n"
        f"  power per GPU  {out['power_w_per_gpu']:.0f} W  "
        f"(90 % interval {out['power_w_per_gpu_lo']:.0f}–{out['power_w_per_gpu_hi']:.0f} W)\n"
        f"  ITL            {out['itl_s'] * 1000:.1f} ms  "
        f"(90 % interval {out['itl_s_lo'] * 1000:.1f}–{itl_hi} ms)\n"
        f"  throughput     {out['output_throughput_tok_s']:.0f} output tokens/s\n"
        f"  layout         TP {out['tensor_parallel']} × PP {out['pipeline_parallel']} × "
        f"DP {out['data_parallel']}, EP {out['expert_parallel']}\n"
        f"  in domain      {'yes' if out['in_domain'] else 'NO: ' + out['domain_reason']}\n"
        f"  GPU measured   {'yes' if out['gpu_measured'] else 'no (physics and other GPUs only)'}"
        + load_lines
    )
    typer.echo(terminal_text(text))
