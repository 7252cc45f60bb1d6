"""The "does not fit" line of a row whose batch exceeds GPU memory (:func:`fit_errors`).

The memory rule itself is :func:`predictors.memory_rule.fits_in_memory`; this module only words its
verdict: what the row needs and has, and, where tensor-parallel ranks each hold a copy of the KV
cache (:func:`predictors.physics.kv_replication`), that ``data_parallel`` splits it.
"""

from __future__ import annotations

import polars as pl

from predictors import memory_rule, physics
from predictors.catalog import engine_support
from predictors.catalog.row_checks import Check, failing_lines


def fit_errors(feats: pl.DataFrame, fits: pl.Series) -> pl.Series:
    """'' where the row's batch fits in memory, else its "does not fit" line (formatted for
    those rows only: a million rows that fit cost no string work); *feats* carries the
    :func:`~predictors.memory_rule.memory_terms` columns."""
    weights = pl.col(memory_rule.WEIGHTS_COLUMN)
    per_sequence = pl.col(memory_rule.PER_SEQUENCE_COLUMN)
    need_gb = (weights + per_sequence * pl.col("batch_size").clip(lower_bound=1.0)) / 1e9
    have_gb = (pl.col(memory_rule.BUDGET_COLUMN) + weights) / 1e9
    # a lower bound on the GPUs of this type that hold it: more GPUs never need less (KV
    # copies across ranks and attention-DP weight copies only add) and each adds its usable GB
    at_least = (need_gb / (have_gb / pl.col("gpu_count"))).ceil().cast(pl.Int64)
    # at one sequence (a rate row is predicted there) only more GPUs or fewer bits help
    lower = pl.when(pl.col("batch_size") > 1).then(pl.lit("batch_size or ")).otherwise(pl.lit(""))
    line = pl.format(
        "does not fit: needs {} GB for weights and the paged KV cache of the batch "
        "(running sequences at the mean length, input + output / 2), has {} GB usable "
        "on {} GPU(s); raise gpu_count (at least {} of these GPUs) or lower {}precision",
        need_gb.round(1),
        have_gb.round(1),
        pl.col("gpu_count").cast(pl.Int64),
        at_least,
        lower,
    )
    copies = physics.kv_replication()
    why = pl.when(pl.col("attention_kind") == "mla").then(pl.lit("MLA's one latent head"))
    held = pl.format(
        "; the KV cache is held {} times (every tensor-parallel rank keeps a copy: {}), "
        "data_parallel > 1 splits it",
        copies.round(0).cast(pl.Int64),
        why.otherwise(pl.lit("fewer KV heads than tensor_parallel")),
    )
    node = pl.col("node_gpus").fill_null(8).cast(pl.Int64)
    one_node = pl.col("engine").is_in(engine_support.single_node_engines()) & (at_least > node)
    beyond = pl.format(
        "; {} serves a replica inside one node of {} GPUs: use {} to span nodes",
        pl.col("engine"),
        node,
        pl.lit(engine_support.listed(list(engine_support.FULL_ENGINES), "or")),
    )
    line = pl.concat_str(
        [
            line,
            pl.when(copies > 1).then(held).otherwise(pl.lit("")),
            pl.when(one_node).then(beyond).otherwise(pl.lit("")),
        ]
    )
    frame = feats.with_columns(fits.alias("_fits"))
    return failing_lines(frame, [Check(~pl.col("_fits"), line)]).alias("_fit_error")
