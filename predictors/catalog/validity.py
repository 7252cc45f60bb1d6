"""Is a (model, GPU, GPU count, parallel layout) configuration one that serving engines run?

A replica of ``gpu_count`` GPUs is laid out as ``gpu_count = TP × PP × DP``: tensor parallelism
(TP) inside the GPU's tensor-parallel domain, pipeline parallelism (PP) across domains, attention
data parallelism (DP: each rank holds its own sequences and KV cache) and, for mixture-of-experts
models, expert parallelism (EP) of the MoE layers over the ``TP × DP`` GPUs of a stage (the rest
of those GPUs shards each expert by tensor parallelism). This is the layout vLLM, SGLang and
TensorRT-LLM use for DeepSeek-style models.

Without stated ``pipeline_parallel`` / ``data_parallel`` / ``expert_parallel`` the engines' usual
layout is assumed (:func:`resolve_layout`): DP 1, TP = ``gpu_count`` while it fits one domain and
otherwise TP = the domain with PP across domains (an engine that splits the layers,
:data:`~predictors.core.vocab.LAYER_SPLIT_ENGINES`: PP = ``gpu_count``, TP 1); for MoE models
EP = TP × DP (1 for an engine without expert parallelism).

Rules (each problem is one line ``field: what is wrong; fix``, the style of the other row errors
of batch predict; nothing here raises on bad configurations):

* **Heads.** TP must divide the attention heads, and either TP divides the KV heads or the KV
  heads divide TP (replication), as vLLM requires.
* **Domain.** The tensor-parallel domain (:func:`tp_domain_gpus`) is the NVLink domain
  (``nvlink_domain_gpus``: 8 on HGX boards, 72 on GB200/GB300 NVL72) or, for PCIe cards (NVLink
  domain 1), the node: TP runs over PCIe inside a server. A TP larger than the domain must span
  whole domains (SGLang and vLLM run TP 16 over two HGX nodes; its all-reduces then cross the
  scale-out network, see docs/method.md).
* **Size.** At most :data:`MAX_NODES` nodes or :data:`MAX_DOMAINS` NVLink domains per replica,
  whichever holds more GPUs (HGX: 64, GB200 NVL72: 144).
* **Splits.** ``gpu_count`` must be a multiple of PP × DP; PP at most the model's layers; EP and
  DP of a dense model are 1 (its data-parallel copies are separate replicas); EP at most the
  model's experts and a divisor of TP × DP.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from predictors.catalog import engine_support, precision_support
from predictors.core.vocab import LAYER_SPLIT_ENGINES

#: GPUs one node (server) holds, by catalog ``form_factor``, where the catalog row has no
#: ``node_gpus``: PCIe 8 (4U servers with 8 double-width cards); SXM2 8 (DGX-1 / HGX-1); SXM3 16
#: (DGX-2 / HGX-2); SXM4, SXM5, SXM6 8 (HGX 8-GPU boards); OAM 8 (OCP UBB); Superchip 4 (a
#: GB200/GB300 compute tray or a quad GH200 node); other 8.
NODE_GPUS_BY_FORM_FACTOR: dict[str, int] = {
    "PCIe": 8,
    "SXM2": 8,
    "SXM3": 16,
    "SXM4": 8,
    "SXM5": 8,
    "SXM6": 8,
    "OAM": 8,
    "Superchip": 4,
    "other": 8,
}
DEFAULT_NODE_GPUS = 8
#: A replica spans at most this many nodes ...
MAX_NODES = 8
#: ... or this many NVLink domains (two GB200 NVL72 racks), whichever holds more GPUs.
MAX_DOMAINS = 2
#: The layout input columns of the batch contract (empty = the engines' usual layout).
LAYOUT_INPUTS: tuple[str, ...] = ("pipeline_parallel", "data_parallel", "expert_parallel")


@dataclass(frozen=True)
class Layout:
    """A replica's resolved parallel layout: ``gpus = tp × pp × dp``; ``ep`` of the MoE layers."""

    tp: int
    pp: int
    dp: int
    ep: int

    @property
    def gpus(self) -> int:
        """GPUs of the replica."""
        return self.tp * self.pp * self.dp


def node_gpu_limit(form_factor: str | None) -> int:
    """GPUs one node of this form factor holds (:data:`NODE_GPUS_BY_FORM_FACTOR`)."""
    return NODE_GPUS_BY_FORM_FACTOR.get(form_factor or "other", DEFAULT_NODE_GPUS)


def with_node_gpus(gpus: pl.DataFrame) -> pl.DataFrame:
    """The catalog's GPU frame with an empty ``node_gpus`` filled by form factor
    (:func:`node_gpu_limit`), so that the predictors' physics and the layout rules read one node
    size (fuzz round 29: the physics took 8 for a Superchip row that left it empty, the layouts 4).
    """
    if "node_gpus" not in gpus.columns or gpus["node_gpus"].null_count() == 0:
        return gpus
    by_form = pl.col("form_factor").replace_strict(
        NODE_GPUS_BY_FORM_FACTOR, default=DEFAULT_NODE_GPUS, return_dtype=gpus["node_gpus"].dtype
    )
    return gpus.with_columns(pl.col("node_gpus").fill_null(by_form))


def node_gpus(gpu: Mapping[str, Any]) -> int:
    """GPUs per node of catalog GPU *gpu* (``node_gpus``, else by form factor)."""
    return int(gpu.get("node_gpus") or node_gpu_limit(gpu.get("form_factor")))


def tp_domain_gpus(gpu: Mapping[str, Any]) -> int:
    """GPUs that reach each other at ``interconnect_gb_s``: the NVLink domain, at least the node
    (PCIe cards: TP over PCIe inside one server)."""
    return max(int(gpu.get("nvlink_domain_gpus") or 1), node_gpus(gpu))


def max_replica_gpus(gpu: Mapping[str, Any]) -> int:
    """Most GPUs of one replica: :data:`MAX_NODES` nodes or :data:`MAX_DOMAINS` domains."""
    return max(MAX_NODES * node_gpus(gpu), MAX_DOMAINS * tp_domain_gpus(gpu))


def domains_spanned(gpu: Mapping[str, Any], stage: int, pp: int) -> int:
    """NVLink domains a replica of *pp* stages of *stage* GPUs each (TP × DP) spans: a stage
    smaller than a domain never crosses one, so ``⌊D / stage⌋`` stages pack a domain; a larger
    one takes whole domains (the packing the pipeline transfers are priced on,
    :mod:`predictors.estimators.layout_comm`)."""
    domain = tp_domain_gpus(gpu)
    if stage >= domain:
        return math.ceil(stage / domain) * pp
    return math.ceil(pp / (domain // max(stage, 1)))


def tp_fits_heads(tp: int, heads: int, kv_heads: int) -> bool:
    """True when vLLM accepts tensor parallelism *tp* for these head counts."""
    if tp < 1 or heads % tp:
        return False
    return kv_heads % tp == 0 or tp % kv_heads == 0


def kv_copies(llm: Mapping[str, Any], tp: int) -> float:
    """How many of *tp* tensor-parallel ranks hold each KV entry of *llm*: ``max(1, TP /
    kv_heads)``, ``TP`` for MLA's one latent head (the scalar form of
    :func:`predictors.physics.kv_replication`, which the memory rule uses)."""
    if llm.get("attention_kind") == "mla":
        heads = 1.0
    elif llm.get("num_kv_heads") is None:
        return 1.0
    else:
        heads = float(llm["num_kv_heads"])
    return max(1.0, tp / heads)


def valid_tp_degrees(heads: int, kv_heads: int, limit: int) -> list[int]:
    """Every tensor-parallel degree from 1 to *limit* that fits the heads."""
    return [t for t in range(1, limit + 1) if tp_fits_heads(t, heads, kv_heads)]


def _tp_ok(tp: int, heads: int, kv: int, domain: int) -> bool:
    return tp_fits_heads(tp, heads, kv) and (tp <= domain or tp % domain == 0)


def resolve_layout(
    llm: Mapping[str, Any],
    gpu: Mapping[str, Any],
    gpu_count: int,
    pipeline_parallel: int | None = None,
    data_parallel: int | None = None,
    expert_parallel: int | None = None,
    engine: str | None = None,
) -> Layout | None:
    """The layout of *gpu_count* GPUs with the stated degrees (None: the engines' usual one;
    EP 1 for an *engine* without expert parallelism); None when ``gpu_count`` does not split (see
    :func:`layout_problems` for why)."""
    dp = data_parallel or 1
    if gpu_count % dp:
        return None
    pp = pipeline_parallel
    if pp is None and engine in LAYER_SPLIT_ENGINES:
        pp = gpu_count // dp  # its layers split over every GPU, one stage after another
    elif pp is None:
        domain = tp_domain_gpus(gpu)
        per_rank = gpu_count // dp
        pp = 1 if per_rank <= domain or per_rank % domain else per_rank // domain
    if gpu_count % (pp * dp):
        return None
    tp = gpu_count // (pp * dp)
    if expert_parallel is not None:
        return Layout(tp, pp, dp, expert_parallel)
    if not llm.get("is_moe") or not engine_support.default_expert_parallel(engine):
        return Layout(tp, pp, dp, 1)
    experts = int(llm.get("num_experts") or 1)  # EP = TP × DP, at most the experts
    return Layout(
        tp, pp, dp, max(e for e in range(1, tp * dp + 1) if not (tp * dp) % e and e <= experts)
    )


def _data_parallel_instead(
    llm: Mapping[str, Any],
    gpu: Mapping[str, Any],
    gpus: int,
    pp: int,
    ep: int | None,
    engine: str | None,
) -> str:
    """``, or keep 72 GPUs with data_parallel 9 (tensor parallelism 8 × data 9)`` for a
    mixture-of-experts model (attention DP with wide EP, as the engines serve DeepSeek-style
    models): the largest valid TP whose attention data parallelism fills the same GPUs in the
    same *pp* stages, checked as the fix states it (``pipeline_parallel`` too where *pp* is not
    1: ``data_parallel`` alone would take the usual layout's stages again)."""
    stages = pp if pp > 1 else None  # one stage: the usual layout's, left unstated
    for dp in range(2, gpus // pp + 1):
        if (gpus // pp) % dp:
            continue
        layout, problems = layout_problems(llm, gpu, gpus, stages, dp, ep, engine=engine)
        if layout is not None and not problems and layout.pp == pp:
            stated = f"data_parallel {dp}" + (f" and pipeline_parallel {pp}" if stages else "")
            shape = f"{layout.tp}" + (f" × pipeline {pp}" if stages else "")
            return f", or keep {gpus} GPUs with {stated} (tensor parallelism {shape} × data {dp})"
    return ""


def _pipeline_instead(
    llm: Mapping[str, Any],
    gpu: Mapping[str, Any],
    gpus: int,
    dp: int | None,
    ep: int | None,
    engine: str | None,
) -> str:
    """``, or keep 8 GPUs with pipeline_parallel 2 (tensor parallelism 4 × pipeline 2)``: the
    fewest pipeline stages whose tensor-parallel degree fits the heads on the same GPUs (a
    12-head model on 8 GPUs of an 8-GPU domain, which a 4-GPU domain resolves so by itself),
    checked as the fix states it; '' when none does."""
    for pp in range(2, gpus // (dp or 1) + 1):
        if (gpus // (dp or 1)) % pp:
            continue
        layout, problems = layout_problems(llm, gpu, gpus, pp, dp, ep, engine=engine)
        if layout is not None and not problems:
            return (
                f", or keep {gpus} GPUs with pipeline_parallel {pp} "
                f"(tensor parallelism {layout.tp} × pipeline {pp})"
            )
    return ""


def layout_problems(
    llm: Mapping[str, Any],
    gpu: Mapping[str, Any],
    gpu_count: int,
    pipeline_parallel: int | None = None,
    data_parallel: int | None = None,
    expert_parallel: int | None = None,
    *,
    field: str = "gpu_count",
    engine: str | None = None,
    precision: str | None = None,
) -> tuple[Layout | None, list[str]]:
    """The resolved layout (None when it has problems) and the problems of serving catalog model
    *llm* on *gpu_count* GPUs of catalog type *gpu* with *engine* (None: any engine; its
    capabilities, :mod:`predictors.catalog.engine_support`) at *precision* (None: not checked;
    :mod:`predictors.catalog.precision_support`); no problems means it is valid."""
    wrong_accelerator = engine_support.accelerator_problems(engine, gpu)
    wrong_accelerator = wrong_accelerator or precision_support.precision_problems(precision, gpu)
    if wrong_accelerator:
        return None, wrong_accelerator
    gid, ff = gpu.get("id"), gpu.get("form_factor")
    limit = max_replica_gpus(gpu)
    if gpu_count > limit:
        nodes, domains = MAX_NODES * node_gpus(gpu), MAX_DOMAINS * tp_domain_gpus(gpu)
        spans = (
            f"{MAX_NODES} nodes of {node_gpus(gpu)}"
            if nodes >= domains
            else f"{MAX_DOMAINS} NVLink domains of {tp_domain_gpus(gpu)}"
        )
        return None, [
            f"{field}: {gpu_count} GPUs exceed the {limit} of one replica of {gid} ({spans}); "
            f"use at most {limit} GPUs per replica and more replicas"
        ]
    layout = resolve_layout(
        llm, gpu, gpu_count, pipeline_parallel, data_parallel, expert_parallel, engine
    )
    split = (pipeline_parallel or 1) * (data_parallel or 1)
    if layout is None:
        return None, [
            f"{field}: {gpu_count} GPUs do not split into pipeline_parallel × data_parallel = "
            f"{split}; give a gpu_count that is a multiple of {split}"
        ]
    heads, kv = int(llm["num_attention_heads"]), int(llm["num_kv_heads"])
    domain = tp_domain_gpus(gpu)
    problems: list[str] = _packing_problems(gpu, layout, field)
    tp = layout.tp
    if not _tp_ok(tp, heads, kv, domain):
        valid = ", ".join(str(t) for t in valid_tp_degrees(heads, kv, domain))
        shape = f"tensor parallelism {tp}"
        if layout.pp * layout.dp > 1:
            shape += f" (= {gpu_count} / (pipeline {layout.pp} × data {layout.dp}))"
        if not tp_fits_heads(tp, heads, kv):
            what = (
                f"does not divide the {heads} attention heads"
                if heads % tp
                else f"neither divides nor is divided by the {kv} KV heads"
            )
            keep = (
                _data_parallel_instead(llm, gpu, gpu_count, layout.pp, expert_parallel, engine)
                if data_parallel is None and int(llm.get("num_experts") or 1) > 1
                else ""
            )
            if not keep and pipeline_parallel is None:
                keep = _pipeline_instead(
                    llm, gpu, gpu_count, data_parallel, expert_parallel, engine
                )
            problems.append(
                f"{field}: {shape} {what} of {llm.get('id')} "
                "(vLLM, SGLang and TensorRT-LLM shard the heads); use a "
                f"tensor-parallel degree of {valid}{keep}"
            )
        else:
            across = engine_support.across_domains(engine, node_gpus(gpu))
            problems.append(
                f"{field}: {shape} is larger than the {domain}-GPU NVLink domain of {gid} "
                f"({ff}) and not a whole number of domains; use tensor parallelism {valid} "
                f"{across}"
            )
    num_layers = int(llm.get("num_layers") or 1)
    if layout.pp > num_layers:
        problems.append(
            f"pipeline_parallel: {layout.pp} stages exceed the {num_layers} layers of "
            f"{llm.get('id')}; use at most {num_layers}"
        )
    if not problems:  # what the engine runs at all, then the expert split
        problems = engine_support.layout_problems(
            engine, gpu, (layout.tp, layout.pp, layout.dp, layout.ep), node_gpus(gpu), field=field
        )
    if not problems:
        problems = _expert_problems(llm, layout)
    return (None if problems else layout), problems


def _packing_problems(gpu: Mapping[str, Any], layout: Layout, field: str) -> list[str]:
    """The replica's stages need more NVLink domains than one replica may span
    (:func:`domains_spanned` against :func:`max_replica_gpus`)."""
    domain, stage = tp_domain_gpus(gpu), layout.tp * layout.dp
    most = max_replica_gpus(gpu) // domain
    need = domains_spanned(gpu, stage, layout.pp)
    if need <= most:
        return []
    per = max(domain // stage, 1)
    return [
        f"{field}: {layout.pp} pipeline stages of {stage} GPUs (TP {layout.tp} × DP "
        f"{layout.dp}) pack {per} to each {domain}-GPU NVLink domain of {gpu.get('id')} (a stage "
        f"never crosses a domain), so they need {need} domains, above the {most} of one "
        f"replica; use at most {per * most} stages, or a stage size that divides {domain}"
    ]


def _expert_problems(llm: Mapping[str, Any], layout: Layout) -> list[str]:
    if not llm.get("is_moe"):
        out = []
        if layout.ep != 1:
            out.append(
                f"expert_parallel: {llm.get('id')} is a dense model (no experts); leave "
                "expert_parallel empty or 1"
            )
        if layout.dp != 1:
            out.append(
                f"data_parallel: attention data parallelism splits a mixture-of-experts "
                f"model's attention over ranks that share its experts; {llm.get('id')} is dense, "
                f"so its {layout.dp} data-parallel copies are separate replicas: leave "
                f"data_parallel empty or 1 and give each copy's GPUs "
                f"({layout.tp * layout.pp}) and batch"
            )
        return out
    experts = int(llm.get("num_experts") or 1)
    stage = layout.tp * layout.dp
    if layout.ep > experts:
        return [
            f"expert_parallel: {layout.ep} is larger than the {experts} experts of "
            f"{llm.get('id')}; use at most {experts}"
        ]
    if layout.ep > stage:
        return [
            f"expert_parallel: {layout.ep} is more than the {stage} GPU{'s' if stage > 1 else ''} "
            "of a pipeline stage "
            f"(tensor_parallel {layout.tp} × data_parallel {layout.dp}; the experts are spread "
            f"over one stage's GPUs); use a divisor of {stage}, or a data_parallel that makes "
            f"tensor_parallel × data_parallel a multiple of {layout.ep}"
        ]
    if stage % layout.ep:
        return [
            f"expert_parallel: {layout.ep} does not divide the tensor_parallel × data_parallel "
            f"= {stage} GPUs of a pipeline stage; use a divisor of {stage}"
        ]
    return []
