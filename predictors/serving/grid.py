"""Inputs of the serving model for rows of (model, GPU, TP, engine, precision, workload).

One vectorised predictor call gives ITL and power per GPU at every :data:`BATCH_GRID` batch;
the physics per row (docs/method.md, "Capacity"):

* **memory, paged KV at the current length**: a sequence holds the KV of its mean context
  ``c = I + O/2`` (prompt plus half the output), :func:`predictors.physics.kv_bytes_per_sequence`:
  full-attention layers ``c`` tokens, sliding-window / chunked layers at most their window,
  Mamba / linear-attention layers a fixed state. The KV budget follows the engine's
  rule: vLLM (and SGLang, DeepSpeed-MII, HF, llama.cpp) give ``gpu_memory_utilization`` = 0.9
  of the memory to weights + KV + activations, so KV = 0.9 · memory − reserve − weights;
  TensorRT-LLM gives ``kv_cache_free_gpu_memory_fraction`` = 0.9 of the memory left after the
  weights and the runtime, so KV = 0.9 · (memory − reserve − weights);
* **engine batch limit** :func:`engine_max_batch`: vLLM's ``max_num_seqs`` (1024 on GPUs with
  at least 70 GiB, else 256, as vLLM V1 sets it), TensorRT-LLM's ``max_batch_size`` 2048,
  SGLang's request pool 2048 (its lower default), the others 256, each per scheduler:
  an attention-DP rank schedules its own batch (vLLM's engine core per DP rank, TensorRT-LLM's
  per-rank limit with attention DP, SGLang's scheduler per DP rank), so a replica of ``DP``
  ranks holds ``DP`` times that, at most the batch grid's end;
* **prefill** of one request: ``c_p = 2 · active params · I / (TP · peak FLOPS · MFU)`` plus its
  TP all-reduce; alone it also reads the weights once (``t_p``,
  :func:`predictors.physics.prefill_time_s`);
* **TP communication** of the prompt tokens: two ring all-reduces per layer of the hidden state
  per token, ``2 · layers · hidden · 2 B · 2(TP − 1)/TP`` bytes at half the catalog's
  bidirectional ``interconnect_gb_s`` (NVLink vs PCIe; 64 GB/s, PCIe Gen4, when the catalog has
  none; the scale-out network's ``scale_out_gbit_s`` when TP spans NVLink domains), plus, with
  pipeline parallelism, each token's ``hidden · 2 B`` across the ``PP − 1`` stage boundaries
  (over the network when the replica spans domains). The decode step's communication is part of
  the predictors' ITL (their step model charges it from the same fabric columns), so it is not
  added again. Layouts per :mod:`predictors.catalog.validity` (the row's optional
  ``pipeline_parallel`` / ``data_parallel`` / ``expert_parallel``; weights and KV per rank).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from predictors import memory_rule, physics
from predictors.api import AT_BATCH_1, Predictor
from predictors.catalog.row_checks import LAYOUT_COLUMNS
from predictors.features import join_specs, with_layout
from predictors.serving.curves import (
    BATCH_GRID,
    FloatArray,
    ServingCurves,
    monotone_curves,
    rising_throughput,
    steady_throughput,
    take_curves,
)

#: Fraction of GPU memory vLLM-like engines use (``gpu_memory_utilization``) and the fraction
#: of the memory left after the weights TensorRT-LLM gives the KV cache: the memory rule's, in
#: :func:`predictors.memory_rule.engine_kv_budget_bytes`.
ENGINE_MEMORY_FRACTION = physics.MEMORY_UTILISATION
#: Interconnect assumed when the catalog has none (PCIe Gen4 x16, bidirectional GB/s).
DEFAULT_INTERCONNECT_GB_S = 64.0
#: Bytes per activation element in the TP all-reduce (16-bit activations).
ACTIVATION_BYTES = 2.0
#: Fixed latency of one all-reduce (s).
ALLREDUCE_LATENCY_S = 5e-6
KEYS: tuple[str, ...] = (
    "model",
    "gpu",
    "gpu_count",
    "engine",
    "precision",
    "input_tokens",
    "output_tokens",
    *LAYOUT_COLUMNS,
)


def engine_max_batch(engine: str, memory_gb: float, data_parallel: float = 1.0) -> int:
    """Default maximum number of running sequences of *engine* on a replica of GPUs of
    *memory_gb* (catalog GB of memory are GiB: :data:`predictors.physics.
    MEMORY_BYTES_PER_CATALOG_GB`) with *data_parallel* attention-DP ranks, each its own
    scheduler with the engine's per-scheduler limit; at most the grid's largest batch."""
    limits = {"vllm": 1024 if memory_gb >= 70 else 256, "tensorrt-llm": 2048, "sglang": 2048}
    ranks = int(data_parallel) if math.isfinite(data_parallel) and data_parallel >= 1 else 1
    return min(limits.get(engine, 256) * ranks, BATCH_GRID[-1])


@dataclass(frozen=True)
class ServingTable:
    """Serving-model inputs of every row plus what the callers report."""

    curves: ServingCurves
    """Mean predictions (robust: the ITL upper bound)."""
    curves_lo: ServingCurves
    curves_hi: ServingCurves
    error: list[str]
    """Per row: the predictors' error at batch 1 ('' when it predicts)."""
    fits: list[bool]
    """Per row: False when the predictors' memory check fails at batch 1 (then ``error`` is
    its "does not fit" text); True otherwise."""
    in_domain: list[bool]
    weights_gb: list[float]
    kv_budget_gb: list[float]
    tdp_w: list[float]
    pool_prefill_s: np.ndarray
    """Per row: one prompt's work on a prefill worker (FLOPs and communication): prompts there
    are batched by tokens and share the expert reads that a chunked prompt of an aggregated
    replica pays alone (``curves.prefill_s``)."""
    ttft_1_lo_s: np.ndarray
    """Per row: the lower bound of the lone prompt's TTFT ``t_1`` (``curves.ttft_base_s``,
    which every curve uses): :func:`lone_prompt_ttft_band_s`."""
    ttft_1_hi_s: np.ndarray
    """Per row: the upper bound of ``t_1`` (:func:`lone_prompt_ttft_band_s`)."""


def _keys(rows: pl.DataFrame) -> pl.DataFrame:
    """The :data:`KEYS` columns of *rows* (layout columns empty where absent: the usual one)."""
    missing = [c for c in LAYOUT_COLUMNS if c not in rows.columns]
    return rows.with_columns(pl.lit(None, dtype=pl.Float64).alias(c) for c in missing).select(KEYS)


def prediction_grid(rows: pl.DataFrame) -> pl.DataFrame:
    """Each row at each :data:`BATCH_GRID` batch (row-major, batch ascending)."""
    width = len(BATCH_GRID)
    frame = _keys(rows)[np.repeat(np.arange(rows.height), width)]
    batch = pl.Series("batch_size", np.tile(np.asarray(BATCH_GRID, dtype=np.int64), rows.height))
    return frame.insert_column(5, batch)


def row_physics(rows: pl.DataFrame, predictor: Predictor) -> pl.DataFrame:
    """Per row (catalog ids, :data:`KEYS` columns): weights, KV budget, prefill, TP comm, idle."""
    frame = _keys(rows).with_columns(
        pl.col("gpu_count").cast(pl.Float64),
        pl.col("input_tokens").cast(pl.Float64),
        pl.col("output_tokens").cast(pl.Float64),
        pl.lit(1.0).alias("batch_size"),
    )
    j = with_layout(join_specs(frame, predictor.catalog))
    n = pl.col("tensor_parallel")
    weights = physics.resident_weight_bytes()
    kv = memory_rule.engine_kv_budget_bytes()
    per_seq = memory_rule.paged_kv_bytes_per_sequence()
    ic = pl.col("interconnect_gb_s").fill_null(DEFAULT_INTERCONNECT_GB_S)
    net = pl.col("scale_out_gbit_s").fill_null(100.0) / 8.0 * 1e9  # one way, bytes/s
    domain = physics.tp_domain_gpus()
    bw = pl.when(n > domain).then(pl.min_horizontal(ic / 2.0 * 1e9, net)).otherwise(ic / 2.0 * 1e9)
    per_token_bytes = (
        2.0 * pl.col("num_layers") * pl.col("hidden_size") * ACTIVATION_BYTES * 2.0 * (n - 1) / n
    )
    # pipeline: each prompt token's activations cross PP - 1 stage boundaries (network bound)
    pp = pl.col("pipeline_parallel")
    hops = (pp - 1.0) * pl.col("hidden_size") * ACTIVATION_BYTES
    in_domain = pl.max_horizontal(ic / 2.0 * 1e9, net)  # NVLink or, where faster, the network
    pp_bw = pl.when(n * pl.col("data_parallel") * pp > domain).then(net).otherwise(in_domain)
    comm_token = pl.when(n > 1).then(per_token_bytes / bw).otherwise(0.0) + hops / pp_bw
    comm_fixed = (
        pl.when(n > 1).then(2.0 * pl.col("num_layers") * ALLREDUCE_LATENCY_S).otherwise(0.0)
    )
    # one prompt's work: its FLOPs and TP/PP communication; chunked into an aggregated
    # replica's decode steps it also reads the routed experts its tokens touch (MoE)
    pool = physics.prefill_compute_s() + comm_token * pl.col("input_tokens")
    prefill = pool + physics.prompt_expert_read_s()
    return j.select(
        (weights / 1e9).alias("weights_gb"),
        (kv / 1e9).alias("kv_budget_gb"),
        (kv / per_seq).clip(lower_bound=0.0).alias("kv_sequences"),
        prefill.alias("prefill_s"),
        pool.alias("pool_prefill_s"),
        (physics.prefill_time_s() + comm_token * pl.col("input_tokens") + comm_fixed).alias(
            "ttft_base_s"
        ),
        comm_token.alias("comm_s_per_token"),
        pl.col("idle_power_w").cast(pl.Float64),
        pl.col("tdp_w").cast(pl.Float64),
        pl.col("memory_gb").cast(pl.Float64),
        pl.col("engine"),
        pl.col("output_tokens"),
        pl.col("data_parallel").cast(pl.Float64),
    )


def measured_step_time_s(
    itl_s: np.ndarray,
    prefill_s: np.ndarray,
    batch: np.ndarray,
    output_tokens: np.ndarray,
    itl_includes_prefill: np.ndarray,
) -> np.ndarray:
    """The serving model's step time ``τ(b)`` of measured rows, to compare ``b / τ(b)`` with
    their throughput: the ITL plus the chunked prefill of the arriving prompts
    (``b · prefill_s / O``), except where the source's ITL already includes the prefill
    (latency / L, ``itl_includes_prefill``: Argonne, ML.ENERGY v1) or its batch is read by
    Little's law from its throughput and mean ITL (ML.ENERGY v2,
    :func:`predictors.measurements.schema.step_time_is_itl`, what callers pass as
    *itl_includes_prefill*), where the ITL is the step time itself (their throughput is
    ``b / ITL`` by construction)."""
    chunked = np.where(itl_includes_prefill, 0.0, batch * np.nan_to_num(prefill_s) / output_tokens)
    result: np.ndarray = itl_s + chunked
    return result


def serving_table(
    rows: pl.DataFrame, predictor: Predictor, *, robust: bool = False
) -> ServingTable:
    """The serving-model inputs of *rows* (catalog ids, every :data:`KEYS` column present).
    They depend on a row's :data:`KEYS` alone: rows that repeat them (the workers that many
    disaggregated units share) are predicted once."""
    keys = _keys(rows)
    seen: dict[tuple[object, ...], int] = {}
    index = np.asarray([seen.setdefault(r, len(seen)) for r in keys.iter_rows()], dtype=np.int64)
    if len(seen) == rows.height:
        return _serving_table(rows, predictor, robust)
    first = np.unique(index, return_index=True)[1]
    return _take_table(_serving_table(keys[first], predictor, robust), index)


def _take_table(t: ServingTable, idx: np.ndarray) -> ServingTable:
    """The rows *idx* of *t*."""

    def pick(values: list[Any]) -> list[Any]:
        return [values[i] for i in idx.tolist()]

    return ServingTable(
        curves=take_curves(t.curves, idx),
        curves_lo=take_curves(t.curves_lo, idx),
        curves_hi=take_curves(t.curves_hi, idx),
        error=pick(t.error),
        fits=pick(t.fits),
        in_domain=pick(t.in_domain),
        weights_gb=pick(t.weights_gb),
        kv_budget_gb=pick(t.kv_budget_gb),
        tdp_w=pick(t.tdp_w),
        pool_prefill_s=t.pool_prefill_s[idx],
        ttft_1_lo_s=t.ttft_1_lo_s[idx],
        ttft_1_hi_s=t.ttft_1_hi_s[idx],
    )


def lone_prompt_ttft_s(
    rows: pl.DataFrame,
    predictor: Predictor,
    physics_s: pl.Series,
    at_batch_1: pl.DataFrame | None = None,
) -> FloatArray:
    """The TTFT of a lone prompt on each row's replica, ``t_1`` (docs/method.md §3 item 4): the
    predictors' TTFT at batch 1 (the disaggregated prefill pool's ``T_1``), at least the physics
    prefill estimate *physics_s* (:func:`row_physics` ``ttft_base_s``); the physics estimate
    alone where the predictors give none (no TTFT model, or a row they refuse). *at_batch_1*:
    the predictions of *rows* at batch 1 with TTFT, where the caller has them."""
    floor = np.nan_to_num(physics_s.cast(pl.Float64).to_numpy().astype(np.float64))
    if at_batch_1 is None:
        one = _keys(rows).insert_column(5, pl.Series("batch_size", np.ones(rows.height, np.int64)))
        at_batch_1 = predictor.predict(one, with_ttft=True, beyond_memory=True)
    if "ttft_s" not in at_batch_1.columns:
        return floor
    lone = at_batch_1["ttft_s"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    result: FloatArray = np.where(np.isfinite(lone), np.maximum(lone, floor), floor)
    return result


def lone_prompt_ttft_band_s(
    lone_s: FloatArray, at_batch_1: pl.DataFrame
) -> tuple[FloatArray, FloatArray]:
    """The interval of the lone-prompt TTFT *lone_s* (:func:`lone_prompt_ttft_s`): the
    predictors' TTFT interval at batch 1 (``ttft_s_lo`` / ``ttft_s_hi`` of *at_batch_1*, what
    they state for a batch-1 row), widened to hold *lone_s* (raised to the physics estimate);
    *lone_s* itself where they give none. The planner's capacity keeps the mean ``t_1``
    (docs/method.md §3 item 4): only a rate row's reported TTFT band reads this."""
    bounds = []
    for col, widen in (("ttft_s_lo", np.fmin), ("ttft_s_hi", np.fmax)):
        if col not in at_batch_1.columns:
            bounds.append(lone_s)
            continue
        at = at_batch_1[col].cast(pl.Float64).fill_null(np.nan).to_numpy()
        bound: FloatArray = np.where(np.isfinite(at), widen(at, lone_s), lone_s)
        bounds.append(bound)
    return bounds[0], bounds[1]


#: The last few grids' predictions, newest last: a plan's robust re-plan and its uncertainty
#: flags ask for the same candidates' grid as the plan (only the curves they read differ).
_RECENT: list[tuple[Predictor, pl.DataFrame, pl.DataFrame]] = []
_RECENT_SIZE = 4


def _grid_predictions(grid: pl.DataFrame, predictor: Predictor) -> pl.DataFrame:
    """``predictor.predict`` of the serving *grid* (with TTFT, the memory verdict, beyond
    memory), reused when the same predictor object was asked for the same grid lately. A
    predictor is immutable (its models and catalog are frozen; another catalog is another
    predictor), and the entry holds it, so its identity cannot be reused while cached."""
    for held, held_grid, pred in _RECENT:  # compared column by column, not row tuples
        if held is predictor and held_grid.equals(grid):
            return pred
    pred = predictor.predict(grid, with_ttft=AT_BATCH_1, with_fit=True, beyond_memory=True)
    _RECENT.append((predictor, grid, pred))
    del _RECENT[:-_RECENT_SIZE]
    return pred


def _serving_table(rows: pl.DataFrame, predictor: Predictor, robust: bool) -> ServingTable:
    width = len(BATCH_GRID)
    n = rows.height
    phys = row_physics(rows, predictor)
    idle = phys["idle_power_w"].to_numpy().astype(np.float64)
    tdp = phys["tdp_w"].to_numpy().astype(np.float64)
    engine_cap = np.asarray(
        [
            engine_max_batch(e, m if m is not None and math.isfinite(m) else 0.0, dp or 1.0)
            for e, m, dp in zip(
                phys["engine"], phys["memory_gb"], phys["data_parallel"], strict=True
            )
        ],
        dtype=np.float64,
    )
    max_batch = np.minimum(np.floor(phys["kv_sequences"].fill_null(0.0).to_numpy()), engine_cap)
    # predict only the grid batches up to the first one at or above the row's batch limit; that
    # one is estimated even where it does not fit (memory does not enter the step time), so the
    # curve below the limit is the predictor's whatever the memory (a GPU with more memory never
    # gets a slower ITL at the same batch); at least two, so that the curve has a slope where
    # the limit is one sequence (the p90 reads it at 1 + k sequences)
    need = np.searchsorted(np.asarray(BATCH_GRID, dtype=np.float64), max_batch, side="left")
    keep = np.arange(width)[None, :] <= np.minimum(np.maximum(need, 1), width - 1)[:, None]
    flat_keep = keep.ravel()
    pred = _grid_predictions(prediction_grid(rows).filter(pl.Series(flat_keep)), predictor)

    def grid(col: str) -> np.ndarray:
        full = np.full(n * width, np.nan)
        full[flat_keep] = pred[col].cast(pl.Float64).fill_null(np.nan).to_numpy()
        return full.reshape(n, width)

    first = np.concatenate(([0], np.cumsum(keep.sum(axis=1))[:-1]))
    errors = pred["error"].gather(first).to_list()
    ok = np.asarray([e == "" for e in errors])
    # every row's first grid batch is 1 (BATCH_GRID[0]): its TTFT is the lone prompt's
    ttft_base = lone_prompt_ttft_s(rows, predictor, phys["ttft_base_s"], pred[first])
    ttft_1_lo, ttft_1_hi = lone_prompt_ttft_band_s(ttft_base, pred[first])

    def curves(itl_col: str, power_col: str) -> ServingCurves:
        itl = grid(itl_col)
        power = grid(power_col)
        itl[~ok] = 1.0
        power[~ok] = 0.0
        itl_m, power_m = monotone_curves(itl, power, np.nan_to_num(idle), np.nan_to_num(tdp))
        itl_m = steady_throughput(itl_m, np.isfinite(itl))
        return rising_throughput(
            ServingCurves(
                batch=np.asarray(BATCH_GRID, dtype=np.float64),
                itl_s=itl_m,
                power_w=power_m,
                idle_w=np.nan_to_num(idle),
                prefill_s=np.nan_to_num(phys["prefill_s"].to_numpy().astype(np.float64)),
                ttft_base_s=ttft_base,
                comm_s_per_token=np.nan_to_num(
                    phys["comm_s_per_token"].to_numpy().astype(np.float64)
                ),
                output_tokens=phys["output_tokens"].to_numpy().astype(np.float64),
                max_batch=np.where(ok, np.maximum(max_batch, 0.0), 0.0),
            )
        )

    mean = curves("itl_s_hi" if robust else "itl_s", "power_w_per_gpu")
    return ServingTable(
        curves=mean,
        curves_lo=curves("itl_s_lo", "power_w_per_gpu_lo"),
        curves_hi=curves("itl_s_hi", "power_w_per_gpu_hi"),
        error=errors,
        fits=pred["fits_in_memory"].gather(first).fill_null(True).to_list(),
        in_domain=pred["in_domain"].gather(first).to_list(),
        weights_gb=phys["weights_gb"].to_list(),
        kv_budget_gb=phys["kv_budget_gb"].to_list(),
        tdp_w=tdp.tolist(),
        pool_prefill_s=np.nan_to_num(phys["pool_prefill_s"].to_numpy().astype(np.float64)),
        ttft_1_lo_s=ttft_1_lo,
        ttft_1_hi_s=ttft_1_hi,
    )
