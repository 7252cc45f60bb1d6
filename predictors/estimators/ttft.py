"""Time to first token v3: trees on log TTFT whose one GPU input is the prefill roofline.

``TTFT = max(exp(f), floor)`` where ``f`` is XGBoost on log TTFT (robust pseudo-Huber or mean
regression in log space; the grouped inner folds of :mod:`predictors.training.selection` choose
between them and, for training sets too small for trees, the roofline times a constant) over inputs
that do not depend on the GPU (concurrency, prompt and output length, parameters, layers, TP degree,
precision, MoE, engine, source indicators and ``disaggregated``, the measurement protocol of a
prefill/decode unit's run) plus one that does: ``log_prefill_time_s``, the log prefill roofline of
one prompt (:func:`predictors.physics.prefill_time_s`: its FLOPs at half the peak of the row's
precision plus one read of the weights). ``f`` is monotone non-decreasing in concurrency, prompt
length, parameters and the prefill roofline, non-increasing in TP degree. ``floor`` is the larger of
the prompt's FLOPs at peak and one read of the weights at peak bandwidth, so no prediction beats the
hardware.

A GPU with at least another's FLOPS and bandwidth has a prefill roofline and a floor no longer than
the other's, so, every other input being the same, its predicted TTFT is never longer (dominance).
The measured TTFTs (mostly aiconfigurator's closed-loop runs at concurrency 1–8192) are dominated by
what the roofline of one prompt leaves out: the engine's fixed cost of a request, the other users'
prompts and decode steps sharing the GPU, waiting for a KV slot. v2 multiplied the roofline by a
GPU-invariant factor, which scales those costs with 1/FLOPS: held out by GPU it was off by 64 %
(median). With the roofline as a monotone input instead of a multiplier, the trees learn how much of
the time to first token follows the GPU's speed (docs/method.md, "TTFT").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from predictors import physics
from predictors.estimators.base import XgbEstimator
from predictors.estimators.intervals import AdaptiveInterval, Interval, multiplicative_bounds


def ttft_floor_s(frame: pl.DataFrame) -> np.ndarray:
    """max(prompt FLOPs at peak, one weight read at peak bandwidth) of every row, seconds."""
    floor = frame.select(
        pl.max_horizontal(physics.prefill_compute_s(mfu=1.0), physics.weight_read_s()).cast(
            pl.Float64
        )
    ).to_series()
    return floor.fill_null(np.nan).to_numpy()


@dataclass
class PrefillTtftEstimator(XgbEstimator):
    """:class:`XgbEstimator` on log TTFT (transform ``log_ttft``) with the hardware floor
    applied."""

    def predict(self, frame: pl.DataFrame) -> np.ndarray:
        """Predicted TTFT per row, seconds, never below :func:`ttft_floor_s`."""
        return np.fmax(super().predict(frame), ttft_floor_s(frame))

    def bounds(
        self, frame: pl.DataFrame, predicted: np.ndarray, interval: Interval | AdaptiveInterval
    ) -> tuple[np.ndarray, np.ndarray]:
        """The multiplicative band around *predicted*, its lower end raised to the floor."""
        lo, hi = multiplicative_bounds(interval, frame, predicted)
        return np.fmax(lo, ttft_floor_s(frame)), hi
