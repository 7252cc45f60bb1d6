"""Held-out accuracy of the disaggregated serving model on the measured disaggregated runs.

Protocol (leave-one-GPU-out, as ``wattgpu evaluate``): for every GPU with measured
disaggregated rows, the predictors are retrained (:func:`predictors.training.train.train`, its
model selection and interval calibration inside the fold) on the measurement table without any
row of that GPU (its aggregated and its disaggregated rows alike), and that GPU's disaggregated
rows (:mod:`predictors.measurements.disagg_rows`) are predicted at their measured configuration
through :mod:`predictors.serving.disagg` with the fold's predictors. The serving model itself has
no fitted parameter; its three prefill-queue choices (:class:`predictors.serving.disagg.
DisaggSettings`) are chosen inside each fold, on the training GPUs' disaggregated rows.

Every row is predicted in its source's measurement protocol (the source indicator the
estimators take, :func:`in_source_protocol`), as ``wattgpu evaluate`` predicts its held-out
rows; the planner predicts in the reference source's. Each row is a closed-loop benchmark of
``N`` concurrent users; it is predicted at the unit rate whose mean number in the unit is
``N`` (:func:`predictors.serving.disagg.closed_loop_point`).
Measured throughput = ``N · O / (TTFT + (O − 1) · TPOT)`` (no throughput is published); per GPU
over the unit's GPUs (the same count for measured and predicted, so the per-GPU ratio is the
unit's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import polars as pl

from predictors.api import Predictor
from predictors.catalog.store import Catalog
from predictors.measurements.aiconfigurator import SOURCE
from predictors.measurements.disagg_rows import as_units, load_disagg_rows
from predictors.measurements.load import load_measurements
from predictors.serving.disagg import (
    SETTING_CANDIDATES,
    DisaggSettings,
    DisaggTable,
    closed_loop_point,
    take_units,
    with_settings,
)
from predictors.serving.disagg_build import disagg_curves
from predictors.serving.disagg_sizing import size_unstated
from predictors.training.metrics import mdape
from predictors.training.train import train

#: Issue 19's targets.
TPOT_TARGET_PCT = 25.0
TTFT_TARGET_PCT = 35.0
THROUGHPUT_BAND: tuple[float, float] = (0.8, 1.25)


def predict_table(table: DisaggTable, rows: pl.DataFrame, waves: bool = False) -> pl.DataFrame:
    """*rows* (resolved measured disaggregated rows) with the model's ``pred_ttft_s``,
    ``pred_itl_s``, ``pred_throughput_tok_s``, ``gpus`` and ``error`` ('' when predicted),
    *table* being their :class:`DisaggTable`, the loop's prompts arriving in *waves* or not
    (:class:`DisaggSettings`)."""
    concurrency = rows["concurrency"].to_numpy().astype(np.float64)
    pt, ttft = closed_loop_point(table, concurrency, waves)
    return rows.with_columns(
        pl.Series("pred_ttft_s", ttft),
        pl.Series("pred_itl_s", pt.itl_s),
        pl.Series("pred_throughput_tok_s", pt.output_throughput_tok_s),
        pl.Series("gpus", table.gpus),
        pl.Series("error", table.error, dtype=pl.String),
        pl.Series("prefill_workers_read", table.prefill.workers),
        pl.Series("decode_workers_read", table.decode_workers),
    )


def score(pred: pl.DataFrame) -> float:
    """Selection score of predicted rows: the mean of their TTFT, TPOT and throughput MdAPE
    (inf when a row is refused or not predicted)."""
    ok = pred["error"] == ""
    if not ok.all():
        return math.inf
    parts = [
        mdape(pred[m].to_numpy(), pred[p].to_numpy())
        for m, p in (
            ("ttft_s", "pred_ttft_s"),
            ("itl_s", "pred_itl_s"),
            ("output_throughput_tok_s", "pred_throughput_tok_s"),
        )
    ]
    return math.inf if any(math.isnan(v) for v in parts) else float(np.mean(parts))


def choose(table: DisaggTable, rows: pl.DataFrame) -> tuple[DisaggSettings, dict[str, float]]:
    """The :data:`SETTING_CANDIDATES` entry with the lowest :func:`score` on *rows* (the
    predictable ones: refused rows are the same under every setting), and every score."""
    keep = np.asarray([e == "" for e in table.error])
    rows = rows.filter(pl.Series(keep))
    table = take_units(table, np.flatnonzero(keep))
    scores = {
        settings_label(s): score(predict_table(with_settings(table, s), rows, s.waves))
        for s in SETTING_CANDIDATES
    }
    best = min(SETTING_CANDIDATES, key=lambda s: scores[settings_label(s)])
    return best, scores


def settings_label(s: DisaggSettings) -> str:
    """``κ=0.25, servers=DP ranks, arrivals=waves`` style label of a setting."""
    servers = "DP ranks" if s.per_rank else "workers"
    return f"κ={s.lone_share:g}, servers={servers}, arrivals={'waves' if s.waves else 'Poisson'}"


@dataclass(frozen=True)
class HeldOut:
    """Held-out predictions of every row and, per held-out GPU, the setting its fold chose."""

    predictions: pl.DataFrame
    """Rows that leave their worker counts empty sized for their loop
    (:func:`predictors.serving.disagg_sizing.size_unstated`)."""
    one_each: pl.DataFrame
    """The same rows with those counts read as one prefill and one decode worker."""
    chosen: dict[str, str]
    all_rows_choice: str
    """The choice on every row with the shipped predictors (:data:`DEFAULT_SETTINGS`' source)."""


def in_source_protocol(predictor: Predictor, source: str = SOURCE) -> Predictor:
    """*predictor* predicting in *source*'s measurement protocol (its nuisance indicator), as
    the held-out evaluation of ``wattgpu evaluate`` predicts every row with its own source,
    instead of the planner's reference source."""
    card = {**predictor.models.card, "reference_source": source}
    return Predictor(replace(predictor.models, card=card), predictor.catalog)


def held_out(data_dir: Path, catalog: Catalog) -> HeldOut:
    """Every measured disaggregated row predicted by predictors that never saw its GPU, with the
    prefill-queue setting chosen on the fold's training GPUs' disaggregated rows."""
    table = load_measurements(data_dir, catalog).table
    rows = load_disagg_rows(data_dir, catalog)
    if rows.height == 0:
        return HeldOut(rows, rows, {}, "")
    units = as_units(rows)
    # choices are made on the rows whose configuration is fully stated (worker counts too)
    selectable = rows["workers_stated"].to_numpy()
    unstated = ~selectable
    concurrency = rows["concurrency"].to_numpy().astype(np.float64)
    out, one_each, chosen = [], [], {}
    for gpu in sorted(rows["gpu"].drop_nulls().unique().to_list()):
        fold = in_source_protocol(
            Predictor(train(table.filter(pl.col("gpu") != gpu), catalog), catalog)
        )
        test = (rows["gpu"] == gpu).to_numpy()
        built = disagg_curves(fold, units)
        train_idx = np.flatnonzero(~test & selectable)
        setting, _ = choose(take_units(built, train_idx), rows[train_idx])
        chosen[gpu] = settings_label(setting)
        test_idx = np.flatnonzero(test)
        part = take_units(with_settings(built, setting), test_idx)
        test_rows = rows.filter(pl.Series(test))
        one_each.append(predict_table(part, test_rows, setting.waves))
        sized = size_unstated(part, concurrency[test_idx], unstated[test_idx], setting.waves)
        out.append(predict_table(sized, test_rows, setting.waves))
    shipped_table = disagg_curves(in_source_protocol(Predictor.load(catalog=catalog)), units)
    idx = np.flatnonzero(selectable)
    shipped, _ = choose(take_units(shipped_table, idx), rows[idx])
    return HeldOut(pl.concat(out), pl.concat(one_each), chosen, settings_label(shipped))


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
