"""The header of a catalog file: unknown columns and missing required ones, one line each.

A misspelt required column (``memory_bandwith_gb_s``) is one line that says to rename it, not an
unknown column listing all 40 names beside a missing one (fuzz round 31); any other unknown
column gets the closest names (did-you-mean) before the full list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from predictors.core.errors import did_you_mean, misspelt_required

#: ``problem(path, line, column, what, fix)`` of :mod:`predictors.catalog.validate`.
Problem = Callable[[Path, int | None, str | None, str, str], str]


def header_problems(
    path: Path,
    names: Sequence[str],
    columns: Sequence[str],
    required: Sequence[str],
    problem: Problem,
) -> list[str]:
    """Problems of the header *names* of a file whose schema has *columns* (*required* among
    them), formatted by *problem*."""
    unknown = [n for n in names if n not in columns]
    missing = [c for c in required if c not in names]
    renames = misspelt_required(unknown, missing)
    out = []
    for name in unknown:
        if name in renames:
            meant = renames[name]
            what = f"unknown column, and {meant} is required"
            out.append(problem(path, 1, name, what, f"rename it to {meant}"))
            continue
        hint = did_you_mean(name, columns)
        fix = f"rename it to one of: {', '.join(columns)}, or remove it"
        out.append(problem(path, 1, name, f"unknown column{hint}", fix))
    out.extend(
        problem(
            path,
            1,
            name,
            "required column is missing",
            "add the column to the header (see catalogs/README.md)",
        )
        for name in missing
        if name not in renames.values()
    )
    return out
