"""A pipeline-parallel replica's ITL is never below its tensor-parallel stage group's.

A token cycle of a ``TP × PP`` replica (``PP > 1``) holding ``b`` sequences in ``M`` micro-batches
(``M = min(PP, b)``, 1 for a layer split: :func:`predictors.physics.micro_batches`) passes each
micro-batch through every stage; with a full pipeline the stages work on different micro-batches
at once. Either way a sequence's next token waits for its micro-batch to cross all ``PP``
stages, each holding ``1 / PP`` of the layers on ``TP · DP`` GPUs, so the cycle takes at least
what the ``TP · DP`` GPUs of one stage group take for one decode step of the whole model at the
micro-batch, ``b / M`` sequences: the same weight and KV reads and FLOPs, in turn, plus the
stage transfers. The step model gives that (:mod:`predictors.physics`, "pipeline fill"); the
residual trees, whose GPU-count input falls as ``PP`` grows, do not, and held-out ITL could come
out below it (fuzz round 26: TP 8 × PP 4 at half TP 8's ITL at batch 1). :func:`stage_group_itl`
prices every pipelined row's stage group with the same estimator; the ITL is the larger.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from predictors.features import add_features


def stage_group_frame(frame: pl.DataFrame) -> tuple[np.ndarray, pl.DataFrame]:
    """The rows of *frame* (a feature frame) with ``pipeline_parallel`` > 1, and their stage
    group as rows of their own: ``PP`` 1, ``gpu_count / PP`` GPUs, the micro-batch's ``b / M``
    sequences, every feature recomputed (:func:`predictors.features.add_features`)."""
    if "pipeline_parallel" not in frame.columns or "micro_batches" not in frame.columns:
        return np.zeros(0, dtype=np.int64), frame.clear()
    pp = frame["pipeline_parallel"].cast(pl.Float64).fill_null(1.0).to_numpy()
    idx = np.flatnonzero(pp > 1.0)
    if idx.size == 0:
        return idx, frame.clear()
    sub = frame[idx]
    group = sub.with_columns(
        pl.lit(1.0).alias("pipeline_parallel"),
        (pl.col("gpu_count").cast(pl.Float64) / pl.col("pipeline_parallel").cast(pl.Float64))
        .round()
        .alias("gpu_count"),
        (pl.col("batch_size").cast(pl.Float64) / pl.col("micro_batches").cast(pl.Float64))
        .clip(lower_bound=1.0)
        .alias("batch_size"),
    )
    return idx, add_features(group)


def stage_group_itl(
    frame: pl.DataFrame, itl_s: np.ndarray, predict: Callable[[pl.DataFrame], np.ndarray]
) -> np.ndarray:
    """*itl_s* (the rows of *frame*) raised, on pipelined rows, to *predict* of their stage
    group (:func:`stage_group_frame`)."""
    idx, group = stage_group_frame(frame)
    if idx.size == 0:
        return itl_s
    out = np.array(itl_s, dtype=np.float64)
    out[idx] = np.fmax(out[idx], predict(group))
    return out
