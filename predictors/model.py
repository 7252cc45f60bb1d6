"""Gradient-boosted estimators on physics-normalised targets (v1, the paper's recipe, TTFT).

The shipped power and ITL predictors (v2) are :mod:`predictors.power_model` and
:mod:`predictors.itl_model`; :func:`itl_v2_candidates` and :func:`power_v2_candidates` list the
configurations model selection chooses from. Every estimator has ``fit``, ``predict``,
``calibrate`` (interval from out-of-fold predictions) and ``bounds`` (interval of predictions).

An :class:`XgbEstimator` is XGBoost on a *target transform* of the measured value:

* ``power_over_tdp``: z = power per GPU / TDP (the paper's normalisation);
* ``log_itl``: z = log ITL (the paper's ITL recipe);
* ``log_itl_over_roofline``: z = log(ITL / roofline ITL) — the trees learn the efficiency
  relative to physics, so an unseen GPU's bandwidth and FLOPS enter through the roofline rather
  than through tree splits that cannot extrapolate.

Intervals are split-conformal on grouped out-of-fold residuals r = log(measured / predicted):
the 5 % and 95 % quantiles of r (computed by :mod:`predictors.evaluate` on folds that hold out whole
GPUs) widen each prediction multiplicatively, so a 90 % interval is meant to cover 90 % of rows of
an unseen GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from predictors.features import feature_matrix
from predictors.metrics import conformal_quantiles

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

    def fit(self, frame: pl.DataFrame, y: np.ndarray, weight: np.ndarray | None = None) -> None:
        """Fit on rows of *frame* (features added) with measured values *y* (W or s)."""
        import xgboost as xgb

        z = to_target(self.transform, frame, y)
        ok = np.isfinite(z)
        x = feature_matrix(frame.filter(pl.Series(ok)), self.features).to_numpy()
        dtrain = xgb.DMatrix(
            x, label=z[ok], weight=None if weight is None else weight[ok], missing=np.nan
        )
        self.booster = xgb.train(self._xgb_params(), dtrain, num_boost_round=self.num_boost_round)

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


def paper_power() -> XgbEstimator:
    """The paper's power recipe: max_depth 6, 200 trees, reg_lambda 150 on power/TDP."""
    from predictors.features import PAPER_FEATURES

    return XgbEstimator(
        name="paper_recipe",
        transform="power_over_tdp",
        features=PAPER_FEATURES,
        params={"max_depth": 6, "reg_lambda": 150.0, "eta": 0.3},
        num_boost_round=200,
    )


def paper_itl() -> XgbEstimator:
    """The paper's ITL recipe: max_depth 5, 100 trees on log ITL."""
    from predictors.features import PAPER_FEATURES

    return XgbEstimator(
        name="paper_recipe",
        transform="log_itl",
        features=PAPER_FEATURES,
        params={"max_depth": 5, "eta": 0.3},
        num_boost_round=100,
    )


#: Monotone constraints of our power estimator: more concurrent work never lowers power.
POWER_MONOTONE: dict[str, int] = {"batch_size": 1, "log_batch": 1}
_OUR_PARAMS: dict[str, Any] = {
    "max_depth": 4,
    "eta": 0.1,
    "subsample": 0.8,
    "colsample_bytree": 0.8,
    "min_child_weight": 5.0,
    "reg_lambda": 10.0,
}
_OUR_ROUNDS = 200


def _ours(
    name: str, transform: str, features: tuple[str, ...], monotone: dict[str, int]
) -> XgbEstimator:
    return XgbEstimator(name, transform, features, dict(_OUR_PARAMS), _OUR_ROUNDS, dict(monotone))


def power_candidates() -> list[XgbEstimator]:
    """v1 power configurations (shipped before issue 9; kept as the ``v1`` evaluation method)."""
    from predictors.features import OUR_FEATURES, TRANSFER_FEATURES

    return [
        _ours("physics-full", "power_over_tdp", OUR_FEATURES, POWER_MONOTONE),
        _ours("physics-transfer", "power_over_tdp", TRANSFER_FEATURES, POWER_MONOTONE),
    ]


def itl_candidates() -> list[XgbEstimator]:
    """v1 ITL configurations (shipped before issue 9; kept as the ``v1`` evaluation method)."""
    from predictors.features import OUR_FEATURES, TRANSFER_FEATURES

    return [
        _ours("physics-full", "log_itl_over_roofline", OUR_FEATURES, {}),
        _ours("physics-transfer", "log_itl_over_roofline", TRANSFER_FEATURES, {}),
    ]


def ttft_candidates() -> list[XgbEstimator]:
    """v1 time-to-first-token configuration: log(TTFT / prefill roofline) on GPU-identity inputs
    (shipped before TTFT v2; kept as the ``v1`` evaluation method)."""
    from predictors.features import TTFT_FEATURES

    return [_ours("physics-full", "log_ttft_over_prefill", TTFT_FEATURES, {})]


#: XGBoost settings of the v2 residual and utilisation trees (shallow: they learn corrections).
_V2_PARAMS: dict[str, Any] = {
    "max_depth": 4,
    "eta": 0.1,
    "subsample": 0.8,
    "colsample_bytree": 0.8,
    "min_child_weight": 5.0,
    "reg_lambda": 10.0,
}
_V2_ROUNDS = 150


def itl_v2_candidates(seed: int = 0) -> list[Any]:
    """ITL v2 configurations; grouped inner CV picks one inside every training set.

    ``physics``: the step-time model alone; ``physics+residual``: plus trees on GPU-invariant
    inputs (the same factor for every GPU, so dominance holds by construction). *seed* seeds the
    trees' row and column sampling (the shipped models use 0; the evaluation's seed-stability
    table varies it).
    """
    from predictors.features import ITL_RESIDUAL_FEATURES, ITL_RESIDUAL_MONOTONE
    from predictors.itl_model import PhysicsItlEstimator

    def make(name: str, features: tuple[str, ...], rounds: int) -> PhysicsItlEstimator:
        return PhysicsItlEstimator(
            name, features, dict(_V2_PARAMS, seed=seed), rounds, dict(ITL_RESIDUAL_MONOTONE)
        )

    return [
        make("physics", ITL_RESIDUAL_FEATURES, 0),
        make("physics+residual", ITL_RESIDUAL_FEATURES, _V2_ROUNDS),
    ]


def power_v2_candidates(seed: int = 0) -> list[Any]:
    """Power v2: idle + (TDP − idle) · u, u from utilisations (monotone in batch).

    *seed* seeds the trees' row and column sampling, as in :func:`itl_v2_candidates`.
    """
    from predictors.features import POWER_FEATURES, POWER_MONOTONE
    from predictors.power_model import PowerUtilEstimator

    return [
        PowerUtilEstimator(
            "utilisation",
            POWER_FEATURES,
            dict(_V2_PARAMS, seed=seed),
            _V2_ROUNDS,
            dict(POWER_MONOTONE),
        )
    ]


def ttft_v2_candidates(seed: int = 0) -> list[Any]:
    """TTFT v2 configurations: the prefill time alone (one fitted constant factor) or times
    GPU-invariant trees; grouped inner CV picks one inside every training set."""
    from predictors.features import TTFT_V2_FEATURES, TTFT_V2_MONOTONE
    from predictors.ttft_model import PrefillTtftEstimator

    def make(name: str, rounds: int) -> PrefillTtftEstimator:
        return PrefillTtftEstimator(
            name,
            "log_ttft_over_prefill",
            TTFT_V2_FEATURES,
            dict(_OUR_PARAMS, seed=seed),
            rounds,
            dict(TTFT_V2_MONOTONE),
        )

    return [make("physics", 0), make("physics+residual", _OUR_ROUNDS)]
