"""The pools of a disaggregated unit in the plan JSON (``deployment`` and ``pools``, the last
keys of candidate and allocation records), and the identity both records share.

Both records describe one unit's pools (workers, GPUs, idle power, power at capacity); a
candidate's pools add the pool's power at the unit's curve knots (the pools' curves add up to
the unit's curve), an allocation's the pool's GPU power in every period over all its
``replicas`` units (the pools add up to the allocation's ``power_w_by_period``). Plans in which
no candidate is disaggregated leave both keys out, so they stay as they were; a record without
``deployment`` is aggregated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from planner.documents.base import Document, dataclass_values
from planner.inputs import (
    Candidate,
    CandidateKey,
    Pool,
    layout_text,
    pool_from_record,
    pools_text,
    record_key,
)

#: The layout keys of candidate and allocation records besides ``tp``.
LAYOUT_DEGREES = ("pipeline_parallel", "data_parallel", "expert_parallel")
#: The keys of a disaggregated unit, last in candidate and allocation records.
POOL_KEYS = ("deployment", "pools")
#: Candidate fields a plan record leaves out (the sweep's in-memory TTFT curve of a unit).
UNRECORDED = ("ttft_curve_s",)


def absent(value: object) -> bool:
    """Keys added later are left out when they do not apply (as in the plan records)."""
    return value is None


class PoolDocument(Document):
    """One pool of one disaggregated unit (an allocation has ``replicas`` such units)."""

    role: Literal["prefill", "decode"]
    """``prefill`` (prompts, then the KV cache is sent) or ``decode`` (the output tokens)."""
    gpu: str
    """GPU type of the pool's workers."""
    workers: int
    """Workers (engines) in the pool."""
    tp: int
    """Tensor-parallel degree of one worker."""
    pipeline_parallel: int
    """Pipeline stages of one worker."""
    data_parallel: int
    """Attention data-parallel ranks of one worker."""
    expert_parallel: int
    """Expert-parallel degree of one worker (1 for dense models)."""
    gpus_per_worker: int
    """GPUs of inventory one worker takes (whole nodes when it spans nodes)."""
    gpus: int
    """GPUs of inventory of the pool: workers × gpus_per_worker."""
    idle_power_w: float
    """GPU power of the pool with no load (W)."""
    power_w_at_capacity: float
    """GPU power of the pool at the unit's capacity (W)."""
    power_curve_w: list[float] | None = Field(None, exclude_if=absent)
    """Candidates: the pool's GPU power at each knot of the unit's curve (W); the pools' curves
    add up to ``power_curve_w_per_replica``."""
    power_w_by_period: list[float] | None = Field(None, exclude_if=absent)
    """Allocations: the pool's GPU power in every period (W); the pools add up to the
    allocation's ``power_w_by_period``."""


def pool_document(pool: Pool, power_w_by_period: Sequence[float] | None = None) -> PoolDocument:
    """The record of *pool*: a candidate's (its curve), or with *power_w_by_period* (all the
    allocation's units) an allocation's."""
    return PoolDocument(
        role=pool.role,
        gpu=pool.gpu,
        workers=pool.workers,
        tp=pool.tp,
        pipeline_parallel=pool.pipeline_parallel,
        data_parallel=pool.data_parallel,
        expert_parallel=pool.expert_parallel,
        gpus_per_worker=pool.held_gpus_per_worker,
        gpus=pool.gpus,
        idle_power_w=pool.idle_power_w,
        power_w_at_capacity=pool.power_w_at_capacity,
        power_curve_w=list(pool.power_curve_w) if power_w_by_period is None else None,
        power_w_by_period=None if power_w_by_period is None else list(power_w_by_period),
    )


def candidate_fields(c: Candidate, disaggregated_plan: bool) -> dict[str, Any]:
    """The fields of candidate *c*'s record: its own, ``tensor_parallel``, then ``deployment``
    and ``pools`` (left out when no candidate of the plan is disaggregated)."""
    out = {**dataclass_values(c, skip=(*POOL_KEYS, *UNRECORDED)), "tensor_parallel": c.tp}
    if disaggregated_plan:
        out.update(deployment=c.deployment, pools=[pool_document(p) for p in c.pools] or None)
    return out


def allocation_pools(
    c: Candidate, replicas: int, requests_per_s: Sequence[float], disaggregated_plan: bool
) -> dict[str, Any]:
    """The ``deployment`` and ``pools`` keys of an allocation of *replicas* units of *c* serving
    *requests_per_s* per period: each pool's power ``n · interp(x_t / n, knots, pool curve)``."""
    if not disaggregated_plan:
        return {}
    xs = c.load_curve_requests_per_s
    pools = []
    for p in c.pools:
        power = [
            replicas * float(np.interp(x / replicas, xs, p.power_curve_w)) if replicas else 0.0
            for x in requests_per_s
        ]
        pools.append(pool_document(p, power))
    return {"deployment": c.deployment, "pools": pools or None}


def unit_values(record: Mapping[str, Any]) -> dict[str, Any]:
    """The :class:`~planner.inputs.Candidate` fields ``deployment`` and ``pools`` of a plan
    record (dumped): aggregated when it has none."""
    pools = tuple(pool_from_record(p) for p in record.get("pools") or ())
    return {"deployment": record.get("deployment") or "aggregated", "pools": pools}


class KeyedRecord(Document):
    """The identity of a candidate or allocation record (model entry, GPU or pools, layout)."""

    @property
    def key(self) -> CandidateKey:
        """(model entry name, GPU — a unit's pools —, TP, PP, DP, EP, region)."""
        keys = ("name", "gpu", "tp", *LAYOUT_DEGREES, "region")
        record = {k: getattr(self, k, None) for k in keys}
        pools = getattr(self, "pools", None)
        if pools:
            record.update(deployment="disaggregated", pools=[p.model_dump() for p in pools])
        return record_key(record)

    @property
    def gpu_label(self) -> str:
        """The GPU type, or a unit's ``prefill → decode`` types when they differ."""
        pools = getattr(self, "pools", None)
        gpu = str(getattr(self, "gpu", ""))
        return " → ".join(dict.fromkeys(p.gpu for p in pools)) if pools else gpu

    @property
    def layout(self) -> str:
        """The replica's layout, compactly (:func:`planner.inputs.layout_text`); a unit's pools
        (:func:`planner.inputs.pools_text`)."""
        pools = getattr(self, "pools", None)
        if pools:
            return pools_text([pool_from_record(p.model_dump()) for p in pools])
        return layout_text(*self.key[2:6])


def gpus_of(
    gpu: str, gpus: int, replicas: int, pools: Sequence[PoolDocument] | None
) -> dict[str, int]:
    """GPUs per type of an allocation: *gpus* of *gpu*, or a unit's pools × *replicas*."""
    if not pools:
        return {gpu: gpus}
    out: dict[str, int] = {}
    for p in pools:
        out[p.gpu] = out.get(p.gpu, 0) + p.gpus * replicas
    return out


def deployment_text(gpu: str, layout: object, pools: Sequence[PoolDocument] | None) -> str:
    """``H100 TP8`` for an aggregated replica, its pools for a disaggregated unit
    (``[3× B200 TP2 → 2× H100 TP2]``, prefill then decode workers)."""
    if not pools:
        return f"{gpu} TP{layout}"
    return "[" + pools_text([pool_from_record(p.model_dump()) for p in pools]) + "]"
