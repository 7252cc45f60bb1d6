"""The estimator protocol and the base XGBoost estimator on physics-normalised targets.

Every estimator has ``fit`` (returns itself), ``predict``, ``calibrate`` (its interval from
out-of-fold predictions) and ``bounds`` (the interval of predictions): :class:`Estimator`.
The shipped power, ITL and TTFT estimators are :mod:`predictors.estimators.power`,
:mod:`predictors.estimators.itl` and :mod:`predictors.estimators.ttft`; the configurations model
selection chooses from are in :mod:`predictors.estimators.candidates`.

An :class:`XgbEstimator` is XGBoost on a *target transform* of the measured value:

* ``power_over_tdp``: z = power per GPU / TDP (the paper's normalisation);
* ``log_itl``: z = log ITL (the paper's ITL recipe);
* ``log_itl_over_roofline``: z = log(ITL / roofline ITL) — the trees learn the efficiency
  relative to physics, so an unseen GPU's bandwidth and FLOPS enter through the roofline rather
  than through tree splits that cannot extrapolate;
* ``log_ttft_over_prefill``: z = log(TTFT / prefill roofline).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Self

import numpy as np
import polars as pl

from predictors.estimators.intervals import Interval
from predictors.features import feature_matrix


class Estimator(Protocol):
    """What model selection, evaluation, artifacts and :class:`~predictors.api.Predictor` use."""

    name: str

    def fit(self, frame: pl.DataFrame, y: np.ndarray) -> Self:
        """Fit on rows of *frame* (features added) with measured values *y*; returns itself."""
        ...

    def predict(self, frame: pl.DataFrame) -> np.ndarray:
        """Predicted values (W or s) for every row of *frame*."""
        ...

    def calibrate(self, frame: pl.DataFrame, y: np.ndarray, predicted: np.ndarray) -> Any:
        """The interval of out-of-fold predictions *predicted* of measured *y*."""
        ...

    def bounds(
        self, frame: pl.DataFrame, predicted: np.ndarray, interval: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper interval bounds of *predicted*."""
        ...


TRANSFORMS: tuple[str, ...] = (
    "power_over_tdp",
    "log_itl",
    "log_itl_over_roofline",
    "log_ttft_over_prefill",
)


def to_target(transform: str, frame: pl.DataFrame, y: np.ndarray) -> np.ndarray:
    """Measured values (W or s) -> the transformed training target."""
    if transform == "power_over_tdp":
        return y / frame["tdp_w"].to_numpy()
    if transform == "log_itl":
        return np.log(y)
    if transform == "log_itl_over_roofline":
        return np.log(y / frame["roofline_itl_s"].to_numpy())
    if transform == "log_ttft_over_prefill":
        return np.log(y / frame["prefill_time_s"].to_numpy())
    raise ValueError(f"unknown target transform {transform!r}; use one of {TRANSFORMS}")


def from_target(transform: str, frame: pl.DataFrame, z: np.ndarray) -> np.ndarray:
    """Transformed predictions -> W or s."""
    if transform == "power_over_tdp":
        return z * frame["tdp_w"].to_numpy()
    if transform == "log_itl":
        return np.exp(z)
    if transform == "log_itl_over_roofline":
        return np.exp(z) * frame["roofline_itl_s"].to_numpy()
    if transform == "log_ttft_over_prefill":
        return np.exp(z) * frame["prefill_time_s"].to_numpy()
    raise ValueError(f"unknown target transform {transform!r}; use one of {TRANSFORMS}")


@dataclass
class XgbEstimator:
    """XGBoost regressor on a transformed target of one quantity (power or ITL)."""

    name: str
    transform: str
    features: tuple[str, ...]
    params: dict[str, Any]
    num_boost_round: int
    monotone: dict[str, int] = field(default_factory=dict)
    booster: Any = None

    def _xgb_params(self) -> dict[str, Any]:
        params = {"objective": "reg:squarederror", "tree_method": "hist", "seed": 0, "nthread": 1}
        params.update(self.params)
        if self.monotone:
            params["monotone_constraints"] = (
                "(" + ",".join(str(self.monotone.get(f, 0)) for f in self.features) + ")"
            )
        return params

    def fit(self, frame: pl.DataFrame, y: np.ndarray) -> Self:
        """Fit on rows of *frame* (features added) with measured values *y* (W or s)."""
        import xgboost as xgb

        z = to_target(self.transform, frame, y)
        ok = np.isfinite(z)
        x = feature_matrix(frame.filter(pl.Series(ok)), self.features).to_numpy()
        dtrain = xgb.DMatrix(x, label=z[ok], missing=np.nan)
        self.booster = xgb.train(self._xgb_params(), dtrain, num_boost_round=self.num_boost_round)
        return self

    def predict(self, frame: pl.DataFrame) -> np.ndarray:
        """Predicted W or s for every row of *frame* (features added)."""
        import xgboost as xgb

        if self.booster is None:
            raise RuntimeError(f"estimator {self.name} is not fitted")
        x = feature_matrix(frame, self.features).to_numpy()
        z = self.booster.predict(xgb.DMatrix(x, missing=np.nan))
        return np.asarray(from_target(self.transform, frame, z.astype(np.float64)))

    def calibrate(self, frame: pl.DataFrame, y: np.ndarray, predicted: np.ndarray) -> Interval:
        """The multiplicative conformal band of out-of-fold predictions *predicted*."""
        return Interval.calibrate(y, predicted)

    def bounds(
        self, frame: pl.DataFrame, predicted: np.ndarray, interval: Interval
    ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper interval bounds of *predicted*."""
        return interval.apply(predicted)
