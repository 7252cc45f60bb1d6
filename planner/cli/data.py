"""CLI commands of the data family (registered by :mod:`planner.cli.app`).

``wattgpu data summary --data DIR [--format table|json]``: rows per source x GPU x target,
models per GPU, rows dropped and why (with the quality rules), unresolved names.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from predictors.core.errors import DataError

data_app = typer.Typer(help="Inspect the measurement data used to train the predictors.")

_TARGETS = {
    "power": "power_w_per_gpu",
    "itl": "itl_s",
    "ttft": "ttft_s",
    "throughput": "output_throughput_tok_s",
}


def summarize(data_dir: Path, include_doubtful: bool = False) -> dict[str, Any]:
    """The summary as plain data (also the JSON output)."""
    import polars as pl

    from predictors.measurements import RULES, load_measurements

    ms = load_measurements(data_dir, include_doubtful=include_doubtful)
    t = ms.table
    per = (
        t.group_by("source", "gpu")
        .agg(
            pl.len().alias("rows"),
            *[pl.col(c).is_not_null().sum().alias(k) for k, c in _TARGETS.items()],
        )
        .sort("source", "gpu")
    )
    models = t.group_by("gpu").agg(pl.col("model").n_unique().alias("models")).sort("gpu")
    per_source = (
        ms.all_rows.group_by("source")
        .agg(
            pl.len().alias("rows"),
            pl.col("drop_reason").is_null().sum().alias("usable"),
            pl.col("quality").str.starts_with("doubtful").sum().alias("doubtful"),
            pl.col("drop_reason").str.starts_with("unresolved").sum().alias("unresolved"),
        )
        .sort("source")
    )
    return {
        "data_dir": str(data_dir),
        "include_doubtful": include_doubtful,
        "rows_total": ms.all_rows.height,
        "rows_usable": t.height,
        "sources": per_source.to_dicts(),
        "by_source_gpu": per.to_dicts(),
        "models_per_gpu": models.to_dicts(),
        "dropped": ms.dropped.to_dicts(),
        "unresolved": ms.unresolved.to_dicts(),
        "rules": list(RULES),
    }


def _table(title: str, rows: list[dict[str, Any]]) -> list[str]:
    lines = [title]
    if not rows:
        return [*lines, "  (none)", ""]
    cols = list(rows[0])
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    lines.append("  " + "  ".join(c.ljust(widths[c]) for c in cols))
    for r in rows:
        lines.append("  " + "  ".join(str(r[c]).ljust(widths[c]) for c in cols))
    return [*lines, ""]


def render_text(s: dict[str, Any]) -> str:
    """Plain-text tables of :func:`summarize`'s result."""
    out = [f"data: {s['data_dir']}  rows: {s['rows_total']}  usable: {s['rows_usable']}", ""]
    out += _table("rows per source (usable / doubtful / unresolved):", s["sources"])
    out += _table("usable rows per source x GPU, non-null targets:", s["by_source_gpu"])
    out += _table("models per GPU (usable rows):", s["models_per_gpu"])
    out += _table("rows dropped, by reason:", s["dropped"])
    out += _table("unresolved names (add catalog aliases to use them):", s["unresolved"])
    out += [
        "quality rules (first that applies):",
        *[f"  {i + 1}. {r}" for i, r in enumerate(s["rules"])],
    ]
    return "\n".join(out)


class SummaryFormat(enum.StrEnum):
    """Output formats of ``wattgpu data summary``."""

    table = "table"
    json = "json"


@data_app.command("summary")
def summary(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Measurement directory (default: $WATTGPU_DATA, else ../shared/data/measurements "
            "beside the wattgpu checkout or the working directory).",
        ),
    ] = None,
    fmt: Annotated[SummaryFormat, typer.Option("--format", help="table or json.")] = (
        SummaryFormat.table
    ),
    include_doubtful: Annotated[
        bool, typer.Option("--include-doubtful", help="Count doubtful rows as usable.")
    ] = False,
) -> None:
    """Rows per source x GPU x target, models per GPU, rows dropped and why, unresolved names."""
    from predictors.core.paths import default_data_dir

    data_dir = data if data is not None else default_data_dir()
    if data_dir is None:
        raise DataError(
            "no measurement directory: pass --data DIR or set WATTGPU_DATA "
            "(../shared/data/measurements was not found)"
        )
    s = summarize(data_dir, include_doubtful=include_doubtful)
    typer.echo(json.dumps(s, indent=2) if fmt == SummaryFormat.json else render_text(s))


def register(app: typer.Typer) -> None:
    """Add this family's commands to *app*."""
    app.add_typer(data_app, name="data")
