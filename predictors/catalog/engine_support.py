"""Which accelerators and parallel layouts each serving engine runs: the engine capability table.

The layout rules of :mod:`predictors.catalog.validity` are the engines' common ground (heads,
domains, splits). Not every engine runs every layout or every accelerator, so a configuration is
also checked against its engine's row of :data:`ENGINE_SUPPORT`:

* **Accelerator.** The GPU's software platform (:func:`platform`: CUDA for NVIDIA, ROCm for AMD,
  XPU for Intel Data Center GPU Max, HPU for Intel Gaudi) must be one the engine ships for, and
  DeepSpeed-MII, TensorRT-LLM and SGLang need an NVIDIA GPU of the Ampere generation or newer
  (the architecture's first word, any case). A GPU of another vendor (a user catalog row) is not
  checked: the table cannot know its software.
* **Nodes.** An engine without multi-node serving keeps a replica inside one node (``node_gpus``;
  a GB200/GB300 compute tray of 4 GPUs is one host, so TP 8 on an NVL72 rack spans two).
* **Pipeline, attention data and expert parallelism.** ``pipeline_parallel``,
  ``data_parallel`` or ``expert_parallel`` above 1 needs an engine that runs it. Without a stated
  ``expert_parallel``, an engine without expert parallelism shards every expert by tensor
  parallelism (EP 1), as it runs mixture-of-experts models.

Engines outside the table (a measurement source's own name, e.g. Argonne's ``deepspeed`` on
Gaudi) and rows without an engine are not checked. Each problem is one line ``field: what is
wrong; fix``, the style of the other row errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Software platforms by the name the problems give them.
PLATFORM_NAMES: dict[str, str] = {
    "cuda": "NVIDIA CUDA",
    "rocm": "AMD ROCm",
    "xpu": "Intel XPU",
    "hpu": "Intel Gaudi",
}
#: NVIDIA architectures before Ampere (compute capability below 8.0), lower case.
PRE_AMPERE: frozenset[str] = frozenset({"kepler", "maxwell", "pascal", "volta", "turing"})
#: Words that mark an Intel accelerator as Gaudi (its architecture, id or aliases): the product
#: name and its chip names (HL-205, HL-225, HL-325L).
GAUDI_MARKS: tuple[str, ...] = ("gaudi", "hl-2", "hl-3")


@dataclass(frozen=True)
class EngineSupport:
    """What one engine runs: its platforms and which parallel dimensions it has."""

    platforms: tuple[str, ...]
    pipeline: bool
    data_parallel: bool
    """Attention data parallelism of a mixture-of-experts model inside one replica."""
    expert_parallel: bool
    multi_node: bool
    ampere_or_newer: bool
    """On NVIDIA GPUs, compute capability 8.0 or higher only."""
    source: str


_ALL = ("cuda", "rocm", "xpu", "hpu")
_FULL_LAYOUTS = {"pipeline": True, "data_parallel": True, "expert_parallel": True}

#: Per engine of :data:`predictors.core.vocab.ENGINES` (docs/contracts.md, "Engine capabilities").
ENGINE_SUPPORT: dict[str, EngineSupport] = {
    "vllm": EngineSupport(
        _ALL,
        **_FULL_LAYOUTS,
        multi_node=True,
        ampere_or_newer=False,
        source="docs.vllm.ai: installation (CUDA, ROCm, XPU; Gaudi by the vllm-gaudi plugin), "
        "parallelism and scaling (TP, PP over nodes, data parallel, expert parallel)",
    ),
    "sglang": EngineSupport(
        _ALL,
        **_FULL_LAYOUTS,
        multi_node=True,
        ampere_or_newer=True,
        source="docs.sglang.io: hardware platforms (NVIDIA, AMD, XPU), docs.habana.ai SGLang "
        "on Gaudi; server arguments --tp-size, --pp-size, --dp-size with DP attention, "
        "--ep-size, --nnodes; NVIDIA sm75 and older unsupported from v0.5 "
        "(sgl-project/sglang#6006)",
    ),
    "tensorrt-llm": EngineSupport(
        ("cuda",),
        **_FULL_LAYOUTS,
        multi_node=True,
        ampere_or_newer=True,
        source="nvidia.github.io/TensorRT-LLM: supported hardware (NVIDIA Ampere, Ada, Hopper, "
        "Blackwell); TP, PP, attention DP and EP, multi-node by MPI",
    ),
    "deepspeed-mii": EngineSupport(
        ("cuda",),
        pipeline=False,
        data_parallel=False,
        expert_parallel=False,
        multi_node=False,
        ampere_or_newer=True,
        source="github.com/deepspeedai/DeepSpeed-MII: tensor parallelism and replicas, a "
        "replica on one host (ReplicaConfig.hostname); DeepSpeed-Kernels: NVIDIA Ampere "
        "(compute capability 8.0) and newer",
    ),
    "hf-transformers": EngineSupport(
        _ALL,
        pipeline=True,
        data_parallel=False,
        expert_parallel=False,
        multi_node=False,
        ampere_or_newer=False,
        source="huggingface.co/docs/transformers: device_map places layers on the GPUs of one "
        "process (sequential stages), tp_plan tensor parallelism; Gaudi by optimum-habana",
    ),
    "llama.cpp": EngineSupport(
        ("cuda", "rocm", "xpu"),
        pipeline=True,
        data_parallel=False,
        expert_parallel=False,
        multi_node=False,
        ampere_or_newer=False,
        source="github.com/ggml-org/llama.cpp docs/multi-gpu.md (split modes layer = pipeline, "
        "row); CUDA, HIP and SYCL backends; the RPC backend across hosts is a proof of concept",
    ),
}
#: Engines that run every layout (the fix the problems name).
FULL_ENGINES: tuple[str, ...] = tuple(
    name
    for name, s in ENGINE_SUPPORT.items()
    if s.pipeline and s.data_parallel and s.expert_parallel and s.multi_node
)


def _gpus(n: int) -> str:
    return "1 GPU" if n == 1 else f"{n} GPUs"


def single_node_engines() -> tuple[str, ...]:
    """Engines that serve a replica inside one node."""
    return tuple(n for n, s in ENGINE_SUPPORT.items() if not s.multi_node)


def across_domains(engine: str | None, node_gpus: int) -> str:
    """How to go past one NVLink domain with *engine*: pipeline stages across domains, or, for an
    engine without them or without multi-node serving, the node's GPUs or another engine."""
    s = support(engine)
    if s is None or (s.pipeline and s.multi_node):
        return "with pipeline_parallel across domains"
    return (
        f"on at most {_gpus(node_gpus)} ({engine} serves a replica inside one node), or "
        f"{listed(list(FULL_ENGINES), 'or')} with pipeline_parallel across domains"
    )


def support(engine: str | None) -> EngineSupport | None:
    """The capability row of *engine* (a canonical name), None when it is not in the table."""
    return ENGINE_SUPPORT.get(engine) if engine else None


def platform(gpu: Mapping[str, Any]) -> str | None:
    """The software platform of catalog GPU *gpu* (a :data:`PLATFORM_NAMES` key), None for a
    vendor the table does not know."""
    vendor = str(gpu.get("vendor") or "").strip().lower()
    if vendor == "nvidia":
        return "cuda"
    if vendor == "amd":
        return "rocm"
    if vendor == "intel":
        name = " ".join(str(gpu.get(k) or "") for k in ("architecture", "id", "aliases")).lower()
        return "hpu" if any(mark in name for mark in GAUDI_MARKS) else "xpu"
    return None


def pre_ampere(gpu: Mapping[str, Any]) -> bool:
    """True for an NVIDIA GPU older than Ampere (its architecture's first word, any case)."""
    words = str(gpu.get("architecture") or "").lower().split()
    return platform(gpu) == "cuda" and bool(words) and words[0] in PRE_AMPERE


def listed(names: list[str], last: str) -> str:
    """``a, b or c`` (*last* = ``or``) of *names*."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


def _runs_on(platform_name: str, older: bool = False) -> str:
    """The engines that run on *platform_name* (on a GPU before Ampere when *older*)."""
    return listed(
        [
            n
            for n, s in ENGINE_SUPPORT.items()
            if platform_name in s.platforms and not (older and s.ampere_or_newer)
        ],
        "or",
    )


def accelerator_problems(engine: str | None, gpu: Mapping[str, Any]) -> list[str]:
    """Why *engine* does not run on catalog GPU *gpu* (empty: it does, or it is not checked)."""
    s = support(engine)
    where = platform(gpu)
    if s is None or where is None:
        return []
    gid = gpu.get("id")
    if where not in s.platforms:
        names = listed([PLATFORM_NAMES[p] for p in s.platforms], "and")
        return [
            f"engine: {engine} does not run on {gid} ({PLATFORM_NAMES[where]}; {engine} ships "
            f"for {names}); use {_runs_on(where)} on {gid}, or a GPU {engine} runs on"
        ]
    if s.ampere_or_newer and pre_ampere(gpu):
        return [
            f"engine: {engine} does not run on {gid} ({gpu.get('architecture')}; {engine} needs "
            "an NVIDIA GPU of the Ampere generation or newer, compute capability 8.0); use "
            f"{_runs_on(where, older=True)} on {gid}, or a newer GPU"
        ]
    return []


def runs_on(engine: str | None, gpu: Mapping[str, Any]) -> bool:
    """True unless *engine* does not run on catalog GPU *gpu* (:func:`accelerator_problems`)."""
    return not accelerator_problems(engine, gpu)


def default_expert_parallel(engine: str | None) -> bool:
    """True when *engine*'s usual layout spreads the experts (EP = TP × DP); False when it shards
    every expert by tensor parallelism (EP 1)."""
    s = support(engine)
    return s is None or s.expert_parallel


def layout_problems(
    engine: str | None,
    gpu: Mapping[str, Any],
    degrees: tuple[int, int, int, int],
    node_gpus: int,
    *,
    field: str = "gpu_count",
) -> list[str]:
    """Why *engine* does not run a replica of (TP, PP, DP, EP) *degrees* on catalog GPU *gpu*,
    whose nodes hold *node_gpus* GPUs (empty: it does, or the engine is not checked)."""
    s = support(engine)
    if s is None:
        return []
    tp, pp, dp, ep = degrees
    gpus = tp * pp * dp
    others = listed(list(FULL_ENGINES), "or")
    out: list[str] = []
    if gpus > node_gpus and not s.multi_node:
        nodes = -(-gpus // node_gpus)
        out.append(
            f"{field}: {gpus} GPUs of {gpu.get('id')} span {nodes} nodes of {node_gpus}; "
            f"{engine} serves a replica inside one node; use at most {_gpus(node_gpus)} per "
            f"replica and more replicas, or {others}"
        )
    checks = (
        ("pipeline_parallel", pp, s.pipeline, "pipeline parallelism"),
        ("data_parallel", dp, s.data_parallel, "attention data parallelism"),
        ("expert_parallel", ep, s.expert_parallel, "expert parallelism"),
    )
    for column, value, runs, what in checks:
        if value > 1 and not runs and not (column == "pipeline_parallel" and out):
            out.append(
                f"{column}: {engine} has no {what}; leave {column} empty or 1, or use {others}"
            )
    return out
