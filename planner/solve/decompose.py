"""Exact single-model subproblem of the fleet optimiser (used for decomposition and pricing).

Routing rule (part of the model, docs/method.md "Optimisation"): a model's load goes to its
deployments in a fixed priority order — ascending energy per request above idle at full load,
``(curve(cap) − idle) / cap`` ("merit order") — each deployment filled to its capacity before
the next takes load, and spread evenly over that deployment's replicas. With C_{k-1} the
capacity ahead of candidate k, it serves ``x[k,t] = clip(L_t − C_{k-1}, 0, n_k·cap_k)`` and
its replicas draw ``n_k · D_k(x[k,t] / n_k)`` watts above idle, D_k = curve − idle (concave in
practice, non-decreasing always). The cost of a replica vector is

    Σ_k F_k·n_k + Σ_k Σ_t v_t · n_k · D_k(x[k,t] / n_k),

where F_k >= 0 is the price of one replica over the horizon and v_t >= 0 the price of one
watt above idle in period t. Candidate k's term depends only on (C_{k-1}, n_k); the terms of
later candidates only on C_k and never rise when C_k grows (less residual load, D
non-decreasing). So a state (C, replicas so far, cost) dominates every state with no more
capacity, no more replicas and no lower cost, and the dynamic programme below, which keeps
only that Pareto frontier per candidate, is exact for the curve. For linear candidates
(D_k(r) = e_k·r) the rule is the optimal LP dispatch, as before.

:func:`best_replicas` solves one model for given prices; :class:`ModelBlock` holds the data
of one model in merit order (numpy arrays).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from planner.inputs import MAX_REPLICAS_PER_CANDIDATE, Candidate, ModelDemand

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
CAPACITY_RTOL = 1e-9
"""Capacity within this relative distance of the peak counts as covering it."""


@dataclass(frozen=True)
class ModelBlock:
    """One model entry's candidates in merit order (ascending energy per request)."""

    demand: ModelDemand
    candidates: tuple[Candidate, ...]
    cap: FloatArray
    """Requests/s per replica, per candidate."""
    e_j: FloatArray
    """Merit key per candidate: energy per request above idle at full load (J)."""
    ub: IntArray
    """Most replicas per candidate (peak cover or minimum replicas, and inventory)."""
    loads: FloatArray
    """Requests/s per period."""
    curve_x: tuple[FloatArray, ...] = ()
    """Per candidate, the per-replica rates of its power-curve knots."""
    curve_d: tuple[FloatArray, ...] = ()
    """Per candidate, replica power above idle (W) at the knots."""

    @property
    def peak(self) -> float:
        """Largest load of any period (req/s)."""
        return float(self.loads.max()) if self.loads.size else 0.0


def make_block(
    demand: ModelDemand, candidates: list[Candidate], inventory: dict[str, int | None]
) -> ModelBlock:
    """A :class:`ModelBlock` for *demand* with *candidates* (sorted stably by the merit key)."""
    ordered = sorted(candidates, key=merit_key)
    loads = np.asarray(demand.requests_per_s_by_period, dtype=np.float64)
    peak = float(loads.max())
    ub = []
    for c in ordered:
        n = max(math.ceil(peak / c.max_requests_per_s_per_replica), demand.min_replicas)
        n = min(n, MAX_REPLICAS_PER_CANDIDATE)
        available = inventory.get(c.gpu)
        if available is not None:
            n = min(n, available // c.gpus_per_replica)
        ub.append(n)
    return ModelBlock(
        demand,
        tuple(ordered),
        np.asarray([c.max_requests_per_s_per_replica for c in ordered], dtype=np.float64),
        np.asarray([merit_key(c) for c in ordered], dtype=np.float64),
        np.asarray(ub, dtype=np.int64),
        loads,
        tuple(np.asarray(c.curve[0], dtype=np.float64) for c in ordered),
        tuple(
            np.asarray(c.curve[1], dtype=np.float64) - c.idle_power_w_per_replica for c in ordered
        ),
    )


def merit_key(c: Candidate) -> float:
    """Energy per request above idle at full load (J): the routing priority (ascending)."""
    xs, ps = c.curve
    return (ps[-1] - c.idle_power_w_per_replica) / xs[-1] if xs[-1] > 0 else 0.0


def dynamic_w(block: ModelBlock, k: int, n: IntArray | int, x: FloatArray) -> FloatArray:
    """Watts above idle of ``n`` replicas of candidate *k* serving ``x`` req/s together
    (broadcast; 0 where n = 0)."""
    nn = np.asarray(n, dtype=np.float64)
    rate = np.divide(x, nn, out=np.zeros(np.broadcast(x, nn).shape), where=nn > 0)
    per = np.interp(rate, block.curve_x[k], block.curve_d[k])
    result: FloatArray = np.where(nn > 0, nn * per, 0.0)
    return result


def load_watts(block: ModelBlock, n: IntArray) -> FloatArray:
    """Per period, watts above idle of replica vector *n* under the routing rule."""
    x = dispatch(block, n)
    total = np.zeros(block.loads.size)
    for k in range(len(block.candidates)):
        if n[k] > 0:
            total += dynamic_w(block, k, int(n[k]), x[k])
    return total


def dispatch(block: ModelBlock, n: IntArray) -> FloatArray:
    """Merit-order load split x[k, t] (req/s) of replica vector *n* (K × T)."""
    x = np.zeros((len(block.candidates), block.loads.size))
    before = np.zeros(block.loads.size)
    for k in range(len(block.candidates)):
        if n[k] <= 0:
            continue
        take = np.clip(block.loads - before, 0.0, n[k] * block.cap[k])
        x[k] = take
        before = before + take
    return x


def _pareto(c: FloatArray, cnt: IntArray, cost: FloatArray, levels: int) -> IntArray:
    """Indices of the states no other state dominates (more or equal C and count, less or
    equal cost); ties keep the first state in generation order."""
    order = np.lexsort((np.arange(c.size), cost, -cnt, -c))
    keep = np.zeros(c.size, dtype=bool)
    ns, costs = cnt[order], cost[order]
    for level in range(levels + 1):
        masked = np.where(ns >= level, costs, np.inf)
        before = np.concatenate(([np.inf], np.minimum.accumulate(masked)[:-1]))
        keep |= (ns == level) & (costs < before)
    kept: IntArray = np.sort(order[keep])
    return kept


def best_replicas(
    block: ModelBlock, price_n: FloatArray, price_t: FloatArray
) -> tuple[float, IntArray] | None:
    """Cheapest replica vector of *block*: min Σ price_n·n + Σ_t price_t · (watts above idle).

    *price_n* (per candidate, >= 0) prices one replica; *price_t* (per period, >= 0) prices
    one watt above idle in that period (module docstring for the routing rule). Respects the
    block's replica bounds and minimum replicas. Returns (cost, n) or None when no vector
    covers the peak load.
    """
    peak = block.peak
    rmin = block.demand.min_replicas
    tol = CAPACITY_RTOL * max(1.0, peak)
    c = np.zeros(1)
    cnt = np.zeros(1, dtype=np.int64)
    cost = np.zeros(1)
    layers: list[tuple[IntArray, IntArray]] = []
    for k in range(len(block.candidates)):
        cap = float(block.cap[k])
        need = np.ceil(np.maximum(peak - tol - c, 0.0) / cap - CAPACITY_RTOL).astype(np.int64)
        nmax = np.minimum(np.maximum(need, rmin - cnt), int(block.ub[k]))
        nmax = np.maximum(nmax, 0)
        counts = nmax + 1
        parent = np.repeat(np.arange(c.size), counts)
        offsets = np.repeat(np.cumsum(counts) - counts, counts)
        n = np.arange(parent.size, dtype=np.int64) - offsets
        new_c = c[parent] + n * cap
        new_c = np.where(new_c >= peak - tol, peak, new_c)
        served = np.clip(
            block.loads[None, :] - c[parent][:, None], 0.0, (n * cap)[:, None].astype(np.float64)
        )
        watts = dynamic_w(block, k, n[:, None], served)
        new_cost = cost[parent] + n * float(price_n[k]) + watts @ price_t
        new_cnt = np.minimum(cnt[parent] + n, rmin)
        keep = _pareto(new_c, new_cnt, new_cost, rmin)
        layers.append((parent[keep], n[keep]))
        c, cnt, cost = new_c[keep], new_cnt[keep], new_cost[keep]
    done = np.flatnonzero((c >= peak) & (cnt >= rmin))
    if done.size == 0:
        return None
    best = int(done[np.argmin(cost[done])])
    total = float(cost[best])
    replicas = np.zeros(len(block.candidates), dtype=np.int64)
    for k in range(len(block.candidates) - 1, -1, -1):
        parents, ns = layers[k]
        replicas[k] = ns[best]
        best = int(parents[best])
    return total, replicas
