"""The plan JSON check (:mod:`planner.documents.verify`) of what cannot be a disaggregated unit
at all: a pool that the optimiser's :class:`planner.inputs.Pool` refuses (workers or a layout
degree below 1, a worker holding fewer GPUs than it runs on, a negative or non-finite power), a
candidate's unit that its :class:`planner.inputs.Candidate` refuses (``deployment`` against
``pools``, the roles, the GPUs the unit holds, its GPU type), pool curves that do not fit the
unit's knots, an allocation's unit whose ``gpu`` is not its decode pool's (no part of the
allocation's identity, which its pools are: the edit was read as written).

These are checked before anything else: nothing is recomputed from such a record, and no report
can be made of it even with ``--trust`` (a report rebuilds every candidate). Each problem names
its field (``allocations[2].pools[1].workers: 0 is impossible (at least 1)``); without this
check the optimiser's own error named no file and no field. Works on the plain JSON mapping,
like the rest of the check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planner.documents.json_values import is_non_negative, is_whole
from planner.documents.verify_candidates import curve_knots
from predictors.core.escape import short_repr

#: A pool's workers and one worker's layout degrees: whole numbers, at least 1.
COUNTS = ("workers", "tp", "pipeline_parallel", "data_parallel", "expert_parallel")
#: The roles of a unit's pools, in order.
ROLES = ["prefill", "decode"]


def _pool(where: str, p: dict[str, Any]) -> Iterator[str]:
    """What pool record *p* (at *where*) cannot hold."""
    for key in COUNTS:
        if not is_whole(p.get(key), 1):
            yield f"{where}.{key}: {short_repr(p.get(key))} is impossible (at least 1)"
    if all(is_whole(p.get(k), 1) for k in COUNTS):
        running = p["tp"] * p["pipeline_parallel"] * p["data_parallel"]
        held = p.get("gpus_per_worker")
        if not is_whole(held) or held < running:
            yield (
                f"{where}.gpus_per_worker: {short_repr(held)} is impossible (fewer than the "
                f"tp × pipeline_parallel × data_parallel = {short_repr(running)} GPUs a worker "
                "runs on)"
            )
    for key in ("idle_power_w", "power_w_at_capacity"):
        if not is_non_negative(p.get(key)):
            yield f"{where}.{key}: {short_repr(p.get(key))} is impossible (negative or not finite)"


def _pools(where: str, record: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """(problems, pools) of a candidate or allocation *record*: its ``deployment`` against its
    ``pools`` (a disaggregated unit has them, an aggregated replica none), then each pool."""
    pools = record.get("pools")
    deployment = record.get("deployment")
    if bool(pools) != (deployment == "disaggregated"):
        held = f"{len(pools)} pool(s)" if isinstance(pools, list) and pools else "no pools"
        return [
            f"{where}.deployment: {short_repr(deployment)}, but the record has {held} (a "
            "disaggregated unit has a prefill and a decode pool, an aggregated replica none)"
        ], []
    if not pools:
        return [], []
    if not isinstance(pools, list) or not all(isinstance(p, dict) for p in pools):
        return [f"{where}.pools: not a list of pool records"], []
    return [line for j, p in enumerate(pools) for line in _pool(f"{where}.pools[{j}]", p)], pools


def _decode_gpu(where: str, record: dict[str, Any], pools: list[dict[str, Any]]) -> Iterator[str]:
    """A unit's ``gpu`` is its decode pool's (docs/contracts.md), a candidate's as an
    allocation's: an allocation's ``gpu`` is no part of its identity (its pools are), so an edit
    of it would otherwise go unseen."""
    roles = [p.get("role") for p in pools]
    if roles == ROLES and record.get("gpu") != pools[-1].get("gpu"):
        yield (
            f"{where}.gpu: {short_repr(record.get('gpu'))}, not the GPU type of its decode pool "
            f"({short_repr(pools[-1].get('gpu'))})"
        )


def _candidate(where: str, c: dict[str, Any]) -> Iterator[str]:
    """A candidate's unit: its pools, their roles, the GPUs they hold, the unit's GPU type (the
    decode pool's) and each pool's curve on the unit's knots (when it has a curve)."""
    problems, pools = _pools(where, c)
    yield from problems
    if problems or not pools:
        return
    if [p.get("role") for p in pools] != ROLES:
        yield f"{where}.pools: a unit has a prefill then a decode pool"
        return
    held = sum(p["workers"] * p["gpus_per_worker"] for p in pools)
    if c.get("gpus_per_replica") != held:
        yield (
            f"{where}.gpus_per_replica: {short_repr(c.get('gpus_per_replica'))}, but its pools' "
            f"workers hold {short_repr(held)} GPUs"
        )
    yield from _decode_gpu(where, c, pools)
    knots = curve_knots(c)[0]  # the load curve's, unless an edit shortened it
    for j, p in enumerate(pools):  # an excluded unit has no curve: its pools' are not read
        curve = p.get("power_curve_w")
        if knots and (not isinstance(curve, list) or len(curve) != knots):
            size = len(curve) if isinstance(curve, list) else "no"
            yield (
                f"{where}.pools[{j}].power_curve_w: {size} values for the unit's {knots} curve "
                "knots (load_curve_requests_per_s)"
            )


def unit_problems(data: dict[str, Any]) -> list[str]:
    """Every candidate and allocation record of the plan JSON *data* that cannot be a unit, or
    an aggregated replica (module doc), one line per field."""
    out = [
        line
        for i, c in enumerate(data.get("candidates") or [])
        if isinstance(c, dict)
        for line in _candidate(f"candidates[{i}]", c)
    ]
    for i, alloc in enumerate(data.get("allocations") or []):
        if isinstance(alloc, dict):
            problems, pools = _pools(f"allocations[{i}]", alloc)
            out.extend(problems or _decode_gpu(f"allocations[{i}]", alloc, pools))
    return out
