"""Run every target × split × method on held-out folds and summarise the metrics.

:func:`run` returns the long table of held-out predictions; :func:`summarise` the metrics per
target × split × method (MdAPE, Pearson r, Kendall τ of GPU and of LLM rankings, interval
coverage and width); :func:`breakdown` the MdAPE by source or by GPU.

Besides the fitted splits of :mod:`predictors.training.splits`, the long table holds the derived
split
:data:`NVIDIA_DC_SPLIT`: the LOGO predictions of NVIDIA datacenter GPUs only (the same held-out
predictions, so the same models; τ GPU ranks NVIDIA datacenter GPUs among themselves), and
the diagnostic split :data:`SEEN_PROTOCOL_SPLIT`: those of them whose measurement source (its
protocol: engine version, power scope and averaging) has rows of another GPU in the fold's
training set. That is the situation of a shipped prediction (expressed in the reference source,
which is in the training data); rows whose protocol exists only on the held-out GPU measure
protocol transfer as well, which no GPU-level split can separate.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import polars as pl

from predictors.training.evaluate import (
    MIN_TARGET_ROWS,
    SPLITS,
    TARGETS,
    methods,
    out_of_fold,
    target_rows,
)
from predictors.training.metrics import (
    coverage,
    experiment_mape,
    grouped_kendall_tau,
    mdape,
    median_ratio,
    pearson_r,
    relative_width,
)
from predictors.training.splits import folds

WORKLOAD: list[str] = [
    "source",
    "engine",
    "precision",
    "batch_size",
    "input_tokens",
    "output_tokens",
    "gpu_count",
]
CONTEXT: list[str] = ["source", "model", "gpu", *WORKLOAD[1:]]
#: One experiment: a benchmark configuration swept over batch size or concurrency.
EXPERIMENT: list[str] = [c for c in CONTEXT if c != "batch_size"]
#: LOGO restricted to NVIDIA datacenter GPUs (every NVIDIA GPU but the RTX workstation cards).
NVIDIA_DC_SPLIT = "logo-nvidia-dc"
#: :data:`NVIDIA_DC_SPLIT` restricted to rows whose source the fold's training set has measured.
SEEN_PROTOCOL_SPLIT = "logo-nvidia-dc-seen-protocol"


def nvidia_datacenter(frame: pl.DataFrame) -> pl.Series:
    """True for rows of NVIDIA datacenter GPUs (vendor NVIDIA, not an RTX workstation card)."""
    return frame.select(
        ((pl.col("vendor") == "NVIDIA") & ~pl.col("gpu").str.starts_with("RTX")).fill_null(False)
    ).to_series()


def source_seen_in_training(rows: pl.DataFrame, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Per row: held out in a fold of *split*; its source has rows in that fold's training set."""
    sources = rows["source"].to_numpy()
    held_out = np.zeros(rows.height, dtype=bool)
    seen = np.zeros(rows.height, dtype=bool)
    for _, train, test in folds(rows, split):
        held_out[test] = True
        seen[test] = np.isin(sources[test], np.unique(sources[train]))
    return held_out, seen


def run(
    frame: pl.DataFrame,
    splits: tuple[str, ...] = SPLITS,
    progress: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """Held-out predictions of every target × split × method, one row per (measurement, method)."""
    parts: list[pl.DataFrame] = []
    for tname, target in TARGETS.items():
        rows = target_rows(frame, target)
        if rows.height < MIN_TARGET_ROWS:
            continue
        context = rows.select(CONTEXT).with_row_index("row")
        nvdc = nvidia_datacenter(rows)
        measured = rows[target.column].to_numpy().astype(np.float64)
        for split in splits:
            held_out, seen = source_seen_in_training(rows, split)
            for method in methods(target):
                if progress:
                    progress(f"{tname} {split} {method}")
                oof = out_of_fold(rows, target, split, method)
                part = context.with_columns(
                    pl.lit(tname).alias("target"),
                    pl.lit(split).alias("split"),
                    pl.lit(method).alias("method"),
                    pl.Series("measured", measured),
                    pl.Series("predicted", oof.predicted),
                    pl.Series("lo", oof.lo),
                    pl.Series("hi", oof.hi),
                ).filter(pl.Series(held_out))
                parts.append(part)
                if split == "logo":
                    nv = nvdc.filter(pl.Series(held_out))
                    parts.append(
                        part.filter(nv).with_columns(pl.lit(NVIDIA_DC_SPLIT).alias("split"))
                    )
                    diag = nv & pl.Series(seen[held_out])
                    parts.append(
                        part.filter(diag).with_columns(pl.lit(SEEN_PROTOCOL_SPLIT).alias("split"))
                    )
    return pl.concat(parts).with_columns(
        pl.col(c).fill_nan(None) for c in ("predicted", "lo", "hi")
    )


def _metrics(g: pl.DataFrame) -> dict[str, float]:
    m = g["measured"].to_numpy().astype(np.float64)
    p = g["predicted"].fill_null(np.nan).to_numpy().astype(np.float64)
    lo = g["lo"].fill_null(np.nan).to_numpy().astype(np.float64)
    hi = g["hi"].fill_null(np.nan).to_numpy().astype(np.float64)
    tau_gpu, n_gpu = grouped_kendall_tau(g, "measured", "predicted", ["model", *WORKLOAD], "gpu")
    tau_llm, n_llm = grouped_kendall_tau(g, "measured", "predicted", ["gpu", *WORKLOAD], "model")
    has_iv = bool(np.isfinite(lo).any())
    experiment = experiment_mape(g, [c for c in EXPERIMENT if c in g.columns])
    return {
        "rows": float(g.height),
        "mdape_pct": mdape(m, p),
        "pearson_r": pearson_r(m, p),
        "kendall_tau_gpu": tau_gpu,
        "tau_gpu_groups": float(n_gpu),
        "kendall_tau_llm": tau_llm,
        "tau_llm_groups": float(n_llm),
        "coverage_90_pct": coverage(m, lo, hi) if has_iv else math.nan,
        "interval_width_pct": relative_width(p, lo, hi) if has_iv else math.nan,
        "median_hi_over_lo": median_ratio(lo, hi) if has_iv else math.nan,
        "experiment_mape_pct": experiment[0],
        "experiments": float(experiment[1]),
    }


def summarise(long: pl.DataFrame) -> pl.DataFrame:
    """Metrics per target × split × method."""
    records = []
    for (target, split, method), g in long.group_by(
        ["target", "split", "method"], maintain_order=True
    ):
        records.append({"target": target, "split": split, "method": method, **_metrics(g)})
    return pl.DataFrame(records)


def breakdown(long: pl.DataFrame, by: str, split: str) -> pl.DataFrame:
    """MdAPE per *by* value (source or gpu) for every target × method on one split."""
    sub = long.filter(pl.col("split") == split)
    return (
        sub.group_by(["target", by, "method"])
        .agg(
            pl.len().alias("rows"),
            ((pl.col("predicted") - pl.col("measured")).abs() / pl.col("measured"))
            .median()
            .mul(100.0)
            .alias("mdape_pct"),
        )
        .sort(["target", by, "method"])
    )


def unseen_protocol(long: pl.DataFrame) -> pl.DataFrame:
    """(target, gpu, source, rows) of our NVIDIA-datacenter LOGO rows outside the seen split."""
    ours = long.filter(pl.col("method") == "ours")
    keys = ["target", "gpu", "source", "row"]
    nvdc = ours.filter(pl.col("split") == NVIDIA_DC_SPLIT).select(keys)
    seen = ours.filter(pl.col("split") == SEEN_PROTOCOL_SPLIT).select(keys)
    return (
        nvdc.join(seen, on=keys, how="anti")
        .group_by(["target", "gpu", "source"])
        .agg(pl.len().alias("rows"))
    )
