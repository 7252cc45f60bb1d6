"""The memory rule: what an engine gives the KV cache and whether a row's batch fits.

One rule for ``predict`` and the serving model alike (docs/method.md, "Memory"): ``batch_size``
is the mean number of running sequences, each holding paged KV at the mean length
(input + output / 2), inside the engine's KV budget after weights and runtime reserve. The byte
counts themselves (weights per rank, KV per token and per sequence) are
:mod:`predictors.physics`'. Every builder here reads only columns, so each expression is built
once per process (:func:`functools.cache`; a polars expression is immutable).
"""

from __future__ import annotations

from functools import cache

import polars as pl

from predictors import physics


@cache
def kv_budget_bytes() -> pl.Expr:
    """Memory left for the KV cache on all GPUs of a replica (negative: weights do not fit)."""
    usable = (
        pl.col("memory_gb") * physics.MEMORY_BYTES_PER_CATALOG_GB * physics.MEMORY_UTILISATION
        - physics.RUNTIME_RESERVE_GB_PER_GPU * 1e9
    ) * pl.col("gpu_count")
    return usable - physics.resident_weight_bytes()


@cache
def max_concurrent_sequences() -> pl.Expr:
    """How many sequences of the row's full length (input + output) fit in :func:`kv_budget_bytes`
    (a feature of the paper's recipe; the memory rule is :func:`fits_in_memory`)."""
    per_seq = physics.kv_bytes_per_token() * (pl.col("input_tokens") + pl.col("output_tokens"))
    return (kv_budget_bytes() / per_seq).clip(lower_bound=0.0)


@cache
def engine_kv_budget_bytes() -> pl.Expr:
    """Memory an engine gives the KV cache on all GPUs of a replica, after its reservation rules
    (negative: the weights do not fit). vLLM-like engines use
    :data:`~predictors.physics.MEMORY_UTILISATION` of the memory (``gpu_memory_utilization``) for
    weights, runtime reserve and KV; TensorRT-LLM gives the KV cache that fraction of what the
    weights and the runtime reserve leave free. Per rank: the weights are the largest rank's
    (:func:`~predictors.physics.resident_weight_bytes`), replica-equivalent."""
    n = pl.col("gpu_count")
    memory = pl.col("memory_gb") * physics.MEMORY_BYTES_PER_CATALOG_GB * n
    reserve = physics.RUNTIME_RESERVE_GB_PER_GPU * 1e9 * n
    weights = physics.resident_weight_bytes()
    return (
        pl.when(pl.col("engine") == "tensorrt-llm")
        .then(physics.MEMORY_UTILISATION * (memory - reserve - weights))
        .otherwise(physics.MEMORY_UTILISATION * memory - reserve - weights)
    )


@cache
def paged_kv_bytes_per_sequence() -> pl.Expr:
    """Paged KV cache of one running sequence at the mean length (input + output / 2), bytes
    (:func:`~predictors.physics.kv_bytes_per_sequence`: windowed layers hold at most their window),
    replica-equivalent on the largest pipeline stage (attention-DP ranks hold ``1 / DP`` of the
    sequences each, so DP does not change it), every tensor-parallel copy counted
    (:func:`~predictors.physics.kv_replication`)."""
    return (
        physics.kv_bytes_per_sequence(physics.mean_context_tokens())
        * physics.stage_share()
        * physics.kv_replication()
    )


@cache
def weights_fit_in_memory() -> pl.Expr:
    """True when the weights and the engine's reservations fit (KV budget above zero)."""
    return engine_kv_budget_bytes() > 0


@cache
def fits_in_memory() -> pl.Expr:
    """The memory rule of ``predict`` and of the serving model alike: ``batch_size`` is the mean
    number of running sequences, each holding paged KV at the mean length (input + output / 2),
    inside the engine's KV budget (:func:`engine_kv_budget_bytes`)."""
    return _fits(engine_kv_budget_bytes(), paged_kv_bytes_per_sequence())


def _fits(budget: pl.Expr, per_sequence: pl.Expr) -> pl.Expr:
    """The rule on its two quantities: a positive budget that holds ``batch_size`` sequences."""
    need = pl.col("batch_size").clip(lower_bound=1.0) * per_sequence
    return (budget > 0) & (budget >= need)


#: Columns of :func:`memory_terms`: the rule's three quantities, computed once per row.
WEIGHTS_COLUMN = "_resident_weight_bytes"
BUDGET_COLUMN = "_engine_kv_budget_bytes"
PER_SEQUENCE_COLUMN = "_paged_kv_bytes_per_sequence"


def memory_terms() -> list[pl.Expr]:
    """The weights, the engine's KV budget and one sequence's paged KV as columns
    (:data:`WEIGHTS_COLUMN`, :data:`BUDGET_COLUMN`, :data:`PER_SEQUENCE_COLUMN`), so the verdict
    (:func:`fits_from_terms`) and its wording read them instead of evaluating them again."""
    return [
        physics.resident_weight_bytes().alias(WEIGHTS_COLUMN),
        engine_kv_budget_bytes().alias(BUDGET_COLUMN),
        paged_kv_bytes_per_sequence().alias(PER_SEQUENCE_COLUMN),
    ]


def fits_from_terms() -> pl.Expr:
    """:func:`fits_in_memory` on the :func:`memory_terms` columns (the same booleans)."""
    return _fits(pl.col(BUDGET_COLUMN), pl.col(PER_SEQUENCE_COLUMN))
