"""Pricing one model block: its cheapest replica vector under free routing, with a valid bound.

:func:`price_block` is the pricing problem of the decomposition and of column generation:
``min Σ price_n·n + Σ_t price_t·W(n, L_t)`` over the block's replica vectors, by the exact
search of :mod:`planner.solve.search` from a good first vector (:func:`first_vector`: the
cheapest single deployment, or the merit-order DP over the counts screening keeps within its
cost), its bound raised by the Lagrangian bound of :mod:`planner.solve.lagrange` when the
search is cut short. :func:`fast_vector` is the heuristic column of column generation's fast
rounds and :func:`vectors_within` the reduced-cost enumeration. The block itself (candidates
in merit order, routing, the merit-order DP) is :mod:`planner.solve.decompose`.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import numpy.typing as npt

from planner.solve.decompose import (
    FloatArray,
    IntArray,
    ModelBlock,
    fits_stock,
    load_watts,
    merit_replicas,
    search_block,
)
from planner.solve.interp import interp_rows
from planner.solve.lagrange import lagrangian_bound, relaxation
from planner.solve.routing import load_slack
from planner.solve.search import MAX_EVALUATIONS, Found, cheapest, screen, within


def price_block(
    block: ModelBlock,
    price_n: FloatArray,
    price_t: FloatArray,
    evaluations: int = MAX_EVALUATIONS,
    deadline: float | None = None,
) -> Found | None:
    """Cheapest replica vector of *block* under free routing, with a valid lower bound:
    min Σ price_n·n + Σ_t price_t · W(n, L_t). None when no vector covers the peak load.
    The search routes at most *evaluations* complete vectors, none past *deadline* (a
    ``time.perf_counter()`` value: the bound stays valid, the vector is the best routed); it is
    deterministic, so a block priced again at the same prices reuses its result (a search cut
    by the deadline is not kept)."""
    if not block.candidates:
        return _nothing(block)
    key = ("price", price_n.tobytes(), price_t.tobytes(), evaluations)
    if key in block.memo:
        return block.memo[key]
    start = first_vector(block, price_n, price_t)
    found = None if start is None else _alone(block, price_n, price_t, start)
    if start is not None and found is None:
        found = cheapest(
            search_block(block),
            price_n,
            price_t,
            start,
            lambda n: load_watts(block, n),
            evaluations,
            deadline,
        )
    if found is not None and not found.complete:
        found = _with_lagrangian(block, price_n, price_t, found, deadline)
    if (
        deadline is None
        or time.perf_counter() <= deadline
        or (found is not None and found.complete)
    ):
        block.memo[key] = found
    return found


def _nothing(block: ModelBlock) -> Found | None:
    """The only vector of a block without candidates (an entry no GPU can serve): the empty
    one, at no cost, when the entry needs nothing (no load in any period, no minimum
    replicas); None otherwise (no vector covers its peak)."""
    if block.peak > 0.0 or block.demand.min_replicas > 0:
        return None
    return Found(0.0, np.zeros(0, dtype=np.int64), 0.0, True)


def _alone(
    block: ModelBlock, price_n: FloatArray, price_t: FloatArray, start: IntArray
) -> Found | None:
    """What :func:`~planner.solve.search.cheapest` finds from *start* when screening at its
    exact cost leaves no candidate, or only the one *start* deploys alone: the search's vectors
    are then *start* at most (one candidate's only covering count within its bound is the
    fewest that carry the peak), so *start* is optimal, proven. None otherwise (search), and
    always with failover.
    Most blocks of the single-GPU baselines are such blocks."""
    if block.failover_k:
        return None
    cost = float(start @ price_n + price_t @ load_watts(block, start))
    bounds = screen(search_block(block), price_n, price_t, cost)
    kept = np.flatnonzero(bounds)
    if kept.size > 1 or (kept.size == 1 and np.flatnonzero(start).tolist() != kept.tolist()):
        return None
    if kept.size == 1:  # the search's counts of it: none above start's, none below that covers
        j = int(kept[0])
        fewer = int(start[j]) - 1
        tol = load_slack(block.peak)
        if bounds[j] > start[j] or (
            fewer >= block.demand.min_replicas and fewer * block.cap[j] >= block.peak - tol
        ):
            return None
    return Found(cost, start, cost, True)


def _with_lagrangian(
    block: ModelBlock,
    price_n: FloatArray,
    price_t: FloatArray,
    found: Found,
    deadline: float | None = None,
) -> Found:
    """*found* with the larger of its bound and the Lagrangian one (:mod:`.lagrange`)."""
    need = block.peak - load_slack(block.peak)
    if block.failover_k and need > 0:
        need += block.failover_k * float(block.cap.min())
    sb = search_block(block)
    relaxed = relaxation(
        block.curve_x, block.curve_d, sb.knot_x, sb.knot_d, block.loads, price_n, price_t, found.n
    )
    lagrangian = lagrangian_bound(
        relaxed, block.cap, block.ub, need, block.demand.min_replicas, deadline
    )
    bound = max(found.bound, min(lagrangian, found.cost))
    return dataclasses.replace(found, bound=bound, complete=bound >= found.cost)


def single_costs(
    block: ModelBlock, price_n: FloatArray, price_t: FloatArray
) -> tuple[FloatArray, IntArray]:
    """Per candidate, the exact cost of serving the model alone with the fewest replicas that
    carry its peak (after failover losses) and its minimum replicas (inf where its bound
    does not allow them), and that count. The counts and their watts per period do not depend
    on the prices: computed once per block."""
    cached = block.memo.get("single")
    if cached is None:
        cached = block.memo["single"] = _singles(block)
    counts, watts, allowed = cached
    costs = np.where(allowed, counts * price_n + watts @ price_t, np.inf)
    return costs, counts


def _singles(block: ModelBlock) -> tuple[IntArray, FloatArray, npt.NDArray[np.bool_]]:
    k = block.failover_k
    # single_deployment_replicas of every candidate at once (the same arithmetic)
    counts = np.ceil(block.peak / block.cap).astype(np.int64)
    if block.peak > 0:  # at least one, also where peak / cap underflows to 0
        counts = np.maximum(counts, 1)
    if k:
        counts = np.where(counts > 0, counts + k * block.per_unit, counts)
    counts = np.maximum(counts, block.demand.min_replicas)
    allowed = counts <= block.ub
    counts = np.where(allowed, counts, 0)
    watts = np.zeros((len(block.candidates), block.loads.size))
    some = np.flatnonzero(counts > 0)
    if some.size:
        sb = search_block(block)
        n = counts[some][:, None].astype(np.float64)
        rate = block.loads[None, :] / n
        watts[some] = n * interp_rows(rate, sb.knot_x[some], sb.knot_d[some])
    return counts, watts, allowed


def fast_vector(
    block: ModelBlock, price_n: FloatArray, price_t: FloatArray, threshold: float
) -> IntArray | None:
    """A heuristic column below *threshold*: the merit-order DP over the counts screening
    (:func:`planner.solve.search.screen`) keeps within it. None when it finds none (exactly
    none when screening leaves no candidate)."""
    if not block.candidates:
        nothing = _nothing(block)
        return None if nothing is None or nothing.cost > threshold else nothing.n
    ub = screen(search_block(block), price_n, price_t, threshold)
    if not ub.any():
        return None
    merit = merit_replicas(dataclasses.replace(block, ub=ub), price_n, price_t)
    return None if merit is None else merit[1]


def first_vector(block: ModelBlock, price_n: FloatArray, price_t: FloatArray) -> IntArray | None:
    """A good first vector for the search: the merit-order DP's over the candidates that
    screening (:func:`planner.solve.search.screen`) keeps within the best single deployment's
    cost, or that single deployment when it is cheaper; None when no vector covers the peak."""
    costs, counts = single_costs(block, price_n, price_t)
    if not np.isfinite(costs).any():
        merit = merit_replicas(block, price_n, price_t)
        return None if merit is None else merit[1]
    best = int(np.argmin(costs))
    single = np.zeros(len(block.candidates), dtype=np.int64)
    single[best] = counts[best]
    ub = screen(search_block(block), price_n, price_t, float(costs[best]))
    if np.count_nonzero(ub) <= 1:  # only the single deployment can be within its own cost
        return single
    merit = merit_replicas(dataclasses.replace(block, ub=ub), price_n, price_t)
    if merit is None or not fits_stock(block, merit[1]):  # the single one holds its own stock
        return single
    exact = float(merit[1] @ price_n + price_t @ load_watts(block, merit[1]))
    return merit[1] if exact < float(costs[best]) else single


def best_replicas(
    block: ModelBlock, price_n: FloatArray, price_t: FloatArray
) -> tuple[float, IntArray] | None:
    """Cheapest replica vector of *block* under free routing: (cost, n), or None when no vector
    covers the peak load. The cost is the best found; :func:`price_block` also says whether
    it is proven and gives the lower bound."""
    found = price_block(block, price_n, price_t)
    return None if found is None else (found.cost, found.n)


def vectors_within(
    block: ModelBlock,
    price_n: FloatArray,
    price_t: FloatArray,
    threshold: float,
    max_vectors: int,
    deadline: float | None = None,
) -> list[IntArray] | None:
    """Every replica vector of *block* whose cost is at most *threshold* (None: too many, or
    the clock passed *deadline*)."""
    if not block.candidates:
        nothing = _nothing(block)
        return [] if nothing is None or nothing.cost > threshold else [nothing.n]
    return within(
        search_block(block),
        price_n,
        price_t,
        threshold,
        lambda n: load_watts(block, n),
        max_vectors,
        deadline,
    )


def round_column(
    block: ModelBlock,
    price_n: FloatArray,
    price_t: FloatArray,
    threshold: float,
    exact: bool,
    deadline: float | None = None,
) -> tuple[IntArray | None, float, float] | None:
    """The column of *block* in one pricing round of column generation: exact (the search's
    vector, its cost and a valid lower bound of the pricing problem; the search stops routing
    past *deadline*) or fast (the heuristic column below *threshold* and its exact cost; no
    bound, -inf). (None, inf, bound) when a round finds no column below the threshold; None
    when no vector covers the peak."""
    if exact:
        found = price_block(block, price_n, price_t, deadline=deadline)
        if found is None:
            return None
        return found.n, found.cost, found.bound
    n = fast_vector(block, price_n, price_t, threshold)
    if n is None:
        return None, float("inf"), -float("inf")
    return n, float(n @ price_n + price_t @ load_watts(block, n)), -float("inf")
