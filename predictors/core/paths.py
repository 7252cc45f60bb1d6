"""Where the bundled data lives, in a source checkout and in an installed wheel."""

from __future__ import annotations

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parents[1]  # predictors/ (this file is predictors/core/paths.py)
_REPO = _PKG.parent

#: Environment variable naming a user catalog overlay directory (see ``wattgpu catalog import-hf``).
USER_CATALOG_ENV = "WATTGPU_USER_CATALOG"
#: Environment variable naming the measurement data directory.
DATA_ENV = "WATTGPU_DATA"
#: Environment variable naming the trained predictors to use (a `wattgpu train --output` dir).
MODELS_ENV = "WATTGPU_MODELS"


def catalogs_dir() -> Path:
    """The bundled catalogs: ``predictors/_catalogs`` in a wheel, ``catalogs/`` in a checkout."""
    packaged = _PKG / "_catalogs"
    return packaged if packaged.is_dir() else _REPO / "catalogs"


def trained_dir() -> Path:
    """The shipped trained predictors."""
    return _PKG / "trained"


def models_dir(explicit: Path | None = None) -> Path:
    """The trained predictors every command uses: the explicit directory (``--models``), else
    ``$WATTGPU_MODELS``, else the shipped ones (:func:`trained_dir`)."""
    if explicit is not None:
        return explicit
    env = os.environ.get(MODELS_ENV)
    return Path(env) if env else trained_dir()


def is_source_checkout() -> bool:
    """True when running from a source checkout (``pyproject.toml`` beside the packages), not
    from an installed wheel (where writing next to the code means writing into site-packages)."""
    return (_REPO / "pyproject.toml").is_file() and (_REPO / "predictors").resolve() == _PKG


def user_catalog_dir(explicit: Path | None = None) -> Path | None:
    """The user catalog overlay: the explicit path, else ``$WATTGPU_USER_CATALOG``, else None."""
    if explicit is not None:
        return explicit
    env = os.environ.get(USER_CATALOG_ENV)
    return Path(env) if env else None


def default_data_dir() -> Path | None:
    """``$WATTGPU_DATA``, else ``../shared/data/measurements`` beside the checkout or cwd."""
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env)
    for base in (_REPO, Path.cwd()):
        cand = base.parent / "shared" / "data" / "measurements"
        if cand.is_dir():
            return cand
    return None
