"""KV-cache physics: the bytes one token or sequence holds in the KV cache (and recurrent
state), and the bytes one decode step reads from it (docs/method.md, "KV cache").

Full-attention layers hold and read the whole context; a sliding-window or chunked layer holds
and reads at most its window; a Mamba / linear-attention layer holds a fixed state per
sequence, read once per step whatever the context. :func:`kv_bytes_per_token` counts every layer
as full (the memory footprint of the paper's recipe features); :func:`kv_bytes_per_sequence` and
:func:`kv_read_bytes_per_step` follow each layer's kind (the memory rule, the decode step).
"""

from __future__ import annotations

from functools import cache

import polars as pl

from predictors.core.vocab import BYTES_PER_PARAM

_BYTES = pl.col("precision").replace_strict(BYTES_PER_PARAM, default=None, return_dtype=pl.Float64)
_TP = pl.col("tensor_parallel")


@cache
def bytes_per_param() -> pl.Expr:
    """Bytes per weight of the row's ``precision``."""
    return _BYTES


@cache
def kv_bytes_per_element() -> pl.Expr:
    """Bytes per KV-cache element: 1 for ≤8-bit weights, 4 for fp32, else 2."""
    return (
        pl.when(_BYTES <= 1.0)
        .then(pl.lit(1.0))
        .when(_BYTES >= 4.0)
        .then(pl.lit(4.0))
        .otherwise(pl.lit(2.0))
    )


@cache
def kv_bytes_per_layer_token() -> pl.Expr:
    """KV-cache bytes one token of context occupies in one attention layer (all GPUs together).

    Multi-head latent attention (DeepSeek) caches ``kv_lora_rank + qk_rope_head_dim`` values per
    layer; other attention kinds cache keys and values for every KV head.
    """
    per_layer_mha = 2.0 * pl.col("num_kv_heads") * pl.col("head_dim")
    per_layer_mla = pl.col("kv_lora_rank").fill_null(0) + pl.col("qk_rope_head_dim").fill_null(0)
    per_layer = (
        pl.when(pl.col("attention_kind") == "mla").then(per_layer_mla).otherwise(per_layer_mha)
    )
    return per_layer * kv_bytes_per_element()


@cache
def kv_replication() -> pl.Expr:
    """How many tensor-parallel ranks hold a copy of each KV entry: ``max(1, TP / KV heads)``.

    Tensor parallelism splits the KV cache by KV head. Multi-head latent attention caches one
    latent "head" (``kv_lora_rank + qk_rope_head_dim``) that every rank needs whole, so each of
    the TP ranks of an attention-DP rank keeps the full latent cache of its sequences (vLLM's MLA
    cache has one head, ``[blocks, block_size, 1, kv_lora_rank + qk_rope_head_dim]``; attention
    data parallelism exists to avoid this copy); grouped-query attention with TP above its KV
    heads copies each head ``TP / kv_heads`` times. 1 without tensor parallelism.

    Counted where memory is (:func:`predictors.memory_rule.paged_kv_bytes_per_sequence`: the fit
    verdict, the serving model's batch limit, disaggregated pools), not in the decode step's KV
    read: counting the copies there too made held-out ITL worse (docs/method.md, "Parallel
    layouts")."""
    heads = (
        pl.when(pl.col("attention_kind") == "mla")
        .then(pl.lit(1.0))
        .otherwise(pl.col("num_kv_heads").cast(pl.Float64))
    )
    return (_TP.cast(pl.Float64) / heads).clip(lower_bound=1.0).fill_null(1.0)


@cache
def kv_bytes_per_token() -> pl.Expr:
    """KV-cache bytes one token of context occupies if every layer kept the full context (all
    layers, all GPUs together): the paper's recipe features and the MoE expert-read estimate.
    Sliding-window, chunked and recurrent layers are counted as full layers here; the memory
    rule and the decode step use :func:`kv_bytes_per_sequence`."""
    return pl.col("num_layers") * kv_bytes_per_layer_token()


def kv_bytes_per_sequence(context_tokens: pl.Expr) -> pl.Expr:
    """KV cache (and recurrent state) one sequence holds at *context_tokens*, bytes, all GPUs
    together: per-layer KV bytes × (full layers × c + windowed layers × min(c, window)) plus the
    fixed ``state_bytes_per_sequence`` of Mamba / linear-attention layers. With the catalog's
    ``full_attention_layers`` / ``window_attention_layers`` empty every layer keeps the full
    context (:func:`kv_bytes_per_token` × c); a windowed layer without a window counts as full."""
    full, window = pl.col("full_attention_layers"), pl.col("window_attention_layers")
    c = context_tokens.cast(pl.Float64)
    held = full * c + window * pl.min_horizontal(c, pl.col("sliding_window").cast(pl.Float64))
    state = pl.col("state_bytes_per_sequence").cast(pl.Float64).fill_null(0.0)
    layered = kv_bytes_per_layer_token() * held + state
    return (
        pl.when(full.is_not_null() & window.is_not_null())
        .then(layered)
        .otherwise(kv_bytes_per_token() * c)
    )


@cache
def mean_context_tokens() -> pl.Expr:
    """Mean context length during decoding: prompt plus half the output."""
    return pl.col("input_tokens") + pl.col("output_tokens") / 2.0


@cache
def kv_read_bytes_per_step() -> pl.Expr:
    """KV-cache (and recurrent-state) bytes one decode step reads, all GPUs together: each of the
    batch's sequences at the mean context, layer by layer (:func:`kv_bytes_per_sequence`: a
    windowed layer reads at most its window, a recurrent layer its fixed state)."""
    return pl.col("batch_size") * kv_bytes_per_sequence(mean_context_tokens())


@cache
def kv_context_tokens() -> pl.Expr:
    """The context a decode step reads per layer, on average over the layers: the KV (and
    recurrent state) one sequence holds at the mean context (:func:`kv_bytes_per_sequence`)
    over what one token holds in every layer (:func:`kv_bytes_per_token`), at least 1. The mean
    context itself for full-attention models; growing more slowly for windowed layers and not at
    all for recurrent ones. The ITL trees' context input: non-decreasing in the context for every
    layer kind (their monotone direction holds), with :func:`kv_bytes_per_token` (constant in
    the context) as their per-token KV input, their sum is the log KV read of a sequence."""
    per_token = kv_bytes_per_token().clip(lower_bound=1e-9)
    return (kv_bytes_per_sequence(mean_context_tokens()) / per_token).clip(lower_bound=1.0)
