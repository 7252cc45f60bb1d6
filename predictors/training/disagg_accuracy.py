"""Held-out accuracy of the disaggregated serving model on the measured disaggregated runs.

Protocol (leave-one-GPU-out, as ``wattgpu evaluate``): for every GPU with measured
disaggregated rows, the predictors are retrained (:func:`predictors.training.train.train`, its
model selection and interval calibration inside the fold) on the measurement table without any
row of that GPU (its aggregated and its disaggregated rows alike), and that GPU's disaggregated
rows (:mod:`predictors.measurements.disagg_rows`) are predicted at their measured configuration
through :mod:`predictors.serving.disagg` with the fold's predictors. The serving model itself has
no fitted parameter.

Each row is a closed-loop benchmark of ``N`` concurrent users; it is predicted at the unit rate
whose mean number in the unit is ``N`` (:func:`predictors.serving.disagg.closed_loop_point`).
Measured throughput = ``N · O / (TTFT + (O − 1) · TPOT)`` (no throughput is published); per GPU
over the unit's GPUs (the same count for measured and predicted, so the per-GPU ratio is the
unit's).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from predictors.api import Predictor
from predictors.catalog.store import Catalog
from predictors.measurements.disagg_rows import as_units, load_disagg_rows
from predictors.measurements.load import load_measurements
from predictors.serving.disagg import closed_loop_point
from predictors.serving.disagg_build import disagg_curves
from predictors.training.train import train

#: Issue 19's targets.
TPOT_TARGET_PCT = 25.0
TTFT_TARGET_PCT = 35.0
THROUGHPUT_BAND: tuple[float, float] = (0.8, 1.25)


def predict_rows(predictor: Predictor, rows: pl.DataFrame) -> pl.DataFrame:
    """*rows* (resolved measured disaggregated rows) with the model's ``pred_ttft_s``,
    ``pred_itl_s``, ``pred_throughput_tok_s``, ``gpus`` and ``error`` ('' when predicted)."""
    table = disagg_curves(predictor, as_units(rows))
    pt, ttft = closed_loop_point(table, rows["concurrency"].to_numpy().astype(np.float64))
    return rows.with_columns(
        pl.Series("pred_ttft_s", ttft),
        pl.Series("pred_itl_s", pt.itl_s),
        pl.Series("pred_throughput_tok_s", pt.output_throughput_tok_s),
        pl.Series("gpus", table.gpus),
        pl.Series("error", table.error, dtype=pl.String),
    )


def held_out(data_dir: Path, catalog: Catalog) -> pl.DataFrame:
    """Every measured disaggregated row predicted by predictors that never saw its GPU."""
    table = load_measurements(data_dir, catalog).table
    rows = load_disagg_rows(data_dir, catalog)
    if rows.height == 0:
        return rows
    out = []
    for gpu in sorted(rows["gpu"].drop_nulls().unique().to_list()):
        fold = Predictor(train(table.filter(pl.col("gpu") != gpu), catalog), catalog)
        out.append(predict_rows(fold, rows.filter(pl.col("gpu") == gpu)))
    return pl.concat(out)


@dataclass(frozen=True)
class Summary:
    """Per GPU (and all): rows, refused, TTFT / TPOT MdAPE, throughput ratio and MdAPE."""

    frame: pl.DataFrame


def _ape(pred: str, meas: str, ok: pl.Expr) -> pl.Expr:
    return ((pl.col(pred) - pl.col(meas)).abs() / pl.col(meas) * 100.0).filter(ok).median()


def summarise(pred: pl.DataFrame, by: str = "gpu") -> pl.DataFrame:
    """Per value of *by* and overall (``all``): rows, refused rows and, on the predicted rows,
    TTFT and TPOT MdAPE, the signed median and MdAPE of predicted / measured throughput."""
    meas_thr = "output_throughput_tok_s"
    ok = pl.col("error") == ""
    aggs = [
        pl.len().alias("rows"),
        (~ok).sum().cast(pl.Int64).alias("refused"),
        _ape("pred_ttft_s", "ttft_s", ok).alias("ttft_mdape_pct"),
        _ape("pred_itl_s", "itl_s", ok).alias("tpot_mdape_pct"),
        (pl.col("pred_throughput_tok_s") / pl.col(meas_thr))
        .filter(ok)
        .median()
        .alias("throughput_ratio"),
        _ape("pred_throughput_tok_s", meas_thr, ok).alias("throughput_mdape_pct"),
    ]
    per = pred.group_by(by).agg(aggs).sort(by)
    total = pred.select(pl.lit("all").alias(by), *aggs)
    return pl.concat([per.with_columns(pl.col(by).cast(pl.String)), total], how="vertical_relaxed")
