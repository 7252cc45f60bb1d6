"""The project's vocabulary: precisions and serving engines, defined once.

The scenario schema (:mod:`planner.scenario.model`), the batch contract
(:mod:`predictors.api`), the physics (:mod:`predictors.physics`), the catalog validator and the
measurement adapters all take these names from here, so a name accepted in one place is
accepted everywhere. Aliases (``trtllm``, ``bfloat16``, ``nvfp4``) are mapped to the canonical
name by :func:`canonical_engine` and :func:`canonical_precision`.
"""

from __future__ import annotations

from typing import Literal, get_args

Precision = Literal["fp32", "fp16", "bf16", "fp8", "int8", "fp4", "int4"]
#: Weight precisions, widest first.
PRECISIONS: tuple[str, ...] = get_args(Precision)

Engine = Literal["vllm", "tensorrt-llm", "sglang", "deepspeed-mii", "hf-transformers", "llama.cpp"]
#: Serving engines the predictors and the planner accept.
ENGINES: tuple[str, ...] = get_args(Engine)

#: Engines that serve prefill and decode on separate workers (vLLM's KV connectors, SGLang's
#: PD disaggregation, TensorRT-LLM's disaggregated serving, the engines NVIDIA Dynamo and llm-d
#: run); the planner builds disaggregated units only for them.
DISAGG_ENGINES: tuple[str, ...] = ("vllm", "sglang", "tensorrt-llm")

#: Engines whose multi-GPU replica splits the layers over the GPUs, stages running one after
#: another (llama.cpp's default ``--split-mode layer``; transformers' ``device_map``): their usual
#: layout is pipeline parallelism over every GPU of the replica, TP 1 (docs/contracts.md, "Engine
#: capabilities").
LAYER_SPLIT_ENGINES: tuple[str, ...] = ("hf-transformers", "llama.cpp")

#: Other spellings of the engines, as sources and users write them (lower case).
ENGINE_ALIASES: dict[str, str] = {
    "trtllm": "tensorrt-llm",
    "trt-llm": "tensorrt-llm",
    "tensorrt": "tensorrt-llm",
    "transformers": "hf-transformers",
    "hf": "hf-transformers",
    "mii": "deepspeed-mii",
    "llamacpp": "llama.cpp",
    "llama-cpp": "llama.cpp",
}
#: Other spellings of the precisions (lower case).
PRECISION_ALIASES: dict[str, str] = {
    "float32": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "fp8_block": "fp8",
    "float8": "fp8",
    "nvfp4": "fp4",
    "mxfp4": "fp4",
}


def canonical_engine(name: str) -> str | None:
    """The canonical engine for *name* (case and alias tolerant), or None when unknown."""
    key = name.strip().lower()
    key = ENGINE_ALIASES.get(key, key)
    return key if key in ENGINES else None


def canonical_precision(name: str) -> str | None:
    """The canonical precision for *name* (case and alias tolerant), or None when unknown."""
    key = name.strip().lower()
    key = PRECISION_ALIASES.get(key, key)
    return key if key in PRECISIONS else None


#: Bytes per weight for each supported precision.
BYTES_PER_PARAM: dict[str, float] = {
    "fp32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "fp4": 0.5,
    "int4": 0.5,
}
