"""``wattgpu catalog``: list, show and validate the GPU, LLM and grid-carbon catalogs.

Commands: ``gpus``, ``llms``, ``regions`` (``--format table|json|csv``), ``show ID`` (any GPU,
LLM or region id or alias), ``validate [DIR]``; ``import-hf`` is added by
:mod:`planner.cli.hf_import`. Errors are raised as :class:`~predictors.core.errors.WattgpuError` and
printed by :func:`planner.cli.app.main`.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Annotated, Any

import polars as pl
import typer

from planner.cli import hf_import as cli_hf_import
from predictors.catalog import quantised
from predictors.catalog.store import Catalog, load_catalog, validate_dir
from predictors.core.errors import CatalogError, UnknownIdError, did_you_mean
from predictors.core.escape import csv_safe_frame, terminal_text
from predictors.core.paths import USER_CATALOG_ENV


class OutputFormat(enum.StrEnum):
    """How a listing is printed."""

    table = "table"
    json = "json"
    csv = "csv"


UserCatalogOpt = Annotated[
    Path | None,
    typer.Option(
        "--user-catalog",
        help=f"User catalog overlay directory (default: ${USER_CATALOG_ENV}).",
        file_okay=False,
    ),
]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]

#: Columns shown by the table format (json and csv show every column).
TABLE_COLUMNS: dict[str, list[str]] = {
    "gpus": [
        "id",
        "vendor",
        "memory_gb",
        "memory_bandwidth_gb_s",
        "tdp_w",
        "idle_power_w",
        "fp16_tflops_dense",
        "fp8_tflops_dense",
        "usd_per_hour",
    ],
    "llms": [
        "id",
        "family",
        "total_params_b",
        "active_params_b",
        "num_layers",
        "hidden_size",
        "num_kv_heads",
        "default_dtype",
        "is_moe",
        "attention_kind",
    ],
    "regions": ["region_id", "kind", "name", "g_co2_per_kwh", "year"],
}

catalog_app = typer.Typer(
    name="catalog",
    help="GPU, LLM and grid-carbon catalogs: list, show, validate, import.",
    no_args_is_help=True,
)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "|".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _emit(frame: pl.DataFrame, kind: str, fmt: OutputFormat) -> None:
    if fmt is OutputFormat.json:
        typer.echo(json.dumps(frame.to_dicts(), indent=2, ensure_ascii=False))
        return
    if fmt is OutputFormat.csv:
        lists = [c for c, t in frame.schema.items() if isinstance(t, pl.List)]
        flat = frame.with_columns(pl.col(c).list.join("|") for c in lists)
        typer.echo(csv_safe_frame(flat).write_csv(), nl=False)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"{kind} ({frame.height})")
    cols = TABLE_COLUMNS[kind]
    for col in cols:
        table.add_column(col, overflow="fold")
    for row in frame.select(cols).iter_rows():
        table.add_row(*(Text(terminal_text(_cell(v))) for v in row))
    Console().print(table)


@catalog_app.command("gpus")
def gpus(fmt: FormatOpt = OutputFormat.table, user_catalog: UserCatalogOpt = None) -> None:
    """List the GPU catalog."""
    _emit(load_catalog(user_catalog).gpus, "gpus", fmt)


@catalog_app.command("llms")
def llms(fmt: FormatOpt = OutputFormat.table, user_catalog: UserCatalogOpt = None) -> None:
    """List the LLM catalog."""
    _emit(load_catalog(user_catalog).llms, "llms", fmt)


@catalog_app.command("regions")
def regions(fmt: FormatOpt = OutputFormat.table, user_catalog: UserCatalogOpt = None) -> None:
    """List grid carbon intensity by country, US state and cloud region."""
    _emit(load_catalog(user_catalog).regions, "regions", fmt)


NO_PRICE_NOTE = (
    "no price: no provider in the public price tables offers {gpu} (catalogs/README.md, "
    "Prices); set gpus.{gpu}.usd_per_hour in a scenario or usd_per_hour in a user catalog"
)


def _gpu_notes(cat: Catalog, name: str, row: dict[str, Any]) -> list[str]:
    notes = [n for n in [cat.gpu_name_note(name)] if n]
    if row.get("usd_per_hour") is None:
        notes.append(NO_PRICE_NOTE.format(gpu=row["id"]))
    return notes


def _matches(cat: Catalog, name: str) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(kind, row, notes) of every catalog entry *name* resolves to."""
    found: list[tuple[str, dict[str, Any], list[str]]] = []
    if cat.try_resolve_gpu(name) is not None:
        row = cat.gpu(name)
        found.append(("gpu", row, _gpu_notes(cat, name, row)))
    checkpoint = quantised.try_resolve_checkpoint(cat, name)
    if checkpoint is not None:
        row = cat.llm(checkpoint.model_id)
        if checkpoint.quantised:
            row = {**row, "resolved_from": name, "implied_precision": checkpoint.precision}
        found.append(("llm", row, [n for n in [checkpoint.note()] if n]))
    if cat.try_resolve_region(name) is not None:
        found.append(("region", cat.region(name), []))
    return found


@catalog_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="A GPU, LLM or region id or alias.")],
    fmt: FormatOpt = OutputFormat.table,
    user_catalog: UserCatalogOpt = None,
) -> None:
    """Show every field of one GPU, LLM or region."""
    cat = load_catalog(user_catalog)
    found = _matches(cat, name)
    if not found:
        regions = cat.regions["region_id"].to_list()
        regions += cat.regions["aliases"].explode().drop_nulls().to_list()
        hints = [cat.suggest("gpu", name), cat.suggest("llm", name), did_you_mean(name, regions)]
        raise UnknownIdError(
            f"unknown GPU, LLM or region '{name}'",
            hint=next((h for h in hints if h), ""),
            fix="see `wattgpu catalog gpus`, `llms` or `regions` for ids",
        )
    if fmt is not OutputFormat.table:
        payload = [
            {"kind": kind, **row, **({"notes": notes} if notes else {})}
            for kind, row, notes in found
        ]
        if fmt is OutputFormat.json:
            typer.echo(
                json.dumps(
                    payload if len(payload) > 1 else payload[0], indent=2, ensure_ascii=False
                )
            )
        else:
            rows = pl.DataFrame([{k: _cell(v) for k, v in p.items()} for p in payload])
            typer.echo(csv_safe_frame(rows).write_csv(), nl=False)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    for kind, row, notes in found:
        name = terminal_text(str(row.get("id") or row.get("region_id")))
        table = Table(title=Text(f"{kind}: {name}"), show_header=False)
        table.add_column("field", style="bold")
        table.add_column("value", overflow="fold")
        for key, value in row.items():
            table.add_row(key, Text(terminal_text(_cell(value))))
        console.print(table)
        for note in notes:
            typer.echo(terminal_text(note if note.startswith("note:") else f"note: {note}"))


@catalog_app.command("validate")
def validate(
    directory: Annotated[
        Path | None,
        typer.Argument(help="Catalog directory to check (default: bundled + user overlay)."),
    ] = None,
    user_catalog: UserCatalogOpt = None,
) -> None:
    """Check catalog files: columns, types, ids, aliases and impossible values."""
    if directory is not None:
        problems = validate_dir(directory)
        if problems:
            raise CatalogError("\n".join(problems))
        # as the user overlay every other command reads it as: its ids and aliases against
        # the bundled catalogs' (an alias of a bundled GPU is refused there)
        load_catalog(directory)
        typer.echo(
            f"ok: {directory} is a valid catalog directory, and a valid user overlay of the "
            "bundled catalogs"
        )
        return
    cat = load_catalog(user_catalog)
    typer.echo(
        f"ok: {cat.gpus.height} GPUs, {cat.llms.height} LLMs, {cat.regions.height} regions, "
        f"{cat.pue.height} PUE scopes"
    )


def register(app: typer.Typer) -> None:
    """Add the ``catalog`` command family to *app*."""
    cli_hf_import.register(catalog_app)
    app.add_typer(catalog_app, name="catalog")
