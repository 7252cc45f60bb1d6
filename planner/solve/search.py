"""Exact search over one model's replica vectors under free routing (pricing and enumeration).

The cost of replica vector ``n`` of one model block is

    rc(n) = Σ_k p_k·n_k + Σ_t v_t · W(n, L_t),

``p_k >= 0`` the price of one replica of candidate k, ``v_t >= 0`` the price of one watt above
idle in period t, ``W`` the exact free-routing watts (:mod:`planner.solve.routing`). Vectors
respect the block's bounds ``0 <= n_k <= ub_k``, cover the peak load and the minimum replicas.

The search is a breadth-first branch and bound over the candidates, one candidate's count per
level. A partial vector's lower bound is valid for every completion:

* the replicas chosen so far, ``Σ p_k·n_k``;
* the rest of the peak still to cover, ``R``, at the least price per req/s of capacity of the
  candidates left (``R · min p_i/cap_i``), or the minimum replicas still missing at the least
  price per replica, whichever is larger;
* energy, per period: ``W(n, L) >= min_k q_k(L; n_k)`` over the candidates that are in the
  vector (with their count) or may still be (count 1, the least), ``q`` the concave minorant
  of :mod:`planner.solve.minorant` (``max(n·D̂(L/n), s·L)``): each is concave through the origin
  and below what the deployment draws on ``[0, L]``, so their least is subadditive and no split
  of ``L`` over the deployments goes below it. A decided count tightens it (``q`` grows with
  ``n``); the pairs (state, count) are bounded together up to :data:`PAIR_CELLS` cells, beyond
  that with count 1 (still valid);
* the Lagrangian linear bound of :mod:`planner.solve.lagrange` (multipliers clearing the start
  vector's market): the bound of the counts chosen plus the least a completion can add
  (fractional cover of the peak left), when it is larger.

A partial vector that holds more GPUs of a type than its stock (two candidates, or a unit's
two pools, can draw on one inventory) is dropped: GPUs only add up, and a vector above a stock
is in no plan, so the search's optimum and bound are those over the vectors within the stocks.

Counts that no vector within the threshold can have are screened out first
(:mod:`planner.solve.screen`). A complete vector whose cost with the routing on the curves'
convex hulls (:mod:`planner.solve.hull`, a lower bound) is above the best found is not routed.

Partial vectors whose bound exceeds the threshold are dropped; the complete ones are evaluated
exactly in ascending bound order. :func:`cheapest` finds the least ``rc`` (threshold: the
exact cost of the merit-order DP's vector, a good first plan) with a proven lower bound;
:func:`within` returns every vector with ``rc`` at most a threshold (the reduced-cost column
enumeration of :mod:`planner.solve.colgen`). Above :data:`MAX_STATES` partial vectors at one
level, :func:`cheapest` keeps those with the least bounds and its lower bound becomes the least
bound of those it dropped (still valid, the search is then not complete), and likewise after
routing :data:`MAX_EVALUATIONS` complete vectors; :func:`within` gives up and says so.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from planner.solve.failover import merge_units
from planner.solve.hull import Hulls, hull_watts
from planner.solve.lagrange import Relaxation, cover_floors, floor_of, relaxation
from planner.solve.routing import LOAD_TOL, FloatArray, IntArray, load_slack
from planner.solve.screen import Pairs, screened_bounds

WattsOf = Callable[[IntArray], FloatArray]
"""Exact routing watts per period of a replica vector."""

MAX_STATES = 5_000
"""Most partial vectors kept at one level of the search."""
MAX_EVALUATIONS = 300
"""Most complete vectors :func:`cheapest` routes exactly (in ascending bound order)."""
PAIR_CELLS = 2_000_000
"""Most (state × count × period) cells of one level's count-dependent energy bound."""
HULL_CHUNK = 64
"""Rows whose hull bound :func:`cheapest` computes at once."""
RC_TOL = 1e-9
"""Relative slack on thresholds (vectors this close to a threshold are kept)."""
SEARCH_TOL = LOAD_TOL
"""Relative slack of the peak cover (a vector this close below the peak covers it)."""


@dataclass(frozen=True)
class SearchBlock:
    """What the search needs of one model block (numpy arrays in candidate order)."""

    cap: FloatArray
    ub: IntArray
    peak: float
    min_replicas: int
    loads: FloatArray
    least_w_per_rps: FloatArray
    """Per candidate, the least watts above idle per req/s on its curve."""
    least_w: FloatArray
    """Per candidate and period, ``q_k(L_t; 1)`` of the module docstring (K × T)."""
    pairs: Pairs
    """Every (candidate, count) with its minorant ``q_k(L_t; m)`` and the capacity it keeps
    after the failover losses (:mod:`planner.solve.screen`)."""
    knot_x: FloatArray
    """The curves' knots, K × J padded (:mod:`planner.solve.lagrange`)."""
    knot_d: FloatArray
    curve_x: tuple[FloatArray, ...] = ()
    """The curves' knots, per candidate (rates from 0)."""
    curve_d: tuple[FloatArray, ...] = ()
    """Watts above idle at the knots, per candidate."""
    failover_k: int = 0
    """Loss units the capacity must survive (:mod:`planner.solve.failover`; 0: none)."""
    per_unit: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Per candidate, replicas per loss unit (read when ``failover_k > 0``)."""
    hulls: Hulls | None = None
    """The candidates' convex-hull edges (:mod:`planner.solve.hull`; None: not used)."""
    stock_use: FloatArray = field(default_factory=lambda: np.zeros((0, 0)))
    """Per candidate, GPUs of each inventory the block alone could overdraw (K × S)."""
    stock: FloatArray = field(default_factory=lambda: np.zeros(0))
    """Those inventories (S; empty: none): a vector above one is in no plan, and none is kept."""
    screened: dict[tuple[float, bytes, bytes], IntArray] = field(default_factory=dict)
    """The last :func:`screen` asked of this block (pricing asks the same one two or three
    times: the first vector, the check without search and the search itself)."""


@dataclass(frozen=True)
class Found:
    """Outcome of :func:`cheapest`."""

    cost: float
    n: IntArray
    bound: float
    """A valid lower bound on the least cost (equal to *cost* when the search finished)."""
    complete: bool


def _suffix_min(values: FloatArray) -> FloatArray:
    """``out[j] = min(values[j:])``, with ``out[K] = inf``."""
    out = np.full(values.size + 1, np.inf)
    for j in range(values.size - 1, -1, -1):
        out[j] = min(out[j + 1], float(values[j]))
    return out


def _complete(
    sb: SearchBlock,
    price_n: FloatArray,
    price_t: FloatArray,
    threshold: float,
    beam: bool,
    relaxed: Relaxation | None = None,
) -> tuple[IntArray, FloatArray, float] | None:
    """Complete vectors with lower bound <= *threshold* (rows, bounds) and the least bound of
    the partial vectors dropped for size (inf when none). Over :data:`MAX_STATES` partial
    vectors at a level: with *beam* the lowest-bound ones are kept (the others' least bound is
    returned), else None.

    The counts no vector within the threshold can have are screened out first
    (:mod:`planner.solve.screen`); the candidates left are branched on in ascending least
    watts per req/s, so the energy term of the bound tightens as the efficient candidates are
    decided. With failover each state keeps its k largest loss units, and the peak still to
    cover is measured against the capacity left after losing them (it grows by at most the
    capacity added, :mod:`planner.solve.failover`). With *relaxed* (the linear Lagrangian bound
    of :mod:`planner.solve.lagrange`) a state's bound is also that bound's value of its counts
    plus the least its completion can add to it (fractional cover of the peak left), whichever
    is larger.
    """
    limit = threshold + RC_TOL * max(1.0, abs(threshold))
    bounds = screen(sb, price_n, price_t, threshold)
    active = np.flatnonzero(bounds > 0)
    order = active[np.argsort(sb.least_w_per_rps[active], kind="stable")]
    fail_k = sb.failover_k
    top = np.zeros((1, fail_k))
    unit = sb.per_unit[order] if fail_k else sb.per_unit
    cap, ub, q_k, p_n = sb.cap[order], bounds[order], sb.least_w[order], price_n[order]
    k_all = cap.size
    tol = load_slack(sb.peak)
    ratio = np.where(cap > 0, p_n / np.maximum(cap, 1e-300), np.inf)
    suf_ratio = _suffix_min(ratio)
    suf_price = _suffix_min(p_n)
    suf_q = np.full((k_all + 1, sb.loads.size), np.inf)
    for j in range(k_all - 1, -1, -1):
        suf_q[j] = np.minimum(suf_q[j + 1], q_k[j])
    lag_c = relaxed.cost[order] if relaxed is not None else np.zeros(k_all)
    floors = cover_floors(lag_c, cap, ub) if relaxed is not None else []
    lag = np.zeros(1)
    stock = sb.stock + 1e-9
    held = np.zeros((1, stock.size))
    rent = np.zeros(1)
    covered = np.zeros(1)
    count = np.zeros(1, dtype=np.int64)
    q_min = np.full((1, sb.loads.size), np.inf)
    bound = np.zeros(1)
    dropped = math.inf
    layers: list[tuple[IntArray, IntArray]] = []
    for j in range(k_all):
        m = np.arange(int(ub[j]) + 1, dtype=np.int64)
        q_j = sb.pairs.of(int(order[j]), int(ub[j]))
        energy = _child_energy(np.minimum(q_min, suf_q[j + 1]), q_j, price_t)
        parent = np.repeat(np.arange(rent.size), m.size)
        mm = np.tile(m, rent.size)
        rent = rent[parent] + mm * p_n[j]
        covered = covered[parent] + mm * cap[j]
        count = count[parent] + mm
        if fail_k:
            top = merge_units(top[parent], mm, float(cap[j]), int(unit[j]), fail_k)
            survive = covered - top.sum(axis=1)
        else:
            survive = covered
        left = np.maximum(sb.peak - tol - survive, 0.0)
        missing = np.maximum(sb.min_replicas - count, 0)
        with np.errstate(invalid="ignore"):  # 0 · inf where nothing is left to cover
            rest = np.maximum(
                np.where(left > 0, left * suf_ratio[j + 1], 0.0),
                np.where(missing > 0, missing * suf_price[j + 1], 0.0),
            )
        bound = rent + rest + energy
        if stock.size:  # GPUs only add up: a state above an inventory has no completion
            held = held[parent] + mm[:, None] * sb.stock_use[order[j]]
            bound = np.where((held <= stock).all(axis=1), bound, np.inf)
        if relaxed is not None:
            lag = lag[parent] + mm * lag_c[j]
            bound = np.maximum(bound, relaxed.constant + lag + floor_of(floors[j + 1], left))
        if j == k_all - 1:
            ok = (survive >= sb.peak - tol) & (count >= sb.min_replicas) & (bound <= limit)
        else:
            ok = np.isfinite(bound) & (bound <= limit)
        keep = np.flatnonzero(ok)
        if keep.size > MAX_STATES:
            if not beam:
                return None
            part = np.argpartition(bound[keep], MAX_STATES)
            dropped = min(dropped, float(bound[keep[part[MAX_STATES:]]].min()))
            keep = np.sort(keep[part[:MAX_STATES]])
        layers.append((parent[keep], mm[keep]))
        q_min = np.minimum(q_min[parent[keep]], q_j[mm[keep]])
        rent, covered, count, bound = rent[keep], covered[keep], count[keep], bound[keep]
        if relaxed is not None:
            lag = lag[keep]
        if fail_k:
            top = top[keep]
        if stock.size:
            held = held[keep]
    if k_all == 0:  # every candidate screened out: no vector within the threshold
        return np.zeros((0, sb.cap.size), dtype=np.int64), np.zeros(0), dropped
    rows = np.zeros((rent.size, sb.cap.size), dtype=np.int64)
    index = np.arange(rent.size)
    for j in range(k_all - 1, -1, -1):
        parents, counts = layers[j]
        rows[:, order[j]] = counts[index]
        index = parents[index]
    return rows, bound, dropped


def screen(sb: SearchBlock, price_n: FloatArray, price_t: FloatArray, threshold: float) -> IntArray:
    """Replica bounds no vector of cost <= *threshold* exceeds (:mod:`planner.solve.screen`)."""
    key = (threshold, price_n.tobytes(), price_t.tobytes())
    found = sb.screened.get(key)
    if found is None:
        limit = threshold + RC_TOL * max(1.0, abs(threshold))
        found = screened_bounds(price_n, price_t, sb.cap, sb.pairs, sb.peak, sb.min_replicas, limit)
        found.flags.writeable = False
        sb.screened.clear()
        sb.screened[key] = found
    return found


def _child_energy(low: FloatArray, q_j: FloatArray, price_t: FloatArray) -> FloatArray:
    """Energy bound of every child (parent-major, count-minor): the least of its parent's
    minorants and those still to come (*low*, P × T) and its own count's (*q_j*, M × T),
    priced per period; count 1 for every count when the pairs would exceed
    :data:`PAIR_CELLS` (a valid, weaker bound)."""
    p_all, m_all = low.shape[0], q_j.shape[0]
    if p_all * m_all * low.shape[1] <= PAIR_CELLS:
        both = np.minimum(low[:, None, :], q_j[None, :, :])
        priced: FloatArray = np.where(np.isfinite(both), both, 0.0) @ price_t
        return priced.ravel()
    out = np.empty((p_all, m_all))
    out[:, 0] = np.where(np.isfinite(low), low, 0.0) @ price_t
    if m_all > 1:
        some = np.minimum(low, q_j[1])
        out[:, 1:] = (np.where(np.isfinite(some), some, 0.0) @ price_t)[:, None]
    flat: FloatArray = out.ravel()
    return flat


def _exact_cost(n: IntArray, price_n: FloatArray, price_t: FloatArray, watts: FloatArray) -> float:
    return float(n @ price_n + price_t @ watts)


def cheapest(
    sb: SearchBlock,
    price_n: FloatArray,
    price_t: FloatArray,
    start: IntArray,
    watts_of: WattsOf,
    evaluations: int = MAX_EVALUATIONS,
    deadline: float | None = None,
) -> Found:
    """The least-cost vector, starting from the feasible vector *start*; *watts_of(n)* gives
    the exact routing watts per period of vector n; at most *evaluations* vectors are routed,
    and none once ``time.perf_counter()`` is past *deadline* (a time limit: the vectors left
    are bounded as when the evaluations run out, so the bound stays valid).
    A vector whose hull bound (:mod:`planner.solve.hull`) is above the best cost found is
    not routed (nor counted): it cannot be cheaper."""
    get = watts_of
    best_n = start
    best = _exact_cost(start, price_n, price_t, get(start))
    if best <= 0.0 and (price_n >= 0.0).all() and (price_t >= 0.0).all():
        # no vector costs less than 0 at non-negative prices (an objective every plan ties at
        # zero, e.g. carbon on a zero-carbon grid): the start is proven, and routing the other
        # tied vectors, some with hundreds of deployments, would only repeat the tie
        return Found(best, best_n, best, True)
    active = np.flatnonzero(screen(sb, price_n, price_t, best))  # the search's candidates
    relaxed = relaxation(
        sb.curve_x, sb.curve_d, sb.knot_x, sb.knot_d, sb.loads, price_n, price_t, start, active
    )
    found = _complete(sb, price_n, price_t, best, beam=True, relaxed=relaxed)
    assert found is not None
    rows, bounds, dropped = found
    order = np.argsort(bounds, kind="stable")
    floors = _HullFloors(sb, rows, order, price_n, price_t)
    routed = 0
    for at, i in enumerate(order):
        slack = RC_TOL * max(1.0, abs(best))
        if bounds[i] > best + slack:
            break
        if floors.above(at, best + slack):
            continue
        out_of_time = deadline is not None and time.perf_counter() > deadline
        if routed >= evaluations or out_of_time:  # the vectors left have at least this bound
            dropped = min(dropped, float(bounds[i]))
            break
        routed += 1
        n = rows[i]
        cost = _exact_cost(n, price_n, price_t, get(n))
        if cost < best - 1e-12 * max(1.0, abs(best)):
            best, best_n = cost, n
    return Found(best, best_n, min(best, dropped), dropped >= best)


class _HullFloors:
    """The hull costs (:mod:`planner.solve.hull`) of *rows* taken in *order*, computed
    :data:`HULL_CHUNK` rows at a time as they are asked (most searches stop early)."""

    def __init__(
        self,
        sb: SearchBlock,
        rows: IntArray,
        order: IntArray,
        price_n: FloatArray,
        price_t: FloatArray,
    ) -> None:
        self.sb, self.rows, self.order = sb, rows, order
        self.price_n, self.price_t = price_n, price_t
        self.usable = sb.hulls is not None and bool((price_t >= 0).all())
        self.value = np.zeros(0)

    def above(self, at: int, limit: float) -> bool:
        """True when row *at*'s hull cost exceeds *limit* (its exact cost is at least that)."""
        if not self.usable:
            return False
        if at >= self.value.size:
            assert self.sb.hulls is not None
            rows = self.rows[self.order[self.value.size : at + HULL_CHUNK]]
            watts = hull_watts(self.sb.hulls, rows, self.sb.loads)
            self.value = np.concatenate([self.value, rows @ self.price_n + watts @ self.price_t])
        return bool(self.value[at] > limit)


def within(
    sb: SearchBlock,
    price_n: FloatArray,
    price_t: FloatArray,
    threshold: float,
    watts_of: WattsOf,
    max_vectors: int,
    deadline: float | None = None,
) -> list[IntArray] | None:
    """Every vector with exact cost <= *threshold*; None when there are too many to check or
    the clock passes *deadline* (each is routed exactly)."""
    get = watts_of
    found = _complete(sb, price_n, price_t, threshold, beam=False)
    if found is None or found[0].shape[0] > max_vectors:
        return None
    rows, bounds, _ = found
    limit = threshold + RC_TOL * max(1.0, abs(threshold))
    out = []
    for i in np.argsort(bounds, kind="stable"):
        n = rows[i]
        if deadline is not None and time.perf_counter() > deadline:
            return None
        if _exact_cost(n, price_n, price_t, get(n)) <= limit:
            out.append(n)
    return out
