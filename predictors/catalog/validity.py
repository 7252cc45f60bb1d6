"""Is a (model, GPU, GPU count) configuration one that a serving engine can actually run?

Two rules, the ones vLLM enforces when it starts:

* **Tensor parallelism and heads.** The tensor-parallel degree ``tp`` must divide the model's
  attention heads, and either ``tp`` divides the KV heads (each GPU holds some KV heads) or the
  KV heads divide ``tp`` (each KV head is replicated on ``tp / kv_heads`` GPUs). TP 3 for a model
  with 32 heads and 8 KV heads is rejected; TP 16 for 8 KV heads is allowed (replication).
* **One node.** Tensor parallelism runs inside one node: ``tp`` is at most
  :data:`NODE_GPUS_BY_FORM_FACTOR` of the GPU's form factor. More GPUs per replica need pipeline
  parallelism across nodes, which must be stated (``pipeline_parallel`` > 1: ``gpu_count =
  tp × pipeline_parallel``). The predictors do not model pipeline parallelism, so ``wattgpu
  predict`` always checks with ``pipeline_parallel = 1``.

Every problem is one line ``field: what is wrong; fix`` (the style of the other row errors of
batch predict). Nothing here raises on bad configurations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

#: GPUs one node (server) holds, by catalog ``form_factor``:
#: PCIe 8 (4U servers with 8 double-width cards); SXM2 8 (DGX-1 / HGX-1, V100); SXM3 16
#: (DGX-2 / HGX-2); SXM4, SXM5, SXM6 8 (HGX A100 / H100 / H200 / B200 / B300 8-GPU boards);
#: OAM 8 (AMD Instinct and Intel Gaudi 8-GPU platforms, OCP UBB); Superchip 4 (a GB200/GB300
#: compute tray or a quad GH200 node: 2 superchips × 2 GPUs; an NVL72 rack is 18 such nodes
#: joined by NVLink — tensor parallelism across trays is not counted as one node here);
#: other 8.
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


def node_gpu_limit(form_factor: str | None) -> int:
    """GPUs one node of this form factor holds (:data:`NODE_GPUS_BY_FORM_FACTOR`)."""
    return NODE_GPUS_BY_FORM_FACTOR.get(form_factor or "other", DEFAULT_NODE_GPUS)


def tp_fits_heads(tp: int, heads: int, kv_heads: int) -> bool:
    """True when vLLM accepts tensor parallelism *tp* for these head counts."""
    if tp < 1 or heads % tp:
        return False
    return kv_heads % tp == 0 or tp % kv_heads == 0


def valid_tp_degrees(heads: int, kv_heads: int, limit: int) -> list[int]:
    """Every tensor-parallel degree from 1 to *limit* that fits the heads."""
    return [t for t in range(1, limit + 1) if tp_fits_heads(t, heads, kv_heads)]


def config_problems(
    llm: Mapping[str, Any],
    gpu: Mapping[str, Any],
    gpu_count: int,
    pipeline_parallel: int = 1,
    *,
    field: str = "gpu_count",
) -> list[str]:
    """Problems of serving catalog model *llm* on *gpu_count* GPUs of catalog type *gpu*.

    ``gpu_count = tp × pipeline_parallel``; an empty list means the configuration is valid.
    """
    if pipeline_parallel < 1 or gpu_count % pipeline_parallel:
        return [
            f"{field}: {gpu_count} GPUs do not split into {pipeline_parallel} pipeline stages; "
            "give a gpu_count that is a multiple of pipeline_parallel"
        ]
    tp = gpu_count // pipeline_parallel
    heads, kv = int(llm["num_attention_heads"]), int(llm["num_kv_heads"])
    limit = node_gpu_limit(gpu.get("form_factor"))
    if tp <= limit and tp_fits_heads(tp, heads, kv):
        return []  # the common case, checked for every distinct configuration of a batch
    valid = ", ".join(str(t) for t in valid_tp_degrees(heads, kv, limit))
    pp_note = "" if pipeline_parallel == 1 else f" with pipeline_parallel {pipeline_parallel}"
    problems = []
    if tp > limit:
        where = "stated" if pipeline_parallel > 1 else "not stated"
        problems.append(
            f"{field}: tensor parallelism {tp}{pp_note} needs {tp} GPUs in one node, but one "
            f"{gpu.get('form_factor')} node holds at most {limit} {gpu.get('id')} (pipeline "
            f"parallelism across nodes {where}); use a tensor-parallel degree of {valid}"
        )
    elif not tp_fits_heads(tp, heads, kv):
        if heads % tp:
            what = f"does not divide the {heads} attention heads"
        else:
            what = f"and the {kv} KV heads do not divide each other"
        problems.append(
            f"{field}: tensor parallelism {tp}{pp_note} {what} of {llm.get('id')} (vLLM requires "
            f"it); use a tensor-parallel degree of {valid}"
        )
    return problems


def row_errors(
    catalog: Any,
    models: Sequence[str | None],
    gpus: Sequence[str | None],
    gpu_counts: Sequence[float | None],
) -> list[str]:
    """One error text per row ('' when valid or not checkable: unresolved names, bad counts).

    *catalog* is a :class:`predictors.catalog.store.Catalog`; *models* and *gpus* are resolved ids.
    """
    cache: dict[tuple[str, str, int], str] = catalog.memo("config_errors")  # across chunks
    llms: dict[str, dict[str, Any]] = {}
    gpu_rows: dict[str, dict[str, Any]] = {}
    out = []
    for model, gpu, count in zip(models, gpus, gpu_counts, strict=True):
        if model is None or gpu is None or count is None or not math.isfinite(count):
            out.append("")  # unresolved names and NaN/inf counts are reported by other checks
            continue
        if count < 1 or count != int(count):
            out.append("")  # reported by the positive-whole-number check
            continue
        key = (model, gpu, int(count))
        if key not in cache:
            llm = llms.get(model) or llms.setdefault(model, catalog.llm(model))
            spec = gpu_rows.get(gpu) or gpu_rows.setdefault(gpu, catalog.gpu(gpu))
            cache[key] = "; ".join(config_problems(llm, spec, key[2]))
        out.append(cache[key])
    return out
