"""``wattgpu catalog import-hf``: add a model from a local HF config.json to a user catalog.

The row is written to ``DIR/llms.csv`` (same columns as the bundled ``catalogs/llms.csv``), where
DIR is ``--user-catalog`` or ``$WATTGPU_USER_CATALOG``; an existing row with the same id is
replaced. :func:`register` is called by :mod:`predictors.cli.catalog` on the ``catalog`` sub-app.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from predictors.errors import WattgpuError
from predictors.hf_config import LLM_COLUMNS, catalog_row_from_hf_config, format_csv_cell
from predictors.paths import USER_CATALOG_ENV, user_catalog_dir


def read_config(path: Path) -> dict[str, Any]:
    """Load a config.json file, with one-line errors for missing or malformed files."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise WattgpuError(f"{path}: cannot read the config file ({exc.strerror})") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WattgpuError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(raw, dict):
        raise WattgpuError(f"{path}: a Hugging Face config.json must be a JSON object")
    return raw


def upsert_llm_row(user_dir: Path, row: dict[str, Any]) -> Path:
    """Append *row* to ``user_dir/llms.csv`` or replace the row with the same id."""
    user_dir.mkdir(parents=True, exist_ok=True)
    target = user_dir / "llms.csv"
    cells = [format_csv_cell(row.get(col)) for col in LLM_COLUMNS]
    kept: list[list[str]] = []
    if target.exists():
        with target.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is not None and tuple(header) != LLM_COLUMNS:
                raise WattgpuError(
                    f"{target}: header does not match the llms.csv columns; "
                    "fix or move the file, then import again"
                )
            kept = [r for r in reader if r and r[0] != row["id"]]
    with target.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(LLM_COLUMNS)
        writer.writerows([*kept, cells])
    return target


def register(app: typer.Typer) -> None:
    """Add ``import-hf`` to *app* (the ``catalog`` sub-app)."""

    @app.command("import-hf")
    def import_hf(
        config: Annotated[Path, typer.Argument(help="A Hugging Face config.json file.")],
        model_id: Annotated[str, typer.Option("--id", help="Catalog id, e.g. ORG/NAME.")],
        alias: Annotated[
            list[str] | None, typer.Option("--alias", help="Another name (repeatable).")
        ] = None,
        user_catalog: Annotated[
            Path | None,
            typer.Option(
                "--user-catalog", help=f"User catalog directory (default ${USER_CATALOG_ENV})."
            ),
        ] = None,
    ) -> None:
        """Add (or replace) a model from a local config.json in the user catalog overlay."""
        target_dir = user_catalog_dir(user_catalog)
        if target_dir is None:
            raise WattgpuError(
                f"no user catalog directory: pass --user-catalog DIR or set {USER_CATALOG_ENV}"
            )
        row = catalog_row_from_hf_config(read_config(config), model_id, str(config))
        row["aliases"] = list(alias or [])
        row["source"] = f"imported from {config.name} (params: wattgpu counter)"
        target = upsert_llm_row(target_dir, row)
        typer.echo(f"wrote {row['id']} to {target}")
        for col in LLM_COLUMNS:
            typer.echo(f"  {col}: {format_csv_cell(row.get(col))}")
