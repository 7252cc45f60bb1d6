"""Held-out splits and the inner folds of model selection.

* ``cv5``: 5-fold CV over rows;
* ``logo``: leave-one-GPU-out;
* ``lolo``: leave-LLMs-out: the LLMs are dealt into :data:`LOLO_FOLDS` groups (seeded) and
  each group is held out once, so every LLM is predicted by a model that never saw it;
* ``loao``: leave-one-architecture-out (every GPU of one generation held out at once);
* ``newer2022`` / ``newer2025``: train on GPUs released before the year, test on the later ones.

Model selection and interval calibration use :func:`inner_folds` inside a training set, grouped
like the outer split (GPU-level splits hold out whole GPUs, LOLO whole LLMs).
"""

from __future__ import annotations

import numpy as np
import polars as pl

#: Folds of the leave-LLMs-out split (each holds out about a tenth of the LLMs).
LOLO_FOLDS = 10
#: Years of the newer-than-training splits.
NEWER_THAN_YEARS: tuple[int, ...] = (2022, 2025)
SPLITS: tuple[str, ...] = (
    "cv5",
    "logo",
    "lolo",
    "loao",
    *(f"newer{y}" for y in NEWER_THAN_YEARS),
)
SPLIT_GROUP: dict[str, str | None] = {
    "cv5": None,
    "logo": "gpu",
    "lolo": "model",
    "loao": "architecture",
    **{f"newer{y}": "gpu" for y in NEWER_THAN_YEARS},
}


def _newer_year(split: str) -> int | None:
    return int(split.removeprefix("newer")) if split.startswith("newer") else None


def folds(
    frame: pl.DataFrame, split: str, n_folds: int = 5, seed: int = 0
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(held-out label, train indices, test indices) for each fold of *split*."""
    n = frame.height
    year = _newer_year(split)
    if year is not None:
        released = frame["release_year"].cast(pl.Float64).fill_null(np.inf).to_numpy()
        test = np.flatnonzero(released >= year)
        train = np.flatnonzero(released < year)
        return [(f">={year}", train, test)] if test.size and train.size else []
    group = SPLIT_GROUP[split]
    if group is None:
        order = np.random.default_rng(seed).permutation(n)
        parts = np.array_split(order, n_folds)
        return [
            (f"fold{i}", np.setdiff1d(np.arange(n), p, assume_unique=True), np.sort(p))
            for i, p in enumerate(parts)
        ]
    labels = frame[group].to_numpy()
    values = sorted(set(labels.tolist()))
    if split == "lolo" and len(values) > LOLO_FOLDS:
        shuffled = [values[i] for i in np.random.default_rng(seed).permutation(len(values))]
        buckets = [sorted(shuffled[i::LOLO_FOLDS]) for i in range(LOLO_FOLDS)]
        out = []
        for i, bucket in enumerate(buckets):
            mask = np.isin(labels, bucket)
            out.append((f"llms{i}", np.flatnonzero(~mask), np.flatnonzero(mask)))
        return out
    out = []
    for value in values:
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
