"""The ``--models`` option: which trained predictors a command predicts with.

``wattgpu train --output DIR`` writes a model directory; ``--models DIR`` (or
``$WATTGPU_MODELS``) makes ``predict``, ``compare``, ``plan``, ``report``, ``pareto`` and
``sweep`` use it instead of the shipped predictors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from predictors.core.paths import MODELS_ENV

if TYPE_CHECKING:
    from predictors.api import Predictor

ModelsOpt = Annotated[
    Path | None,
    typer.Option(
        "--models",
        help="Trained predictors: a directory written by `wattgpu train --output DIR` "
        f"(default: ${MODELS_ENV}, else the shipped predictors).",
    ),
]


def chosen_predictor(models: Path | None, user_catalog: Path | None = None) -> Predictor | None:
    """The predictor of ``--models`` bound to the catalog of ``--user-catalog``; None when
    neither is given (the command then loads its default: ``$WATTGPU_MODELS`` or shipped)."""
    if models is None and user_catalog is None:
        return None
    from predictors.api import Predictor
    from predictors.catalog.store import load_catalog
    from predictors.estimators.artifacts import load_chosen

    return Predictor(load_chosen(models, "--models"), load_catalog(user_catalog))
