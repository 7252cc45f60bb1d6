"""A Lagrangian lower bound on one model's cheapest replica vector (when the search is cut).

For any multipliers ``μ_t`` (watts per req/s) and any routing, each deployment of ``n_k``
replicas serving ``x_k`` draws ``n_k·D_k(x_k/n_k) >= μ_t·x_k − n_k·g_k(μ_t)``, with
``g_k(μ) = max_{0<=r<=cap_k} (μ·r − D_k(r))`` (attained at a knot of the piecewise-linear
curve). Summed over deployments, ``W(n, L_t) >= μ_t·L_t − Σ_k n_k·g_k(μ_t)``, so with watt
prices ``v_t >= 0`` every vector costs at least

    Σ_t v_t·μ_t·L_t + Σ_k n_k·c_k,    c_k = p_k − Σ_t v_t·g_k(μ_t),

linear in ``n``: its least over the vectors the search admits (bounds ``0 <= n_k <= ub_k``,
capacity covering the peak, minimum replicas; with failover, capacity covering the peak plus k
of the smallest replicas, a relaxation) is a valid lower bound, found exactly by a Pareto
dynamic programme over (capacity, replicas, cost) — counts with ``c_k <= 0`` at their bounds.
The multipliers clear the market of the best vector found: ``μ_t`` is the least price at which
its replicas, each running where ``μ·r − D(r)`` is largest, offer the period's load.
Near full load the bound is close to exact (it convexifies the curves but keeps the replicas
integer); it is used with the search's own bound, whichever is larger.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BISECTIONS = 60
"""Bisection steps of each period's market-clearing multiplier."""


def _offer(
    curve_x: tuple[FloatArray, ...], curve_d: tuple[FloatArray, ...], mu: float
) -> FloatArray:
    """Per candidate, the rate (req/s per replica) maximising ``μ·r − D(r)``."""
    return np.asarray(
        [x[int(np.argmax(mu * x - d))] for x, d in zip(curve_x, curve_d, strict=True)]
    )


def clearing_prices(
    curve_x: tuple[FloatArray, ...],
    curve_d: tuple[FloatArray, ...],
    n: IntArray,
    loads: FloatArray,
) -> FloatArray:
    """Per period, the least ``μ`` at which vector *n* offers the load (module docstring)."""
    used = np.flatnonzero(n)
    xs = tuple(curve_x[k] for k in used)
    ds = tuple(curve_d[k] for k in used)
    top = max(
        (float(np.max(np.diff(d) / np.diff(x))) for x, d in zip(xs, ds, strict=True)), default=0.0
    )
    out = np.zeros(loads.size)
    for t, load in enumerate(loads):
        lo, hi = 0.0, 2.0 * top + 1.0
        for _ in range(BISECTIONS):
            mid = 0.5 * (lo + hi)
            if float(n[used] @ _offer(xs, ds, mid)) >= load:
                hi = mid
            else:
                lo = mid
        out[t] = hi
    return out


def _least_cover(
    cost: FloatArray, cap: FloatArray, ub: IntArray, need: float, min_replicas: int
) -> float:
    """Least ``Σ cost·n`` over integer ``0 <= n <= ub`` with ``Σ cap·n >= need`` and
    ``Σ n >= min_replicas`` (inf when none); exact."""
    take = cost <= 0
    base = float(cost[take] @ ub[take])
    need -= float(cap[take] @ ub[take])
    rmin = max(0, min_replicas - int(ub[take].sum()))
    covered, count, total = np.zeros(1), np.zeros(1, dtype=np.int64), np.zeros(1)
    for k in np.flatnonzero(~take):
        m = np.arange(int(ub[k]) + 1)
        parent = np.repeat(np.arange(covered.size), m.size)
        mm = np.tile(m, covered.size)
        cov = np.minimum(covered[parent] + mm * cap[k], max(need, 0.0))
        cnt = np.minimum(count[parent] + mm, rmin)
        tot = total[parent] + mm * cost[k]
        order = np.lexsort((tot, -cnt, -cov))
        cov, cnt, tot = cov[order], cnt[order], tot[order]
        keep = np.ones(cov.size, dtype=bool)
        for level in range(rmin + 1):  # Pareto per replica level: more cover and count, less cost
            masked = np.where(cnt >= level, tot, np.inf)
            before = np.concatenate(([np.inf], np.minimum.accumulate(masked)[:-1]))
            keep &= ~((cnt == level) & (tot >= before))
        covered, count, total = cov[keep], cnt[keep], tot[keep]
    done = (covered >= need) & (count >= rmin)
    return base + float(total[done].min()) if done.any() else float("inf")


def lagrangian_bound(
    curve_x: tuple[FloatArray, ...],
    curve_d: tuple[FloatArray, ...],
    cap: FloatArray,
    ub: IntArray,
    loads: FloatArray,
    need: float,
    min_replicas: int,
    price_n: FloatArray,
    price_t: FloatArray,
    best: IntArray,
) -> float:
    """The bound of the module docstring, multipliers from vector *best*; *need*: the capacity
    every admitted vector has at least (the peak less its tolerance, plus the failover
    relaxation)."""
    if not best.any() or (price_t < 0).any():
        return -np.inf
    mu = clearing_prices(curve_x, curve_d, best, loads)
    g = np.asarray(
        [[float(np.max(m * x - d)) for m in mu] for x, d in zip(curve_x, curve_d, strict=True)]
    )
    cost = price_n - g @ price_t
    return float(price_t @ (mu * loads)) + _least_cover(cost, cap, ub, need, min_replicas)
