"""ITL v2: the analytical step time times a bounded, GPU-invariant residual.

``ITL = max(t_step · exp(clip(f(x), R_LO, R_HI)), floor)``:

* ``t_step``: :mod:`predictors.estimators.step`, a few GPU-independent parameters fitted by robust
  regression on every training row;
* ``f``: XGBoost on :data:`predictors.feature_sets.ITL_RESIDUAL_FEATURES` (workload, LLM, engine,
  precision, measurement source; never a GPU column), monotone non-decreasing in batch, context
  and parameters, trained on the log residual less each measured GPU's own level
  (:func:`gpu_level`). For a given workload it is the same number on every GPU, so the ratio of two
  GPUs' ITL is the ratio of their step times: a GPU at least as strong in bandwidth, FLOPS and
  interconnect is never predicted slower;
* ``floor``: the step's bytes at :data:`ETA_BW_MAX` of peak bandwidth and its FLOPs at
  :data:`MFU_MAX` of peak FLOPS, so no prediction implies a better-than-realistic efficiency.

Intervals are multiplicative locally adaptive conformal bands on grouped out-of-fold residuals
(:mod:`predictors.estimators.intervals`), with the lower bound raised to the roofline (bytes at
peak bandwidth, FLOPs at peak FLOPS) plus the layout's transfers at zero latency.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any, Self

import numpy as np
import polars as pl

from predictors.estimators.base import booster_output, train_booster, xgb_params
from predictors.estimators.intervals import AdaptiveInterval, Interval, multiplicative_bounds
from predictors.estimators.pipeline_guard import stage_group_itl
from predictors.estimators.step import (
    StepInputs,
    StepParams,
    fit_step_params,
    layout_comm_s,
    step_times,
)

#: Ceilings of achieved bandwidth and model FLOPS utilisation behind the ITL floor.
ETA_BW_MAX = 0.9
MFU_MAX = 0.7
#: Bounds of the multiplicative residual exp(f) of the trees.
RESIDUAL_BOUNDS = (math.log(0.25), math.log(4.0))


_STEP_CACHE: dict[str, StepParams] = {}


def gpu_level(frame: pl.DataFrame, z: np.ndarray) -> np.ndarray:
    """Each row's GPU level: how far its (GPU, source) median of *z* lies from the median of
    those medians over the source's GPUs (0 where the frame names no GPU or source).

    The residual trees learn ``z`` minus this level: what the step model misses in the same way
    on every GPU of a source (its protocol, the workload's shape). A measured GPU's own level is
    unknowable for a GPU nobody measured, and trees that learn it pass it on, weighted by row
    counts, to the GPUs beside it: held out, a GPU then inherits the levels of the others and
    not its own, which pushes the ratio of two GPUs' predictions against the measured one.
    The median over GPUs is the typical measured GPU and moves little when one is left out.
    """
    if "gpu" not in frame.columns or "source" not in frame.columns:
        return np.zeros(frame.height)
    rows = frame.select(
        pl.col("gpu").cast(pl.String).fill_null(""),
        pl.col("source").cast(pl.String).fill_null(""),
        pl.Series("z", z),
    )
    per_gpu = (
        rows.filter(pl.col("z").is_finite())
        .group_by("gpu", "source")
        .agg(pl.col("z").median().alias("gpu_median"))
    )
    per_gpu = per_gpu.with_columns(
        (pl.col("gpu_median") - pl.col("gpu_median").median().over("source")).alias("level")
    )
    joined = rows.join(per_gpu, on=["gpu", "source"], how="left", maintain_order="left")
    return np.asarray(joined["level"].fill_null(0.0).to_numpy(), dtype=np.float64)


def _cached_step_fit(frame: pl.DataFrame, y: np.ndarray) -> StepParams:
    """:func:`fit_step_params`, memoised on the training rows (candidates share one fit)."""
    x = StepInputs.of(frame)
    h = hashlib.sha256(np.ascontiguousarray(y, dtype=np.float64).tobytes())
    lay = x.layout
    for arr in (x.bytes_read, x.flops, x.bandwidth_b_s, x.peak_flops, x.gpus, x.layers):
        h.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
    for arr in (lay.tp, lay.pp, lay.dp, lay.domain, lay.scale_out_b_s):
        h.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
    h.update("|".join(x.engine.tolist()).encode())
    h.update("|".join(x.vendor.tolist()).encode())
    h.update("|".join(frame["gpu"].cast(pl.String).fill_null("").to_list()).encode())
    key = h.hexdigest()
    if key not in _STEP_CACHE:
        if len(_STEP_CACHE) > 64:
            _STEP_CACHE.clear()
        _STEP_CACHE[key] = fit_step_params(frame, y)
    cached = _STEP_CACHE[key]
    return StepParams.from_json(cached.to_json())


@dataclass
class PhysicsItlEstimator:
    """Step-time physics plus a bounded XGBoost residual (``num_boost_round`` 0: physics only)."""

    name: str
    features: tuple[str, ...]
    params: dict[str, Any]
    num_boost_round: int
    monotone: dict[str, int] = field(default_factory=dict)
    step: StepParams | None = None
    booster: Any = None
    transform: str = "log_itl_over_step_time"

    def _xgb_params(self) -> dict[str, Any]:
        fixed = {"objective": "reg:pseudohubererror", "tree_method": "hist", "seed": 0}
        fixed |= {"nthread": 1, "huber_slope": 0.3}
        return xgb_params(fixed, self.params, self.monotone, self.features)

    def step_time_s(self, frame: pl.DataFrame) -> np.ndarray:
        """Modelled decode-step time of every row, seconds (physics only, no residual)."""
        if self.step is None:
            raise RuntimeError(f"estimator {self.name} is not fitted")
        return step_times(self.step, StepInputs.of(frame)).total

    @staticmethod
    def floor_s(frame: pl.DataFrame) -> np.ndarray:
        """The lowest ITL physics allows at realistic ceilings of bandwidth and FLOPS use, plus
        the layout's transfers (TP all-reduces, all-to-all, pipeline) at zero collective
        latency: a step never beats moving its activations over the links it has."""
        x = StepInputs.of(frame)
        tp, other = layout_comm_s(x.layout, x.batch, x.hidden, x.layers, x.interconnect_b_s, 0.0)
        return np.asarray(
            np.maximum(x.memory_floor_s() / ETA_BW_MAX, x.compute_floor_s() / MFU_MAX) + tp + other
        )

    def fit(self, frame: pl.DataFrame, y: np.ndarray) -> Self:
        """Fit step parameters to measured ITL *y* (s), then residual trees on log(y/step)."""

        self.step = _cached_step_fit(frame, y)
        z = np.log(y / self.step_time_s(frame))
        ok = np.isfinite(z)
        if self.num_boost_round <= 0:
            self.booster = None
            return self
        label = np.clip((z - gpu_level(frame, z))[ok], *RESIDUAL_BOUNDS)
        self.booster = train_booster(
            self._xgb_params(), frame, self.features, ok, label, self.num_boost_round
        )
        return self

    def residual(self, frame: pl.DataFrame) -> np.ndarray:
        """The trees' log factor on the step time, clipped to :data:`RESIDUAL_BOUNDS`."""
        if self.booster is None:
            return np.zeros(frame.height)
        z = booster_output(self.booster, frame, self.features)
        return np.clip(z, *RESIDUAL_BOUNDS)

    def predict(self, frame: pl.DataFrame) -> np.ndarray:
        """Predicted ITL per row, s: step time x exp(residual), never below :meth:`floor_s`
        nor, for a pipeline-parallel row, below its stage group's
        (:mod:`predictors.estimators.pipeline_guard`)."""
        return stage_group_itl(frame, self._unguarded(frame), self._unguarded)

    def _unguarded(self, frame: pl.DataFrame) -> np.ndarray:
        t = self.step_time_s(frame) * np.exp(self.residual(frame))
        return np.asarray(np.maximum(t, self.floor_s(frame)))

    def calibrate(self, frame: pl.DataFrame, y: np.ndarray, predicted: np.ndarray) -> Interval:
        """The multiplicative conformal band of out-of-fold ITL predictions *predicted* (s)."""
        return Interval.calibrate(y, predicted)

    def residuals(self, frame: pl.DataFrame, y: np.ndarray, predicted: np.ndarray) -> np.ndarray:
        """Log residuals ``log(y / predicted)`` its interval is calibrated on."""
        return np.asarray(np.log(y / predicted))

    def bounds(
        self, frame: pl.DataFrame, predicted: np.ndarray, interval: Interval | AdaptiveInterval
    ) -> tuple[np.ndarray, np.ndarray]:
        """ITL bounds, s: lower at least the roofline plus the layout's transfers at zero
        latency, upper at least *predicted*."""
        lo, hi = multiplicative_bounds(interval, frame, predicted)
        x = StepInputs.of(frame)
        tp, other = layout_comm_s(x.layout, x.batch, x.hidden, x.layers, x.interconnect_b_s, 0.0)
        roofline = np.maximum(x.memory_floor_s(), x.compute_floor_s()) + tp + other
        return np.maximum(lo, roofline), np.maximum(hi, predicted)
