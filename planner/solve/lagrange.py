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
its replicas, each running where ``μ·r − D(r)`` is largest (a vertex of the curve's lower
convex hull), offer the period's load (:func:`clearing_prices`). The same linear bound, with
the least a completion can add to it, bounds the search's partial vectors
(:func:`cover_floors`).
Near full load the bound is close to exact (it convexifies the curves but keeps the replicas
integer); it is used with the search's own bound, whichever is larger.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


#: Most (state, count) pairs one step of :func:`_least_cover` may expand; above, or past its
#: deadline, it gives up and the bound is unknown (-inf: still a valid lower bound). A
#: 5,000 req/s disaggregated entry ran its Pareto programme for minutes past a 5 s limit.
MAX_COVER_STATES = 4_000_000


def _least_cover(
    cost: FloatArray,
    cap: FloatArray,
    ub: IntArray,
    need: float,
    min_replicas: int,
    deadline: float | None = None,
) -> float:
    """Least ``Σ cost·n`` over integer ``0 <= n <= ub`` with ``Σ cap·n >= need`` and
    ``Σ n >= min_replicas`` (inf when none); exact, or -inf when it gives up (too many states,
    or the clock past *deadline*)."""
    take = cost <= 0
    base = float(cost[take] @ ub[take])
    need -= float(cap[take] @ ub[take])
    rmin = max(0, min_replicas - int(ub[take].sum()))
    covered, count, total = np.zeros(1), np.zeros(1, dtype=np.int64), np.zeros(1)
    for k in np.flatnonzero(~take):
        m = np.arange(int(ub[k]) + 1)
        late = deadline is not None and time.perf_counter() > deadline
        if late or covered.size * m.size > MAX_COVER_STATES:
            return -np.inf
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


@dataclass(frozen=True)
class Relaxation:
    """The linear bound of the module docstring: every vector costs at least
    ``constant + n·cost``."""

    cost: FloatArray
    constant: float


def lower_hull(x: FloatArray, d: FloatArray) -> tuple[list[float], list[float]]:
    """Vertices of the lower convex hull of the knots (x ascending): where ``μ·r − D(r)`` is
    largest for some ``μ``."""
    hx: list[float] = []
    hd: list[float] = []
    for xi, di in zip(x.tolist(), d.tolist(), strict=True):
        while len(hx) >= 2 and (hd[-1] - hd[-2]) * (xi - hx[-2]) >= (di - hd[-2]) * (
            hx[-1] - hx[-2]
        ):
            hx.pop()
            hd.pop()
        if not hx or xi > hx[-1]:
            hx.append(xi)
            hd.append(di)
    return hx, hd


def clearing_prices(
    curve_x: tuple[FloatArray, ...],
    curve_d: tuple[FloatArray, ...],
    best: IntArray,
    loads: FloatArray,
) -> FloatArray:
    """Per period, the least ``μ`` at which vector *best* offers the load: its replicas each
    run at the hull vertex where ``μ·r − D(r)`` is largest, so the offer steps up by
    ``n·Δr`` at every hull edge's slope (the steepest edge's slope when even full load is
    short of the load)."""
    slopes: list[float] = []
    steps: list[float] = []
    for k in np.flatnonzero(best).tolist():
        hx, hd = lower_hull(curve_x[k], curve_d[k])
        for i in range(1, len(hx)):
            slopes.append((hd[i] - hd[i - 1]) / (hx[i] - hx[i - 1]))
            steps.append(float(best[k]) * (hx[i] - hx[i - 1]))
    if not slopes:
        return np.zeros(loads.size)
    order = np.argsort(slopes, kind="stable")
    edge = np.asarray(slopes)[order]
    offered = np.cumsum(np.asarray(steps)[order])
    at = np.searchsorted(offered, loads * (1 - 1e-12), side="left")
    out: FloatArray = np.where(loads > 0, edge[np.minimum(at, edge.size - 1)], 0.0)
    return out


def relaxation(
    curve_x: tuple[FloatArray, ...],
    curve_d: tuple[FloatArray, ...],
    knot_x: FloatArray,
    knot_d: FloatArray,
    loads: FloatArray,
    price_n: FloatArray,
    price_t: FloatArray,
    best: IntArray,
    rows: IntArray | None = None,
) -> Relaxation | None:
    """The bound's coefficients with multipliers clearing *best*'s market (*knot_x*/*knot_d*:
    the curves' knots K × J, padded with the last knot). None when the prices do not allow
    it (a negative watt price) or *best* is empty. *rows*: only these candidates' coefficients
    are wanted (the others' are left at their replica price); the product keeps its K × T
    shape, so theirs are the same to the last bit."""
    if not best.any() or (price_t < 0).any():
        return None
    mu = clearing_prices(curve_x, curve_d, best, loads)
    if rows is None:
        g = (mu[None, :, None] * knot_x[:, None, :] - knot_d[:, None, :]).max(axis=2)  # K × T
    else:
        g = np.zeros((knot_x.shape[0], loads.size))
        g[rows] = (mu[None, :, None] * knot_x[rows][:, None, :] - knot_d[rows][:, None, :]).max(
            axis=2
        )
    return Relaxation(price_n - g @ price_t, float(price_t @ (mu * loads)))


def cover_floors(
    cost: FloatArray, cap: FloatArray, ub: IntArray
) -> list[tuple[float, float, FloatArray, FloatArray]]:
    """Per suffix ``j..K-1`` of the candidates (and the empty one), the least of ``Σ cost·m``
    over fractional ``0 <= m <= ub`` covering a capacity R, as (cost and capacity of the
    counts with ``cost <= 0``, taken whole; capacity and cost breakpoints of the rest by
    ascending cost per req/s): ``floor(R) = c0 + interp(max(R − r0, 0), caps, costs)``,
    infinite beyond the last capacity."""
    out = []
    for j in range(cost.size + 1):
        c, q, u = cost[j:], cap[j:], ub[j:].astype(np.float64)
        neg = c <= 0
        pos = np.flatnonzero(~neg)
        pos = pos[np.argsort(c[pos] / q[pos], kind="stable")]
        caps = np.concatenate([[0.0], np.cumsum(q[pos] * u[pos])])
        costs = np.concatenate([[0.0], np.cumsum(c[pos] * u[pos])])
        out.append((float(c[neg] @ u[neg]), float(q[neg] @ u[neg]), caps, costs))
    return out


def floor_of(floor: tuple[float, float, FloatArray, FloatArray], left: FloatArray) -> FloatArray:
    """The least cost of covering capacity *left* (per state) with one suffix's counts."""
    base, free, caps, costs = floor
    rest = np.maximum(left - free, 0.0)
    value = base + np.interp(rest, caps, costs)
    out: FloatArray = np.where(rest > caps[-1] * (1 + 1e-12) + 1e-12, np.inf, value)
    return out


def lagrangian_bound(
    relaxed: Relaxation | None,
    cap: FloatArray,
    ub: IntArray,
    need: float,
    min_replicas: int,
    deadline: float | None = None,
) -> float:
    """The least of *relaxed*'s linear bound over integer vectors within *ub* with capacity at
    least *need* and at least *min_replicas* replicas: a valid lower bound on the cheapest
    vector the search admits (-inf without a relaxation, or when the exact least is given up:
    :data:`MAX_COVER_STATES`, *deadline*)."""
    if relaxed is None:
        return -np.inf
    return relaxed.constant + _least_cover(relaxed.cost, cap, ub, need, min_replicas, deadline)
