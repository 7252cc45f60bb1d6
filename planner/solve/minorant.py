"""Concave minorants of a deployment's watts: the energy lower bound of the replica search.

``D`` is a candidate's power curve above idle per replica (piecewise linear through the origin,
non-decreasing, neither concave nor convex); ``n`` replicas serving ``x`` req/s together draw
``f(x) = n·D(x/n)``. For one period's load ``L`` the bound of :mod:`planner.solve.search` needs,
per candidate, a function ``q`` that is concave on ``[0, L]``, passes through the origin and
lies below ``f`` there: the least of such functions over the deployments of a vector is
subadditive, so no split of ``L`` over them draws less than its value at ``L``. Two are used,
whichever is larger at ``L`` (each is one on all of ``[0, L]``):

* ``n·D̂(x/n)``, ``D̂`` the concave minorant of ``D``: the curve itself up to its first convex
  kink ``c`` (slope rising), then the line from ``(c, D(c))`` with slope
  ``min(slope before c, least slope after c)`` — below ``D`` after ``c`` (``D`` grows at
  least that fast there) and concave (its slope never rises). Being concave and piecewise
  linear, ``D̂`` is the least of its pieces, each extended to a whole line ``a + b·y``, so
  ``n·D̂(L/n) = min over pieces of (n·a + b·L)``;
* ``s·x``, ``s`` the least ``D(r)/r`` over the knots (the least watts per req/s anywhere).

So ``q(L; n) = max(n·D̂(L/n), s·L)``. It grows with ``n`` (``D̂(y)/y`` falls as ``y`` grows,
``D̂`` being concave through the origin), so ``q(L; 1)`` bounds a candidate whose count is not
decided yet, and a decided count ``n`` gives the tighter ``q(L; n)``. Everything is computed for
all candidates of a block at once (curves padded to the same number of knots).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
RISE_RTOL = 1e-12
"""A slope this much (relative) above the one before it is a convex kink."""


@dataclass(frozen=True)
class Minorants:
    """The minorants of a block's candidates: pieces ``a + b·y`` of each ``D̂`` (K × J, unused
    pieces ``a = inf``) and each ``s``."""

    intercept: FloatArray
    slope: FloatArray
    least_w_per_rps: FloatArray
    knot_x: FloatArray
    """The curves' knots (K × J, each padded with its last knot)."""
    knot_d: FloatArray

    def watts(self, k: IntArray, n: FloatArray, loads: FloatArray) -> FloatArray:
        """``q(L_t; n_i)`` of candidate ``k_i`` for every pair i and period t (pairs × T)."""
        a, b = self.intercept[k], self.slope[k]  # pairs × J
        lines = n[:, None, None] * a[:, None, :] + loads[None, :, None] * b[:, None, :]
        hat = lines.min(axis=2)
        out: FloatArray = np.maximum(hat, self.least_w_per_rps[k][:, None] * loads[None, :])
        return out


def minorants(curve_x: tuple[FloatArray, ...], curve_d: tuple[FloatArray, ...]) -> Minorants:
    """The :class:`Minorants` of the curves with knots *curve_x* (from 0) and *curve_d*."""
    k_all = len(curve_x)
    most = max((x.size for x in curve_x), default=2)
    xs = np.zeros((k_all, most))
    ds = np.zeros((k_all, most))
    for k, (x, d) in enumerate(zip(curve_x, curve_d, strict=True)):
        xs[k, : x.size], xs[k, x.size :] = x, x[-1]
        ds[k, : d.size], ds[k, d.size :] = d, d[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(xs > 0, ds / xs, np.inf)
        least = np.min(ratio, axis=1)
        dx = np.diff(xs, axis=1)
        real = dx > 0
        slope = np.where(real, np.diff(ds, axis=1) / np.where(real, dx, 1.0), 0.0)
    least = np.where(np.isfinite(least), least, 0.0)
    segments = real.sum(axis=1)
    rises = (
        real[:, 1:]
        & (slope[:, 1:] - slope[:, :-1] > RISE_RTOL * np.maximum(1.0, np.abs(slope[:, :-1])))
        if most > 2
        else np.zeros((k_all, 0), dtype=bool)
    )
    found = rises.any(axis=1)
    first = np.where(found, rises.argmax(axis=1) + 1, segments) if rises.size else segments
    rows = np.arange(k_all)
    before = np.where(first > 0, slope[rows, np.maximum(first - 1, 0)], 0.0)
    index = np.arange(most - 1)[None, :]
    later = np.where(real & (index >= first[:, None]), slope, np.inf).min(axis=1)
    tail = np.minimum(before, np.where(np.isfinite(later), later, before))
    body = index < first[:, None]
    intercept = np.where(body, ds[:, :-1] - slope * xs[:, :-1], np.inf)
    cut_x, cut_d = xs[rows, first], ds[rows, first]
    intercept = np.concatenate([intercept, (cut_d - tail * cut_x)[:, None]], axis=1)
    slopes = np.concatenate([np.where(body, slope, 0.0), tail[:, None]], axis=1)
    # pieces no candidate uses (inf everywhere) never give the least line: left out, the same
    # minima over far fewer lines (most curves have their first convex kink early)
    used = ~np.isinf(intercept).all(axis=0)
    return Minorants(intercept[:, used], slopes[:, used], least, xs, ds)
