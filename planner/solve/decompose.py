"""Single-model subproblem of the fleet optimiser (used for decomposition and pricing).

Routing (part of the model, docs/method.md "Optimisation"): per period a model's load may be
split across its deployments in any proportion and is spread evenly over a deployment's
replicas; the split is the exact minimum of the watts on the curves as they are
(:mod:`planner.solve.routing`, non-concave curves included). The cost of a replica vector is

    Σ_k F_k·n_k + Σ_t v_t · W(n, L_t),

where F_k >= 0 is the price of one replica over the horizon, v_t >= 0 the price of one watt
above idle in period t and W the routed watts above idle.
:func:`planner.solve.pricing.price_block` finds the cheapest vector exactly by branch and bound
(:mod:`planner.solve.search`); a fast dynamic programme under the *merit-order* rule
(deployments filled in ascending full-load energy per request, :func:`merit_replicas`) gives
first plans: free routing is never worse than that rule, and the search proves the optimum.

:class:`ModelBlock` holds the data of one model in merit order (numpy arrays), the cache of its
vectors' routings and the search data (:func:`search_block`); :func:`covers` says whether a
vector carries the peak, with its failover losses.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from planner.inputs import (
    DEFAULT_GPUS_PER_NODE,
    MAX_REPLICAS_PER_CANDIDATE,
    Candidate,
    ModelDemand,
    unit_replicas,
)
from planner.solve.coefficients import relief_rates, replica_limit
from planner.solve.failover import CAPACITY_RTOL, repaired, survives
from planner.solve.hull import Hulls
from planner.solve.minorant import minorants
from planner.solve.routing import RouteCache, load_slack
from planner.solve.screen import make_pairs
from planner.solve.search import SearchBlock

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


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
    routes: RouteCache | None = None
    """Exact routings of the vectors met so far (shared by copies of the block)."""
    failover_k: int = 0
    """Loss units the capacity must survive (0: no failover; :mod:`planner.inputs.failover`)."""
    per_unit: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Per candidate, replicas per loss unit (1 for replicas, per node for nodes; empty: k = 0)."""
    stock_use: FloatArray = field(default_factory=lambda: np.zeros((0, 0)))
    """Per candidate, the GPUs one replica holds of each inventory that a vector of this block
    alone could overdraw within its bounds (K × S; S = 0: none can)."""
    stock: FloatArray = field(default_factory=lambda: np.zeros(0))
    """Those inventories' GPUs (S): a vector above one is in no plan."""
    memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """Results that depend on this block alone (its search data, its cheapest vector at given
    prices): column generation prices every block each round, most at unchanged prices. Not an
    init field, so a copy with other loads (``dataclasses.replace``) starts empty."""

    @cached_property
    def peak(self) -> float:
        """Largest load of any period (req/s)."""
        return float(self.loads.max()) if self.loads.size else 0.0


def make_block(
    demand: ModelDemand,
    candidates: list[Candidate],
    inventory: Mapping[str, int | None],
    gpus_per_node: Mapping[str, int] | None = None,
) -> ModelBlock:
    """A :class:`ModelBlock` for *demand* with *candidates* (sorted stably by the merit key);
    *inventory* is keyed by :func:`~planner.inputs.stock_key`; *gpus_per_node* sizes the loss
    units of node failover."""
    keys = [merit_key(c) for c in candidates]
    order = sorted(range(len(candidates)), key=keys.__getitem__)  # stable, as sorted(key=...)
    ordered = [candidates[i] for i in order]
    loads = np.asarray(demand.requests_per_s_by_period, dtype=np.float64)
    peak = float(loads.max())
    k = demand.failover.count if demand.failover is not None else 0
    nodes = gpus_per_node or {}
    per_unit = [
        unit_replicas(
            demand.failover,
            ((nodes.get(g, DEFAULT_GPUS_PER_NODE), n) for g, n in c.gpu_use),
        )
        for c in ordered
    ]
    curve_x, curve_d, relief = _curves(ordered)
    ub = []
    for c, r, u in zip(ordered, per_unit, relief.tolist(), strict=True):
        n = replica_limit(peak, c.max_requests_per_s_per_replica, u, k, r, demand.min_replicas)
        n = min(n, MAX_REPLICAS_PER_CANDIDATE)
        for key, held in c.stock_use:  # a unit: each pool's type, in its region
            available = inventory.get(key)
            if available is not None:
                n = min(n, available // held)
        ub.append(n)
    cap = np.asarray([c.max_requests_per_s_per_replica for c in ordered], dtype=np.float64)
    stock_use, stock = _tight_stock(ordered, np.asarray(ub, dtype=np.int64), inventory)
    return ModelBlock(
        demand,
        tuple(ordered),
        cap,
        np.asarray([keys[i] for i in order], dtype=np.float64),
        np.asarray(ub, dtype=np.int64),
        loads,
        curve_x,
        curve_d,
        RouteCache(curve_x, curve_d, cap, loads),
        k,
        np.asarray(per_unit if k else [], dtype=np.int64),
        stock_use,
        stock,
    )


def _tight_stock(
    ordered: list[Candidate], ub: IntArray, inventory: Mapping[str, int | None]
) -> tuple[FloatArray, FloatArray]:
    """The GPUs per replica (K × S) of the inventories that the block's candidates, each at its
    bound, could overdraw together (a disaggregated unit holds two), and those inventories (S)."""
    held: dict[str, FloatArray] = {}
    for k, c in enumerate(ordered):
        for key, gpus in c.stock_use:
            if inventory.get(key) is not None:
                held.setdefault(key, np.zeros(len(ordered)))[k] += gpus
    tight = [key for key, h in held.items() if float(h @ ub) > float(inventory[key] or 0)]
    use = np.zeros((len(ordered), len(tight)))
    for i, key in enumerate(tight):
        use[:, i] = held[key]
    return use, np.asarray([float(inventory[key] or 0) for key in tight])


def fits_stock(block: ModelBlock, n: IntArray) -> bool:
    """True when replica vector *n* alone holds no more GPUs than any inventory has."""
    return not block.stock.size or bool((n @ block.stock_use <= block.stock + 1e-9).all())


def _curves(
    ordered: list[Candidate],
) -> tuple[tuple[FloatArray, ...], tuple[FloatArray, ...], FloatArray]:
    """Per candidate its curve's knot rates and watts above idle, as views of two arrays
    filled at once (the same numbers as one array per candidate), and its relief rate
    (:func:`~planner.solve.coefficients.relief_rates`)."""
    if not ordered:
        return (), (), np.zeros(0)
    curves = [c.curve for c in ordered]
    sizes = [len(x) for x, _ in curves]
    total = sum(sizes)
    xs = np.fromiter(itertools.chain.from_iterable(x for x, _ in curves), np.float64, total)
    ps = np.fromiter(itertools.chain.from_iterable(p for _, p in curves), np.float64, total)
    idle = np.repeat([c.idle_power_w_per_replica for c in ordered], sizes)
    cuts = np.cumsum(sizes)[:-1]
    relief = relief_rates(xs, ps, sizes)
    return tuple(np.split(xs, cuts)), tuple(np.split(ps - idle, cuts)), relief


def covers(block: ModelBlock, n: IntArray) -> bool:
    """True when replica vector *n* carries the peak load, with its failover losses if any."""
    tol = load_slack(block.peak)
    if not block.failover_k:
        return float(n @ block.cap) >= block.peak - tol
    return bool(survives(block.cap, block.per_unit, block.failover_k, block.peak, n)[0])


def _routes(block: ModelBlock) -> RouteCache:
    if block.routes is None:
        raise ValueError("model block built without a route cache (use make_block)")
    return block.routes


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
    """Per period, watts above idle of replica vector *n* under exact free routing."""
    return _routes(block).get(n).watts


def release(block: ModelBlock, n: IntArray) -> None:
    """Free what pricing *block* built (its search data, its single-deployment costs, the
    routings of every vector but *n*) once no vector but *n* will be asked of it: the exact
    decomposition prices each block once, and this data of 500 blocks is the solve's memory
    peak. Anything asked again is rebuilt, to the same numbers."""
    for key in ("search", "single"):
        block.memo.pop(key, None)
    _routes(block).keep_only(n)


def dispatch(block: ModelBlock, n: IntArray) -> FloatArray:
    """Exact free-routing load split x[k, t] (req/s) of replica vector *n* (K × T)."""
    return _routes(block).get(n).loads


#: Most (state, count) pairs :func:`merit_replicas` expands at one candidate; above it the
#: states are first thinned to the cheapest per (capacity bucket, replica level), so its vector
#: is a heuristic one (it always was an upper estimate: the search and the bounds stay exact).
#: A 5,000 req/s disaggregated entry expanded 2.6 M pairs per step, 33 s against a 5 s limit.
MERIT_MAX_STATES = 200_000


def _bucketed(
    c: FloatArray, cnt: IntArray, cost: FloatArray, peak: float, levels: int, buckets: int
) -> IntArray:
    """Indices of the cheapest state per (capacity bucket of ``peak / buckets``, replica level;
    the covering states, at the peak, are one bucket)."""
    bucket = np.minimum(np.floor(c / max(peak, 1e-12) * buckets), buckets)
    key = bucket.astype(np.int64) * (levels + 1) + cnt
    order = np.lexsort((-c, cost, key))
    first = np.unique(key[order], return_index=True)[1]
    kept: IntArray = np.sort(order[first])
    return kept


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


def search_block(block: ModelBlock) -> SearchBlock:
    """The data :mod:`planner.solve.search` needs of *block* (computed once per block)."""
    cached = block.memo.get("search")
    if cached is None:
        cached = block.memo["search"] = _search_block(block)
    return cached


def _search_block(block: ModelBlock) -> SearchBlock:
    hats = minorants(block.curve_x, block.curve_d)
    every = np.arange(len(block.candidates))
    one = hats.watts(every, np.ones(every.size), block.loads)
    pairs = make_pairs(
        block.ub,
        block.cap,
        block.loads,
        lambda k, m: hats.watts(k, m, block.loads),
        block.failover_k,
        block.per_unit,
        one,
        hats.least_w_per_rps,
    )
    return SearchBlock(
        block.cap,
        block.ub,
        block.peak,
        block.demand.min_replicas,
        block.loads,
        hats.least_w_per_rps,
        one,
        pairs,
        hats.knot_x,
        hats.knot_d,
        block.curve_x,
        block.curve_d,
        block.failover_k,
        block.per_unit,
        Hulls(block.curve_x, block.curve_d, block.cap),
        stock_use=block.stock_use,
        stock=block.stock,
    )


def merit_replicas(
    block: ModelBlock, price_n: FloatArray, price_t: FloatArray
) -> tuple[float, IntArray] | None:
    """Cheapest replica vector under the merit-order rule (module docstring): a Pareto DP over
    (capacity ahead, replicas, cost), exact up to :data:`MERIT_MAX_STATES` expanded states per
    step (thinned above it); its cost is an upper estimate of the
    free-routing cost of its vector. Returns (cost, n) or None when no vector covers the peak.
    With failover the DP's vector is topped up with spare replicas
    (:func:`planner.solve.failover.repaired`) and its cost is the exact free-routing one.
    """
    peak = block.peak
    rmin = block.demand.min_replicas
    tol = load_slack(peak)
    c = np.zeros(1)
    cnt = np.zeros(1, dtype=np.int64)
    cost = np.zeros(1)
    layers: list[tuple[IntArray, IntArray]] = []
    active = np.flatnonzero(block.ub > 0).tolist()  # the others: only n = 0, states unchanged
    for k in active:
        cap = float(block.cap[k])
        left = np.maximum(peak - tol - c, 0.0)
        need = np.ceil(left / cap * (1 - CAPACITY_RTOL)).astype(np.int64)
        need = np.where(left > 0, np.maximum(need, 1), need)  # left / cap may underflow
        nmax = np.minimum(np.maximum(need, rmin - cnt), int(block.ub[k]))
        nmax = np.maximum(nmax, 0)
        counts = nmax + 1
        states = np.arange(c.size)
        if int(counts.sum()) > MERIT_MAX_STATES and c.size > 1:
            # a heuristic past this size: the cheapest state per capacity bucket goes on
            buckets = max(16, MERIT_MAX_STATES // int(counts.max()))
            states = _bucketed(c, cnt, cost, peak, rmin, buckets)
            counts = counts[states]
        local = np.repeat(np.arange(states.size), counts)
        parent = states[local]
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
    for k, (parents, ns) in zip(active[::-1], layers[::-1], strict=True):
        replicas[k] = ns[best]
        best = int(parents[best])
    if block.failover_k:  # spare replicas added until the vector survives its losses
        fixed = repaired(
            block.cap, block.per_unit, block.failover_k, block.ub, peak, replicas, price_n
        )
        if fixed is None:
            return None
        return float(fixed @ price_n + price_t @ load_watts(block, fixed)), fixed
    return total, replicas
