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
* energy, per period: ``W(n, L) >= min_k q_k(L)`` over the candidates that are or may still be
  in the vector, with ``q_k(L) = D_k(L)`` when ``D_k`` is concave on ``[0, L]`` (below its first
  convex kink) and ``q_k(L) = s_k·L`` otherwise, ``s_k`` the least watts per req/s above idle on
  the curve (least at a knot of a piecewise-linear curve through the origin). Valid because
  every ``q_k`` is a concave minorant on ``[0, L]`` of what ``k`` draws with any number of
  replicas (a concave curve through the origin is subadditive, so ``j·D(x/j) >= D(x)``), and
  the least of concave functions through the origin is subadditive too: splitting ``L`` over
  several deployments never goes below it (:func:`least_w_by_period`).

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
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from planner.solve.failover import merge_units
from planner.solve.routing import FloatArray, IntArray

WattsOf = Callable[[IntArray], FloatArray]
"""Exact routing watts per period of a replica vector."""

MAX_STATES = 5_000
"""Most partial vectors kept at one level of the search."""
MAX_EVALUATIONS = 300
"""Most complete vectors :func:`cheapest` routes exactly (in ascending bound order)."""
RC_TOL = 1e-9
"""Relative slack on thresholds (vectors this close to a threshold are kept)."""


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
    """Per candidate and period, ``q_k(L_t)`` of the module docstring (K × T)."""
    failover_k: int = 0
    """Loss units the capacity must survive (:mod:`planner.solve.failover`; 0: none)."""
    per_unit: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Per candidate, replicas per loss unit (read when ``failover_k > 0``)."""


@dataclass(frozen=True)
class Found:
    """Outcome of :func:`cheapest`."""

    cost: float
    n: IntArray
    bound: float
    """A valid lower bound on the least cost (equal to *cost* when the search finished)."""
    complete: bool


def least_w_per_rps(curve_x: FloatArray, curve_d: FloatArray) -> float:
    """Least ``D(r)/r`` over the knots with ``r > 0`` (the least over the whole curve)."""
    mask = curve_x > 0
    if not mask.any():
        return 0.0
    return float(np.min(curve_d[mask] / curve_x[mask]))


def least_w_by_period(curve_x: FloatArray, curve_d: FloatArray, loads: FloatArray) -> FloatArray:
    """``q(L_t)`` per period for one candidate (module docstring; knots from rate 0)."""
    s_least = least_w_per_rps(curve_x, curve_d)
    concave_to = float(curve_x[-1])
    if curve_x.size > 2:
        dx = np.diff(curve_x)
        slope = np.divide(np.diff(curve_d), dx, out=np.zeros(dx.size), where=dx > 0)
        rise = np.flatnonzero(slope[1:] - slope[:-1] > 1e-12 * np.maximum(1.0, np.abs(slope[:-1])))
        if rise.size:
            concave_to = float(curve_x[1 + rise[0]])
    out: FloatArray = np.where(
        loads <= concave_to, np.interp(loads, curve_x, curve_d), s_least * loads
    )
    return np.maximum(out, s_least * loads)


def _suffix_min(values: FloatArray) -> FloatArray:
    """``out[j] = min(values[j:])``, with ``out[K] = inf``."""
    out = np.full(values.size + 1, np.inf)
    for j in range(values.size - 1, -1, -1):
        out[j] = min(out[j + 1], float(values[j]))
    return out


def _complete(
    sb: SearchBlock, price_n: FloatArray, price_t: FloatArray, threshold: float, beam: bool
) -> tuple[IntArray, FloatArray, float] | None:
    """Complete vectors with lower bound <= *threshold* (rows, bounds) and the least bound of
    the partial vectors dropped for size (inf when none). Over :data:`MAX_STATES` partial
    vectors at a level: with *beam* the lowest-bound ones are kept (the others' least bound is
    returned), else None.

    Candidates are branched on in ascending least watts per req/s, so the energy term of the
    bound tightens as the efficient candidates are decided. With failover each state keeps its
    k largest loss units, and the peak still to cover is measured against the capacity left
    after losing them (it grows by at most the capacity added, :mod:`planner.solve.failover`).
    """
    order = np.argsort(sb.least_w_per_rps, kind="stable")
    fail_k = sb.failover_k
    top = np.zeros((1, fail_k))
    unit = sb.per_unit[order] if fail_k else sb.per_unit
    cap, ub, q_k, p_n = sb.cap[order], sb.ub[order], sb.least_w[order], price_n[order]
    k_all = cap.size
    tol = 1e-9 * max(1.0, sb.peak)
    ratio = np.where(cap > 0, p_n / np.maximum(cap, 1e-300), np.inf)
    suf_ratio = _suffix_min(ratio)
    suf_price = _suffix_min(p_n)
    suf_q = np.full((k_all + 1, sb.loads.size), np.inf)
    for j in range(k_all - 1, -1, -1):
        suf_q[j] = np.minimum(suf_q[j + 1], q_k[j])
    rent = np.zeros(1)
    covered = np.zeros(1)
    count = np.zeros(1, dtype=np.int64)
    q_min = np.full((1, sb.loads.size), np.inf)
    limit = threshold + RC_TOL * max(1.0, abs(threshold))
    bound = np.zeros(1)
    dropped = math.inf
    layers: list[tuple[IntArray, IntArray]] = []
    for j in range(k_all):
        m = np.arange(int(ub[j]) + 1, dtype=np.int64)
        # the energy bound of a child depends on its parent and on m > 0 only
        e_none = np.where(np.isfinite(low := np.minimum(q_min, suf_q[j + 1])), low, 0.0) @ price_t
        with_j = np.minimum(q_min, q_k[j])
        e_some = np.where(np.isfinite(low := np.minimum(with_j, suf_q[j + 1])), low, 0.0) @ price_t
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
        bound = rent + rest + np.where(mm > 0, e_some[parent], e_none[parent])
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
        q_min = np.where((mm[keep] > 0)[:, None], with_j[parent[keep]], q_min[parent[keep]])
        rent, covered, count, bound = rent[keep], covered[keep], count[keep], bound[keep]
        if fail_k:
            top = top[keep]
    rows = np.zeros((rent.size, k_all), dtype=np.int64)
    index = np.arange(rent.size)
    for j in range(k_all - 1, -1, -1):
        parents, counts = layers[j]
        rows[:, order[j]] = counts[index]
        index = parents[index]
    return rows, bound, dropped


def _exact_cost(n: IntArray, price_n: FloatArray, price_t: FloatArray, watts: FloatArray) -> float:
    return float(n @ price_n + price_t @ watts)


def cheapest(
    sb: SearchBlock,
    price_n: FloatArray,
    price_t: FloatArray,
    start: IntArray,
    watts_of: WattsOf,
) -> Found:
    """The least-cost vector, starting from the feasible vector *start*; *watts_of(n)* gives
    the exact routing watts per period of vector n."""
    get = watts_of
    best_n = start
    best = _exact_cost(start, price_n, price_t, get(start))
    found = _complete(sb, price_n, price_t, best, beam=True)
    assert found is not None
    rows, bounds, dropped = found
    for done, i in enumerate(np.argsort(bounds, kind="stable")):
        if bounds[i] > best + RC_TOL * max(1.0, abs(best)):
            break
        if done >= MAX_EVALUATIONS:  # the vectors left have at least this bound
            dropped = min(dropped, float(bounds[i]))
            break
        n = rows[i]
        cost = _exact_cost(n, price_n, price_t, get(n))
        if cost < best - 1e-12 * max(1.0, abs(best)):
            best, best_n = cost, n
    return Found(best, best_n, min(best, dropped), dropped >= best)


def within(
    sb: SearchBlock,
    price_n: FloatArray,
    price_t: FloatArray,
    threshold: float,
    watts_of: WattsOf,
    max_vectors: int,
) -> list[IntArray] | None:
    """Every vector with exact cost <= *threshold*; None when there are too many to check."""
    get = watts_of
    found = _complete(sb, price_n, price_t, threshold, beam=False)
    if found is None or found[0].shape[0] > max_vectors:
        return None
    rows, bounds, _ = found
    limit = threshold + RC_TOL * max(1.0, abs(threshold))
    out = []
    for i in np.argsort(bounds, kind="stable"):
        n = rows[i]
        if _exact_cost(n, price_n, price_t, get(n)) <= limit:
            out.append(n)
    return out
