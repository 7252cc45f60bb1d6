"""Failover: a model entry's capacity that survives any k lost replicas, or any k lost nodes.

A model entry with failover ``k`` must, after *any* k of its *loss units* fail, still carry the
load of every period within its SLA on the replicas left. A replica's capacity is the largest
rate at which it meets the SLA, so the survivors carry a period's load L within the SLA exactly
when their capacities add up to at least L (the load is routed over them, none above its
capacity). Replicas are fixed over the horizon, so the condition is that of the peak period.

Loss units:

* ``replicas``: every replica is a unit;
* ``nodes``: every deployment (model entry × GPU type × layout) fills whole nodes of its GPU
  type (``gpus_per_node`` GPUs: the catalog's ``node_gpus``) — ``r = max(1, gpus_per_node //
  GPUs per replica)`` replicas per node (a replica as wide as a node or wider spans whole nodes
  of its own, and losing one of them takes it out), the last node partly filled; nodes are not
  shared between deployments or model entries. With ``n`` replicas a deployment has ``n // r``
  full nodes of ``r · cap`` req/s and, when ``n % r > 0``, one node of ``(n % r) · cap``.
  A disaggregated unit whose pools use two GPU types fills the nodes of each type: a lost node
  of type T takes out ``node_gpus(T) // (the unit's GPUs of T)`` units, and ``r`` is the
  largest over its types (the worst node to lose).

The worst k losses are the k units of largest capacity (any other choice leaves at least as
much), so the capacity left is ``total − (sum of the k largest unit capacities)``
(:func:`surviving_capacity`). Energy, cost and carbon stay those of normal operation: the spare
replicas are powered, rented and idle like every other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from planner.inputs.validation import fail

FailoverUnit = Literal["replicas", "nodes"]
#: GPUs per node of a GPU type the inputs give no node size for (an 8-GPU server; plans built
#: from a scenario carry the catalog's ``node_gpus`` of every type).
DEFAULT_GPUS_PER_NODE = 8


@dataclass(frozen=True)
class Failover:
    """Survive any *count* lost units (replicas or nodes) of one model entry."""

    unit: FailoverUnit
    count: int
    """k >= 1 (no failover is ``None`` on the model entry)."""

    def __post_init__(self) -> None:
        if self.unit not in ("replicas", "nodes"):
            raise fail("failover", f"unit must be replicas or nodes, got {self.unit!r}")
        if self.count < 1:
            raise fail("failover", f"count must be >= 1, got {self.count}")

    @property
    def text(self) -> str:
        """``'1 replica'``, ``'2 nodes'``."""
        return unit_text(self.unit, self.count)


def unit_text(unit: str, count: int) -> str:
    """``'1 replica'``, ``'2 nodes'``: *count* loss units of kind *unit*."""
    return f"{count} {unit if count != 1 else unit[:-1]}"


def replicas_per_unit(
    failover: Failover | None, gpus_per_replica: int, gpus_per_node: int = DEFAULT_GPUS_PER_NODE
) -> int:
    """Replicas one loss unit of a deployment holds (module docstring)."""
    return unit_replicas(failover, ((gpus_per_node, gpus_per_replica),))


def unit_replicas(failover: Failover | None, uses: Iterable[tuple[int, int]]) -> int:
    """Replicas one loss unit holds, for replicas taking GPUs of several types: *uses* gives,
    per type, (GPUs per node, GPUs one replica takes). A disaggregated unit mixing types fills
    each type's nodes with its pools, so one lost node of a type takes out ``node // GPUs``
    units; the worst type is the loss unit (module docstring)."""
    if failover is None or failover.unit == "replicas":
        return 1
    return max((max(1, node // n) for node, n in uses if n > 0), default=1)


def worst_loss(
    cap: npt.ArrayLike, per_unit: npt.ArrayLike, k: int, replicas: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """Capacity of the k largest loss units of replica vectors *replicas* (one per row, or one
    vector): deployment d has ``n_d // r_d`` units of ``r_d · cap_d`` and one of
    ``(n_d % r_d) · cap_d``. Exact (greedy: the largest units first)."""
    c = np.asarray(cap, dtype=np.float64)
    r = np.asarray(per_unit, dtype=np.int64)
    n = np.atleast_2d(np.asarray(replicas, dtype=np.int64))
    if k <= 0 or c.size == 0:
        return np.zeros(n.shape[0])
    full = n // r
    part = n - full * r
    caps = np.concatenate([np.broadcast_to(r * c, n.shape), part * c], axis=1)
    counts = np.concatenate([full, (part > 0).astype(np.int64)], axis=1)
    order = np.argsort(-caps, axis=1, kind="stable")
    caps = np.take_along_axis(caps, order, axis=1)
    counts = np.take_along_axis(counts, order, axis=1)
    before = np.cumsum(counts, axis=1) - counts
    take = np.clip(k - before, 0, counts)
    loss: npt.NDArray[np.float64] = (take * caps).sum(axis=1)
    return loss


def surviving_capacity(
    cap: npt.ArrayLike, per_unit: npt.ArrayLike, k: int, replicas: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """Capacity (req/s) left after the worst k losses, per replica vector (module docstring)."""
    c = np.asarray(cap, dtype=np.float64)
    n = np.atleast_2d(np.asarray(replicas, dtype=np.int64))
    left: npt.NDArray[np.float64] = n @ c - worst_loss(c, per_unit, k, n)
    return left
