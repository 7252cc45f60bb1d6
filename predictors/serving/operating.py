"""The operating point of a replica at a Poisson rate, and its capacity under an SLA.

Described in :mod:`predictors.serving`: the decode concurrency ``b`` with ``λ(b) = λ``
(bisection), the mean and percentile ITL, TTFT and E[P(K)] there, and the largest rate whose
ITL, TTFT and memory quantile meet the SLA.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from predictors.serving.curves import (
    CURVE_B,
    MEMORY_QUANTILE,
    FloatArray,
    ServingCurves,
    as_column,
    in_system,
    rate_per_s,
    step_time_s,
    ttft_s,
)
from predictors.serving.poisson import mean_power_w, poisson_quantile, quantile_fits


def itl_at_percentile_s(c: ServingCurves, b: FloatArray, percentile: float | None) -> FloatArray:
    """Mean ITL τ(b) when *percentile* is None, else the step a tagged sequence sees among the
    Poisson(b) quantile k of others: ``itl(max(1 + k, b)) / (1 − λ·c_p)``. The prompts arriving
    per step follow the rate λ = b / (O·τ(b)), not the tagged sequence's population, so their
    share of a step, λ·c_p = (b·c_p/O) / τ(b), is the mean step's (at b = 0: none); the mean
    ITL is the same formula at b itself (τ(b) = itl(b) / (1 − λ·c_p))."""
    tau = step_time_s(c, b)
    if percentile is None:
        return tau
    k = poisson_quantile(b, percentile / 100.0)
    prefill = b * as_column(c.prefill_s) / as_column(c.output_tokens)
    busy = np.where(tau > 0, prefill / np.where(tau > 0, tau, 1.0), 0.0)  # λ·c_p, below 1
    at = np.maximum(1.0 + k, b)
    decode = step_time_s(c, at) - at * as_column(c.prefill_s) / as_column(c.output_tokens)
    result: FloatArray = np.maximum(decode / (1.0 - busy), tau)
    return result


def solve_b(c: ServingCurves, lam: FloatArray, iterations: int = 60) -> FloatArray:
    """The smallest decode concurrency b (N, M) with λ(b) >= lam (bisection; λ(b) is
    non-decreasing, :func:`~predictors.serving.curves.steady_throughput`).

    Where the throughput has saturated, λ is flat over a stretch of b up to rounding: a rate
    within a relative 1e-12 of λ(b) counts as reached, so a rate on such a stretch maps to its
    start (the fewest sequences in flight that carry it), never to a point along it that
    rounding picked. Rows where lam exceeds λ(max_batch) get NaN (the replica cannot carry that
    rate).
    """
    hi = np.broadcast_to(as_column(c.max_batch), lam.shape).astype(np.float64).copy()
    top = rate_per_s(c, hi)
    lo = np.zeros_like(hi)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        below = rate_per_s(c, mid) < lam * (1 - 1e-12)
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
        lam2 * as_column(c.output_tokens),
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
    'itl', 'ttft', 'memory' (the KV cache or the engine's batch limit) or 'throughput' (the
    batch where the throughput stops rising: more sequences in flight serve fewer requests)."""
    curve_knots: npt.NDArray[np.int64]
    """(N,) knots of each row's curve; the rows' knots follow each other in the flat curves."""
    flat_requests_per_s: FloatArray
    """The rows' curve knots, flat (row after row): per row ascending rates (first 0)."""
    flat_power_w_per_gpu: FloatArray
    """Flat, per row: mean power per GPU at the knots (first = idle)."""
    flat_itl_s: FloatArray
    """Flat, per row: mean ITL at the knots (first = the ITL of a lone request)."""

    def _rows(self, flat: FloatArray) -> list[FloatArray]:
        return np.split(flat, np.cumsum(self.curve_knots)[:-1]) if self.curve_knots.size else []

    @property
    def curve_requests_per_s(self) -> list[FloatArray]:
        """Per row, ascending rates of the curve knots (first 0)."""
        return self._rows(self.flat_requests_per_s)

    @property
    def curve_power_w_per_gpu(self) -> list[FloatArray]:
        """Per row, mean power per GPU at the knots (first = idle)."""
        return self._rows(self.flat_power_w_per_gpu)

    @property
    def curve_itl_s(self) -> list[FloatArray]:
        """Per row, mean ITL at the knots (first = the ITL of a lone request)."""
        return self._rows(self.flat_itl_s)


def _memory_ok(
    c: ServingCurves, b: FloatArray, tau: FloatArray | None = None
) -> npt.NDArray[np.bool_]:
    return quantile_fits(in_system(c, b, tau), as_column(c.max_batch), MEMORY_QUANTILE)


def _sla_ok(
    c: ServingCurves,
    b: FloatArray,
    itl_sla_s: FloatArray,
    ttft_sla_s: FloatArray,
    percentile: float | None,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    tau = step_time_s(c, b)
    itl = tau if percentile is None else itl_at_percentile_s(c, b, percentile)
    itl_ok = itl <= as_column(itl_sla_s)
    ttft_ok = as_column(c.ttft_base_s) + itl <= as_column(ttft_sla_s)
    return itl_ok, ttft_ok, _memory_ok(c, b, tau)


def _sla_free_top(
    c: ServingCurves,
    knots: FloatArray,
    last: npt.NDArray[np.int_],
    b_star: FloatArray,
    pts: FloatArray,
    lam: FloatArray,
    power: FloatArray,
) -> FloatArray:
    """*power* with the capacity point's value on the chord between the last knot below it and
    the next knot (or the memory limit when nearer): the power curve below any capacity is then
    the same function of the rate whatever the SLA, so a looser SLA never prices a fleet higher
    (where the curve is convex near capacity the chord lies above the point's own power)."""
    rows = np.arange(c.rows)
    k = knots.shape[1]
    inner = (last >= 0) & (last + 1 < k)
    idx = np.clip(last, 0, k - 1)
    top = np.minimum(knots[rows, np.minimum(last + 1, k - 1)], np.asarray(c.max_batch))
    inner &= (b_star > knots[rows, idx]) & (top > b_star)
    if not inner.any():
        return power
    at = np.where(inner, top, knots[rows, idx])[:, None]
    itl_top = step_time_s(c, at)
    lam_top = (at / (as_column(c.output_tokens) * itl_top))[:, 0]
    p_top = mean_power_w(c, in_system(c, at, itl_top))[:, 0]
    lam_k, p_k = lam[rows, idx], power[rows, idx]
    lam_s = lam[:, -1]  # the last point is b* itself
    span = lam_top - lam_k
    share = np.divide(
        lam_s - lam_k, span, out=np.zeros_like(span), where=inner & (span > 0) & np.isfinite(span)
    )
    chord = p_k + np.clip(share, 0.0, 1.0) * (p_top - p_k)
    beyond = (pts >= b_star[:, None]) & (np.arange(pts.shape[1])[None, :] > idx[:, None])
    out: FloatArray = np.where(inner[:, None] & beyond, chord[:, None], power)
    return out


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
    # a batch limit lowered to the throughput peak is no memory limit (rising_throughput)
    peak = np.zeros(c.rows, dtype=bool)
    if c.memory_batch is not None:
        peak = (c.max_batch < c.memory_batch) & (last >= 0)
    limit = np.where(
        ~a[:, 0], "itl", np.where(~t[:, 0], "ttft", np.where(peak, "throughput", "memory"))
    )
    b_star = np.where(last >= 0, lo, 0.0)
    lam_star = np.where(last >= 0, rate_per_s(c, b_star[:, None])[:, 0], 0.0)
    # on a saturated stretch (λ flat) fewer sequences carry the same rate: its start, where
    # :func:`at_rate` puts that rate too (more in flight would only add latency and watts)
    start = solve_b(c, lam_star[:, None])[:, 0]
    b_star = np.where((last >= 0) & (start < b_star * (1 - 1e-9)), start, b_star)
    # knots up to b*, then b* itself
    pts = np.concatenate((knots, b_star[:, None]), axis=1)
    pts = np.where(pts <= b_star[:, None], pts, b_star[:, None])
    itl = step_time_s(c, pts)
    lam = pts / (as_column(c.output_tokens) * itl)  # rate_per_s(c, pts)
    # each distinct point once: the knots below b* and b* itself
    distinct = np.concatenate((np.ones((c.rows, 1), dtype=bool), np.diff(pts, axis=1) > 0), axis=1)
    power = mean_power_w(c, in_system(c, pts, itl), distinct)
    power = _sla_free_top(c, knots, last, b_star, pts, lam, power)
    # per row: 0 (idle, the ITL at the first point) then the points where the rate rises; a
    # row that meets the SLA nowhere keeps the first knot only (the ITL of a lone request)
    met = last >= 0
    first = np.ones((c.rows, 1), dtype=bool)
    # (a saturated stretch, :func:`~predictors.serving.curves.steady_throughput`, has rates
    # equal up to rounding: a point counts where it rises above every earlier one)
    rises = lam[:, 1:] > np.maximum.accumulate(lam, axis=1)[:, :-1] * (1 + 1e-9)
    keep = np.concatenate((first, first, rises), axis=1) & met[:, None]
    keep[:, 0] = True
    idle = np.asarray(c.idle_w, dtype=np.float64)[:, None]
    lam_0 = np.concatenate((np.zeros((c.rows, 1)), lam), axis=1)
    itl_0 = np.concatenate((np.where(met, itl[:, 0], c.itl_s[:, 0])[:, None], itl), axis=1)
    power_0 = np.concatenate((idle, np.where(keep[:, 1:], power, -np.inf)), axis=1)
    power_0 = np.maximum.accumulate(power_0, axis=1)
    return Capacity(
        lam_star,
        b_star,
        limit.tolist(),
        keep.sum(axis=1),
        lam_0[keep],
        power_0[keep],
        itl_0[keep],
    )
