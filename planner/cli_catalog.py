"""CLI commands of the catalog family (registered on the main app by :mod:`planner.cli`)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this family's commands to *app*."""
