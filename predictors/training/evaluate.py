"""Held-out evaluation on the splits of :mod:`predictors.training.splits` (CV, LOGO, LOLO, LOAO,
newer).

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
from typing import Any

import numpy as np
import polars as pl

from predictors.estimators.base import XgbEstimator
from predictors.estimators.candidates import (
    itl_candidates,
    itl_v2_candidates,
    paper_itl,
    paper_power,
    power_candidates,
    power_v2_candidates,
    ttft_candidates,
    ttft_v3_candidates,
)
from predictors.training import baselines
from predictors.training.selection import select
from predictors.training.splits import SPLITS, folds

__all__ = ["SPLITS", "TARGETS", "Target", "methods", "out_of_fold", "target_rows"]


@dataclass(frozen=True)
class Target:
    """A predicted quantity: its column in the measurement table and its methods."""

    name: str
    column: str
    unit: str
    ours: Callable[..., list[Any]]
    """Our candidate configurations (v2 targets accept ``seed=``)."""
    paper: Callable[[], XgbEstimator] | None
    """The WattGPU paper's recipe for this target (None: the paper has none, e.g. TTFT)."""
    physical: dict[str, Callable[[pl.DataFrame], np.ndarray]]
    v1: Callable[[], list[Any]] | None = None
    """The configurations shipped before the v2 predictors, re-run on the same folds."""


TARGETS: dict[str, Target] = {
    "power": Target(
        "power",
        "power_w_per_gpu",
        "W",
        power_v2_candidates,
        paper_power,
        {"tdp": baselines.tdp_power_w, "load_scaled_tdp": baselines.load_scaled_tdp_power_w},
        power_candidates,
    ),
    "itl": Target(
        "itl",
        "itl_s",
        "s",
        itl_v2_candidates,
        paper_itl,
        {"roofline": baselines.roofline_itl_s},
        itl_candidates,
    ),
    "ttft": Target(
        "ttft",
        "ttft_s",
        "s",
        ttft_v3_candidates,
        None,
        {"prefill_roofline": baselines.prefill_roofline_ttft_s},
        ttft_candidates,
    ),
}
#: Fewer rows than this: the target is not trained or evaluated (said in the model card).
MIN_TARGET_ROWS = 50


def methods(target: Target) -> tuple[str, ...]:
    """Methods evaluated for *target*: ours, v1, paper recipe (if defined), physical baselines."""
    paper = ("paper_recipe",) if target.paper is not None else ()
    v1 = ("v1",) if target.v1 is not None else ()
    return ("ours", *v1, *paper, *target.physical)


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
        & pl.col("prefill_time_s").is_finite()
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
    for _, train, test in folds(frame, split):
        train_frame = frame[train]
        if method in ("ours", "v1"):
            candidates = target.v1 if method == "v1" and target.v1 else target.ours
            chosen = select(candidates, train_frame, y[train], split, calibrate=intervals)
            test_frame = frame[test]
            pred[test] = chosen.estimator.predict(test_frame)
            if intervals:
                lo[test], hi[test] = chosen.estimator.bounds(
                    test_frame, pred[test], chosen.interval
                )
        elif target.paper is not None:
            est = target.paper()
            est.fit(train_frame, y[train])
            pred[test] = est.predict(frame[test])
    return OutOfFold(target.name, split, method, pred, lo, hi)
