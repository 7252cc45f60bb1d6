"""Power v2: ``P = idle + (TDP − idle) · u`` with ``u`` in (0, 1) learned from utilisations.

``u`` is XGBoost with a logistic output on :data:`predictors.feature_sets.POWER_FEATURES` (the
roofline compute share and busy share of the decode step, batch, context, engine, precision,
source), monotone non-decreasing in the three inputs that grow with batch, so:

* the point estimate lies in [idle, TDP] of the GPU by construction;
* power is non-decreasing in batch (each monotone input is non-decreasing in batch, the others do
  not depend on it).

The target is ``u = (P − idle) / (TDP − idle)`` clipped to [0, 1]. Intervals are additive in
``u``: locally adaptive conformal bands of grouped out-of-fold ``u`` residuals
(:mod:`predictors.estimators.intervals`), clipped to [0, 1], hence inside [idle, TDP] as well.
Idle is the catalog's ``idle_power_w`` (measured where published).

A GPU of a pipeline-parallel replica works only its stage's share of each token cycle
(:func:`predictors.physics.stage_duty`: ``min(b, PP) / PP``, or ``1 / PP`` for engines whose
stages run one after another) and idles the rest, so the trees learn the utilisation of a
working GPU, ``u / duty``, and a prediction is ``duty · u_busy`` (duty 1 without PP). Duty and
``u_busy`` are non-decreasing in batch, so power still is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import numpy as np
import polars as pl

from predictors.estimators.base import booster_output, train_booster, xgb_params
from predictors.estimators.intervals import AdaptiveInterval, conformal_quantiles


@dataclass(frozen=True)
class UtilInterval:
    """Additive conformal band on the utilisation: [û + lo, û + hi] clipped to [0, 1]."""

    lo: float
    hi: float
    level: float = 0.9

    @staticmethod
    def calibrate(
        measured_u: np.ndarray, predicted_u: np.ndarray, level: float = 0.9
    ) -> UtilInterval:
        """Quantiles of out-of-fold utilisation residuals (finite-sample conformal correction)."""
        lo, hi = conformal_quantiles(measured_u - predicted_u, level)
        return UtilInterval(lo, hi, level)

    def offsets(self, frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(lower ≤ 0, upper ≥ 0) offsets on ``u`` of every row of *frame* (the same)."""
        n = frame.height
        return np.full(n, min(self.lo, 0.0)), np.full(n, max(self.hi, 0.0))


def _duty(frame: pl.DataFrame) -> np.ndarray:
    """Each row's :func:`predictors.physics.stage_duty` (1 where the frame has none)."""
    if "stage_duty" not in frame.columns:
        return np.ones(frame.height)
    duty = frame["stage_duty"].cast(pl.Float64).fill_null(1.0).to_numpy()
    return np.asarray(np.clip(np.nan_to_num(duty, nan=1.0), 1e-9, 1.0))


def _idle_tdp(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    tdp = frame["tdp_w"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    idle = frame["idle_power_w"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    return idle, tdp


def utilisation(frame: pl.DataFrame, power_w: np.ndarray) -> np.ndarray:
    """``(P − idle) / (TDP − idle)`` of measured or predicted power (not clipped)."""
    idle, tdp = _idle_tdp(frame)
    return np.asarray((power_w - idle) / (tdp - idle))


@dataclass
class PowerUtilEstimator:
    """Power per GPU between the GPU's idle power and its TDP."""

    name: str
    features: tuple[str, ...]
    params: dict[str, Any]
    num_boost_round: int
    monotone: dict[str, int] = field(default_factory=dict)
    booster: Any = None
    transform: str = "power_utilisation_idle_to_tdp"
    residual_kind: ClassVar[str] = "utilisation"
    """Its residuals are differences of utilisation (not log ratios)."""

    def _xgb_params(self) -> dict[str, Any]:
        fixed = {"objective": "reg:logistic", "tree_method": "hist", "seed": 0, "nthread": 1}
        return xgb_params(fixed, self.params, self.monotone, self.features)

    def fit(self, frame: pl.DataFrame, y: np.ndarray) -> Self:
        """Fit the trees to the utilisation of measured power *y* (W per GPU), clipped to [0, 1]."""
        u = utilisation(frame, y) / _duty(frame)  # a working GPU's utilisation
        ok = np.isfinite(u)
        label = np.clip(u[ok], 0.0, 1.0)
        self.booster = train_booster(
            self._xgb_params(), frame, self.features, ok, label, self.num_boost_round
        )
        return self

    def predict_u(self, frame: pl.DataFrame) -> np.ndarray:
        """Predicted utilisation ``u`` of every row, in [0, 1]: a working GPU's, times its
        pipeline duty."""
        if self.booster is None:
            raise RuntimeError(f"estimator {self.name} is not fitted")
        u = booster_output(self.booster, frame, self.features)
        return np.asarray(np.clip(u, 0.0, 1.0) * _duty(frame))

    def predict(self, frame: pl.DataFrame) -> np.ndarray:
        """Predicted power per GPU of every row, W: ``idle + (TDP - idle) * u``, in [idle, TDP]."""
        idle, tdp = _idle_tdp(frame)
        return np.asarray(idle + (tdp - idle) * self.predict_u(frame))

    def calibrate(self, frame: pl.DataFrame, y: np.ndarray, predicted: np.ndarray) -> UtilInterval:
        """The additive conformal band on a working GPU's ``u`` of out-of-fold power predictions
        *predicted* (W)."""
        duty = _duty(frame)
        return UtilInterval.calibrate(
            utilisation(frame, y) / duty, utilisation(frame, predicted) / duty
        )

    def residuals(self, frame: pl.DataFrame, y: np.ndarray, predicted: np.ndarray) -> np.ndarray:
        """Utilisation residuals ``u(y) − u(predicted)`` of a working GPU (divided by the
        pipeline duty) its interval is calibrated on."""
        return (utilisation(frame, y) - utilisation(frame, predicted)) / _duty(frame)

    def bounds(
        self,
        frame: pl.DataFrame,
        predicted: np.ndarray,
        interval: UtilInterval | AdaptiveInterval,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper power bounds per GPU, W, inside [idle, TDP] and around *predicted*."""
        idle, tdp = _idle_tdp(frame)
        duty = _duty(frame)
        u = utilisation(frame, predicted) / duty  # the band is on a working GPU's utilisation
        lo_off, hi_off = interval.offsets(frame)
        lo = np.clip(u + np.minimum(lo_off, 0.0), 0.0, 1.0) * duty
        hi = np.clip(u + np.maximum(hi_off, 0.0), 0.0, 1.0) * duty
        return np.asarray(idle + (tdp - idle) * lo), np.asarray(idle + (tdp - idle) * hi)
