"""A lower bound on a complete replica vector's routed watts: routing on the convex hulls.

Deployment k of ``n_k`` replicas serving ``x_k`` req/s draws ``n_k·D_k(x_k/n_k)`` watts above
idle (:mod:`planner.solve.routing`), ``D_k`` its power curve less idle on ``[0, cap_k]``. Its
lower convex hull ``H_k <= D_k`` (the greatest convex function below it) gives the relaxation

    W(n, L) >= min Σ_k n_k·H_k(x_k/n_k)   s.t.   Σ_k x_k = L,   0 <= x_k <= n_k·cap_k,

a separable convex programme solved exactly by filling the hull edges of every deployment in
ascending slope (edge e of candidate k: slope ``σ_e``, width ``n_k·Δr_e``). The edges' order
does not depend on the vector, so the bound of many vectors is one product of arrays
(:func:`hull_watts`). It is the Lagrangian bound of :mod:`planner.solve.lagrange` at the
multipliers best for each vector and period, so it is at least as large as that bound at the
same vector; and it is exact when the curves are convex. :func:`planner.solve.search.cheapest`
routes only the vectors it cannot prove worse than the best found (the prices are >= 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from planner.solve.lagrange import lower_hull

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def hull_edges(x: FloatArray, d: FloatArray, cap: float) -> tuple[FloatArray, FloatArray]:
    """Slopes and widths (per replica, req/s) of the lower convex hull of the curve with knots
    *x* (from 0, ascending) and watts *d* on ``[0, cap]`` (the curve is flat after its last
    knot, as :func:`numpy.interp` extends it)."""
    inside = x < cap
    px = np.concatenate([x[inside], [cap]])
    pd = np.concatenate([d[inside], [float(np.interp(cap, x, d))]])
    hx, hd = lower_hull(px, pd)
    ax, ad = np.asarray(hx), np.asarray(hd)
    width = np.diff(ax)
    return np.diff(ad) / width, width


@dataclass
class Hulls:
    """The hull edges of one block's candidates, built per candidate when first asked."""

    curve_x: tuple[FloatArray, ...]
    curve_d: tuple[FloatArray, ...]
    cap: FloatArray
    edges: dict[int, tuple[FloatArray, FloatArray]] = field(default_factory=dict)

    def of(self, k: int) -> tuple[FloatArray, FloatArray]:
        """Slopes and widths of candidate *k*'s hull edges."""
        found = self.edges.get(k)
        if found is None:
            found = self.edges[k] = hull_edges(self.curve_x[k], self.curve_d[k], float(self.cap[k]))
        return found


def hull_watts(hulls: Hulls, rows: IntArray, loads: FloatArray) -> FloatArray:
    """Per vector (*rows*, R × K) and period, the least watts of routing *loads* on the
    deployments' convex hulls (R × T): a lower bound on the exact routed watts."""
    used = np.flatnonzero(rows.any(axis=0))
    ks, slopes, widths = [], [], []
    for k in used.tolist():
        s, w = hulls.of(k)
        ks.append(np.full(s.size, k, dtype=np.int64))
        slopes.append(s)
        widths.append(w)
    if not ks:
        return np.zeros((rows.shape[0], loads.size))
    edge_k = np.concatenate(ks)
    slope = np.concatenate(slopes)
    order = np.argsort(slope, kind="stable")
    edge_k, slope, width = edge_k[order], slope[order], np.concatenate(widths)[order]
    w = rows[:, edge_k] * width[None, :]  # R × E
    before = np.cumsum(w, axis=1) - w
    fill = np.clip(loads[None, None, :] - before[:, :, None], 0.0, w[:, :, None])  # R × E × T
    watts: FloatArray = np.einsum("ret,e->rt", fill, slope)
    return watts
