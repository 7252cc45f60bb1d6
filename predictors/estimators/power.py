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
        u = utilisation(frame, y)
        ok = np.isfinite(u)
        label = np.clip(u[ok], 0.0, 1.0)
        self.booster = train_booster(
            self._xgb_params(), frame, self.features, ok, label, self.num_boost_round
        )
        return self

    def predict_u(self, frame: pl.DataFrame) -> np.ndarray:
        """Predicted utilisation ``u`` of every row, in [0, 1]."""
        if self.booster is None:
            raise RuntimeError(f"estimator {self.name} is not fitted")
        u = booster_output(self.booster, frame, self.features)
        return np.clip(u, 0.0, 1.0)

    def predict(self, frame: pl.DataFrame) -> np.ndarray:
        """Predicted power per GPU of every row, W: ``idle + (TDP - idle) * u``, in [idle, TDP]."""
        idle, tdp = _idle_tdp(frame)
        return np.asarray(idle + (tdp - idle) * self.predict_u(frame))

    def calibrate(self, frame: pl.DataFrame, y: np.ndarray, predicted: np.ndarray) -> UtilInterval:
        """The additive conformal band on ``u`` of out-of-fold power predictions *predicted* (W)."""
        return UtilInterval.calibrate(utilisation(frame, y), utilisation(frame, predicted))

    def residuals(self, frame: pl.DataFrame, y: np.ndarray, predicted: np.ndarray) -> np.ndarray:
        """Utilisation residuals ``u(y) − u(predicted)`` its interval is calibrated on."""
        return utilisation(frame, y) - utilisation(frame, predicted)

    def bounds(
        self,
        frame: pl.DataFrame,
        predicted: np.ndarray,
        interval: UtilInterval | AdaptiveInterval,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper power bounds per GPU, W, inside [idle, TDP] and around *predicted*."""
        idle, tdp = _idle_tdp(frame)
        u = utilisation(frame, predicted)
        lo_off, hi_off = interval.offsets(frame)
        lo = np.clip(u + np.minimum(lo_off, 0.0), 0.0, 1.0)
        hi = np.clip(u + np.maximum(hi_off, 0.0), 0.0, 1.0)
        return np.asarray(idle + (tdp - idle) * lo), np.asarray(idle + (tdp - idle) * hi)
