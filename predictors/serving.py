"""Operating point of one replica under Poisson arrivals: the serving model (numpy core).

Every row is one replica (model, GPU, TP, engine, precision, workload) described by its
:class:`ServingCurves`: the predictors' decode step time ``itl(k)`` and power per GPU ``P(k)``
on a shared batch grid, plus a few physics scalars (:mod:`predictors.serving_grid` builds them).
The model is parametrised by the mean number ``b`` of sequences *decoding* (continuous):

* step time (chunked prefill; every step also carries the prompt tokens of the requests that
  arrived during it, ``λ·τ·I`` tokens, each costing ``c_p / I`` seconds, their TP all-reduce
  included; the decode step's own all-reduce is in the predictors' ITL)::

      τ(b) = itl(max(b, 1)) + λ·τ·c_p,    λ = b / (O·τ)
           = itl(max(b, 1)) + b · c_p / O

* arrival rate that keeps ``b`` sequences decoding (Little's law on the decode phase)::

      λ(b) = b / (O · τ(b))

* TTFT (the prompt's own prefill, one step to emit the first token)::  TTFT(b) = t_p + τ(b)

* mean number in the system (Little's law on the whole request)::  n(b) = b + λ(b) · TTFT(b)

* mean power per GPU: the number K of requests in the system of an engine that serves all of
  them at once behaves like an M/G/∞ queue, whose stationary law is Poisson(n) for Poisson
  arrivals and any service-time law; we use it with the fixed-point mean ``n(b)``::

      P̄(b) = E[P(K)],  K ~ Poisson(n(b)),  P(0) = idle

* ITL at percentile p: a token of a tagged sequence sees the others of a Poisson(b)
  population (PASTA), so ITL_p = τ(1 + F⁻¹_Poisson(b)(p)); the mean ITL is τ(b).

Given a per-replica rate λ the operating point is ``b`` with ``λ(b) = λ`` (λ(b) is increasing,
found by bisection). Capacity = the largest λ whose ITL (at the SLA percentile, mean when
absent) and TTFT meet the SLA and whose 99th percentile of K fits the memory/engine batch
limit. Power ``P`` is made non-decreasing and kept in [idle, TDP]; ``itl`` non-decreasing.
All functions are vectorised over rows (and, where noted, over several points per row).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: Batch sizes at which the predictors are asked for ITL and power.
BATCH_GRID: tuple[int, ...] = (1, 3, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
#: Decode concurrencies at which the power curve of a replica is tabulated (knots).
CURVE_B: tuple[float, ...] = (
    0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0,
    32.0, 48.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0,
)  # fmt: skip
#: Quantile of the number in system that must fit the memory / engine batch limit.
MEMORY_QUANTILE = 0.99
#: Poisson means up to this value are summed exactly; above, Gauss-Hermite on N(m, m).
_EXACT_MEAN = 24.0
_EXACT_K = 80
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(24)
_GH_WEIGHTS = _GH_WEIGHTS / _GH_WEIGHTS.sum()


@dataclass(frozen=True)
class ServingCurves:
    """Per-row inputs of the serving model (N rows, G = len(batch grid))."""

    batch: FloatArray
    """(G,) batch grid (ascending, starts at 1)."""
    itl_s: FloatArray
    """(N, G) decode step time at each batch (non-decreasing along the grid)."""
    power_w: FloatArray
    """(N, G) power per GPU at each batch (non-decreasing, within [idle, TDP])."""
    idle_w: FloatArray
    """(N,) idle power per GPU."""
    prefill_s: FloatArray
    """(N,) compute seconds of one request's prompt on the replica (c_p, TP comm included)."""
    ttft_base_s: FloatArray
    """(N,) prompt prefill time of one request alone (t_p: compute + one weight read)."""
    comm_s_per_token: FloatArray
    """(N,) TP all-reduce seconds per token (0 at TP 1); charged to the prompt tokens (in
    ``prefill_s``), the decode step's own is in the predictors' ITL."""
    output_tokens: FloatArray
    """(N,) mean output tokens per request (O)."""
    max_batch: FloatArray
    """(N,) sequences the KV cache (paged, current length) and the engine allow."""

    @property
    def rows(self) -> int:
        """Number of rows."""
        return int(self.idle_w.size)


def monotone_curves(
    itl_s: FloatArray, power_w: FloatArray, idle_w: FloatArray, tdp_w: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """ITL and power made non-decreasing along the batch grid, power clipped to [idle, TDP].

    NaN cells (batches the predictors refused, e.g. beyond their full-length memory check)
    are filled: ITL extended linearly from the last two valid batches, power held.
    """
    itl = np.array(itl_s, dtype=np.float64)
    power = np.array(power_w, dtype=np.float64)
    n, g = itl.shape
    batch = np.asarray(BATCH_GRID[:g], dtype=np.float64)
    for j in range(1, g):
        gap = np.isnan(itl[:, j])
        if gap.any():
            if j >= 2:
                slope = (itl[:, j - 1] - itl[:, j - 2]) / (batch[j - 1] - batch[j - 2])
            else:
                slope = np.zeros(n)
            slope = np.where(np.isnan(slope), 0.0, np.maximum(slope, 0.0))
            itl[:, j] = np.where(gap, itl[:, j - 1] + slope * (batch[j] - batch[j - 1]), itl[:, j])
        power[:, j] = np.where(np.isnan(power[:, j]), power[:, j - 1], power[:, j])
    itl = np.maximum.accumulate(itl, axis=1)
    power = np.clip(power, idle_w[:, None], np.maximum(tdp_w, idle_w)[:, None])
    power = np.maximum.accumulate(power, axis=1)
    return itl, power


def rising_throughput(c: ServingCurves) -> ServingCurves:
    """*c* with ``max_batch`` lowered to where λ(b) stops rising (first knot of
    :data:`CURVE_B` after which the rate falls): beyond the throughput peak more sequences in
    flight serve fewer requests, so the model's fixed point would not be unique."""
    from dataclasses import replace

    knots = np.broadcast_to(np.asarray(CURVE_B), (c.rows, len(CURVE_B)))
    b = np.minimum(knots, c.max_batch[:, None])
    lam = rate_per_s(c, np.maximum(b, 1e-9))
    falls = np.diff(lam, axis=1) < 0
    first = np.where(falls.any(axis=1), falls.argmax(axis=1), len(CURVE_B) - 1)
    peak = b[np.arange(c.rows), first]
    return replace(
        c, max_batch=np.where(falls.any(axis=1), np.minimum(c.max_batch, peak), c.max_batch)
    )


def _interp_rows(grid: FloatArray, values: FloatArray, x: FloatArray) -> FloatArray:
    """Per-row linear interpolation of ``values`` (N, G) on the shared ``grid`` at ``x`` (N, M);
    constant below the first and linear beyond the last grid point."""
    g = grid.size
    idx = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, g - 2)
    rows = np.arange(values.shape[0])[:, None]
    x0, x1 = grid[idx], grid[idx + 1]
    v0, v1 = values[rows, idx], values[rows, idx + 1]
    t = (np.maximum(x, grid[0]) - x0) / (x1 - x0)
    out: FloatArray = v0 + t * (v1 - v0)
    return out


def _col(a: FloatArray) -> FloatArray:
    return a[:, None]


def step_time_s(c: ServingCurves, b: FloatArray) -> FloatArray:
    """τ(b) (N, M): decode step (the predictors' ITL, TP all-reduce included) + the prompt
    tokens arriving per step."""
    dec = _interp_rows(c.batch, c.itl_s, np.maximum(b, 1.0))
    result: FloatArray = dec + b * _col(c.prefill_s) / _col(c.output_tokens)
    return result


def rate_per_s(c: ServingCurves, b: FloatArray) -> FloatArray:
    """λ(b) (N, M): arrival rate that keeps b sequences decoding."""
    result: FloatArray = b / (_col(c.output_tokens) * step_time_s(c, b))
    return result


def in_system(c: ServingCurves, b: FloatArray) -> FloatArray:
    """n(b) (N, M): mean requests in the system (decoding + in prefill)."""
    tau = step_time_s(c, b)
    lam = b / (_col(c.output_tokens) * tau)
    result: FloatArray = b + lam * (_col(c.ttft_base_s) + tau)
    return result


def ttft_s(c: ServingCurves, b: FloatArray) -> FloatArray:
    """TTFT(b) (N, M) = t_p + τ(b)."""
    result: FloatArray = _col(c.ttft_base_s) + step_time_s(c, b)
    return result


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


@functools.lru_cache(maxsize=16)
def _quantile_thresholds(p: float) -> FloatArray:
    """t_k (k = 0.._EXACT_K): the Poisson mean at which P(K <= k) = p. P(K <= k) falls as the
    mean grows, so the p-quantile of Poisson(m) is the smallest k with t_k >= m."""
    k = np.arange(_EXACT_K + 1, dtype=np.float64)
    lo = np.zeros(k.size)
    hi = k + 20.0 + 10.0 * np.sqrt(k + 1.0)
    j = np.arange(_EXACT_K + 1, dtype=np.float64)[None, :]
    below = j <= k[:, None]
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        cdf = (_poisson_pmf(mid[:, None], j) * below).sum(axis=1)
        lo = np.where(cdf >= p, mid, lo)
        hi = np.where(cdf >= p, hi, mid)
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
    """Standard normal quantile (bisection on erf; p in (0, 1))."""
    lo, hi = -10.0, 10.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if 0.5 * (1.0 + math.erf(mid / math.sqrt(2.0))) < p:
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
    result: FloatArray = np.exp(k * logm - m - lgamma)
    return result


#: Exact Poisson sums: means up to the first value use k <= the second (tail < 1e-9).
_K_BUCKETS: tuple[tuple[float, int], ...] = ((0.5, 12), (2.0, 20), (6.0, 35), (_EXACT_MEAN, 80))


def mean_power_w(
    c: ServingCurves, n: FloatArray, mask: npt.NDArray[np.bool_] | None = None
) -> FloatArray:
    """E[P(K)] (N, M) for K ~ Poisson(n) with P(0) = idle and P(k) the batch curve (only where
    *mask* is True when given; NaN elsewhere)."""
    out = np.full(n.shape, np.nan)
    want = np.ones(n.shape, dtype=bool) if mask is None else mask
    grid = np.concatenate(([0.0], c.batch))
    curve = np.concatenate((_col(c.idle_w), c.power_w), axis=1)
    k_all = np.arange(_EXACT_K + 1, dtype=np.float64)
    pk_rows = _interp_rows(grid, curve, np.broadcast_to(k_all, (c.rows, k_all.size)))
    low = 0.0
    for top, kmax in _K_BUCKETS:
        sel = want & (n > low) & (n <= top) if low > 0 else want & (n <= top)
        low = top
        rows, cols = np.nonzero(sel)
        k = k_all[: kmax + 1]
        for start in range(0, rows.size, 50000):
            r, cc = rows[start : start + 50000], cols[start : start + 50000]
            pmf = _poisson_pmf(n[r, cc][:, None], k[None, :])
            out[r, cc] = (pmf * pk_rows[r, : kmax + 1]).sum(axis=1) / pmf.sum(axis=1)
    big = want & (n > _EXACT_MEAN)
    if big.any():
        rows, cols = np.nonzero(big)
        m = n[rows, cols][:, None]
        k = np.maximum(m + np.sqrt(m) * _GH_NODES[None, :], 0.0)
        pk = _interp_rows(grid, curve[rows], k)
        out[rows, cols] = pk @ _GH_WEIGHTS
    return out


def itl_at_percentile_s(c: ServingCurves, b: FloatArray, percentile: float | None) -> FloatArray:
    """Mean ITL τ(b) when *percentile* is None, else τ(1 + Poisson(b) quantile)."""
    if percentile is None:
        return step_time_s(c, b)
    k = poisson_quantile(b, percentile / 100.0)
    return step_time_s(c, np.maximum(1.0 + k, b))


def solve_b(c: ServingCurves, lam: FloatArray, iterations: int = 60) -> FloatArray:
    """The decode concurrency b (N, M) with λ(b) = lam (bisection; λ(b) is increasing).

    Rows where lam exceeds λ(max_batch) get NaN (the replica cannot carry that rate).
    """
    hi = np.broadcast_to(_col(c.max_batch), lam.shape).astype(np.float64).copy()
    top = rate_per_s(c, hi)
    lo = np.zeros_like(hi)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        below = rate_per_s(c, mid) < lam
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    b = 0.5 * (lo + hi)
    return np.where(lam <= top * (1 + 1e-12), b, np.nan)


@dataclass(frozen=True)
class OperatingPoint:
    """The operating point of every row at its rate (each field (N,) or (N, M))."""

    requests_per_s: FloatArray
    decoding: FloatArray
    concurrency: FloatArray
    itl_s: FloatArray
    itl_s_p90: FloatArray
    ttft_s: FloatArray
    power_w_per_gpu: FloatArray
    output_throughput_tok_s: FloatArray


def at_rate(c: ServingCurves, lam: FloatArray) -> OperatingPoint:
    """Operating point at per-replica rate *lam* (N,); NaN where the rate is above capacity."""
    lam2 = np.asarray(lam, dtype=np.float64)[:, None]
    b = solve_b(c, lam2)
    ok = ~np.isnan(b)
    bb = np.where(ok, b, 1.0)
    n = in_system(c, bb)
    fields = (
        n,
        step_time_s(c, bb),
        itl_at_percentile_s(c, bb, 90.0),
        ttft_s(c, bb),
        mean_power_w(c, n),
        lam2 * _col(c.output_tokens),
    )
    nan = [np.where(ok, f, np.nan)[:, 0] for f in fields]
    return OperatingPoint(lam2[:, 0], b[:, 0], *nan)


@dataclass(frozen=True)
class Capacity:
    """Per row: the largest rate meeting the SLA and the tabulated curves up to it."""

    max_requests_per_s: FloatArray
    """(N,) 0 where not even the lightest load meets the SLA."""
    decoding_at_capacity: FloatArray
    limit: list[str]
    """Per row, what sets the capacity (or, when it is 0, what fails at the lightest load):
    'itl', 'ttft' or 'memory'."""
    curve_requests_per_s: list[FloatArray]
    """Per row, ascending rates of the curve knots (first 0)."""
    curve_power_w_per_gpu: list[FloatArray]
    """Per row, mean power per GPU at the knots (first = idle)."""
    curve_itl_s: list[FloatArray]
    """Per row, mean ITL at the knots (first = the ITL of a lone request)."""


def _memory_ok(c: ServingCurves, b: FloatArray) -> npt.NDArray[np.bool_]:
    return quantile_fits(in_system(c, b), _col(c.max_batch), MEMORY_QUANTILE)


def _sla_ok(
    c: ServingCurves,
    b: FloatArray,
    itl_sla_s: FloatArray,
    ttft_sla_s: FloatArray,
    percentile: float | None,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    itl_ok = itl_at_percentile_s(c, b, percentile) <= _col(itl_sla_s)
    ttft = ttft_s(c, b)
    if percentile is not None:
        ttft = _col(c.ttft_base_s) + itl_at_percentile_s(c, b, percentile)
    ttft_ok = ttft <= _col(ttft_sla_s)
    return itl_ok, ttft_ok, _memory_ok(c, b)


def capacity(
    c: ServingCurves,
    itl_sla_s: FloatArray,
    ttft_sla_s: FloatArray,
    percentile: float | None,
) -> Capacity:
    """Largest rate meeting the SLA (``ttft_sla_s`` may hold inf) and the curve up to it.

    The constraints are monotone in b, so the feasible set is an interval [0, b*]: the last
    feasible knot of :data:`CURVE_B` is found, then b* is refined by bisection to the next knot.
    """
    knots = np.broadcast_to(np.asarray(CURVE_B), (c.rows, len(CURVE_B)))
    itl_ok, ttft_ok, mem_ok = _sla_ok(c, knots, itl_sla_s, ttft_sla_s, percentile)
    ok = itl_ok & ttft_ok & mem_ok
    prefix = np.cumprod(ok, axis=1).astype(bool)
    last = prefix.sum(axis=1) - 1
    rows = np.arange(c.rows)
    lo = np.where(last >= 0, knots[rows, np.maximum(last, 0)], 0.0)
    hi = np.where(
        last + 1 < knots.shape[1], knots[rows, np.minimum(last + 1, knots.shape[1] - 1)], lo
    )
    hi = np.minimum(hi, c.max_batch)
    for _ in range(14):
        mid = 0.5 * (lo + hi)
        a, t, m = _sla_ok(c, mid[:, None], itl_sla_s, ttft_sla_s, percentile)
        good = (a & t & m)[:, 0]
        lo = np.where(good, mid, lo)
        hi = np.where(good, hi, mid)
    probe = np.where(last >= 0, np.minimum(hi * (1 + 1e-6), hi + 1e-9), knots[:, 0])[:, None]
    a, t, m = _sla_ok(c, probe, itl_sla_s, ttft_sla_s, percentile)
    limit = np.where(~a[:, 0], "itl", np.where(~t[:, 0], "ttft", "memory"))
    b_star = np.where(last >= 0, lo, 0.0)
    lam_star = np.where(last >= 0, rate_per_s(c, b_star[:, None])[:, 0], 0.0)
    # knots up to b*, then b* itself
    pts = np.concatenate((knots, b_star[:, None]), axis=1)
    pts = np.where(pts <= b_star[:, None], pts, b_star[:, None])
    lam = rate_per_s(c, pts)
    # each distinct point once: the knots below b* and b* itself
    distinct = np.concatenate((np.ones((c.rows, 1), dtype=bool), np.diff(pts, axis=1) > 0), axis=1)
    power = mean_power_w(c, in_system(c, pts), distinct)
    itl = step_time_s(c, pts)
    curve_lam, curve_p, curve_itl = [], [], []
    for i in range(c.rows):
        if last[i] < 0:
            curve_lam.append(np.zeros(1))
            curve_p.append(np.asarray([c.idle_w[i]]))
            curve_itl.append(np.asarray([c.itl_s[i, 0]]))
            continue
        keep = np.concatenate(([True], np.diff(lam[i]) > 0))
        curve_lam.append(np.concatenate(([0.0], lam[i][keep])))
        curve_p.append(np.maximum.accumulate(np.concatenate(([c.idle_w[i]], power[i][keep]))))
        curve_itl.append(np.concatenate(([itl[i][0]], itl[i][keep])))
    return Capacity(
        lam_star,
        b_star,
        [str(s) for s in limit],
        curve_lam,
        curve_p,
        curve_itl,
    )
