"""The "does not fit" line of a row whose batch exceeds GPU memory (:func:`fit_errors`).

The memory rule itself is :func:`predictors.memory_rule.fits_in_memory`; this module only words its
verdict: what the row needs and has, and, where tensor-parallel ranks each hold a copy of the KV
cache (:func:`predictors.physics.kv_replication`), that ``data_parallel`` splits it. The two
numbers get the decimals that tell them apart ("needs 16.0 GB, has 16.0 GB" said nothing), and
more GPUs are suggested only up to the most one replica holds
(:func:`predictors.catalog.validity.max_replica_gpus`): past it, the weights or the batch do not
fit in the largest replica, and the line says what does help.
"""

from __future__ import annotations

import polars as pl

from predictors import memory_rule, physics
from predictors.catalog import engine_support, validity
from predictors.catalog.row_checks import Check, failing_lines


def _gb_pair_expr(need: pl.Expr, have: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """*need* and *have* (GB) with one decimal, or more (up to 3) where one would print both
    alike (per row; :func:`planner.text.apart` for one pair)."""
    differ = [need.round(places) != have.round(places) for places in (1, 2)]

    def text(value: pl.Expr) -> pl.Expr:
        return (
            pl.when(differ[0])
            .then(value.round(1))
            .when(differ[1])
            .then(value.round(2))
            .otherwise(value.round(3))
        )

    return text(need), text(have)


def _replica_limit() -> pl.Expr:
    """:func:`~predictors.catalog.validity.max_replica_gpus` of the row's GPU (a row without
    ``node_gpus`` counts :data:`~predictors.catalog.validity.DEFAULT_NODE_GPUS`, as the
    physics does)."""
    node = pl.col("node_gpus").fill_null(validity.DEFAULT_NODE_GPUS).cast(pl.Int64)
    domain = pl.max_horizontal(pl.col("nvlink_domain_gpus").fill_null(1).cast(pl.Int64), node)
    return pl.max_horizontal(validity.MAX_NODES * node, validity.MAX_DOMAINS * domain)


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
    per_gpu_gb = have_gb / pl.col("gpu_count")
    at_least = (need_gb / per_gpu_gb).ceil().cast(pl.Int64)
    limit = _replica_limit()
    in_replica = at_least <= limit
    # at one sequence (a rate row is predicted there) only more GPUs or fewer bits help
    lower = pl.when(pl.col("batch_size") > 1).then(pl.lit("batch_size or ")).otherwise(pl.lit(""))
    more = pl.format(
        "raise gpu_count (at least {} of these GPUs) or lower {}precision", at_least, lower
    )
    weights_over = (weights / 1e9 / per_gpu_gb).ceil() > limit  # fewer bits or more memory
    beyond_replica = pl.format(
        "{} in the largest replica ({} of these GPUs): lower {}precision or use a GPU with more "
        "memory",
        pl.when(weights_over)
        .then(pl.lit("the weights do not fit"))
        .otherwise(pl.lit("the weights and the KV cache of the batch do not fit")),
        limit,
        pl.when(weights_over).then(pl.lit("")).otherwise(lower),
    )
    need_text, have_text = _gb_pair_expr(need_gb, have_gb)
    line = pl.format(
        "does not fit: needs {} GB for weights and the paged KV cache of the batch "
        "(running sequences at the mean length, input + output / 2), has {} GB usable "
        "on {} GPU(s); {}",
        need_text,
        have_text,
        pl.col("gpu_count").cast(pl.Int64),
        pl.when(in_replica).then(more).otherwise(beyond_replica),
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
    one_node = (
        pl.col("engine").is_in(engine_support.single_node_engines())
        & (at_least > node)
        & in_replica
    )
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
