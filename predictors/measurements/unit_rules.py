"""Quality rules that catch a latency in milliseconds read as seconds (docs/data.md, rules 11-13).

A latency 1,000 times too large passes every other rule: it is finite, positive and far above
the 0.1 ms floor, and a Little's-law batch (arrival rate × latency) computed from it is 1,000
times too large as well. Two physical limits catch it, each with a wide margin, so that no real
run, however slow its engine, crosses them (thresholds from physics, not fitted to any data):

- ``itl above the slowest step``: a decode step (``itl_s``) slower than reading the model's
  weights at 1 GB/s (:data:`SLOWEST_WEIGHT_BYTES_S`) plus the batch's KV cache at 10 % of the
  GPUs' memory bandwidth (:data:`SLOWEST_KV_SHARE`). Weights may sit in host memory (offloaded),
  and every path that feeds a GPU from there is faster than 1 GB/s (PCIe 16+ GB/s, a CPU's memory
  20+ GB/s); the KV cache sits in GPU memory, whose bandwidth attention kernels use far above
  10 %. The KV counted is at most the GPUs' memory (a step cannot read more than there is).
  An ITL of 20 ms read as 20 s breaks it for an 8B model in 16-bit (16 GB: 16 s and a little).
- ``batch above 10 x GPU memory``: the batch's KV cache at its mean context
  (``batch_size`` × :func:`predictors.kv_physics.kv_bytes_per_sequence` at input + output / 2)
  above :data:`MAX_KV_MEMORY_RATIO` times the memory of the row's ``gpu_count`` GPUs. Running
  sequences keep their KV cache in GPU memory, so the physical limit is 1; the factor 10 leaves
  room for what the reading approximates (the mean context, shared prefixes, a stated
  concurrency that also counts waiting requests, a GPU count stated per worker).

- ``ttft above 10 x the batch's service``: a TTFT (``ttft_s``) above :data:`MAX_TTFT_SERVICE_RATIO`
  times ``max(batch_size, 1) x (input_tokens + output_tokens) x itl_s``: the time to serve every
  request in the system (the batch, the request itself included) whole, one token per step at
  the run's own ITL. A request's first token waits at most for the requests ahead of it
  (the sources' batch counts the waiting ones: a closed loop's users, a Little's-law mean over
  the whole latency, a static batch), and a prefill step handles many tokens in a step's time.
  The factor 10 leaves room for time outside the GPU (HTTP, tokenising) on very short requests
  and for means over different requests. It catches a TTFT typed far too large (``1e9`` in a
  column of ms), not every TTFT in ms read as s: the median public row lies at 0.003 % of it.

A row whose model or GPU lacks a fact the limit needs is not checked by it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl

from predictors.core.errors import WattgpuError
from predictors.kv_physics import bytes_per_param, kv_bytes_per_sequence, mean_context_tokens
from predictors.physics import MEMORY_BYTES_PER_CATALOG_GB

#: The slowest rate at which a GPU's weights reach its compute units (from host memory), bytes/s.
SLOWEST_WEIGHT_BYTES_S = 1e9
#: The least share of its GPUs' memory bandwidth at which a decode step reads the KV cache.
SLOWEST_KV_SHARE = 0.1
#: How many times the memory of its GPUs a batch's KV cache may need (the physical limit is 1).
MAX_KV_MEMORY_RATIO = 10.0
#: How many times the time to serve its batch whole, one token per step, a TTFT may take.
MAX_TTFT_SERVICE_RATIO = 10.0
ITL_REASON = "itl above the slowest step"
BATCH_REASON = f"batch above {MAX_KV_MEMORY_RATIO:g} x GPU memory"
TTFT_REASON = f"ttft above {MAX_TTFT_SERVICE_RATIO:g} x the batch's service"
RULES: tuple[str, ...] = (
    f"{ITL_REASON}: itl_s > weight bytes / 1 GB/s + batch KV bytes (at most the GPUs' memory) / "
    "10 % of the GPUs' memory bandwidth (a latency in ms read as s)",
    f"{BATCH_REASON}: batch_size x KV bytes per sequence at input + output/2 > "
    f"{MAX_KV_MEMORY_RATIO:g} x memory_gb x gpu_count (a Little's-law batch from latencies in ms)",
    f"{TTFT_REASON}: ttft_s > {MAX_TTFT_SERVICE_RATIO:g} x max(batch_size, 1) x (input_tokens + "
    "output_tokens) x itl_s (every request in the system served whole, one token per step)",
)
#: Catalog facts the limits read: LLM (text: ``attention_kind``) and GPU.
_LLM_FACTS = (
    "total_params_b",
    "num_layers",
    "num_kv_heads",
    "head_dim",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "sliding_window",
    "full_attention_layers",
    "window_attention_layers",
    "state_bytes_per_sequence",
)
_GPU_FACTS = ("memory_gb", "memory_bandwidth_gb_s")
FACTS: tuple[str, ...] = (*_LLM_FACTS, "attention_kind", *_GPU_FACTS)


def _number(value: object) -> float | None:
    try:
        return float(value) if value not in (None, "") else None  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _spec_row(cat: object, kind: str, name: str) -> dict[str, Any]:
    """The catalog row of *name* ({} where the resolver has none: the limits do not apply)."""
    lookup = getattr(cat, kind, None)
    try:
        row = lookup(name) if lookup is not None else {}
    except (WattgpuError, LookupError):
        return {}
    return row if isinstance(row, dict) else {}


def facts(
    cat: object, model_ids: Iterable[str | None], gpu_ids: Iterable[str | None]
) -> list[pl.Series]:
    """The catalog facts :func:`reasons` reads, one value per row (null where unknown)."""
    models, gpus = list(model_ids), list(gpu_ids)
    llm = {m: _spec_row(cat, "llm", m) for m in set(models) if m is not None}
    gpu = {g: _spec_row(cat, "gpu", g) for g in set(gpus) if g is not None}
    out = [
        pl.Series(c, [_number(llm[m].get(c)) if m else None for m in models], dtype=pl.Float64)
        for c in _LLM_FACTS
    ]
    kinds = [str(llm[m].get("attention_kind") or "") or None if m else None for m in models]
    out.append(pl.Series("attention_kind", kinds, dtype=pl.String))
    out += [
        pl.Series(c, [_number(gpu[g].get(c)) if g else None for g in gpus], dtype=pl.Float64)
        for c in _GPU_FACTS
    ]
    return out


#: The row columns the limits read (a frame without them is not checked).
_ROW_COLUMNS = frozenset(
    {"batch_size", "input_tokens", "output_tokens", "gpu_count", "precision", "itl_s"}
)


def reasons(otherwise: pl.Expr, columns: Iterable[str]) -> pl.Expr:
    """:data:`ITL_REASON`, :data:`BATCH_REASON` or :data:`TTFT_REASON` where a row (of a frame
    with *columns* and :func:`facts`) breaks that limit, else *otherwise*; a limit with an
    unknown fact (or a row without a TTFT) does not apply."""
    names = set(columns)
    if not _ROW_COLUMNS <= names:
        return otherwise
    kv = pl.col("batch_size") * kv_bytes_per_sequence(mean_context_tokens())
    weights = pl.col("total_params_b") * 1e9 * bytes_per_param()
    memory = pl.col("memory_gb") * MEMORY_BYTES_PER_CATALOG_GB * pl.col("gpu_count")
    bandwidth = pl.col("memory_bandwidth_gb_s") * 1e9 * pl.col("gpu_count")
    slowest = weights / SLOWEST_WEIGHT_BYTES_S + pl.min_horizontal(kv, memory) / (
        SLOWEST_KV_SHARE * bandwidth
    )
    too_slow = pl.col("itl_s") > slowest
    too_big = kv > MAX_KV_MEMORY_RATIO * memory
    service = (
        pl.max_horizontal(pl.col("batch_size"), pl.lit(1.0))
        * (pl.col("input_tokens") + pl.col("output_tokens"))
        * pl.col("itl_s")
    )
    too_late = (
        pl.col("ttft_s") > MAX_TTFT_SERVICE_RATIO * service if "ttft_s" in names else pl.lit(False)
    )
    return (
        pl.when(too_slow.fill_null(False))
        .then(pl.lit(ITL_REASON))
        .when(too_big.fill_null(False))
        .then(pl.lit(BATCH_REASON))
        .when(too_late.fill_null(False))
        .then(pl.lit(TTFT_REASON))
        .otherwise(otherwise)
    )
