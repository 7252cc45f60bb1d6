"""Where the bundled example scenarios and the documentation live, in a source checkout and in an
installed wheel."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent

#: The scenario ``wattgpu plan`` uses when no file is given.
DEFAULT_SCENARIO = "enterprise-fleet.yaml"


def _bundled(folder: str) -> Path:
    """``planner/_<folder>`` in a wheel (force-included there by pyproject.toml), the checkout's
    ``<folder>/`` otherwise."""
    packaged = _PKG / f"_{folder}"
    return packaged if packaged.is_dir() else _PKG.parent / folder


def scenarios_dir() -> Path:
    """``planner/_scenarios`` in a wheel, ``scenarios/`` in a checkout."""
    return _bundled("scenarios")


def default_scenario() -> Path:
    """Path of :data:`DEFAULT_SCENARIO`, the file ``wattgpu plan`` uses when none is given."""
    return scenarios_dir() / DEFAULT_SCENARIO


def docs_dir() -> Path:
    """``planner/_docs`` in a wheel (the Markdown documents of ``docs/``), ``docs/`` in a
    checkout."""
    return _bundled("docs")
