"""Physically derived features: pure functions of LLM, GPU and workload columns.

:func:`join_specs` adds catalog facts to rows keyed by catalog ids (``model``, ``gpu``);
:func:`add_features` adds every feature column used by the estimators and baselines. The feature
lists :data:`PAPER_FEATURES` (the WattGPU paper's recipe) and :data:`OUR_FEATURES` name the columns
each estimator sees (:mod:`predictors.feature_sets`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TypeVar

import polars as pl

from predictors import memory_rule, physics
from predictors.catalog.store import Catalog
from predictors.feature_sets import (
    MODEL_TYPES,
    SOURCE_INDICATORS,
    SOURCES,
)
from predictors.kv_physics import kv_context_tokens

LLM_COLUMNS: tuple[str, ...] = (
    "model_type",
    "total_params_b",
    "active_params_b",
    "num_layers",
    "hidden_size",
    "num_attention_heads",
    "num_kv_heads",
    "head_dim",
    "num_experts",
    "num_experts_per_tok",
    "first_k_dense",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "is_moe",
    "attention_kind",
    "sliding_window",
    "full_attention_layers",
    "window_attention_layers",
    "state_bytes_per_sequence",
    "intermediate_size",
    "moe_intermediate_size",
    "num_shared_experts",
    "vocab_size",
    "tie_word_embeddings",
)
GPU_COLUMNS: tuple[str, ...] = (
    "vendor",
    "architecture",
    "release_year",
    "memory_gb",
    "memory_bandwidth_gb_s",
    "tdp_w",
    "idle_power_w",
    "base_clock_mhz",
    "boost_clock_mhz",
    "fp16_tflops_dense",
    "fp8_tflops_dense",
    "int8_tops_dense",
    "fp4_tflops_dense",
    "transistors_billion",
    "interconnect_gb_s",
    "nvlink_domain_gpus",
    "node_gpus",
    "scale_out_gbit_s",
    "scale_out_latency_us",
)
#: The resolved parallel layout columns a frame may carry (missing or empty: the engines' usual
#: layout, :func:`predictors.physics.default_layout`); ``expert_parallel`` is checked by
#: :mod:`predictors.catalog.validity` and does not change the expected bytes per GPU.
LAYOUT_COLUMNS: tuple[str, ...] = ("tensor_parallel", "pipeline_parallel", "data_parallel")

#: True on rows whose ITL is the step of a disaggregated decode worker, which runs no prefill
#: (training: :mod:`predictors.training.decode_rows`; predicting: the model card's key of the
#: same name, see :mod:`predictors.serving.disagg_build`); the feature ``decode_workers_only``.
DECODE_WORKERS_COLUMN = "itl_on_decode_workers"
#: Engine overhead per layer and step assumed by the power features ``busy_share`` (seconds):
#: a fixed reference (CUDA-graph engines), so the features are pure physics of the row.
REFERENCE_LAYER_OVERHEAD_S = 30e-6


def join_specs(rows: pl.DataFrame, catalog: Catalog) -> pl.DataFrame:
    """Left-join LLM and GPU catalog facts onto rows keyed by catalog ids ``model`` and ``gpu``."""
    llms = catalog.llms.select(pl.col("id").alias("model"), *LLM_COLUMNS)
    gpus = catalog.gpus.select(pl.col("id").alias("gpu"), *GPU_COLUMNS)
    drop = [c for c in (*LLM_COLUMNS, *GPU_COLUMNS) if c in rows.columns]
    return rows.drop(drop).join(llms, on="model", how="left").join(gpus, on="gpu", how="left")


#: Names that share another vocabulary entry's code (the same engine family).
CODE_ALIASES: dict[str, str] = {"deepspeed": "deepspeed-mii"}


def _code(column: str, vocab: tuple[str, ...]) -> pl.Expr:
    mapping = {v: i for i, v in enumerate(vocab)}
    mapping |= {a: mapping[t] for a, t in CODE_ALIASES.items() if t in mapping}
    return (
        pl.col(column)
        .cast(pl.String)
        .replace_strict(mapping, default=-1, return_dtype=pl.Int32)
        .alias(f"{column}_code")
    )


#: A frame :func:`add_features` works on: eager, or lazy when only some features are kept.
Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def _names(frame: pl.DataFrame | pl.LazyFrame) -> list[str]:
    return frame.collect_schema().names() if isinstance(frame, pl.LazyFrame) else frame.columns


def _indicators(frame: pl.DataFrame | pl.LazyFrame) -> list[pl.Expr]:
    """``source_is_<source>`` 0/1 columns (all 0 for a source outside :data:`SOURCES`)."""
    if "source" not in _names(frame):
        return [pl.lit(0, dtype=pl.Int32).alias(name) for name in SOURCE_INDICATORS]
    source = pl.col("source").cast(pl.String)
    return [
        (source == s).fill_null(False).cast(pl.Int32).alias(name)
        for s, name in zip(SOURCES, SOURCE_INDICATORS, strict=True)
    ]


def with_layout(frame: Frame) -> Frame:
    """*frame* (with :func:`join_specs` columns) with every :data:`LAYOUT_COLUMNS` column, empty
    cells filled with the engines' usual layout (:func:`predictors.physics.default_layout`)."""
    names = _names(frame)
    if not any(c in names for c in LAYOUT_COLUMNS):
        # measurement tables carry no layout yet: one tensor-parallel group over one fabric,
        # as the shipped models were trained (docs/method.md, "Parallel layouts")
        return frame.with_columns(
            pl.col("gpu_count").cast(pl.Float64).alias("tensor_parallel"),
            pl.lit(1.0).alias("pipeline_parallel"),
            pl.lit(1.0).alias("data_parallel"),
            pl.lit(False).alias("layout_known"),
        )
    missing = [c for c in LAYOUT_COLUMNS if c not in names]
    f = frame.with_columns(pl.lit(None, dtype=pl.Float64).alias(c) for c in missing)
    return f.with_columns(
        *physics.default_layout("engine" in names), pl.lit(True).alias("layout_known")
    )


#: Columns the estimators' physics reads besides their trees' features (the decode step's
#: inputs, the TTFT prefill roofline, bytes per parameter, each GPU's pipeline duty for
#: power, the micro-batches of a token cycle), the resolved layout and whether it
#: was stated (``layout_known``: a known layout's TP group may leave the NVLink domain and pay
#: the network, :mod:`predictors.estimators.layout_comm`): always kept by :func:`add_features`
#: when it is asked for some features only.
PHYSICS_COLUMNS: tuple[str, ...] = (
    *LAYOUT_COLUMNS,
    "layout_known",
    "bytes_per_param",
    "prefill_time_s",
    "weight_read_bytes",
    "kv_read_bytes",
    "stage_duty",
    "micro_batches",
    "step_flops",
    "peak_flops",
)


def add_features(frame: pl.DataFrame, keep: Iterable[str] | None = None) -> pl.DataFrame:
    """Add every feature column (needs :func:`join_specs` columns and the workload columns).

    With *keep*, only those features plus :data:`PHYSICS_COLUMNS` are added (the frame's own
    columns stay): the others are never computed (a lazy query prunes them), and the kept ones
    are the same numbers as in the full frame."""
    if keep is None:
        return _features(frame)
    kept = {*keep, *PHYSICS_COLUMNS}
    out = _features(frame.lazy())
    names = [c for c in out.collect_schema().names() if c in frame.columns or c in kept]
    # one chunk per column: polars 2.1 panics filtering some multi-chunk or sliced string
    # columns (rechunking only the multi-chunk string columns left a sliced one that panicked)
    return out.select(names).collect().rechunk()


def _features(frame: Frame) -> Frame:
    names = _names(frame)
    f = with_layout(
        frame.with_columns(
            pl.col("batch_size").cast(pl.Float64).clip(lower_bound=1.0).alias("batch_size"),
            pl.col("input_tokens").cast(pl.Float64),
            pl.col("output_tokens").cast(pl.Float64),
            pl.col("gpu_count").cast(pl.Float64).alias("gpu_count"),
        )
    )
    f = f.with_columns(
        physics.bytes_per_param().alias("bytes_per_param"),
        physics.bandwidth_latency_s().alias("bandwidth_latency_s"),
        physics.compute_latency_s().alias("compute_latency_s"),
        (
            physics.kv_bytes_per_token() * (pl.col("input_tokens") + pl.col("output_tokens")) / 1e9
        ).alias("kv_cache_gb_per_seq"),
        (memory_rule.kv_budget_bytes() / 1e9).alias("memory_headroom_gb"),
        memory_rule.max_concurrent_sequences().alias("max_concurrent_sequences"),
        physics.memory_time_s().alias("memory_time_s"),
        physics.compute_time_s().alias("compute_time_s"),
        physics.roofline_itl_s().alias("roofline_itl_s"),
        physics.prefill_time_s().alias("prefill_time_s"),
        (pl.col("total_params_b") * 1e9).log().alias("log_params"),
        (pl.col("active_params_b") * 1e9).log().alias("log_active_params"),
        pl.col("batch_size").log().alias("log_batch"),
        pl.col("input_tokens").clip(lower_bound=1.0).log().alias("log_input_tokens"),
        pl.col("output_tokens").clip(lower_bound=1.0).log().alias("log_output_tokens"),
        (pl.col("boost_clock_mhz") / pl.col("base_clock_mhz")).alias("boost_ratio"),
        pl.col("is_moe").cast(pl.Int32).alias("is_moe_int"),
        (physics.peak_tflops() / pl.col("tdp_w")).alias("tflops_per_w"),
        pl.col("tdp_w").log().alias("log_tdp_w"),
        (pl.col("memory_bandwidth_gb_s") / pl.col("tdp_w")).alias("bandwidth_gb_s_per_w"),
        _code("model_type", MODEL_TYPES),
        _code("engine", physics.ENGINES),
        _code("source", SOURCES) if "source" in names else pl.lit(-1).alias("source_code"),
        *_indicators(frame),
        (
            pl.col("itl_includes_prefill").cast(pl.Int32)
            if "itl_includes_prefill" in names
            else pl.lit(0, dtype=pl.Int32)
        ).alias("prefill_in_itl"),
        (
            pl.col("disaggregated").fill_null(False).cast(pl.Int32)
            if "disaggregated" in names
            else pl.lit(0, dtype=pl.Int32)
        ).alias("disaggregated"),
        (
            pl.col(DECODE_WORKERS_COLUMN).fill_null(False).cast(pl.Int32)
            if DECODE_WORKERS_COLUMN in names
            else pl.lit(0, dtype=pl.Int32)
        ).alias("decode_workers_only"),
    )
    f = f.with_columns(
        physics.weight_bytes_read_per_step().alias("weight_read_bytes"),
        physics.kv_read_bytes_per_cycle().alias("kv_read_bytes"),
        physics.stage_duty().alias("stage_duty"),
        physics.micro_batches().alias("micro_batches"),
        physics.step_flops().alias("step_flops"),
        (physics.peak_tflops() * 1e12).alias("peak_flops"),
        physics.mean_context_tokens().log().alias("log_context"),
        pl.col("tensor_parallel").log().alias("log_gpu_count"),  # = gpu_count for pure TP
        kv_context_tokens().log().alias("log_kv_context"),
        physics.kv_bytes_per_token().log().alias("log_kv_bytes_per_token"),
    )
    mem = (pl.col("weight_read_bytes") + pl.col("kv_read_bytes")) / (
        pl.col("memory_bandwidth_gb_s") * 1e9
    )
    comp = pl.col("step_flops") / pl.col("peak_flops")
    overhead = pl.col("num_layers") * REFERENCE_LAYER_OVERHEAD_S * pl.col("gpu_count")
    f = f.with_columns(
        (comp / (mem + comp)).alias("compute_share"),
        ((mem + comp) / (mem + comp + overhead)).alias("busy_share"),
    )
    return f.with_columns(
        pl.col("roofline_itl_s").log().alias("log_roofline_itl_s"),
        pl.col("prefill_time_s").log().alias("log_prefill_time_s"),
        (pl.col("compute_time_s") / pl.col("memory_time_s")).alias("compute_to_memory_ratio"),
        (pl.col("batch_size") / pl.col("max_concurrent_sequences").clip(lower_bound=1e-9))
        .clip(upper_bound=1e3)
        .alias("memory_load_fraction"),
    )


def feature_matrix(frame: pl.DataFrame, names: tuple[str, ...]) -> pl.DataFrame:
    """The named feature columns as Float32 (nulls stay null: XGBoost treats them as missing)."""
    return frame.select(
        [
            pl.col(n).cast(pl.Float32).fill_nan(None).replace([math.inf, -math.inf], None)
            for n in names
        ]
    )
