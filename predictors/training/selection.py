"""Nested model selection and interval calibration inside one training set.

:func:`select` scores every candidate configuration by out-of-fold MdAPE on inner folds grouped
like the outer split (whole GPUs held out for LOGO, whole LLMs for LOLO), refits the best on the
whole training set, and calibrates its locally adaptive conformal interval on the chosen
configuration's residuals on grouped folds of the same training set
(:mod:`predictors.training.calibration`). Nothing outside the training set is looked at.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from predictors.training.calibration import calibrate as calibrate_adaptive
from predictors.training.metrics import mdape
from predictors.training.splits import inner_folds


@dataclass
class Selection:
    """The chosen, refitted estimator with its interval and the inner scores of every config."""

    estimator: Any
    """Any estimator with ``fit``, ``predict``, ``calibrate`` and ``bounds``."""
    interval: Any
    scores: dict[str, float]
    folds: str = "grouped"
    """``grouped`` (like the outer split), or ``rows`` when the training set holds one group
    (one GPU: nothing to hold out) and random rows chose instead."""


def select(
    candidates: Callable[[], list[Any]],
    frame: pl.DataFrame,
    y: np.ndarray,
    split: str,
    *,
    calibrate: bool = True,
) -> Selection:
    """Pick, refit and calibrate the best of *candidates* on this training set (*calibrate*
    false: no interval, ``interval`` is None, for callers that score points only)."""
    configs = candidates()
    folds = inner_folds(frame, split)
    kind = "grouped"
    if not folds:  # one group (data of one GPU): random rows choose, and the card says so
        folds, kind = inner_folds(frame, "cv5"), "rows"
    oof = {c.name: np.full(frame.height, np.nan) for c in configs}
    for train, test in folds:
        if train.size == 0 or test.size == 0:
            continue
        for fresh in candidates():
            fresh.fit(frame[train], y[train])
            oof[fresh.name][test] = fresh.predict(frame[test])
    scores = {name: mdape(y, pred) for name, pred in oof.items()}
    finite = {k: v for k, v in scores.items() if np.isfinite(v)}
    best_name = min(finite, key=lambda k: finite[k]) if finite else configs[0].name
    best = next(c for c in configs if c.name == best_name)
    best.fit(frame, y)
    if not calibrate:
        return Selection(best, None, scores, kind)

    def make_best() -> Any:
        return next(c for c in candidates() if c.name == best_name)

    return Selection(best, calibrate_adaptive(make_best, frame, y), scores, kind)
