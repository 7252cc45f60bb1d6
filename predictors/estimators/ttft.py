"""Time to first token v3: trees on log TTFT whose one GPU input is the prefill roofline.

``TTFT = max(exp(f), floor)`` where ``f`` is XGBoost on log TTFT (robust pseudo-Huber or mean
regression in log space; the grouped inner folds of :mod:`predictors.training.selection` choose
between them and, for training sets too small for trees, the roofline times a constant) over inputs
that do not depend on the GPU (concurrency, prompt and output length, parameters, layers, TP degree,
precision, MoE, engine, source indicators and ``disaggregated``, the measurement protocol of a
prefill/decode unit's run) plus one that does: ``log_prefill_time_s``, the log prefill roofline of
one prompt (:func:`predictors.physics.prefill_time_s`: its FLOPs at half the peak of the row's
precision plus one read of the weights). ``f`` is monotone non-decreasing in concurrency, prompt
length, parameters and the prefill roofline, non-increasing in TP degree. ``floor`` is that prefill
roofline (FLOPs at half the peak plus one weight read; every measured TTFT is above it), so no
prediction beats the hardware, and a lone prompt's TTFT is the serving model's ``t_1`` where the
replica has no TP or pipeline communication (:func:`ttft_floor_s`).

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

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from predictors import physics
from predictors.estimators.base import XgbEstimator
from predictors.estimators.intervals import AdaptiveInterval, Interval, multiplicative_bounds

#: The TTFT trees' TP input (log TP degree) and GPU input (log prefill roofline of one prompt).
TP_INPUT, ROOFLINE_INPUT = "log_gpu_count", "log_prefill_time_s"
#: The attention-DP ranks of a row (:func:`predictors.features.with_layout`; no tree input).
DP_COLUMN = "data_parallel"


def ttft_floor_s(frame: pl.DataFrame) -> np.ndarray:
    """The prefill roofline of one prompt of every row, seconds: its FLOPs at
    :data:`~predictors.physics.PREFILL_MFU` of peak plus one read of the weights
    (:func:`predictors.physics.prefill_time_s`, the serving model's physics prefill ``t_p``).
    Every measured TTFT in ``../shared`` is above it (4,275 rows, median 32 times), so a
    prediction raised to it moves towards every measurement; until fuzz round 31 the floor was
    the hardware's (FLOPs at peak, or one weight read), and trees that extrapolate flat below
    their training GPUs gave compute-poor GPUs a TTFT at 100 % MFU (H20, Llama-3.1-8B, 8,192
    prompt tokens: 0.889 s at batch 1 against 1.79 s at the lightest load)."""
    floor = frame.select(physics.prefill_time_s().cast(pl.Float64)).to_series()
    return floor.fill_null(np.nan).to_numpy()


@dataclass
class PrefillTtftEstimator(XgbEstimator):
    """:class:`XgbEstimator` on log TTFT (transform ``log_ttft``) with the hardware floor
    applied."""

    def predict(self, frame: pl.DataFrame) -> np.ndarray:
        """Predicted TTFT per row, seconds, never below :func:`ttft_floor_s` nor below what the
        trees give at a TP degree 2^j times smaller with a roofline 2^(j+k) times longer, divided
        by 2^(j+k), for 2^k up to the row's DP ranks (:meth:`_bounded_by_fewer_gpus`)."""
        return np.fmax(self._bounded_by_fewer_gpus(frame), ttft_floor_s(frame))

    def _bounded_by_fewer_gpus(self, frame: pl.DataFrame) -> np.ndarray:
        """The trees' TTFT, never more than linear in the GPU count of the TP group or of the
        attention-DP ranks (fuzz round 18: 81 of 21,831 TP doublings fell up to 3.14 x; fuzz
        round 28: 70 of 14,712 DP doublings up to 2.18 x). The trees fall both in the TP degree
        and with the roofline, which already shrinks with TP and DP, so the two compounded. A
        prediction at TP ``t`` and DP ``d`` is raised to the trees' TTFT at TP ``t / 2^j`` with
        the roofline ``2^(j+k)`` times longer, over ``2^(j+k)`` (every ``j`` with ``2^j <= t`` and
        ``k`` with ``2^k <= d``; the trees have no DP input). The roofline at twice the GPUs of
        either kind is at least half that at the fewer (its terms are over the GPU count, a DP
        rank's copied layers over its own GPUs) and the trees are monotone in both inputs, so
        each term of the bound at ``2t`` (``2d``) is at least half a term of the bound at ``t``
        (``d``): TTFT(2t) >= TTFT(t) / 2 and TTFT(2d) >= TTFT(d) / 2. A maximum of monotone
        functions keeps dominance and the other monotone inputs."""
        best = np.asarray(super().predict(frame), dtype=np.float64)
        if TP_INPUT not in frame.columns or ROOFLINE_INPUT not in frame.columns:
            return best
        tp = np.exp(frame[TP_INPUT].cast(pl.Float64).fill_null(0.0).to_numpy())
        dp = np.ones(frame.height)
        if DP_COLUMN in frame.columns:
            dp = frame[DP_COLUMN].cast(pl.Float64).fill_null(1.0).to_numpy()
        tol = 1 - 1e-9
        j = 0
        while (in_tp := tp >= 2.0**j * tol).any():
            k = 0 if j else 1  # (0, 0) is the prediction itself
            while (rows := np.flatnonzero(in_tp & (dp >= 2.0**k * tol))).size:
                fewer = frame[rows].with_columns(
                    pl.col(TP_INPUT) - j * math.log(2.0),
                    pl.col(ROOFLINE_INPUT) + (j + k) * math.log(2.0),
                )
                best[rows] = np.fmax(best[rows], super().predict(fewer) / 2.0 ** (j + k))
                k += 1
            j += 1
        return best

    def bounds(
        self, frame: pl.DataFrame, predicted: np.ndarray, interval: Interval | AdaptiveInterval
    ) -> tuple[np.ndarray, np.ndarray]:
        """The multiplicative band around *predicted*, its lower end raised to the floor."""
        lo, hi = multiplicative_bounds(interval, frame, predicted)
        return np.fmax(lo, ttft_floor_s(frame)), hi
