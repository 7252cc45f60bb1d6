"""Held-out log residuals for the model card: quantiles and a random-effects decomposition.

Input: the out-of-fold predictions ``wattgpu evaluate`` writes (``docs/accuracy.predictions.csv``:
one row per measured row, target, split and method, with ``measured`` and ``predicted``). The
log residual of a row is ``r = ln(measured / predicted)``: the factor the truth differs from the
prediction by. Per target (power, itl, ttft), per split (``logo``: whole GPUs held out,
``lolo``: whole LLMs held out) and per difficulty bucket (``light``: batch size <= 8, ``heavy``:
above), :func:`residual_summary` gives the count, the mean and the 5/10/50/90/95 % quantiles of
``r``, and a decomposition of ``r`` into crossed random effects

    r = mu + g[gpu] + l[model] + e,   g ~ N(0, gpu_sd²), l ~ N(0, llm_sd²), e ~ N(0, row_sd²)

by moments (one-way ANOVA estimators applied in turn): ``gpu_sd²`` is the variance of the GPU
means less the mean within-GPU variance over the group size (floored at 0); the GPU means are
then subtracted and ``llm_sd²`` is estimated the same way on what is left; ``row_sd`` is the
standard deviation of the rest. Only the method ``ours`` is used. The sweep
(:mod:`planner.sweep.draws`) draws one GPU effect per GPU type, one LLM effect per LLM and one row
effect per candidate from these.

:func:`add_residuals` writes the result into a model card under the key ``residuals``
(atomically; every other key is kept). ``wattgpu evaluate --metrics-to DIR`` calls it on the
card in DIR; ``tools/card_residuals.py`` adds it to the shipped card from
``docs/accuracy.predictions.csv`` without re-running the evaluation.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from predictors.core.errors import WattgpuError
from predictors.core.output import atomic_write

RESIDUAL_METHOD = "ours"
RESIDUAL_SPLITS: tuple[str, ...] = ("logo", "lolo")
RESIDUAL_TARGETS: tuple[str, ...] = ("power", "itl", "ttft")
LIGHT_MAX_BATCH = 8.0
"""Rows with a batch size up to this are the ``light`` bucket, the others ``heavy``."""
QUANTILES: tuple[float, ...] = (0.05, 0.1, 0.5, 0.9, 0.95)
REQUIRED_COLUMNS: tuple[str, ...] = (
    "gpu",
    "model",
    "batch_size",
    "target",
    "split",
    "method",
    "measured",
    "predicted",
)


def _round(value: float) -> float:
    return float(f"{value:.6g}")


def _one_way_sd(values: np.ndarray, groups: np.ndarray) -> tuple[float, np.ndarray]:
    """Moment estimate of the between-group sd and the per-row group mean."""
    keys, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=values)
    means = sums / counts
    if len(keys) < 2:
        return 0.0, means[inverse]
    squares = np.bincount(inverse, weights=values**2)
    within = np.where(counts > 1, (squares - counts * means**2) / np.maximum(counts - 1, 1), 0.0)
    noise = float(np.mean(np.maximum(within, 0.0) / counts))
    between = float(np.var(means, ddof=1)) - noise
    return math.sqrt(max(between, 0.0)), means[inverse]


def decompose(frame: pl.DataFrame) -> dict[str, Any]:
    """Count, mean, quantiles and GPU/LLM/row sds of the log residuals of *frame*'s rows."""
    r = np.log(frame["measured"].to_numpy() / frame["predicted"].to_numpy())
    gpus = frame["gpu"].to_numpy().astype(str)
    models = frame["model"].to_numpy().astype(str)
    gpu_sd, gpu_means = _one_way_sd(r, gpus)
    rest = r - gpu_means
    llm_sd, llm_means = _one_way_sd(rest, models)
    row = rest - llm_means
    out: dict[str, Any] = {
        "rows": int(r.size),
        "gpus": int(len(set(gpus))),
        "llms": int(len(set(models))),
        "mean": _round(float(np.mean(r))),
        "quantiles": {
            f"q{round(q * 100):02d}": _round(float(np.quantile(r, q))) for q in QUANTILES
        },
        "gpu_sd": _round(gpu_sd),
        "llm_sd": _round(llm_sd),
        "row_sd": _round(float(np.std(row, ddof=1)) if r.size > 1 else 0.0),
    }
    return out


def _buckets(sub: pl.DataFrame) -> dict[str, Any]:
    light = sub.filter(pl.col("batch_size") <= LIGHT_MAX_BATCH)
    heavy = sub.filter(pl.col("batch_size") > LIGHT_MAX_BATCH)
    buckets = {"all": decompose(sub)}
    for name, part in (("light", light), ("heavy", heavy)):
        if part.height >= 2:
            buckets[name] = decompose(part)
    return buckets


def residual_summary(
    long: pl.DataFrame, vendor_of: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Per target, split and bucket (``all``, ``light``, ``heavy``): :func:`decompose`; with
    *vendor_of* (GPU id -> vendor) also the same per vendor of the held-out GPU
    (``by_vendor``)."""
    missing = [c for c in REQUIRED_COLUMNS if c not in long.columns]
    if missing:
        raise WattgpuError(
            f"out-of-fold predictions: missing column(s) {', '.join(missing)}; give the "
            "predictions CSV `wattgpu evaluate` writes (docs/accuracy.predictions.csv)"
        )
    rows = long.filter(
        (pl.col("method") == RESIDUAL_METHOD)
        & (pl.col("measured") > 0)
        & (pl.col("predicted") > 0)
        & pl.col("measured").is_finite()
        & pl.col("predicted").is_finite()
    )
    out: dict[str, Any] = {
        "definition": "ln(measured / predicted), out-of-fold, method ours",
        "buckets": {"light": f"batch_size <= {LIGHT_MAX_BATCH:g}", "heavy": "batch_size above"},
        "targets": {},
    }
    for target in RESIDUAL_TARGETS:
        per_split: dict[str, Any] = {}
        for split in RESIDUAL_SPLITS:
            sub = rows.filter((pl.col("target") == target) & (pl.col("split") == split))
            if sub.height < 2:
                continue
            buckets = _buckets(sub)
            if vendor_of:
                vendors = sub["gpu"].replace_strict(vendor_of, default="unknown")
                buckets["by_vendor"] = {
                    vendor: _buckets(sub.filter(vendors == vendor))
                    for vendor in sorted(set(vendors.to_list()))
                    if (vendors == vendor).sum() >= 2
                }
            per_split[split] = buckets
        if per_split:
            out["targets"][target] = per_split
    return out


def add_residuals(
    card_path: Path,
    long: pl.DataFrame,
    vendor_of: Mapping[str, str] | None = None,
    metrics: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Write :func:`residual_summary` of *long* into the card at *card_path* (key
    ``residuals``) and, when given, the evaluation's *metrics* (key ``metrics``, as ``wattgpu
    train`` writes them from ``evaluation_summary.json``), atomically; returns the summary."""
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise WattgpuError(
            f"{card_path}: cannot read the model card ({exc}); give a model_card.json written "
            "by `wattgpu train`"
        ) from None
    summary = residual_summary(long, vendor_of)
    card["residuals"] = summary
    if metrics is not None:  # the card states the evaluation that wrote its residuals
        card["metrics"] = metrics
    text = json.dumps(card, indent=2, sort_keys=True) + "\n"
    atomic_write(card_path, text.encode("utf-8"))
    return summary
