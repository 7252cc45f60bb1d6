"""The named feature sets the estimators see, their monotone directions, and the vocabularies
their codes and indicators come from (the columns themselves: :mod:`predictors.features`)."""

from __future__ import annotations

#: Sources in a fixed order; the code is the nuisance feature ``source_code`` (unknown: -1) of
#: the v1 and TTFT recipes.
SOURCES: tuple[str, ...] = (
    "mlenergy-v1",
    "mlenergy-v2",
    "mlenergy-v3",
    "argonne",
    "aiconfigurator",
    "amd-mi300x",
    "watt-counts",
)
#: One 0/1 indicator per source (the v2 estimators' nuisance inputs). A source is a name, not a
#: quantity: with an ordinal code, trees send a source they never saw (e.g. the held-out GPU's
#: only protocol) to whichever neighbour its arbitrary code lies next to; with indicators it
#: takes the "none of the known sources" branch of every split.
SOURCE_INDICATORS: tuple[str, ...] = tuple(
    "source_is_" + s.replace("-", "_").replace(".", "_") for s in SOURCES
)
MODEL_TYPES: tuple[str, ...] = (
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "phi",
    "phi3",
    "deepseek_v3",
    "gpt_oss",
    "falcon",
    "olmo",
    "olmo2",
    "granite",
    "nemotron",
    "llama4",
    "gpt2",
    "gpt_neox",
    "opt",
    "mpt",
    "stablelm",
)

#: The WattGPU paper's feature list (§4) plus the workload columns of the data.
PAPER_FEATURES: tuple[str, ...] = (
    "log_params",
    "num_layers",
    "num_kv_heads",
    "model_type_code",
    "memory_bandwidth_gb_s",
    "boost_ratio",
    "transistors_billion",
    "base_clock_mhz",
    "release_year",
    "bandwidth_latency_s",
    "compute_latency_s",
    "kv_cache_gb_per_seq",
    "memory_headroom_gb",
    "max_concurrent_sequences",
    "batch_size",
    "input_tokens",
    "output_tokens",
    "gpu_count",
)

#: Our estimators' features: the paper's plus load-aware roofline physics and nuisance codes.
OUR_FEATURES: tuple[str, ...] = (
    *PAPER_FEATURES,
    "log_batch",
    "log_active_params",
    "bytes_per_param",
    "is_moe_int",
    "engine_code",
    "source_code",
    "log_roofline_itl_s",
    "compute_to_memory_ratio",
    "memory_load_fraction",
    "tflops_per_w",
    "log_tdp_w",
    "bandwidth_gb_s_per_w",
    "prefill_in_itl",
)

#: Our features without the GPU-identity columns (bandwidth, transistors, clocks, year): the GPU
#: enters only through physically normalised quantities, which transfer to unseen GPUs.
TRANSFER_FEATURES: tuple[str, ...] = tuple(
    f
    for f in OUR_FEATURES
    if f
    not in {
        "memory_bandwidth_gb_s",
        "transistors_billion",
        "base_clock_mhz",
        "release_year",
        "boost_ratio",
    }
)

#: Time-to-first-token features: ours plus the prefill roofline (queueing is learned from the
#: concurrency columns).
TTFT_FEATURES: tuple[str, ...] = (*OUR_FEATURES, "log_prefill_time_s")


#: GPU-invariant inputs of the ITL residual (no bandwidth, FLOPS, TDP, year, memory or other
#: GPU-identifying column): the trees see the workload, the LLM and the measurement protocol.
ITL_RESIDUAL_FEATURES: tuple[str, ...] = (
    "log_batch",
    "log_kv_context",
    "log_params",
    "log_active_params",
    "num_layers",
    "log_kv_bytes_per_token",
    "log_gpu_count",
    "bytes_per_param",
    "is_moe_int",
    "engine_code",
    *SOURCE_INDICATORS,
    "prefill_in_itl",
    "decode_workers_only",
)
#: Directions the ITL residual must respect: more batch, context (the KV context a step reads per
#: layer, :func:`predictors.kv_physics.kv_context_tokens`) or parameters never speeds up,
#: more tensor-parallel GPUs never slow down (their cost is the step model's all-reduce term).
ITL_RESIDUAL_MONOTONE: dict[str, int] = {
    "log_batch": 1,
    "log_kv_context": 1,
    "log_params": 1,
    "log_active_params": 1,
    "log_gpu_count": -1,
}
#: Inputs of the TTFT v3 trees (see predictors/estimators/ttft.py): GPU-invariant workload, LLM
#: and measurement-protocol inputs (``disaggregated``: a prefill/decode unit's run) plus one GPU
#: quantity, the log prefill roofline of one prompt, which falls with FLOPS and bandwidth.
TTFT_V3_FEATURES: tuple[str, ...] = (
    "log_batch",
    "log_input_tokens",
    "log_output_tokens",
    "log_params",
    "log_active_params",
    "num_layers",
    "log_gpu_count",
    "bytes_per_param",
    "is_moe_int",
    "engine_code",
    *SOURCE_INDICATORS,
    "disaggregated",
    "log_prefill_time_s",
)
#: More concurrency, longer prompts, more parameters or a longer prefill roofline (a GPU with less
#: FLOPS or bandwidth) never shorten the time to first token; more tensor-parallel GPUs never
#: lengthen it.
TTFT_V3_MONOTONE: dict[str, int] = {
    "log_batch": 1,
    "log_input_tokens": 1,
    "log_params": 1,
    "log_active_params": 1,
    "log_gpu_count": -1,
    "log_prefill_time_s": 1,
}
#: Inputs of the power utilisation ``u``: roofline utilisations of the step plus the workload.
POWER_FEATURES: tuple[str, ...] = (
    "compute_share",
    "busy_share",
    "log_batch",
    "log_context",
    "log_active_params",
    "log_gpu_count",
    "bytes_per_param",
    "is_moe_int",
    "engine_code",
    *SOURCE_INDICATORS,
    "prefill_in_itl",
)
#: More concurrent work never lowers power: ``u`` non-decreasing in these (each is
#: non-decreasing in batch, see docs/method.md).
POWER_MONOTONE: dict[str, int] = {"compute_share": 1, "busy_share": 1, "log_batch": 1}
