"""Held-out accuracy of the aggregated serving model's TTFT on the measured aggregated runs.

The serving model's TTFT of an aggregated replica at a mean of ``b`` sequences decoding is
``t_1 + τ(b)`` (docs/method.md §3 item 4): the lone-prompt TTFT plus one step.
``t_1`` is the predictors' TTFT at batch 1 (the disaggregated prefill pool's ``T_1``), at least
the physics prefill estimate ``t_p`` (:func:`predictors.serving.grid.lone_prompt_ttft_s`); until
2026-12-07 it was ``t_p`` alone. This module scores both on the rows that measured TTFT in
aggregated serving (aiconfigurator's closed loops, ``mode`` agg), leave-one-GPU-out as
``wattgpu evaluate``: for every GPU the predictors are retrained without any row of it and
predict its rows in their source's protocol; ``τ(b)`` is the fold's ITL at the measured
concurrency. A closed loop's TTFT at large concurrency also holds the wait for a free batch
slot, which an open-loop Poisson model below capacity does not have: the table is by
concurrency, and the light-load rows (concurrency ≤ :data:`LIGHT_CONCURRENCY`) are the ones the
lone-prompt time decides.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from predictors.api import Predictor
from predictors.catalog.store import Catalog
from predictors.measurements.load import load_measurements
from predictors.serving.grid import KEYS, lone_prompt_ttft_s, row_physics
from predictors.training.disagg_accuracy import in_source_protocol
from predictors.training.train import train

#: Concurrency up to which a row counts as light load.
LIGHT_CONCURRENCY = 16.0


def measured_rows(table: pl.DataFrame) -> pl.DataFrame:
    """The aggregated rows of *table* (the measurement table) that measured TTFT."""
    return table.filter(
        pl.col("ttft_s").is_not_null() & ~pl.col("disaggregated").fill_null(False)
    ).filter(pl.col("source") == "aiconfigurator")


def predict_rows(predictor: Predictor, rows: pl.DataFrame) -> pl.DataFrame:
    """*rows* (measured aggregated rows) with ``physics_s`` (``t_p``), ``lone_s`` (``t_1``) and
    ``step_s`` (``τ`` at the measured concurrency), the serving TTFT before (``t_p + τ``,
    ``pred_physics_s``) and now (``t_1 + τ``, ``pred_lone_s``)."""
    keys = rows.select(KEYS).with_columns(pl.col("gpu_count").cast(pl.Int64))
    phys = row_physics(keys, predictor)["ttft_base_s"]
    lone = lone_prompt_ttft_s(keys, predictor, phys)
    at_n = predictor.predict(keys.with_columns(rows["batch_size"].alias("batch_size")))
    step = at_n["itl_s"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    p = phys.cast(pl.Float64).to_numpy()
    return rows.select("gpu", "model", "batch_size", "input_tokens", "ttft_s").with_columns(
        pl.Series("physics_s", p),
        pl.Series("lone_s", lone),
        pl.Series("step_s", step),
        pl.Series("pred_physics_s", p + step),
        pl.Series("pred_lone_s", lone + step),
    )


def held_out(data_dir: Path, catalog: Catalog) -> pl.DataFrame:
    """Every measured aggregated TTFT row predicted by predictors that never saw its GPU."""
    table = load_measurements(data_dir, catalog).table
    rows = measured_rows(table)
    parts = []
    for gpu in sorted(rows["gpu"].drop_nulls().unique().to_list()):
        fold = in_source_protocol(
            Predictor(train(table.filter(pl.col("gpu") != gpu), catalog), catalog)
        )
        parts.append(predict_rows(fold, rows.filter(pl.col("gpu") == gpu)))
    return pl.concat(parts) if parts else pl.DataFrame()


def summarise(pred: pl.DataFrame) -> pl.DataFrame:
    """Per load class (light: concurrency ≤ :data:`LIGHT_CONCURRENCY`; heavy; all): rows, and
    for ``t_p + τ`` and ``t_1 + τ`` the signed median of predicted / measured and the MdAPE."""

    def agg(label: str, frame: pl.DataFrame) -> dict[str, object]:
        out: dict[str, object] = {"load": label, "rows": frame.height}
        for name, col in (("physics", "pred_physics_s"), ("lone", "pred_lone_s")):
            ratio = (frame[col] / frame["ttft_s"]).to_numpy()
            ok = np.isfinite(ratio)
            out[f"{name}_ratio"] = float(np.median(ratio[ok])) if ok.any() else float("nan")
            err = np.abs(ratio[ok] - 1.0) * 100.0
            out[f"{name}_mdape_pct"] = float(np.median(err)) if ok.any() else float("nan")
        return out

    light = pl.col("batch_size") <= LIGHT_CONCURRENCY
    return pl.DataFrame(
        [
            agg(f"concurrency ≤ {LIGHT_CONCURRENCY:g}", pred.filter(light)),
            agg(f"concurrency > {LIGHT_CONCURRENCY:g}", pred.filter(~light)),
            agg("all", pred),
        ]
    )


def section(data_dir: Path, catalog: Catalog) -> list[str]:
    """The markdown section of docs/serving-accuracy.md."""
    pred = held_out(data_dir, catalog)
    lines = [
        "## TTFT of aggregated replicas",
        "",
        "The serving model's TTFT at the measured concurrency `b`, `t_1 + τ(b)` (docs/method.md",
        "§3 item 4: the lone-prompt TTFT, the predictors' TTFT at batch 1 and at least the",
        "physics prefill `t_p`, plus one step), against the physics prefill alone, `t_p + τ(b)`",
        "(the model until 2026-12-07), on aiconfigurator's aggregated closed-loop runs, each",
        "GPU predicted by predictors retrained without it",
        "(`predictors.training.agg_ttft_accuracy`). Above 1 the TTFT is over-stated; below 1",
        "under-stated, the unsafe direction for a TTFT SLA. Large closed loops also wait for a",
        "free batch slot, which the open-loop model below capacity does not have.",
        "",
        "| load | rows | `t_p + τ` median predicted / measured | `t_p + τ` MdAPE | "
        "`t_1 + τ` median predicted / measured | `t_1 + τ` MdAPE |",
        "|---|---|---|---|---|---|",
    ]
    if pred.height == 0:
        return [*lines, "| – | 0 | – | – | – | – |", ""]
    for r in summarise(pred).iter_rows(named=True):
        lines.append(
            f"| {r['load']} | {r['rows']:,} | {r['physics_ratio']:.2f} | "
            f"{r['physics_mdape_pct']:.1f} % | {r['lone_ratio']:.2f} | "
            f"{r['lone_mdape_pct']:.1f} % |"
        )
    return [*lines, ""]


__all__ = ["LIGHT_CONCURRENCY", "held_out", "measured_rows", "predict_rows", "section", "summarise"]
