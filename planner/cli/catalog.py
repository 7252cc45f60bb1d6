"""``wattgpu catalog``: list, show and validate the GPU, LLM and grid-carbon catalogs.

Commands: ``gpus``, ``llms``, ``regions`` (``--format table|json|csv``), ``show ID`` (any GPU,
LLM or region id or alias), ``validate [DIR]``; ``import-hf`` is added by
:mod:`planner.cli.hf_import`. Tables fit a terminal's width; to a pipe or file they take the
fixed width of every command's tables (:func:`planner.cli.printing.print_width`), whatever
``$COLUMNS`` says. Errors are raised as :class:`~predictors.core.errors.WattgpuError` and
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
from planner.cli.printing import table_console
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
    from rich.table import Table
    from rich.text import Text

    console = table_console()
    cols = TABLE_COLUMNS[kind]
    cells = {c: [terminal_text(_cell(v)) for v in frame[c].to_list()] for c in cols}
    layout = fit_columns(cells, console.width)
    table = Table(title=f"{kind} ({frame.height})", caption_justify="left")
    for _, heading, width, wraps in layout:  # ids fold, text wraps at spaces, numbers whole
        fixed = width if wraps else None
        table.add_column(heading, overflow="fold", no_wrap=not wraps, min_width=width, width=fixed)
    for row in zip(*(cells[col] for col, *_ in layout), strict=True):
        table.add_row(*(Text(v) for v in row))
    if len(layout) < len(cols):
        left = ", ".join(cols[len(layout) :])
        table.caption = f"not shown at {console.width} columns: {left} (--format csv has them)"
    console.print(table)


#: Least width of the id column before columns are left out (longer ids fold).
ID_WIDTH = 24


def _heading(column: str, width: int) -> str:
    """*column* broken after underscores into lines of about *width* characters."""
    lines = [""]
    for part in column.replace("_", "_ ").split(" "):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


def fit_columns(cells: dict[str, list[str]], width: int) -> list[tuple[str, str, int, bool]]:
    """The columns of *cells* (the first: the ids) that fit a table *width* wide, in order, as
    (column, heading broken at underscores, width, wraps): numbers and names whole; ids (at least
    :data:`ID_WIDTH` or a third of the width) and text with spaces (its longest word) wrap, and
    share what is left up to their widest cell. The columns past the width are left out, never
    cut into letter blocks."""
    from rich.cells import cell_len

    layout: list[tuple[str, str, int, bool]] = []
    full: list[int] = []
    used = 1  # the left border; each column adds its padding (2) and a border
    for k, (col, values) in enumerate(cells.items()):
        widest = max((cell_len(v) for v in values), default=0)
        wraps = k == 0 or any(" " in v for v in values)
        least = max((cell_len(w) for v in values for w in v.split()), default=0)
        need = min(widest, max(ID_WIDTH, width // 3)) if k == 0 else least if wraps else widest
        heading = _heading(col, max(need, *(len(p) for p in col.replace("_", "_ ").split())))
        need = max(need, *(len(line) for line in heading.splitlines()))
        if k and used + need + 3 > width:
            break
        layout.append((col, heading, need, wraps))
        full.append(max(widest, need))
        used += need + 3
    spare = width - used
    for k, (col, heading, need, wraps) in enumerate(layout):
        if wraps and spare > 0:
            more = min(spare, full[k] - need)
            layout[k] = (col, heading, need + more, wraps)
            spare -= more
    return layout


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
    from rich.table import Table
    from rich.text import Text

    console = table_console()
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
