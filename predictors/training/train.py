"""Train the shipped estimators on every usable measurement row and write the model card.

Each target's configuration is chosen by inner folds that hold out whole GPUs and refitted on all
its rows (ITL: the step-time physics of :mod:`predictors.estimators.step` times a GPU-invariant
residual; power: idle + (TDP − idle) · u; TTFT: the prefill time times a GPU-invariant
residual); its 90 % interval is calibrated on out-of-fold residuals of those folds (the situation
the planner is in when it predicts a GPU with no measurements). The fitted physics parameters,
the training domain (precisions, engines, vendors, architectures, MoE, numeric ranges) and the
measured GPUs (``gpu_measured``) go into the model card.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from predictors.catalog.store import Catalog
from predictors.estimators import artifacts
from predictors.estimators.domain import recorded_specs
from predictors.estimators.platform import training_platform
from predictors.features import add_features, join_specs
from predictors.measurements.schema import LAYOUT_COLUMNS
from predictors.training.decode_rows import split_disaggregated
from predictors.training.evaluate import MIN_TARGET_ROWS, TARGETS, target_rows
from predictors.training.selection import select

#: Source whose measurement protocol predictions are expressed in (the nuisance feature's value
#: at prediction time): ML.ENERGY v3 measures steady-state vLLM serving on whole GPUs.
REFERENCE_SOURCE = "mlenergy-v3"


def reference_source(frame: pl.DataFrame) -> str:
    """:data:`REFERENCE_SOURCE` when the training data holds it, else the source with the most
    rows (a user's own data: predictions are then in a protocol the trees saw)."""
    sources = frame["source"].value_counts().sort(["count", "source"], descending=[True, False])
    names = sources["source"].to_list()
    return REFERENCE_SOURCE if REFERENCE_SOURCE in names or not names else str(names[0])


#: Numeric columns whose training range bounds ``in_domain``.
RANGE_COLUMNS: tuple[str, ...] = ("log_params", "batch_size", "input_tokens", "output_tokens")


#: Issue 18: True (shipped) feeds each row's measured layout (``predictors.measurements.layouts``)
#: to the layout physics, rows without one getting the engines' usual layout as in ``predict``;
#: False is the former stopgap (the layout columns dropped: every row one tensor-parallel group
#: over one fabric). Changing it changes the training rows' features and needs a retrain
#: (docs/method.md, "Parallel layouts").
TRAIN_ON_MEASURED_LAYOUT = True


def training_table(table: pl.DataFrame) -> pl.DataFrame:
    """*table* as training sees it under :data:`TRAIN_ON_MEASURED_LAYOUT`."""
    if TRAIN_ON_MEASURED_LAYOUT:
        return table
    return table.drop([c for c in LAYOUT_COLUMNS if c in table.columns])


def layout_record(table: pl.DataFrame) -> dict[str, Any]:
    """How training read the rows' parallel layouts, for the model card."""
    if not TRAIN_ON_MEASURED_LAYOUT or not set(LAYOUT_COLUMNS) <= set(table.columns):
        return {"reading": "every row one tensor-parallel group over one fabric", "rows": {}}
    stated = pl.col("tensor_parallel").is_not_null()
    counts = table.group_by(stated.alias("stated")).len()
    by = dict(zip(counts["stated"].to_list(), counts["len"].to_list(), strict=True))
    return {
        "reading": (
            "measured layout where the source states one (docs/data.md), else the engines' "
            "usual layout (predictors.physics.default_layout, as predict assumes)"
        ),
        "rows": {"measured": int(by.get(True, 0)), "usual_layout": int(by.get(False, 0))},
    }


def prepare(table: pl.DataFrame, catalog: Catalog) -> pl.DataFrame:
    """Measurement rows with catalog facts and features, each disaggregated row's TPOT read on
    its decode workers (:func:`predictors.training.decode_rows.split_disaggregated`)."""
    return add_features(join_specs(split_disaggregated(training_table(table), catalog), catalog))


def target_domain(frames: dict[str, pl.DataFrame]) -> dict[str, Any]:
    """Per target, the GPU vendors and architectures of its own training rows (the card's
    ``domain.targets``): every power row is NVIDIA, so an AMD GPU's power is extrapolated even
    where its ITL was measured."""
    return {
        name: {
            "vendors": sorted(sub["vendor"].unique().to_list()),
            "architectures": sorted(sub["architecture"].unique().to_list()),
        }
        for name, sub in sorted(frames.items())
    }


def training_domain(frame: pl.DataFrame) -> dict[str, Any]:
    """What the estimators have seen: categorical sets and numeric ranges (with 10 % slack)."""
    ranges = {}
    for col in RANGE_COLUMNS:
        lo, hi = float(frame[col].min()), float(frame[col].max())  # type: ignore[arg-type]
        span = hi - lo
        low = lo - 0.1 * span
        ranges[col] = [low if col.startswith("log_") else max(low, 0.0), hi + 0.1 * span]
    return {
        "precisions": sorted(frame["precision"].unique().to_list()),
        "engines": sorted(frame["engine"].unique().to_list()),
        "vendors": sorted(frame["vendor"].unique().to_list()),
        "architectures": sorted(frame["architecture"].unique().to_list()),
        "moe_trained": bool(frame["is_moe"].any()),
        "ranges": ranges,
        "gpus": sorted(frame["gpu"].unique().to_list()),
        "models": sorted(frame["model"].unique().to_list()),
        "gpu_specs": recorded_specs(frame),
    }


def train(table: pl.DataFrame, catalog: Catalog, metrics: Any = None) -> artifacts.TrainedModels:
    """Fit power and ITL estimators on all usable rows of the canonical measurement *table*."""
    table = training_table(table)
    frame = prepare(table, catalog)
    trained: dict[str, artifacts.TrainedTarget] = {}
    rows: dict[str, int] = {}
    selection: dict[str, Any] = {}
    subsets: dict[str, pl.DataFrame] = {}
    for name, target in TARGETS.items():
        sub = target_rows(frame, target)
        if sub.height < MIN_TARGET_ROWS:
            selection[name] = {"skipped": f"{sub.height} rows < {MIN_TARGET_ROWS}"}
            continue
        y = sub[target.column].to_numpy().astype(np.float64)
        chosen = select(target.ours, sub, y, "logo")
        trained[name] = artifacts.TrainedTarget(chosen.estimator, chosen.interval)
        subsets[name] = sub
        rows[name] = sub.height
        selection[name] = {
            "chosen": chosen.estimator.name,
            "inner_logo_mdape_pct": {k: round(v, 6) for k, v in chosen.scores.items()},
            "inner_folds": "logo" if chosen.folds == "grouped" else "random rows (one GPU)",
        }
    usable = frame.filter(pl.col("power_w_per_gpu").is_not_null() | pl.col("itl_s").is_not_null())
    card: dict[str, Any] = {
        "name": "wattgpu predictors",
        "units": {
            "power": "W per GPU (mean board power during decoding), in [idle_power_w, tdp_w]",
            "itl": "s per output token (inter-token latency)",
            "output_throughput_tok_s": "batch_size / itl_s",
        },
        "reference_source": reference_source(frame),
        "selection": selection,
        "training_data": {
            "sha256": artifacts.data_hash(table.sort(table.columns)),
            "rows": rows,
            "sources": sorted(table["source"].unique().to_list()),
            "rows_by_source": dict(sorted(table.group_by("source").len().iter_rows())),
            "layout": layout_record(table),
        },
        "domain": {**training_domain(usable), "targets": target_domain(subsets)},
        "intervals": (
            "90 % locally adaptive conformal: residuals out-of-fold over folds holding out whole "
            "GPUs, architectures, newer GPUs, LLMs and random rows, scaled by exp(difficulty)"
        ),
        "metrics": metrics or {},
        "library_versions": artifacts.library_versions(),
        "training_platform": training_platform(),
    }
    return artifacts.TrainedModels(trained, card)
