"""Poisson quantities of the serving model: quantiles of the number in system and E[P(K)].

K ~ Poisson(n) is the number of requests in the system of a replica (the M/G/∞ view of
:mod:`predictors.serving`). Means up to 24 are summed exactly, above that Gauss-Hermite on
N(m, m) and the Cornish-Fisher quantile.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt

from predictors.serving.curves import FloatArray, ServingCurves, as_column, interp_rows

#: Poisson means up to this value are summed exactly; above, Gauss-Hermite on N(m, m).
_EXACT_MEAN = 24.0
_EXACT_K = 80
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(24)
_GH_WEIGHTS = _GH_WEIGHTS / _GH_WEIGHTS.sum()


def poisson_quantile(mean: FloatArray, p: float) -> FloatArray:
    """Smallest k with P(K <= k) >= p for K ~ Poisson(mean), elementwise (exact for
    mean <= 24 through the thresholds of :func:`_quantile_thresholds`, Cornish-Fisher normal
    approximation above)."""
    m = np.asarray(mean, dtype=np.float64)
    exact = np.searchsorted(_quantile_thresholds(p), m, side="left").astype(np.float64)
    return np.where(m <= _EXACT_MEAN, exact, _cornish_fisher(m, p))


def _cornish_fisher(m: FloatArray, p: float) -> FloatArray:
    z = _normal_ppf(p)
    root = np.sqrt(np.maximum(m, 0.0))
    result: FloatArray = np.ceil(m + z * root + (z * z - 1.0) / 6.0 - 0.5)
    return result


#: Terms of the upper-tail sums of :func:`_quantile_thresholds`: the largest mean bisected there
#: (k = 80: 80 + 20 + 10·9 = 190) has P(K > 400) < 1e-40, far below any 1 − p (>= 2**-53).
_TAIL_K = 400
_LGAMMA_TAIL = np.asarray([math.lgamma(j + 1.0) for j in range(_TAIL_K + 1)])


@functools.lru_cache(maxsize=16)
def _quantile_thresholds(p: float) -> FloatArray:
    """t_k (k = 0.._EXACT_K): the Poisson mean at which P(K <= k) = p. P(K <= k) falls as the
    mean grows, so the p-quantile of Poisson(m) is the smallest k with t_k >= m.

    The test is on the upper tail, P(K > k) <= 1 − p (a sum of small positive terms, exact to
    rounding however small, and 1 − p is exact for p >= 0.5), never on P(K <= k) >= p: near
    p = 1 the sum up to k rounds to within 1e-16 of 1, where 1 − p lies too, so the thresholds
    were noise (not even ascending) and the percentile ITL was not monotone in the load."""
    k = np.arange(_EXACT_K + 1, dtype=np.float64)
    q = 1.0 - p
    lo = np.zeros(k.size)
    hi = k + 20.0 + 10.0 * np.sqrt(k + 1.0)
    j = np.arange(_TAIL_K + 1, dtype=np.float64)[None, :]
    above = j > k[:, None]
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        logm = np.log(np.maximum(mid, 1e-300))[:, None]
        tail = (np.exp(j * logm - mid[:, None] - _LGAMMA_TAIL[None, :]) * above).sum(axis=1)
        lo = np.where(tail <= q, mid, lo)
        hi = np.where(tail <= q, hi, mid)
    return lo


def quantile_fits(mean: FloatArray, limit: FloatArray, p: float) -> npt.NDArray[np.bool_]:
    """True where the p-quantile of Poisson(mean) is at most *limit* (broadcast)."""
    lim = np.floor(np.asarray(limit, dtype=np.float64))
    t = _quantile_thresholds(p)
    idx = np.clip(lim, 0, _EXACT_K).astype(np.int64)
    exact = np.asarray(mean) <= t[idx]
    result: npt.NDArray[np.bool_] = np.where(
        lim <= _EXACT_K, exact & (lim >= 0), _cornish_fisher(np.asarray(mean), p) <= lim
    )
    return result


def _normal_ppf(p: float) -> float:
    """Standard normal quantile (bisection on the upper tail erfc, exact to rounding for p up to
    the largest double below 1, where 1 + erf saturates; p in (0, 1))."""
    q = 1.0 - p
    lo, hi = -40.0, 40.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if 0.5 * math.erfc(mid / math.sqrt(2.0)) > q:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


_LGAMMA = np.asarray([math.lgamma(j + 1.0) for j in range(_EXACT_K + 1)])


def _poisson_pmf(m: FloatArray, k: FloatArray) -> FloatArray:
    """pmf at the integer points *k* (within 0.._EXACT_K) of Poisson(m), broadcast."""
    lgamma = _LGAMMA[np.asarray(k, dtype=np.int64)]
    with np.errstate(divide="ignore"):
        logm = np.log(np.maximum(m, 1e-300))
    # k·log m − m − lgamma, then exp, in one buffer (the same operations, fewer passes)
    result: FloatArray = np.multiply(k, logm)
    result -= m
    result -= lgamma
    return np.exp(result, out=result)


#: Means from :data:`_EXACT_MEAN` up to this blend the exact sum into Gauss-Hermite linearly, so
#: E[P(K)] has no step where the method changes (a 0.02 % drop in power as the load rose past a
#: mean of 24 before); the exact sum's tail at k > 80 stays below 1e-8 up to here.
_BLEND_MEAN = 36.0
#: Exact Poisson sums: means up to the first value use k <= the second (tail < 1e-9).
_K_BUCKETS: tuple[tuple[float, int], ...] = (
    (0.5, 12),
    (2.0, 20),
    (6.0, 35),
    (_EXACT_MEAN, 80),
    (_BLEND_MEAN, 80),
)


def mean_power_w(
    c: ServingCurves, n: FloatArray, mask: npt.NDArray[np.bool_] | None = None
) -> FloatArray:
    """E[P(K)] (N, M) for K ~ Poisson(n) with P(0) = idle and P(k) the batch curve (only where
    *mask* is True when given; NaN elsewhere)."""
    out = np.full(n.shape, np.nan)
    want = np.ones(n.shape, dtype=bool) if mask is None else mask
    grid = np.concatenate(([0.0], c.batch))
    curve = np.concatenate((as_column(c.idle_w), c.power_w), axis=1)
    k_all = np.arange(_EXACT_K + 1, dtype=np.float64)
    pk_rows = interp_rows(grid, curve, np.broadcast_to(k_all, (c.rows, k_all.size)))
    low = 0.0
    for top, kmax in _K_BUCKETS:
        sel = want & (n > low) & (n <= top) if low > 0 else want & (n <= top)
        low = top
        rows, cols = np.nonzero(sel)
        k = k_all[: kmax + 1]
        for start in range(0, rows.size, 50000):
            r, cc = rows[start : start + 50000], cols[start : start + 50000]
            pmf = _poisson_pmf(n[r, cc][:, None], k[None, :])
            weighted = pk_rows[:, : kmax + 1].take(r, axis=0)  # = pk_rows[r, : kmax + 1]
            weighted *= pmf
            out[r, cc] = weighted.sum(axis=1) / pmf.sum(axis=1)
    big = want & (n > _EXACT_MEAN)
    if big.any():
        rows, cols = np.nonzero(big)
        m = n[rows, cols][:, None]
        k = np.maximum(m + np.sqrt(m) * _GH_NODES[None, :], 0.0)
        pk = interp_rows(grid, curve.take(rows, axis=0), k)
        gauss = pk @ _GH_WEIGHTS
        share = np.clip((m[:, 0] - _EXACT_MEAN) / (_BLEND_MEAN - _EXACT_MEAN), 0.0, 1.0)
        exact = out[rows, cols]
        out[rows, cols] = np.where(share < 1.0, (1.0 - share) * exact + share * gauss, gauss)
    return out
