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
* ``log_ttft_over_prefill``: z = log(TTFT / prefill roofline) (TTFT v1);
* ``log_ttft``: z = log TTFT (TTFT v3: the GPU enters through a monotone prefill-roofline input).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Self

import numpy as np
import polars as pl

from predictors.estimators.intervals import AdaptiveInterval, Interval, multiplicative_bounds
from predictors.estimators.tree_memo import memoised_outputs, remembers
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

    def residuals(self, frame: pl.DataFrame, y: np.ndarray, predicted: np.ndarray) -> np.ndarray:
        """The residuals its interval is calibrated on (e.g. log(y / predicted))."""
        ...


TRANSFORMS: tuple[str, ...] = (
    "power_over_tdp",
    "log_itl",
    "log_itl_over_roofline",
    "log_ttft_over_prefill",
    "log_ttft",
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
    if transform == "log_ttft":
        return np.log(y)
    raise ValueError(f"unknown target transform {transform!r}; use one of {TRANSFORMS}")


#: The largest |log| a prediction is taken back from: e^50 (5e21 s or times the physics) is
#: beyond any latency or ratio, and its products and squares stay finite, where np.exp of a wild
#: tree output (a model trained on latencies in ms read as s) overflowed with a RuntimeWarning.
MAX_LOG_TARGET = 50.0


def from_target(transform: str, frame: pl.DataFrame, z: np.ndarray) -> np.ndarray:
    """Transformed predictions -> W or s."""
    if transform == "power_over_tdp":
        return z * frame["tdp_w"].to_numpy()
    z = np.clip(z, -MAX_LOG_TARGET, MAX_LOG_TARGET)  # NaN stays NaN
    if transform == "log_itl":
        return np.exp(z)
    if transform == "log_itl_over_roofline":
        return np.exp(z) * frame["roofline_itl_s"].to_numpy()
    if transform == "log_ttft_over_prefill":
        return np.exp(z) * frame["prefill_time_s"].to_numpy()
    if transform == "log_ttft":
        return np.exp(z)
    raise ValueError(f"unknown target transform {transform!r}; use one of {TRANSFORMS}")


def xgb_params(
    fixed: dict[str, Any],
    params: dict[str, Any],
    monotone: dict[str, int],
    features: tuple[str, ...],
) -> dict[str, Any]:
    """XGBoost training parameters: the estimator's *fixed* settings (objective, seed, …), then
    the configuration's *params*, then the *monotone* constraints in the order of *features*."""
    out = dict(fixed)
    out.update(params)
    if monotone:
        out["monotone_constraints"] = (
            "(" + ",".join(str(monotone.get(f, 0)) for f in features) + ")"
        )
    return out


def train_booster(
    params: dict[str, Any],
    frame: pl.DataFrame,
    features: tuple[str, ...],
    ok: np.ndarray,
    label: np.ndarray,
    num_boost_round: int,
) -> Any:
    """XGBoost trees trained with *params* on the rows of *frame* where *ok* (their *features*)
    with targets *label* (one per kept row)."""
    import xgboost as xgb

    x = feature_matrix(frame.filter(pl.Series(ok)), features).to_numpy()
    dtrain = xgb.DMatrix(x, label=label, missing=np.nan)
    return xgb.train(params, dtrain, num_boost_round=num_boost_round)


def booster_output(booster: Any, frame: pl.DataFrame, features: tuple[str, ...]) -> np.ndarray:
    """The raw output of *booster* (the transformed target) for every row of *frame*, float64
    (in-place prediction: the same trees and values as through a DMatrix, without building one).

    A row's output depends on its own feature row only, so the trees are evaluated once per
    distinct feature row, and rows met in earlier calls come from the booster's memo
    (:mod:`predictors.estimators.tree_memo`: trees on GPU-invariant features see the same row
    for every GPU of a sweep and in every chunk of a large batch). A booster whose rows rarely
    repeat has dropped its memo: its rows are evaluated directly."""
    matrix = feature_matrix(frame, features)
    x = matrix.to_numpy()

    def evaluate(rows: np.ndarray) -> np.ndarray:
        return np.asarray(booster.inplace_predict(rows, missing=np.nan), dtype=np.float64)

    if x.shape[0] < 2 or not remembers(booster):
        return evaluate(x)
    return memoised_outputs(booster, x, matrix.hash_rows(seed=0).to_numpy(), evaluate)


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
        fixed = {"objective": "reg:squarederror", "tree_method": "hist", "seed": 0, "nthread": 1}
        return xgb_params(fixed, self.params, self.monotone, self.features)

    def fit(self, frame: pl.DataFrame, y: np.ndarray) -> Self:
        """Fit on rows of *frame* (features added) with measured values *y* (W or s)."""
        z = to_target(self.transform, frame, y)
        ok = np.isfinite(z)
        self.booster = train_booster(
            self._xgb_params(), frame, self.features, ok, z[ok], self.num_boost_round
        )
        return self

    def predict(self, frame: pl.DataFrame) -> np.ndarray:
        """Predicted W or s for every row of *frame* (features added)."""
        if self.booster is None:
            raise RuntimeError(f"estimator {self.name} is not fitted")
        z = booster_output(self.booster, frame, self.features)
        return np.asarray(from_target(self.transform, frame, z))

    def calibrate(self, frame: pl.DataFrame, y: np.ndarray, predicted: np.ndarray) -> Interval:
        """The multiplicative conformal band of out-of-fold predictions *predicted*."""
        return Interval.calibrate(y, predicted)

    def residuals(self, frame: pl.DataFrame, y: np.ndarray, predicted: np.ndarray) -> np.ndarray:
        """Log residuals ``log(y / predicted)`` its interval is calibrated on."""
        return np.asarray(np.log(y / predicted))

    def bounds(
        self, frame: pl.DataFrame, predicted: np.ndarray, interval: Interval | AdaptiveInterval
    ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper interval bounds of *predicted*."""
        return multiplicative_bounds(interval, frame, predicted)
