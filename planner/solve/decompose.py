"""Exact single-model subproblem of the fleet optimiser (used for decomposition and pricing).

For one model entry with replicas n[k] fixed, the best dispatch in every period fills the
candidates in ascending energy per request ("merit order"): every term that depends on the
load split (energy in the objective, facility power, the electricity part of the budget) is
``e_j[k] · x[k,t]`` times a per-period factor, so the same order is optimal for all of them.
With candidates sorted that way and C_k = min(Σ_{j<=k} cap_j·n_j, P) (P = peak load), the
cost of a replica vector is

    Σ_k F_k·n_k + Σ_k e_k · (G(C_k) - G(C_{k-1})),   G(C) = Σ_t v_t · min(L_t, C),

where F_k >= 0 is the price of one replica over the horizon and v_t >= 0 the price of one
unit of e_j·req/s (load-proportional watts) in period t. Because G is concave and the e_k
ascend, the future cost never rises when C_k grows, so a state (C, replicas so far, cost)
dominates every state with no more capacity, no more replicas and no lower cost. The
dynamic programme below keeps only that Pareto frontier per candidate and is exact.

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
    """Energy per request (J), per candidate."""
    ub: IntArray
    """Most replicas per candidate (peak cover or minimum replicas, and inventory)."""
    loads: FloatArray
    """Requests/s per period."""

    @property
    def peak(self) -> float:
        """Largest load of any period (req/s)."""
        return float(self.loads.max()) if self.loads.size else 0.0


def make_block(
    demand: ModelDemand, candidates: list[Candidate], inventory: dict[str, int | None]
) -> ModelBlock:
    """A :class:`ModelBlock` for *demand* with *candidates* (sorted stably by energy/request)."""
    ordered = sorted(candidates, key=lambda c: c.energy_j_per_request)
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
        np.asarray([c.energy_j_per_request for c in ordered], dtype=np.float64),
        np.asarray(ub, dtype=np.int64),
        loads,
    )


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


def _g_function(loads: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Sorted loads, prefix Σ v·L below and suffix Σ v above, so G(C) = A[i] + C·B[i]."""
    order = np.argsort(loads, kind="stable")
    ls, vs = loads[order], v[order]
    a = np.concatenate(([0.0], np.cumsum(vs * ls)))
    b = np.concatenate((np.cumsum(vs[::-1])[::-1], [0.0]))
    return ls, a, b


def _g(c: FloatArray, ls: FloatArray, a: FloatArray, b: FloatArray) -> FloatArray:
    i = np.searchsorted(ls, c, side="right")
    result: FloatArray = a[i] + c * b[i]
    return result


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
    """Cheapest replica vector of *block*: min Σ price_n·n + Σ_t price_t·Σ_k e_k·x[k,t].

    *price_n* (per candidate, >= 0) prices one replica; *price_t* (per period, >= 0) prices
    one unit of e_j·req/s in that period. Respects the block's replica bounds and minimum
    replicas. Returns (cost, n) or None when no vector covers the peak load.
    """
    peak = block.peak
    rmin = block.demand.min_replicas
    ls, a, b = _g_function(block.loads, price_t)
    tol = CAPACITY_RTOL * max(1.0, peak)
    c = np.zeros(1)
    cnt = np.zeros(1, dtype=np.int64)
    cost = np.zeros(1)
    g_c = _g(c, ls, a, b)
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
        new_g = _g(new_c, ls, a, b)
        new_cost = cost[parent] + n * float(price_n[k]) + block.e_j[k] * (new_g - g_c[parent])
        new_cnt = np.minimum(cnt[parent] + n, rmin)
        keep = _pareto(new_c, new_cnt, new_cost, rmin)
        layers.append((parent[keep], n[keep]))
        c, cnt, cost, g_c = new_c[keep], new_cnt[keep], new_cost[keep], new_g[keep]
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
