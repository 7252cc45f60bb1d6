"""Where an unseen GPU ranks among the measured ones, by one model (a diagnostic of LOGO τ).

The LOGO τ GPU of the report ranks GPUs that were each predicted by a different model: GPU A by
the model trained without A, GPU B by the one trained without B. A user who asks about a GPU
nobody measured compares it with measured GPUs through one model, the shipped one. This module
measures that situation: in every LOGO fold, the fold's model (selected and fitted without the
held-out GPU) predicts the held-out GPU *and* the other GPUs of every (LLM, workload) group the
held-out GPU is in, and Kendall τ compares that ranking with the measured one. Groups are those of
the report's τ GPU; each fold contributes the groups of its held-out GPU, so a group of k GPUs
counts k times, once per GPU held out.

It is a diagnostic beside the report's τ, not a replacement: the issue targets are judged on the
report's τ.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import polars as pl

from predictors.training.accuracy import WORKLOAD, nvidia_datacenter
from predictors.training.evaluate import TARGETS, target_rows
from predictors.training.metrics import kendall_tau
from predictors.training.selection import select
from predictors.training.splits import folds

#: Targets of the diagnostic (power has too few multi-GPU groups to rank: 24 in the last report).
RANKED_TARGETS: tuple[str, ...] = ("itl", "ttft")
GROUP: list[str] = ["model", *WORKLOAD]


def _fold_taus(rows: pl.DataFrame, column: str, held_gpu: str, pred: np.ndarray) -> list[float]:
    """τ of every group that holds *held_gpu* and another GPU, measured against *pred*."""
    frame = rows.with_columns(
        pl.col(column).cast(pl.Float64).alias("_m"), pl.Series("_p", pred)
    ).filter(pl.col("_p").is_finite())
    agg = frame.group_by([*GROUP, "gpu"], maintain_order=True).agg(
        pl.col("_m").mean(), pl.col("_p").mean()
    )
    taus: list[float] = []
    for _, g in agg.group_by(GROUP, maintain_order=True):
        if g.height < 2 or held_gpu not in g["gpu"].to_list():
            continue
        tau = kendall_tau(g["_m"].to_numpy(), g["_p"].to_numpy())
        if math.isfinite(tau):
            taus.append(tau)
    return taus


def same_model_tau(
    frame: pl.DataFrame,
    targets: tuple[str, ...] = RANKED_TARGETS,
    progress: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """One row per target × scope (all GPUs, NVIDIA datacenter GPUs): the mean τ of the held-out
    GPU's groups ranked by the fold's own model, and how many (fold, group) pairs it averages."""
    records = []
    for name in targets:
        target = TARGETS[name]
        rows = target_rows(frame, target)
        if rows.height == 0:
            continue
        if progress:
            progress(f"{name} logo, one model per fold for every GPU")
        y = rows[target.column].to_numpy().astype(np.float64)
        nvdc = nvidia_datacenter(rows).to_numpy()
        taus: dict[str, list[float]] = {"all": [], "nvidia_dc": []}
        for held, train, _ in folds(rows, "logo"):
            chosen = select(target.ours, rows[train], y[train], "logo", calibrate=False)
            pred = np.asarray(chosen.estimator.predict(rows), dtype=np.float64)
            taus["all"] += _fold_taus(rows, target.column, held, pred)
            if nvdc[rows["gpu"].to_numpy() == held].any():
                keep = pl.Series(nvdc)
                sub_pred = pred[nvdc]
                taus["nvidia_dc"] += _fold_taus(rows.filter(keep), target.column, held, sub_pred)
        for scope, values in taus.items():
            records.append(
                {
                    "target": name,
                    "scope": scope,
                    "tau_gpu": float(np.mean(values)) if values else math.nan,
                    "groups": len(values),
                }
            )
    return pl.DataFrame(
        records,
        schema={"target": pl.String, "scope": pl.String, "tau_gpu": pl.Float64, "groups": pl.Int64},
    )
