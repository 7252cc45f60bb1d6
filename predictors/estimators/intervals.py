"""Prediction intervals: locally adaptive conformal bands on grouped out-of-fold residuals.

A residual is ``r = log(measured / predicted)`` (ITL, TTFT) or ``u_measured − u_predicted``
(power utilisation). :class:`Interval` is the plain split-conformal band: the 5 % and 95 %
quantiles of out-of-fold ``r``, the same width for every row. :class:`AdaptiveInterval` is
locally adaptive conformal calibration: each row gets a **difficulty** ``d ≥ 0``
(:func:`difficulty`), a weighted sum of what the model lacks for that row
(:data:`DIFFICULTY_FEATURES`: its GPU, architecture or vendor unmeasured, few measured GPUs of its
vendor, its unmeasured GPU released after every measured one, its LLM, engine or source
unmeasured, a measured latency that includes the prefill (Argonne's latency / length; never a
prediction, which is a decode ITL), tensor parallelism, mixture of experts),
computed against the :class:`Evidence` the model was trained on. The band is

    r ∈ [min(q_lo, 0) · exp(d), max(q_hi, 0) · exp(d)]

with non-negative weights fitted to ``log |r|`` and ``q_lo``, ``q_hi`` the conformal quantiles of
the scaled residuals ``r / exp(d)``: the lowest and highest over the kinds of held-out group, so
the band reaches its level on every kind of fold (unmeasured GPU, architecture, newer GPU, LLM,
random rows), not only on their mixture. The residuals come from folds that hold out whole groups of
the training set (:mod:`predictors.training.calibration`), so they show how wrong the model is
when it lacks each kind of evidence. The width is non-decreasing in ``d``, and every band holds
its point prediction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

#: What a row may lack, each a column of :func:`difficulty_features` (all ≥ 0).
DIFFICULTY_FEATURES: tuple[str, ...] = (
    "gpu_unseen",
    "architecture_unseen",
    "vendor_unseen",
    "vendor_sparse",
    "years_newer",
    "llm_unseen",
    "engine_unseen",
    "source_unseen",
    "itl_includes_prefill",
    "log2_gpu_count",
    "moe",
)
#: Years a GPU's release lies after the newest measured one are counted up to this.
MAX_YEARS_NEWER = 6.0
#: A prediction frame's flag: the row's GPU id was measured, but its catalog row gives it other
#: specs (a user row re-rating it, e.g. power-capped): ``gpu_unseen`` then, as ``gpu_measured``
#: says (:func:`predictors.estimators.domain.gpu_measured_series`). Training and calibration
#: frames carry no such column: their rows have the specs they were measured with.
RESPECIFIED_COLUMN = "gpu_respecified"


def conformal_quantiles(
    residuals: np.ndarray, level: float = 0.9, weights: np.ndarray | None = None
) -> tuple[float, float]:
    """Split-conformal (lower, upper) quantiles of out-of-fold *residuals* for a central
    *level* interval, with the finite-sample correction; (0, 0) when no residual is finite.
    *weights* (optional, ≥ 0) weigh the residuals, e.g. equally per kind of held-out group."""
    finite = np.isfinite(residuals)
    r = residuals[finite]
    if r.size == 0:
        return 0.0, 0.0
    alpha = (1.0 - level) / 2.0
    n = r.size
    q_hi = min(1.0, np.ceil((n + 1) * (1.0 - alpha)) / n)
    q_lo = max(0.0, np.floor((n + 1) * alpha) / n - 1.0 / n)
    if weights is None:
        return float(np.quantile(r, q_lo)), float(np.quantile(r, q_hi))
    w = weights[finite]
    return _weighted_quantile(r, w, q_lo), _weighted_quantile(r, w, q_hi)


def _weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    order = np.argsort(values, kind="stable")
    v, w = values[order], weights[order]
    cum = np.cumsum(w)
    total = cum[-1]
    if total <= 0:
        return float(np.quantile(values, q))
    idx = int(np.searchsorted(cum, q * total, side="left"))
    return float(v[min(idx, v.size - 1)])


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

    def offsets(self, frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """The band's (lower, upper) residual offsets for every row of *frame* (the same)."""
        n = frame.height
        return np.full(n, self.log_lo), np.full(n, self.log_hi)


def _names(frame: pl.DataFrame, column: str) -> frozenset[str]:
    if column not in frame.columns:
        return frozenset()
    return frozenset(str(v) for v in frame[column].drop_nulls().unique().to_list())


@dataclass(frozen=True)
class Evidence:
    """What a model was trained on: the measured GPUs, architectures, vendors, LLMs, engines and
    sources, and the newest measured GPU's release year."""

    gpus: frozenset[str]
    architectures: frozenset[str]
    vendors: frozenset[str]
    llms: frozenset[str]
    engines: frozenset[str]
    sources: frozenset[str]
    newest_release_year: float
    gpus_per_vendor: tuple[tuple[str, int], ...] = ()
    """(vendor, measured GPUs of that vendor), sorted."""

    @staticmethod
    def of(frame: pl.DataFrame) -> Evidence:
        """The evidence of the training rows *frame* (catalog facts joined)."""
        years = frame["release_year"].cast(pl.Float64).drop_nulls()
        per_vendor = (
            frame.select("vendor", "gpu").drop_nulls().unique().group_by("vendor").len()
            if frame.height
            else pl.DataFrame({"vendor": [], "len": []})
        )
        return Evidence(
            gpus=_names(frame, "gpu"),
            architectures=_names(frame, "architecture"),
            vendors=_names(frame, "vendor"),
            llms=_names(frame, "model"),
            engines=_names(frame, "engine"),
            sources=_names(frame, "source"),
            newest_release_year=float(years.max()) if years.len() else float("nan"),  # type: ignore[arg-type]
            gpus_per_vendor=tuple(sorted((str(v), int(n)) for v, n in per_vendor.iter_rows())),
        )

    def to_json(self) -> dict[str, Any]:
        """JSON form (sorted lists) for the model card."""
        return {
            "gpus": sorted(self.gpus),
            "architectures": sorted(self.architectures),
            "vendors": sorted(self.vendors),
            "llms": sorted(self.llms),
            "engines": sorted(self.engines),
            "sources": sorted(self.sources),
            "newest_release_year": self.newest_release_year,
            "gpus_per_vendor": dict(self.gpus_per_vendor),
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Evidence:
        """Inverse of :meth:`to_json`."""
        return Evidence(
            gpus=frozenset(data["gpus"]),
            architectures=frozenset(data["architectures"]),
            vendors=frozenset(data["vendors"]),
            llms=frozenset(data["llms"]),
            engines=frozenset(data["engines"]),
            sources=frozenset(data["sources"]),
            newest_release_year=float(data["newest_release_year"]),
            gpus_per_vendor=tuple(
                sorted((str(k), int(v)) for k, v in data.get("gpus_per_vendor", {}).items())
            ),
        )


def _unseen(frame: pl.DataFrame, column: str, seen: frozenset[str]) -> np.ndarray:
    """1.0 where the row's *column* is not in *seen*; 0.0 where it is or the column is absent
    (a prediction carries no ``source``: it is expressed in the reference source, which is
    measured)."""
    if column not in frame.columns:
        return np.zeros(frame.height)
    values = frame[column].cast(pl.String).fill_null("")
    return (~values.is_in(sorted(seen))).to_numpy().astype(np.float64)


def _vendor_sparse(frame: pl.DataFrame, evidence: Evidence) -> np.ndarray:
    """1 / (1 + measured GPUs of the row's vendor): 1 for an unmeasured vendor, small for a
    vendor with many measured GPUs."""
    counts = {v: 1.0 / (1.0 + n) for v, n in evidence.gpus_per_vendor}
    vendors = frame["vendor"].cast(pl.String)
    share = vendors.replace_strict(counts, default=1.0, return_dtype=pl.Float64)
    return share.fill_null(1.0).to_numpy().astype(np.float64)


def _flag(frame: pl.DataFrame, column: str) -> np.ndarray:
    if column not in frame.columns:
        return np.zeros(frame.height)
    return np.clip(frame[column].cast(pl.Float64).fill_null(0.0).to_numpy(), 0.0, 1.0)


def difficulty_features(frame: pl.DataFrame, evidence: Evidence) -> np.ndarray:
    """(rows × :data:`DIFFICULTY_FEATURES`) matrix, every entry ≥ 0: what each row of *frame*
    lacks in the model's *evidence* (its GPU unseen: by id, or :data:`RESPECIFIED_COLUMN`; the
    years it is newer than the newest measured GPU count only for an unseen GPU)."""
    year = frame["release_year"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    newer = np.nan_to_num(year - evidence.newest_release_year, nan=0.0)
    gpus = frame["gpu_count"].cast(pl.Float64).fill_null(1.0).to_numpy()
    gpu_unseen = np.maximum(_unseen(frame, "gpu", evidence.gpus), _flag(frame, RESPECIFIED_COLUMN))
    columns = [
        gpu_unseen,
        _unseen(frame, "architecture", evidence.architectures),
        _unseen(frame, "vendor", evidence.vendors),
        _vendor_sparse(frame, evidence),
        # a measured GPU's year is a label: what was measured is the hardware (a held-out GPU
        # is unseen in its fold, and a measured one is never newer than the newest measured)
        np.clip(newer, 0.0, MAX_YEARS_NEWER) * gpu_unseen,
        _unseen(frame, "model", evidence.llms),
        _unseen(frame, "engine", evidence.engines),
        _unseen(frame, "source", evidence.sources),
        _flag(frame, "prefill_in_itl"),
        np.log2(np.maximum(gpus, 1.0)),
        _flag(frame, "is_moe"),
    ]
    return np.column_stack(columns) if frame.height else np.zeros((0, len(columns)))


def difficulty(frame: pl.DataFrame, evidence: Evidence, weights: Mapping[str, float]) -> np.ndarray:
    """The difficulty ``d ≥ 0`` of every row of *frame*: :func:`difficulty_features` against
    *evidence*, weighted by *weights* (per feature name, ≥ 0; missing names weigh 0). The
    residual scale of a row is ``exp(d)``."""
    w = np.array([max(float(weights.get(k, 0.0)), 0.0) for k in DIFFICULTY_FEATURES])
    return np.asarray(difficulty_features(frame, evidence) @ w)


def fit_scale_weights(
    residuals: np.ndarray, features: np.ndarray, sample_weight: np.ndarray
) -> dict[str, float]:
    """Non-negative weights of ``log |r| ≈ c + features · w`` (weighted least squares, free
    intercept ``c``): how much each missing piece of evidence widens the residuals. (SciPy is
    imported here, at training time only: it costs 0.5 s of every command's start-up.)"""
    from scipy.optimize import lsq_linear

    ok = np.isfinite(residuals) & np.all(np.isfinite(features), axis=1)
    r, x, sw = np.abs(residuals[ok]), features[ok], sample_weight[ok]
    if r.size == 0:
        return dict.fromkeys(DIFFICULTY_FEATURES, 0.0)
    eps = 0.1 * float(np.median(r)) + 1e-12
    target = np.log(r + eps)
    root = np.sqrt(sw)
    design = np.column_stack([np.ones(r.size), x]) * root[:, None]
    lower = np.r_[-np.inf, np.zeros(x.shape[1])]
    upper = np.full(x.shape[1] + 1, np.inf)
    sol = lsq_linear(design, target * root, bounds=(lower, upper), method="bvls")
    return {k: round(float(v), 12) for k, v in zip(DIFFICULTY_FEATURES, sol.x[1:], strict=True)}


def _worst_kind_quantiles(
    residuals: np.ndarray, kinds: np.ndarray, level: float
) -> tuple[float, float]:
    """The lowest lower and highest upper conformal quantile over the kinds of held-out group,
    so the band reaches *level* on each kind of fold, not only on their mixture."""
    pairs = [conformal_quantiles(residuals[kinds == k], level) for k in np.unique(kinds)]
    if not pairs:
        return 0.0, 0.0
    return min(p[0] for p in pairs), max(p[1] for p in pairs)


@dataclass(frozen=True)
class AdaptiveInterval:
    """Locally adaptive conformal band: residual offsets ``[min(q_lo,0), max(q_hi,0)] · exp(d)``
    with ``d`` = :func:`difficulty` of the row against *evidence* under *weights*."""

    weights: dict[str, float]
    q_lo: float
    q_hi: float
    evidence: Evidence
    level: float = 0.9
    residual: str = "log_ratio"
    """``log_ratio`` (log(measured / predicted)) or ``utilisation`` (u_measured − u_predicted)."""
    plain: tuple[float, float] = (0.0, 0.0)
    """The non-adaptive split-conformal quantiles of the same residuals (for comparison)."""

    @staticmethod
    def calibrate(
        residuals: np.ndarray,
        features: np.ndarray,
        kinds: np.ndarray,
        evidence: Evidence,
        level: float = 0.9,
        residual: str = "log_ratio",
    ) -> AdaptiveInterval:
        """Fit the scale weights and the conformal quantiles of the scaled *residuals*
        (out-of-fold; *features* each row's :func:`difficulty_features` against the evidence of
        the fold that predicted it; *kinds* the kind of held-out group, each weighed equally)."""
        _, inverse, counts = np.unique(kinds, return_inverse=True, return_counts=True)
        sample_weight = 1.0 / counts[inverse]
        weights = fit_scale_weights(residuals, features, sample_weight)
        w = np.array([weights[k] for k in DIFFICULTY_FEATURES])
        scaled = residuals / np.exp(features @ w)
        q_lo, q_hi = _worst_kind_quantiles(scaled, kinds, level)
        plain = _worst_kind_quantiles(residuals, kinds, level)
        return AdaptiveInterval(weights, q_lo, q_hi, evidence, level, residual, plain)

    def scale(self, frame: pl.DataFrame) -> np.ndarray:
        """``exp(d)`` of every row of *frame*."""
        return np.exp(difficulty(frame, self.evidence, self.weights))

    def offsets_at(self, difficulty_d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lower ≤ 0, upper ≥ 0) residual offsets at difficulties *difficulty_d*."""
        s = np.exp(np.asarray(difficulty_d, dtype=np.float64))
        return min(self.q_lo, 0.0) * s, max(self.q_hi, 0.0) * s

    def offsets(self, frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(lower ≤ 0, upper ≥ 0) residual offsets of every row of *frame*."""
        return self.offsets_at(difficulty(frame, self.evidence, self.weights))

    def to_json(self) -> dict[str, Any]:
        """JSON form for the model card (``adaptive`` key of a target's interval)."""
        return {
            "residual": self.residual,
            "q_lo": self.q_lo,
            "q_hi": self.q_hi,
            "weights": dict(self.weights),
            "evidence": self.evidence.to_json(),
            "level": self.level,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any], plain: tuple[float, float]) -> AdaptiveInterval:
        """Inverse of :meth:`to_json` (*plain*: the card's non-adaptive quantiles)."""
        return AdaptiveInterval(
            {k: float(v) for k, v in data["weights"].items()},
            float(data["q_lo"]),
            float(data["q_hi"]),
            Evidence.from_json(data["evidence"]),
            float(data["level"]),
            str(data["residual"]),
            plain,
        )


def multiplicative_bounds(
    interval: Interval | AdaptiveInterval, frame: pl.DataFrame, predicted: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``predicted · exp(offsets)`` of a log-ratio band, units of *predicted*."""
    lo, hi = interval.offsets(frame)
    return predicted * np.exp(lo), predicted * np.exp(hi)
