"""The plan JSON check (:mod:`planner.documents.verify`) of disaggregated units: their identity,
the GPUs they take per type and their pools, recomputed as docs/method.md §4 states.

A unit's record has ``deployment: disaggregated`` and a prefill then a decode pool (a record
that cannot be a unit at all is refused first, :mod:`.verify_units`). Its pools must add up to
it: GPUs (``workers × gpus_per_worker`` each, together ``gpus_per_replica``), idle power and the
power curve on the unit's knots (candidates); the pool's GPU power in every period
``n · interp(x_t / n, knots, pool curve)``, the pools together the allocation's
``power_w_by_period`` (allocations, whose pools are their candidate's, with the same
``idle_power_w`` and ``power_w_at_capacity``). Works on the plain JSON mapping, like the rest of
the check.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from planner.inputs import pool_from_record, pools_text
from predictors.core.errors import WattgpuError

#: Largest relative difference between a stored figure and its recomputation.
RELATIVE_TOLERANCE = 1e-6
_IDENTITY: tuple[str, ...] = ("role", "gpu", "workers", "tp", "pipeline_parallel")
_IDENTITY += ("data_parallel", "expert_parallel", "gpus_per_worker", "gpus")


def _pools(record: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The pools of a disaggregated record (None: aggregated, or pools that cannot be read)."""
    pools = record.get("pools")
    if record.get("deployment") != "disaggregated" or not isinstance(pools, list) or not pools:
        return None
    return pools if all(isinstance(p, dict) for p in pools) else None


def record_identity(record: dict[str, Any]) -> tuple[Any, ...]:
    """A candidate's or allocation's identity: (name, GPU — a unit's pools —, TP, PP, DP, EP,
    region); plans written before layouts have no layout keys (degrees 1), plans without regions
    no region."""
    layout = (record.get(k) or 1 for k in ("pipeline_parallel", "data_parallel", "expert_parallel"))
    pools = _pools(record)
    try:
        gpu = pools_text([pool_from_record(p) for p in pools]) if pools else record.get("gpu")
    except (KeyError, TypeError, ValueError, WattgpuError):  # a damaged pool: reported by
        # verify_units (a pool that cannot be one) or pool_problems
        gpu = record.get("gpu")
    return (record.get("name"), gpu, record.get("tp"), *layout, record.get("region") or "")


def gpus_by_type(alloc: dict[str, Any], per_replica: int) -> dict[str, int]:
    """GPUs per type an allocation takes: its GPU type's, or its unit's pools' × replicas."""
    replicas = int(alloc.get("replicas") or 0)
    pools = _pools(alloc)
    if pools is None:
        return {str(alloc.get("gpu")): max(int(alloc.get("gpus") or 0), replicas * per_replica)}
    out: dict[str, int] = {}
    for p in pools:
        out[str(p.get("gpu"))] = out.get(str(p.get("gpu")), 0) + replicas * int(p.get("gpus") or 0)
    return out


def differs(stored: Any, recomputed: float) -> bool:
    """True when *stored* is not a finite number within the tolerance of *recomputed*."""
    if not isinstance(stored, int | float) or isinstance(stored, bool):
        return True
    if not math.isfinite(float(stored)):
        return True
    scale = max(abs(recomputed), abs(float(stored)), 1e-9)
    return abs(float(stored) - recomputed) > RELATIVE_TOLERANCE * scale + 1e-12


def _unit(where: str, record: dict[str, Any], pools: list[dict[str, Any]]) -> Iterator[str]:
    """A unit's pools (a prefill then a decode pool, :mod:`.verify_units`): GPU counts and
    (candidates) idle power and curve add up."""
    for j, p in enumerate(pools):
        workers, per_worker = int(p.get("workers") or 0), int(p.get("gpus_per_worker") or 0)
        if p.get("gpus") != workers * per_worker:
            yield f"{where}.pools[{j}].gpus: {p.get('gpus')!r}, not {workers} × {per_worker}"
    total = sum(int(p.get("gpus") or 0) for p in pools)
    if "gpus_per_replica" in record and record["gpus_per_replica"] != total:
        yield f"{where}.gpus_per_replica: {record['gpus_per_replica']!r}, the pools hold {total}"
    curve = record.get("power_curve_w_per_replica")
    if curve:
        again = np.sum([p.get("power_curve_w") or [] for p in pools], axis=0)
        if np.shape(again) != (len(curve),) or any(map(differs, curve, again)):
            yield f"{where}.power_curve_w_per_replica: not the sum of its pools' power_curve_w"


def pool_problems(
    data: dict[str, Any], by_key: dict[tuple[Any, ...], dict[str, Any]]
) -> Iterator[str]:
    """Every inconsistency of the plan's disaggregated units (module doc)."""
    for i, c in enumerate(data.get("candidates") or []):
        pools = _pools(c)
        if pools is not None:
            yield from _unit(f"candidates[{i}]", c, pools)
    for i, alloc in enumerate(data.get("allocations") or []):
        pools, candidate = _pools(alloc), by_key.get(record_identity(alloc))
        if pools is None or candidate is None:
            continue
        where = f"allocations[{i}]"
        mine = [{k: p.get(k) for k in _IDENTITY} for p in pools]
        if mine != [{k: p.get(k) for k in _IDENTITY} for p in _pools(candidate) or []]:
            yield f"{where}.pools: not the pools of its candidate"
            continue
        n = int(alloc.get("replicas") or 0)
        x = np.asarray(alloc.get("requests_per_s_by_period") or [], dtype=np.float64)
        xs = np.asarray(candidate.get("load_curve_requests_per_s") or [0.0], dtype=np.float64)
        total = np.zeros_like(x)
        for j, (p, q) in enumerate(zip(pools, _pools(candidate) or [], strict=True)):
            for key in ("idle_power_w", "power_w_at_capacity"):
                if isinstance(q.get(key), int | float) and differs(p.get(key), float(q[key])):
                    yield (
                        f"{where}.pools[{j}].{key}: {p.get(key)!r}, its candidate pool's is "
                        f"{q[key]!r}"
                    )
            ps = np.asarray(q.get("power_curve_w") or [0.0] * xs.size, dtype=np.float64)
            again = n * np.interp(x / n, xs, ps) if n > 0 else np.zeros_like(x)
            total += again
            stored = p.get("power_w_by_period") or []
            if len(stored) != x.size or any(map(differs, stored, again)):
                yield f"{where}.pools[{j}].power_w_by_period: not its candidate pool's curve"
        if any(map(differs, alloc.get("power_w_by_period") or [], total)):
            yield f"{where}.power_w_by_period: not the sum of its pools' power_w_by_period"
