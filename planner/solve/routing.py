"""Exact free routing of one model's load over its deployments, on the curves as they are.

For a replica vector ``n`` (replicas per candidate of one model) and a period's load ``L``, the
load may be split across the deployments in any proportion and is spread evenly over a
deployment's replicas. Deployment k serving ``x_k`` req/s draws ``f_k(x_k) = n_k·D_k(x_k/n_k)``
watts above idle, ``D_k`` the candidate's piecewise-linear power curve less idle (non-decreasing,
``D_k(0) = 0``, *not* assumed concave or convex). The routing solves

    W(n, L) = min Σ_k f_k(x_k)   s.t.   Σ_k x_k = L,   0 <= x_k <= n_k·cap_k.

Why the enumeration below is exact: split each ``f_k``'s domain at its *convex* kinks (where
the slope rises) into intervals on which ``f_k`` is concave, so there ``f_k`` is the least of
its linear pieces extended over the interval. Choosing for every deployment an interval and a
piece leaves a linear programme with one equality row and box constraints, whose value is at
least the true one and equal to it for the active pieces; such a programme has an optimal
vertex where at most one variable is strictly inside its interval. So some optimum puts every
deployment but one (the *free* one) at 0, at its capacity or at a convex kink (``n_k`` × a
knot rate, :func:`anchor_knots`). For each choice of the free deployment the others' anchor
combinations are enumerated with their summed load ``s`` and watts ``c``; the free deployment
takes ``L − s`` on its whole curve. Every ``f`` is non-decreasing, so a combination with no
more load and no fewer watts than another that still fits is never better (Pareto pruning,
per period).

Routing depends on the replica vector and the load only, never on prices: the power price,
the power-cap dual and the budget dual all multiply the same watts. :class:`RouteCache` keeps
each vector's routing for the whole solve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

LOAD_TOL = 1e-12
"""Relative load tolerance: a load within this fraction of a capacity counts as fitting (float
round-off of the routing arithmetic only; relative to the load itself, so a positive load never
fits in no capacity). Every capacity-covers-load test of the solve uses :func:`load_slack`."""
VECTOR_COMBOS = 4096
"""Breakpoint combinations of the non-free deployments enumerated at once for all periods;
above this the combinations are built deployment by deployment with Pareto pruning."""


def load_slack(load: float) -> float:
    """How far below *load* (req/s) a capacity may fall and still count as covering it."""
    return LOAD_TOL * abs(load)


@dataclass(frozen=True)
class Routing:
    """Exact routing of one replica vector: watts above idle and loads per period."""

    watts: FloatArray
    """Watts above idle of the whole vector, per period (T)."""
    loads: FloatArray
    """Requests/s per candidate and period (K × T; zero rows where n = 0)."""


def anchor_knots(curve_x: FloatArray, curve_d: FloatArray) -> npt.NDArray[np.bool_]:
    """Knots where a non-free deployment may sit: the first, the last and every convex kink
    (slope after the knot above the slope before it)."""
    keep = np.zeros(curve_x.size, dtype=bool)
    keep[0] = keep[-1] = True
    if curve_x.size > 2:
        dx = np.diff(curve_x)
        slope = np.divide(np.diff(curve_d), dx, out=np.zeros(dx.size), where=dx > 0)
        rise = slope[1:] - slope[:-1]
        keep[1:-1] = rise > 1e-12 * np.maximum(1.0, np.abs(slope[:-1]))
    return keep


def _pareto(s: FloatArray, c: FloatArray) -> npt.NDArray[np.bool_]:
    """States no other state dominates (at least the load, at most the watts)."""
    order = np.lexsort((c, -s))
    best = np.minimum.accumulate(c[order])
    keep_sorted = np.ones(order.size, dtype=bool)
    keep_sorted[1:] = c[order][1:] < best[:-1] - 1e-12 * np.maximum(1.0, np.abs(best[:-1]))
    keep = np.zeros(order.size, dtype=bool)
    keep[order[keep_sorted]] = True
    return keep


def _combos_all(
    bx: list[FloatArray], bv: list[FloatArray], limit: float
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Every breakpoint combination up to *limit*: load sum, watts and its position in the full
    product of the knots (C order; :func:`numpy.unravel_index` with the knot counts gives each
    deployment's knot). The sums add the deployments in order, as one by one would: the same
    numbers, and (loads >= 0) the same combinations as filtering after each deployment."""
    s = np.zeros(1)
    c = np.zeros(1)
    for x, v in zip(bx, bv, strict=True):
        s = (s[:, None] + x[None, :]).ravel()
        c = (c[:, None] + v[None, :]).ravel()
    pos = np.flatnonzero(s <= limit)
    return s[pos], c[pos], pos


def _combos_pruned(
    bx: list[FloatArray], bv: list[FloatArray], limit: float
) -> tuple[FloatArray, FloatArray, IntArray]:
    """The Pareto frontier of breakpoint combinations with load sum at most *limit*."""
    s = np.zeros(1)
    c = np.zeros(1)
    idx = np.zeros((1, 0), dtype=np.int64)
    for x, v in zip(bx, bv, strict=True):
        s2 = (s[:, None] + x[None, :]).ravel()
        c2 = (c[:, None] + v[None, :]).ravel()
        rows = np.repeat(np.arange(s.size), x.size)
        cols = np.tile(np.arange(x.size), s.size)
        idx2 = np.concatenate([idx[rows], cols[:, None]], axis=1)
        fit = s2 <= limit
        s2, c2, idx2 = s2[fit], c2[fit], idx2[fit]
        keep = _pareto(s2, c2)
        s, c, idx = s2[keep], c2[keep], idx2[keep]
    return s, c, idx


def route(
    curve_x: tuple[FloatArray, ...],
    curve_d: tuple[FloatArray, ...],
    cap: FloatArray,
    n: IntArray,
    loads: FloatArray,
    anchors: list[tuple[FloatArray, FloatArray] | None] | None = None,
) -> Routing:
    """Exact free routing of *loads* (T) over replica vector *n* (module docstring).

    *curve_x*/*curve_d*: per candidate the knot rates (per replica, from 0) and watts above idle
    there. *anchors*: per candidate its :func:`anchor_knots` rates and watts, filled in where
    None (a cache across the vectors of one block). Raises ValueError when the vector's
    capacity is below a period's load.
    """
    k_all = len(n)
    periods = loads.size
    out_loads = np.zeros((k_all, periods))
    support = np.flatnonzero(n > 0).tolist()
    total_cap = float(sum(n[k] * cap[k] for k in support))
    tol = load_slack(float(loads.max())) if periods else 0.0
    if periods and float(loads.max()) > total_cap + tol:
        raise ValueError(f"capacity {total_cap:g} req/s below the load {float(loads.max()):g}")
    if not support:
        return Routing(np.zeros(periods), out_loads)
    if len(support) == 1:
        k = support[0]
        x = np.minimum(loads, n[k] * cap[k])
        out_loads[k] = x
        return Routing(n[k] * np.interp(x / n[k], curve_x[k], curve_d[k]), out_loads)
    known: list[tuple[FloatArray, FloatArray] | None] = (
        anchors if anchors is not None else [None] * k_all
    )
    bx, bv = [], []
    for k in support:
        knots = known[k]
        if knots is None:
            mask = anchor_knots(curve_x[k], curve_d[k])
            knots = known[k] = (curve_x[k][mask], curve_d[k][mask])
        bx.append(n[k] * knots[0])
        bv.append(n[k] * knots[1])
    best_w = np.full(periods, np.inf)
    best_free = np.zeros(periods, dtype=np.int64)
    # per period, the knot of every deployment in the best combination (the free one: -1)
    best_knot = np.full((periods, len(support)), -1, dtype=np.int64)
    best_x_free = np.zeros(periods)
    for j, kj in enumerate(support):
        others = [i for i in range(len(support)) if i != j]
        ox, ov = [bx[i] for i in others], [bv[i] for i in others]
        size = math.prod(x.size for x in ox)  # Python ints: np.prod wrapped to 0 past 2**63
        top = n[kj] * cap[kj]
        if size <= VECTOR_COMBOS:
            s, c, pos = _combos_all(ox, ov, float(loads.max()) + tol)
            r = loads[None, :] - s[:, None]  # combos × periods
            ok = (r >= -tol) & (r <= top + tol)
            rr = np.clip(r, 0.0, top)
            val = c[:, None] + n[kj] * np.interp(rr / n[kj], curve_x[kj], curve_d[kj])
            val = np.where(ok, val, np.inf)
            arg = np.argmin(val, axis=0)
            vbest = val[arg, np.arange(periods)]
            better = np.flatnonzero(vbest < best_w)
            if better.size:
                best_w[better] = vbest[better]
                best_free[better] = j
                knots = np.unravel_index(pos[arg[better]], [x.size for x in ox])
                best_knot[better] = -1
                best_knot[better[:, None], np.asarray(others)[None, :]] = np.stack(knots, axis=1)
                best_x_free[better] = rr[arg[better], better]
            continue
        for t in range(periods):
            s, c, idx = _combos_pruned(ox, ov, float(loads[t]) + tol)
            r = loads[t] - s
            ok = (r >= -tol) & (r <= top + tol)
            if not ok.any():
                continue
            rr = np.clip(r[ok], 0.0, top)
            val = c[ok] + n[kj] * np.interp(rr / n[kj], curve_x[kj], curve_d[kj])
            a = int(np.argmin(val))
            if val[a] < best_w[t]:
                best_w[t] = float(val[a])
                best_free[t] = np.int64(j)
                best_knot[t] = -1
                best_knot[t, others] = idx[ok][a]
                best_x_free[t] = float(rr[a])
    if not np.isfinite(best_w).all():
        t = int(np.flatnonzero(~np.isfinite(best_w))[0])
        raise ValueError(f"no routing of {float(loads[t]):g} req/s found")  # pragma: no cover
    for i, k in enumerate(support):
        free = best_free == i
        out_loads[k, ~free] = bx[i][best_knot[~free, i]]
        out_loads[k, free] = best_x_free[free]
    out_loads = _fit_loads(out_loads, loads, n, cap)
    # watts recomputed from the loads (the accounting's own formula)
    watts = np.zeros(periods)
    for k in support:
        watts += n[k] * np.interp(out_loads[k] / n[k], curve_x[k], curve_d[k])
    return Routing(watts, out_loads)


def _fit_loads(
    out_loads: FloatArray, loads: FloatArray, n: IntArray, cap: FloatArray
) -> FloatArray:
    """Remove rounding residue: each period's loads sum to its load exactly (within capacity)."""
    diff = loads - out_loads.sum(axis=0)
    for t in np.flatnonzero(diff != 0.0):
        for k in np.argsort(-out_loads[:, t]):
            if n[k] <= 0:
                continue
            room_hi = n[k] * cap[k] - out_loads[k, t]
            new = out_loads[k, t] + diff[t]
            if new >= 0.0 and diff[t] <= room_hi + 1e-12:
                out_loads[k, t] = min(max(new, 0.0), n[k] * cap[k])
                break
    return out_loads


@dataclass
class RouteCache:
    """Routings of the replica vectors of one model block, computed once per vector."""

    curve_x: tuple[FloatArray, ...]
    curve_d: tuple[FloatArray, ...]
    cap: FloatArray
    loads: FloatArray
    table: dict[bytes, Routing] = field(default_factory=dict)
    anchors: list[tuple[FloatArray, FloatArray] | None] = field(default_factory=list)
    """Per candidate, its :func:`anchor_knots` rates and watts (None until a vector uses it)."""

    def __post_init__(self) -> None:
        if not self.anchors:
            self.anchors = [None] * len(self.curve_x)

    def get(self, n: IntArray) -> Routing:
        """The exact routing of *n* (cached)."""
        key = np.asarray(n, dtype=np.int64).tobytes()
        found = self.table.get(key)
        if found is None:
            found = route(
                self.curve_x, self.curve_d, self.cap, np.asarray(n), self.loads, self.anchors
            )
            self.table[key] = found
        return found

    def keep_only(self, n: IntArray) -> None:
        """Forget every routing but that of *n* (when no other vector will be asked for)."""
        key = np.asarray(n, dtype=np.int64).tobytes()
        kept = self.table.get(key)
        self.table = {} if kept is None else {key: kept}
