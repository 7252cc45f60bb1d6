"""Predictions at a Poisson load: the ``requests_per_s`` column of the batch contract.

For a row with a rate λ (requests/s per replica of ``gpu_count`` GPUs) the serving model
(:mod:`predictors.serving`) replaces the at-batch predictions by those at load:
``power_w_per_gpu`` = E[P(K)] over the number K of requests in the system (idle when empty),
``itl_s`` the mean ITL, ``output_throughput_tok_s`` = λ · output tokens, and fills
``concurrency`` (mean requests in the system), ``ttft_s_at_load`` and ``itl_s_p90``. The
``_lo``/``_hi`` columns come from the same model run on the lower/upper interval curves (when
the upper curves cannot carry the rate: power TDP, ITL empty).
``batch_size`` is ignored for such rows (:mod:`predictors.serving.rate_rows`), and their TTFT
columns are the TTFT at load, ``t_1 + τ(b)``: its band is the lone prompt's TTFT interval (the
predictors' at batch 1) plus the lower/upper curves' step time at the rate. A rate above what
one replica can carry gets an error.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from predictors.api import Predictor
from predictors.catalog.quantised import try_resolve_checkpoint
from predictors.serving.curves import BATCH_GRID, rate_per_s
from predictors.serving.grid import serving_table
from predictors.serving.operating import at_rate
from predictors.serving.rate_rows import ttft_at_load


def _ids(predictor: Predictor, rows: pl.DataFrame) -> pl.DataFrame:
    """*rows* with catalog ids (a quantised checkpoint's name: its base model's, as
    :meth:`Predictor.predict` resolves it)."""
    cat = predictor.catalog
    found = {m: try_resolve_checkpoint(cat, m) for m in rows["model"].unique().to_list()}
    models = {m: None if c is None else c.model_id for m, c in found.items()}
    gpus = {g: cat.try_resolve_gpu(g) for g in rows["gpu"].unique().to_list()}
    return rows.with_columns(
        pl.col("model").replace_strict(models, return_dtype=pl.String),
        pl.col("gpu").replace_strict(gpus, return_dtype=pl.String),
    )


def at_load(
    predictor: Predictor,
    rows: pl.DataFrame,
    result: pl.DataFrame,
    ttft: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """*result* (the at-batch outputs of normalised *rows*) with at-load values where a row has
    a rate and no error; and *ttft* (the TTFT columns, when asked for) with those rows' TTFT at
    their load (:func:`predictors.serving.rate_rows.ttft_at_load`)."""
    mask = (rows["requests_per_s"].is_not_null() & (result["error"] == "")).to_numpy()
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return result, ttft
    sub = _ids(predictor, rows[idx])
    table = serving_table(sub, predictor)
    lam = sub["requests_per_s"].to_numpy().astype(np.float64)
    mean = at_rate(table.curves, lam)
    lo = at_rate(table.curves_lo, lam)
    hi = at_rate(table.curves_hi, lam)
    top = rate_per_s(table.curves, table.curves.max_batch[:, None])[:, 0]
    over = np.isnan(mean.power_w_per_gpu)
    # the upper-interval curves may not carry the rate at all: then the upper bounds are the
    # physical ones (TDP; ITL unbounded, reported empty)
    hi_over = np.isnan(hi.power_w_per_gpu)
    tdp = np.asarray(table.tdp_w, dtype=np.float64)
    updates: dict[str, np.ndarray] = {
        "power_w_per_gpu": mean.power_w_per_gpu,
        "power_w_per_gpu_lo": np.fmin(lo.power_w_per_gpu, mean.power_w_per_gpu),
        "power_w_per_gpu_hi": np.where(
            hi_over,
            np.fmax(tdp, mean.power_w_per_gpu),
            np.fmax(hi.power_w_per_gpu, mean.power_w_per_gpu),
        ),
    }
    idle = np.asarray(table.curves.idle_w, dtype=np.float64)
    for col in ("power_w_per_gpu", "power_w_per_gpu_lo", "power_w_per_gpu_hi"):
        # in [idle, TDP] exactly (E[P(K)] sums and interpolates: its last bit may step out)
        updates[col] = np.clip(updates[col], idle, np.maximum(tdp, idle))
    updates |= {
        "itl_s": mean.itl_s,
        "itl_s_lo": np.fmin(lo.itl_s, mean.itl_s),
        "itl_s_hi": np.where(hi_over, np.nan, np.fmax(hi.itl_s, mean.itl_s)),
        "output_throughput_tok_s": mean.output_throughput_tok_s,
        "concurrency": mean.concurrency,
        "ttft_s_at_load": mean.ttft_s,
        "itl_s_p90": mean.itl_s_p90,
    }
    columns = {}
    for col, values in updates.items():
        full = result[col].cast(pl.Float64).to_numpy().copy()
        full[idx] = np.where(over, np.nan, values)
        columns[col] = pl.Series(col, full).fill_nan(None)
    errors = result["error"].to_list()
    for j, i in enumerate(idx):
        if not over[j]:
            continue
        held = int(table.curves.max_batch[j])
        if held >= BATCH_GRID[-1]:  # the model's own bound, not the replica's: say so
            why = "the most the serving model tabulates; more GPUs do not raise it"
            fix = "lower the rate or split it over more replicas"
        else:
            why = (
                "the least of what memory holds, the engine's maximum and where throughput "
                "stops rising"
            )
            fix = "raise gpu_count or lower the rate"
        errors[i] = (
            f"requests_per_s: {lam[j]:g} is more than one replica carries ({top[j]:.3g} req/s "
            f"at its largest useful batch of {held} sequences: {why}); {fix}"
        )
    if ttft is not None:
        # the TTFT at load is t_1 + τ(b) (docs/method.md §3 item 4): its band adds each
        # interval curve's step τ at the rate (its ``itl_s``) to t_1's own interval, not to
        # the mean t_1 the curves carry (the planner's capacity keeps that one)
        lo_ttft = table.ttft_1_lo_s + lo.itl_s
        hi_ttft = np.where(hi_over, np.nan, table.ttft_1_hi_s + hi.itl_s)
        ttft = ttft_at_load(ttft, idx, mean.ttft_s, lo_ttft, hi_ttft)
    errors_column = pl.Series("error", errors, dtype=pl.String)
    return result.with_columns(*columns.values(), errors_column), ttft
