"""Held-out splits: 5-fold CV, leave-one-GPU-out (LOGO), leave-one-LLM-out (LOLO), inner folds."""

from __future__ import annotations

import numpy as np
import polars as pl

SPLITS: tuple[str, ...] = ("cv5", "logo", "lolo")
SPLIT_GROUP: dict[str, str | None] = {"cv5": None, "logo": "gpu", "lolo": "model"}


def folds(
    frame: pl.DataFrame, split: str, n_folds: int = 5, seed: int = 0
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(held-out label, train indices, test indices) for each fold of *split*."""
    n = frame.height
    group = SPLIT_GROUP[split]
    if group is None:
        order = np.random.default_rng(seed).permutation(n)
        parts = np.array_split(order, n_folds)
        return [
            (f"fold{i}", np.setdiff1d(np.arange(n), p, assume_unique=True), np.sort(p))
            for i, p in enumerate(parts)
        ]
    labels = frame[group].to_numpy()
    out = []
    for value in sorted(set(labels.tolist())):
        test = np.flatnonzero(labels == value)
        train = np.flatnonzero(labels != value)
        out.append((str(value), train, test))
    return out


def inner_folds(
    frame: pl.DataFrame, split: str, n_folds: int = 3, seed: int = 1
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Folds inside a training set, grouped like the outer split (at most *n_folds* groups each)."""
    group = SPLIT_GROUP[split]
    if group is None:
        return [(tr, te) for _, tr, te in folds(frame, "cv5", n_folds, seed)]
    values = sorted(set(frame[group].to_list()))
    if len(values) < 2:
        return []
    rng = np.random.default_rng(seed)
    shuffled = [values[i] for i in rng.permutation(len(values))]
    buckets = [shuffled[i::n_folds] for i in range(min(n_folds, len(values)))]
    labels = frame[group].to_numpy()
    out = []
    for bucket in buckets:
        test_mask = np.isin(labels, bucket)
        out.append((np.flatnonzero(~test_mask), np.flatnonzero(test_mask)))
    return out
