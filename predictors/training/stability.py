"""How much the v2 LOGO numbers move with the trees' random seed.

The residual and utilisation trees sample rows and columns (``subsample``, ``colsample_bytree``),
so a held-out metric is one draw. :func:`seed_stability` re-runs leave-one-GPU-out for the v2
estimators under several seeds (model selection and everything else unchanged) and returns MdAPE
and Kendall τ of the GPU ranking per seed, on all GPUs and on NVIDIA datacenter GPUs. A target
that is met under seed 0 but not under every seed is a coin toss, and the report says so.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import polars as pl

from predictors.training.accuracy import WORKLOAD, nvidia_datacenter
from predictors.training.evaluate import TARGETS, target_rows
from predictors.training.metrics import grouped_kendall_tau, mdape
from predictors.training.selection import select
from predictors.training.splits import folds

#: Seeds of the stability table (seed 0 is the shipped and reported configuration).
SEEDS: tuple[int, ...] = (0, 1, 2, 3, 4)
#: v2 targets whose candidates take a ``seed`` (TTFT is the unchanged v1 recipe).
SEEDED_TARGETS: tuple[str, ...] = ("itl", "power")


def _logo_predictions(
    rows: pl.DataFrame, column: str, candidates: Callable[[], list]
) -> np.ndarray:
    y = rows[column].to_numpy().astype(np.float64)
    pred = np.full(rows.height, np.nan)
    for _, train, test in folds(rows, "logo"):
        chosen = select(candidates, rows[train], y[train], "logo", calibrate=False)
        pred[test] = chosen.estimator.predict(rows[test])
    return pred


def _scores(rows: pl.DataFrame, column: str, pred: np.ndarray) -> dict[str, float]:
    frame = rows.with_columns(
        pl.col(column).cast(pl.Float64).alias("measured"), pl.Series("predicted", pred)
    )
    nvdc = nvidia_datacenter(rows)
    out: dict[str, float] = {}
    for scope, sub in (("all", frame), ("nvidia_dc", frame.filter(nvdc))):
        m = sub["measured"].to_numpy()
        p = sub["predicted"].to_numpy()
        tau, _ = grouped_kendall_tau(sub, "measured", "predicted", ["model", *WORKLOAD], "gpu")
        out[f"mdape_pct_{scope}"] = mdape(m, p)
        out[f"tau_gpu_{scope}"] = tau
    return out


def seed_stability(
    frame: pl.DataFrame,
    seeds: tuple[int, ...] = SEEDS,
    progress: Callable[[str], None] | None = None,
    targets: tuple[str, ...] = SEEDED_TARGETS,
) -> pl.DataFrame:
    """One row per target × seed: LOGO MdAPE and τ GPU on all and on NVIDIA datacenter GPUs."""
    records = []
    for name in targets:
        target = TARGETS[name]
        rows = target_rows(frame, target)
        for seed in seeds:
            if progress:
                progress(f"{name} logo seed {seed}")
            pred = _logo_predictions(rows, target.column, partial(target.ours, seed=seed))
            records.append({"target": name, "seed": seed, **_scores(rows, target.column, pred)})
    return pl.DataFrame(records)
