"""Screening before the replica search: counts no vector within a threshold can have.

For candidate ``j`` at count ``m >= 1``, every replica vector with ``n_j = m`` costs at least

    LB_j(m) = m·p_j + max(R_j(m)·ρ_j, M_j(m)·π_j)
              + Σ_t v_t · min(q_j(L_t; m), min_{i≠j} q_i(L_t; 1)),

``R_j(m) = P − s_j(m)`` the peak the other candidates must still cover (``s_j(m)``: what ``m``
replicas of ``j`` keep after the failover losses, ``cap_j·max(0, m − k·r_j)``; a replica added
later raises the capacity left by at most its own capacity), ``ρ_j`` their least price per req/s
of capacity, ``M_j(m)`` the minimum replicas still missing and ``π_j`` their least replica price;
the energy term is the minorant bound of :mod:`planner.solve.search` with ``j`` at count ``m``
and every other candidate at count 1 (the least). So a count whose ``LB`` exceeds the threshold
is in no vector within it: :func:`screened_bounds` lowers each candidate's replica bound to its
largest count that passes (0: the candidate is left out). Exact: the search then explores the
same vectors within the threshold, over fewer candidates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from planner.solve.routing import load_slack

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
CHEAP_RTOL = 1e-12
"""Relative slack of the quick screen (far above the rounding of its sums)."""


def _without_each(values: FloatArray) -> FloatArray:
    """``out[j] = min(values[i] for i != j)`` along axis 0 (inf when there is no other)."""
    k_all = values.shape[0]
    if k_all == 1:
        return np.full_like(values, np.inf)
    if values.ndim == 1:  # the same numbers with fewer steps: the least but at the first least
        at = int(np.argmin(values))
        flat: FloatArray = np.full_like(values, values[at])
        flat[at] = min(values[:at].min(initial=np.inf), values[at + 1 :].min(initial=np.inf))
        return flat
    order = np.argsort(values, axis=0, kind="stable")
    first = np.take_along_axis(values, order[:1], axis=0)
    second = np.take_along_axis(values, order[1:2], axis=0)
    out = np.broadcast_to(first, values.shape).copy()
    is_first = order[:1] == np.arange(k_all).reshape((k_all,) + (1,) * (values.ndim - 1))
    out = np.where(is_first, np.broadcast_to(second, values.shape), out)
    return out


@dataclass(frozen=True)
class Pairs:
    """Every (candidate, count >= 1) of a block in candidate-major order, with ``q(L_t; m)``
    (pairs × T, each row computed when first needed: :meth:`fill`) and the capacity ``s_j(m)``
    that count keeps after the failover losses."""

    candidate: IntArray
    count: IntArray
    watts: FloatArray
    """``q(L_t; m)`` of the pairs whose :attr:`known` is set (the other rows are not yet)."""
    kept: FloatArray
    start: IntArray
    """``start[j]``: the first pair of candidate j (K + 1 entries)."""
    others_watts: FloatArray
    """``min_{i≠j} q_i(L_t; 1)`` per candidate j (K × T; price-independent, computed once)."""
    least_rate_w: FloatArray
    """``s_j·L_t`` per candidate (K × T): below ``q_j(L_t; m)`` at every count."""
    known: npt.NDArray[np.bool_]
    watts_of: Callable[[IntArray, FloatArray], FloatArray]

    def fill(self, index: IntArray) -> None:
        """Compute the rows of :attr:`watts` of the pairs *index* not computed yet."""
        need = index[~self.known[index]]
        if need.size:
            self.watts[need] = self.watts_of(
                self.candidate[need], self.count[need].astype(np.float64)
            )
            self.known[need] = True

    def of(self, j: int, upto: int) -> FloatArray:
        """``q_j(L_t; m)`` for m = 0..upto (at most ub_j), row 0 inf (the candidate not in the
        vector)."""
        first = int(self.start[j])
        last = min(first + upto, int(self.start[j + 1]))
        self.fill(np.arange(first, last))
        rows = self.watts[first:last]
        return np.vstack([np.full((1, self.watts.shape[1]), np.inf), rows])


def make_pairs(
    ub: IntArray,
    cap: FloatArray,
    loads: FloatArray,
    watts_of: Callable[[IntArray, FloatArray], FloatArray],
    failover_k: int,
    per_unit: IntArray,
    least_w: FloatArray,
    least_w_per_rps: FloatArray,
) -> Pairs:
    """The :class:`Pairs` of a block; *watts_of(k, m)* gives ``q_k(L_t; m)`` per pair,
    *least_w* is ``q_k(L_t; 1)`` and *least_w_per_rps* each ``s_k``."""
    counts = np.maximum(ub, 0)
    k = np.repeat(np.arange(ub.size), counts)
    start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    m = (np.arange(k.size) - start[k] + 1).astype(np.int64)
    lost = failover_k * per_unit[k] if failover_k else np.zeros(k.size)
    kept = cap[k] * np.maximum(m - lost, 0.0)
    return Pairs(
        k,
        m,
        np.zeros((k.size, loads.size)),
        kept,
        start,
        _without_each(least_w),
        least_w_per_rps[:, None] * loads[None, :],
        np.zeros(k.size, dtype=bool),
        watts_of,
    )


def screened_bounds(
    price_n: FloatArray,
    price_t: FloatArray,
    cap: FloatArray,
    pairs: Pairs,
    peak: float,
    min_replicas: int,
    limit: float,
) -> IntArray:
    """Each candidate's largest count ``m`` with ``LB_j(m) <= limit`` (module docstring; 0 when
    none), every (candidate, count) pair of *pairs* at once. With watt prices >= 0 the pairs
    whose ``LB`` with ``s_j·L_t`` in place of ``q_j(L_t; m)`` (never larger) is above *limit*
    are out before their ``q`` is computed: the same answer."""
    tol = load_slack(peak)
    ratio = np.where(cap > 0, price_n / np.maximum(cap, 1e-300), np.inf)
    k, m = pairs.candidate, pairs.count.astype(np.float64)
    left = np.maximum(peak - tol - pairs.kept, 0.0)
    missing = np.maximum(min_replicas - m, 0.0)
    with np.errstate(invalid="ignore"):  # 0 · inf where nothing is left to cover
        rest = np.maximum(
            np.where(left > 0, left * _without_each(ratio)[k], 0.0),
            np.where(missing > 0, missing * _without_each(price_n)[k], 0.0),
        )
    fixed = m * price_n[k] + rest
    if (price_t >= 0).all():
        low = np.minimum(pairs.least_rate_w, pairs.others_watts)
        floor = (np.where(np.isfinite(low), low, 0.0) @ price_t)[k]
        # the slack covers the two products' rounding: a pair that passes is never left out
        index = np.flatnonzero(fixed + floor <= limit + CHEAP_RTOL * max(1.0, abs(limit)))
    else:
        index = np.arange(k.size)
    pairs.fill(index)
    low = np.minimum(pairs.watts[index], pairs.others_watts[k[index]])
    lb = fixed[index] + np.where(np.isfinite(low), low, 0.0) @ price_t
    out = np.zeros(cap.size, dtype=np.int64)
    passing = index[lb <= limit]
    np.maximum.at(out, k[passing], pairs.count[passing])
    return out
