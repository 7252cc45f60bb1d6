"""Time to first token v2: the physical prefill time times a GPU-invariant factor.

``TTFT = max(t_prefill · exp(f), floor)`` where ``t_prefill`` is the prefill roofline of
:func:`predictors.physics.prefill_time_s` (prompt FLOPs at half the peak of the row's precision
plus one read of the weights, over all GPUs of the replica) and ``f`` is XGBoost on inputs that do
not depend on the GPU (concurrency, prompt and output length, parameters, layers, TP degree,
precision, MoE, engine, source indicators), monotone non-decreasing in concurrency, prompt length
and parameters and non-increasing in TP degree. ``floor`` is the larger of the prompt's FLOPs at
peak and one read of the weights at peak bandwidth, so no prediction beats the hardware.

Because ``f`` is the same for every GPU, a GPU with at least another's FLOPS and bandwidth is
never predicted to take longer to the first token, the dominance guarantee of the ITL model.
What the factor learns (queueing at high concurrency, scheduling, disaggregated serving) comes
from the measurements: mostly aiconfigurator runs at concurrency 1–8192.
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
    """:class:`XgbEstimator` on ``log(TTFT / prefill time)`` with the hardware floor applied."""

    def predict(self, frame: pl.DataFrame) -> np.ndarray:
        """Predicted TTFT per row, seconds, never below :func:`ttft_floor_s`."""
        return np.fmax(super().predict(frame), ttft_floor_s(frame))

    def bounds(
        self, frame: pl.DataFrame, predicted: np.ndarray, interval: Interval | AdaptiveInterval
    ) -> tuple[np.ndarray, np.ndarray]:
        """The multiplicative band around *predicted*, its lower end raised to the floor."""
        lo, hi = multiplicative_bounds(interval, frame, predicted)
        return np.fmax(lo, ttft_floor_s(frame)), hi
