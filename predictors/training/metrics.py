"""Accuracy metrics: MdAPE, Pearson r, within-group Kendall τ, interval coverage and width."""

from __future__ import annotations

import math

import numpy as np
import polars as pl


def mdape(measured: np.ndarray, predicted: np.ndarray) -> float:
    """Median absolute percentage error, in percent."""
    ok = np.isfinite(measured) & np.isfinite(predicted) & (measured != 0)
    if not ok.any():
        return math.nan
    return float(np.median(np.abs(predicted[ok] - measured[ok]) / np.abs(measured[ok])) * 100.0)


def pearson_r(measured: np.ndarray, predicted: np.ndarray) -> float:
    """Pearson correlation of measured and predicted values."""
    ok = np.isfinite(measured) & np.isfinite(predicted)
    if ok.sum() < 3 or np.std(measured[ok]) == 0 or np.std(predicted[ok]) == 0:
        return math.nan
    return float(np.corrcoef(measured[ok], predicted[ok])[0, 1])


def kendall_tau(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall τ-b of two equally long arrays (NaN when fewer than 2 untied pairs)."""
    n = a.size
    if n < 2:
        return math.nan
    i, j = np.triu_indices(n, k=1)
    da = np.sign(a[i] - a[j])
    db = np.sign(b[i] - b[j])
    concordant_minus_discordant = float(np.sum(da * db))
    n_a = float(np.sum(da != 0))
    n_b = float(np.sum(db != 0))
    if n_a == 0 or n_b == 0:
        return math.nan
    return concordant_minus_discordant / math.sqrt(n_a * n_b)


def grouped_kendall_tau(
    frame: pl.DataFrame, measured: str, predicted: str, group_by: list[str], rank_over: str
) -> tuple[float, int]:
    """Mean Kendall τ of the ranking of *rank_over* values within each group.

    Example: rank GPUs (``rank_over="gpu"``) within each (model, workload) group. Groups with
    fewer than two distinct *rank_over* values are skipped. Returns (mean τ, groups used).
    """
    sub = frame.filter(pl.col(measured).is_not_null() & pl.col(predicted).is_not_null())
    if sub.is_empty():
        return math.nan, 0
    agg = sub.group_by([*group_by, rank_over]).agg(
        pl.col(measured).mean().alias("_m"), pl.col(predicted).mean().alias("_p")
    )
    taus: list[float] = []
    for _, g in agg.group_by(group_by):
        if g.height < 2:
            continue
        tau = kendall_tau(g["_m"].to_numpy(), g["_p"].to_numpy())
        if math.isfinite(tau):
            taus.append(tau)
    if not taus:
        return math.nan, 0
    return float(np.mean(taus)), len(taus)


def coverage(measured: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """Fraction of rows (percent) whose measured value lies inside [lo, hi]."""
    ok = np.isfinite(measured) & np.isfinite(lo) & np.isfinite(hi)
    if not ok.any():
        return math.nan
    inside = (measured[ok] >= lo[ok]) & (measured[ok] <= hi[ok])
    return float(inside.mean() * 100.0)


def relative_width(predicted: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """Mean interval width relative to the prediction, in percent."""
    ok = np.isfinite(predicted) & np.isfinite(lo) & np.isfinite(hi) & (predicted > 0)
    if not ok.any():
        return math.nan
    return float(np.mean((hi[ok] - lo[ok]) / predicted[ok]) * 100.0)


def median_ratio(lo: np.ndarray, hi: np.ndarray) -> float:
    """Median of ``hi / lo`` over rows with a positive, finite interval: how many times the
    upper bound is the lower one (1 = a point; a 90 % band of ±41 % around the value is 2.4)."""
    ok = np.isfinite(lo) & np.isfinite(hi) & (lo > 0)
    if not ok.any():
        return math.nan
    return float(np.median(hi[ok] / lo[ok]))


def experiment_mape(frame: pl.DataFrame, keys: list[str]) -> tuple[float, int]:
    """MAPE (%) of the mean per experiment, and the number of experiments.

    An experiment is one group of *keys* (e.g. LLM, GPU, GPU count, engine, precision, source,
    prompt and output lengths: one benchmark configuration swept over batch or concurrency); its
    measured mean is compared with its predicted mean, the way serving simulators publish their
    accuracy. Rows without a prediction are left out.
    """
    ok = frame.filter(pl.col("predicted").is_not_null() & pl.col("predicted").is_not_nan())
    if ok.is_empty():
        return math.nan, 0
    means = ok.group_by(keys).agg(pl.col("measured").mean(), pl.col("predicted").mean())
    m, p = means["measured"].to_numpy(), means["predicted"].to_numpy()
    return float(np.mean(np.abs(p - m) / m) * 100.0), means.height
