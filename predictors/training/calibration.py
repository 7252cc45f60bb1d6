"""Locally adaptive conformal calibration of a chosen configuration inside one training set.

:func:`calibrate` refits the configuration model selection chose on folds of the training set
that each hold out one kind of group (:data:`FOLD_KINDS`):

* ``gpu``: one whole GPU at a time (the situation of an unmeasured GPU: every other GPU measured);
* ``architecture``: every GPU of one architecture at a time;
* ``newer``: every GPU released in or after a year (the newest, the second newest and the median
  release year of the training set), trained on the older ones;
* ``llm``: whole LLMs;
* ``rows``: random rows (a measured GPU, LLM and engine at another workload).

Each held-out row's residual is paired with its :func:`~predictors.estimators.intervals.
difficulty_features` against the evidence of the fold that predicted it, and
:meth:`~predictors.estimators.intervals.AdaptiveInterval.calibrate` fits the difficulty weights
and the conformal quantiles on all of them, each kind weighed equally. Nothing outside the
training set is looked at; the configuration (a model choice) was made on inner folds of the same
training set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

from predictors.estimators.intervals import (
    DIFFICULTY_FEATURES,
    AdaptiveInterval,
    Evidence,
    difficulty_features,
)

FOLD_KINDS: tuple[str, ...] = ("gpu", "architecture", "newer", "llm", "rows")
#: Folds of the LLM kind (LLMs dealt at random, seeded) and of random rows.
N_FOLDS = 3
#: GPUs and architectures are held out one at a time up to this many values (then dealt into
#: this many folds): holding out a third of the GPUs at once removes whole sources' hardware and
#: gives residuals far worse than an unmeasured GPU's (see docs/accuracy.md, decided after
#: looking).
MAX_ONE_OUT_GROUPS = 16
SEED = 2


def _grouped(
    frame: pl.DataFrame, column: str, n_folds: int = N_FOLDS
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Folds holding out whole values of *column*: one value per fold when there are at most
    *n_folds* values, else the values dealt at random (seeded) into *n_folds* folds."""
    labels = frame[column].cast(pl.String).fill_null("").to_numpy()
    values = sorted(set(labels.tolist()))
    if len(values) < 2:
        return []
    shuffled = [values[i] for i in np.random.default_rng(SEED).permutation(len(values))]
    out = []
    for i in range(min(n_folds, len(values))):
        test = np.isin(labels, shuffled[i::n_folds])
        out.append((np.flatnonzero(~test), np.flatnonzero(test)))
    return out


def _newer(frame: pl.DataFrame) -> list[tuple[np.ndarray, np.ndarray]]:
    year = frame["release_year"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    years = sorted({float(y) for y in year[np.isfinite(year)]})
    if len(years) < 2:
        return []
    cutoffs = sorted({years[-1], years[-2], years[len(years) // 2]} - {years[0]})
    return [(np.flatnonzero(year < c), np.flatnonzero(year >= c)) for c in cutoffs]


def _rows(frame: pl.DataFrame) -> list[tuple[np.ndarray, np.ndarray]]:
    order = np.random.default_rng(SEED).permutation(frame.height)
    parts = np.array_split(order, N_FOLDS)
    return [(np.setdiff1d(order, p), np.sort(p)) for p in parts]


def calibration_folds(frame: pl.DataFrame) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(kind, train indices, test indices) of every calibration fold of the training set."""
    out: list[tuple[str, np.ndarray, np.ndarray]] = []
    makers: dict[str, Callable[[], list[tuple[np.ndarray, np.ndarray]]]] = {
        "gpu": lambda: _grouped(frame, "gpu", MAX_ONE_OUT_GROUPS),
        "architecture": lambda: _grouped(frame, "architecture", MAX_ONE_OUT_GROUPS),
        "newer": lambda: _newer(frame),
        "llm": lambda: _grouped(frame, "model"),
        "rows": lambda: _rows(frame),
    }
    for kind in FOLD_KINDS:
        for train, test in makers[kind]():
            if train.size and test.size:
                out.append((kind, train, test))
    return out


def calibrate(
    make: Callable[[], Any], frame: pl.DataFrame, y: np.ndarray, level: float = 0.9
) -> AdaptiveInterval:
    """The :class:`AdaptiveInterval` of the configuration *make* builds (fresh, unfitted), from
    its residuals on :func:`calibration_folds` of the training rows *frame* with measured *y*."""
    residuals: list[np.ndarray] = []
    features: list[np.ndarray] = []
    kinds: list[np.ndarray] = []
    residual_kind = "log_ratio"
    for kind, train, test in calibration_folds(frame):
        est = make().fit(frame[train], y[train])
        test_frame = frame[test]
        r = np.asarray(est.residuals(test_frame, y[test], est.predict(test_frame)))
        residual_kind = str(getattr(est, "residual_kind", "log_ratio"))
        residuals.append(r)
        features.append(difficulty_features(test_frame, Evidence.of(frame[train])))
        kinds.append(np.full(test.size, kind))
    evidence = Evidence.of(frame)
    if not residuals:
        empty = np.zeros((0, len(DIFFICULTY_FEATURES)))
        return AdaptiveInterval.calibrate(
            np.zeros(0), empty, np.zeros(0, dtype=str), evidence, level, residual_kind
        )
    return AdaptiveInterval.calibrate(
        np.concatenate(residuals),
        np.vstack(features),
        np.concatenate(kinds),
        evidence,
        level,
        residual_kind,
    )
