"""Held-out evaluation: 5-fold CV, leave-one-GPU-out (LOGO) and leave-one-LLM-out (LOLO).

For every target × split × method the rows are predicted only by models that never saw the
held-out group: the estimator is fitted on the training part of the fold, and our 90 % interval is
calibrated on out-of-fold residuals computed *inside* that training part (inner folds grouped the
same way as the outer split), so nothing about the held-out GPU or LLM influences training,
calibration or model selection. Physical baselines need no fitting and are computed on the same
rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from predictors import baselines
from predictors.model import Interval, XgbEstimator, ours_itl, ours_power, paper_itl, paper_power

SPLITS: tuple[str, ...] = ("cv5", "logo", "lolo")
SPLIT_GROUP: dict[str, str | None] = {"cv5": None, "logo": "gpu", "lolo": "model"}


@dataclass(frozen=True)
class Target:
    """A predicted quantity: its column in the measurement table and its methods."""

    name: str
    column: str
    unit: str
    ours: Callable[[], XgbEstimator]
    paper: Callable[[], XgbEstimator]
    physical: dict[str, Callable[[pl.DataFrame], np.ndarray]]


TARGETS: dict[str, Target] = {
    "power": Target(
        "power",
        "power_w_per_gpu",
        "W",
        ours_power,
        paper_power,
        {"tdp": baselines.tdp_power_w, "load_scaled_tdp": baselines.load_scaled_tdp_power_w},
    ),
    "itl": Target(
        "itl",
        "itl_s",
        "s",
        ours_itl,
        paper_itl,
        {"roofline": baselines.roofline_itl_s},
    ),
}


def methods(target: Target) -> tuple[str, ...]:
    return ("ours", "paper_recipe", *target.physical)


def folds(
    frame: pl.DataFrame, split: str, n_folds: int = 5, seed: int = 0
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(held-out label, train indices, test indices) for each fold of *split*."""
    n = frame.height
    group = SPLIT_GROUP[split]
    if group is None:
        order = np.random.default_rng(seed).permutation(n)
        parts = np.array_split(order, n_folds)
        return [
            (f"fold{i}", np.setdiff1d(np.arange(n), p, assume_unique=True), np.sort(p))
            for i, p in enumerate(parts)
        ]
    labels = frame[group].to_numpy()
    out = []
    for value in sorted(set(labels.tolist())):
        test = np.flatnonzero(labels == value)
        train = np.flatnonzero(labels != value)
        out.append((str(value), train, test))
    return out


def inner_folds(
    frame: pl.DataFrame, split: str, n_folds: int = 5, seed: int = 1
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Folds inside a training set, grouped like the outer split (at most *n_folds* groups each)."""
    group = SPLIT_GROUP[split]
    if group is None:
        return [(tr, te) for _, tr, te in folds(frame, "cv5", n_folds, seed)]
    values = sorted(set(frame[group].to_list()))
    if len(values) < 2:
        return []
    rng = np.random.default_rng(seed)
    shuffled = [values[i] for i in rng.permutation(len(values))]
    buckets = [shuffled[i::n_folds] for i in range(min(n_folds, len(values)))]
    labels = frame[group].to_numpy()
    out = []
    for bucket in buckets:
        test_mask = np.isin(labels, bucket)
        out.append((np.flatnonzero(~test_mask), np.flatnonzero(test_mask)))
    return out


def calibrate_interval(
    make: Callable[[], XgbEstimator], frame: pl.DataFrame, y: np.ndarray, split: str
) -> Interval:
    """Conformal band from grouped out-of-fold residuals inside *frame* (a training set)."""
    pred = np.full(frame.height, np.nan)
    for train, test in inner_folds(frame, split):
        if train.size == 0 or test.size == 0:
            continue
        est = make()
        est.fit(frame[train], y[train])
        pred[test] = est.predict(frame[test])
    ok = np.isfinite(pred)
    return Interval.calibrate(y[ok], pred[ok])


@dataclass(frozen=True)
class OutOfFold:
    """Held-out predictions of one target × split × method."""

    target: str
    split: str
    method: str
    predicted: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def target_rows(frame: pl.DataFrame, target: Target) -> pl.DataFrame:
    """Rows with a finite, positive measured value of *target* and the specs its methods need."""
    return frame.filter(
        pl.col(target.column).is_not_null()
        & (pl.col(target.column) > 0)
        & pl.col("tdp_w").is_not_null()
        & pl.col("roofline_itl_s").is_finite()
    )


def out_of_fold(
    frame: pl.DataFrame, target: Target, split: str, method: str, *, intervals: bool = True
) -> OutOfFold:
    """Predict every row of *frame* with a model that did not see its held-out group."""
    y = frame[target.column].to_numpy().astype(np.float64)
    pred = np.full(frame.height, np.nan)
    lo = np.full(frame.height, np.nan)
    hi = np.full(frame.height, np.nan)
    if method in target.physical:
        pred = target.physical[method](frame)
        return OutOfFold(target.name, split, method, pred, lo, hi)
    make = target.ours if method == "ours" else target.paper
    for _, train, test in folds(frame, split):
        train_frame = frame[train]
        est = make()
        est.fit(train_frame, y[train])
        pred[test] = est.predict(frame[test])
        if intervals and method == "ours":
            band = calibrate_interval(make, train_frame, y[train], split)
            lo[test], hi[test] = band.apply(pred[test])
    return OutOfFold(target.name, split, method, pred, lo, hi)
