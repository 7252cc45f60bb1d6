"""CLI commands of the hf_import family (registered by :mod:`planner.cli`)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this family's commands to *app*."""
