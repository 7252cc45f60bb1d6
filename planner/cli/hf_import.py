"""``wattgpu catalog import-hf``: add a model from a local HF config.json to a user catalog.

The row is written to ``DIR/llms.csv`` (same columns as the bundled ``catalogs/llms.csv``), where
DIR is ``--user-catalog`` or ``$WATTGPU_USER_CATALOG``, created (with a note on stderr) when it
does not exist yet; an existing row with the same id is replaced
(:mod:`predictors.catalog.user`). :func:`register` is called by :mod:`planner.cli.catalog` on the
``catalog`` sub-app.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from planner.cli.printing import shown_path
from predictors.catalog.hf_config import LLM_COLUMNS, catalog_row_from_hf_config, format_csv_cell
from predictors.catalog.user import check_names, read_config, upsert_llm_row
from predictors.core.errors import WattgpuError
from predictors.core.escape import terminal_text
from predictors.core.paths import USER_CATALOG_ENV, user_catalog_dir


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
        row = catalog_row_from_hf_config(
            read_config(config), model_id, str(config), layer_period=False
        )
        row["aliases"] = list(alias or [])
        check_names(row)
        row["source"] = f"imported from {config.name}" + row["source"].removeprefix(str(config))
        created = not os.path.lexists(target_dir)
        target = upsert_llm_row(target_dir, row)
        if created:  # the command adds rows: a new catalog directory is made, and said
            named = "--user-catalog" if user_catalog is not None else f"${USER_CATALOG_ENV}"
            typer.echo(
                terminal_text(f"note: {named} {target_dir}: did not exist — created it"), err=True
            )
        typer.echo(f"wrote {shown_path(row['id'])} to {shown_path(target)}")
        for col in LLM_COLUMNS:
            typer.echo(f"  {col}: {format_csv_cell(row.get(col))}")
