"""Prediction intervals: split-conformal quantiles of grouped out-of-fold residuals.

Intervals are split-conformal on grouped out-of-fold residuals r = log(measured / predicted):
the 5 % and 95 % quantiles of r (computed on folds that hold out whole GPUs, by
:mod:`predictors.training.selection`) widen each prediction multiplicatively, so a 90 % interval
is meant to cover 90 % of rows of an unseen GPU. The power estimator's band on its utilisation
is :class:`predictors.estimators.power.UtilInterval`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def conformal_quantiles(residuals: np.ndarray, level: float = 0.9) -> tuple[float, float]:
    """Split-conformal (lower, upper) quantiles of out-of-fold *residuals* for a central
    *level* interval, with the finite-sample correction; (0, 0) when no residual is finite."""
    r = residuals[np.isfinite(residuals)]
    if r.size == 0:
        return 0.0, 0.0
    alpha = (1.0 - level) / 2.0
    n = r.size
    q_hi = min(1.0, np.ceil((n + 1) * (1.0 - alpha)) / n)
    q_lo = max(0.0, np.floor((n + 1) * alpha) / n - 1.0 / n)
    return float(np.quantile(r, q_lo)), float(np.quantile(r, q_hi))


@dataclass(frozen=True)
class Interval:
    """Multiplicative conformal band: [ŷ·exp(lo), ŷ·exp(hi)] for log residuals log(y/ŷ)."""

    log_lo: float
    log_hi: float
    level: float = 0.9

    @staticmethod
    def calibrate(measured: np.ndarray, predicted: np.ndarray, level: float = 0.9) -> Interval:
        """Quantiles of out-of-fold log residuals (finite-sample conformal correction)."""
        lo, hi = conformal_quantiles(np.log(measured / predicted), level)
        return Interval(lo, hi, level)

    def apply(self, predicted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds ``predicted * exp(log_lo|log_hi)``, units of *predicted*."""
        return predicted * np.exp(self.log_lo), predicted * np.exp(self.log_hi)
