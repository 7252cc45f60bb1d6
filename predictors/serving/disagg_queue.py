"""The prefill pool of a disaggregated unit as an M/D/c queue (numpy, vectorised over rows).

``c`` prefill workers serve prompts that arrive as a Poisson stream of rate λ; each prompt
takes the deterministic service time ``S`` (the prefill of one prompt of ``I`` tokens on one
worker). The waiting time uses the Allen–Cunneen approximation of the M/G/c queue,

    W_q = C(c, a) / (c·μ − λ) · (1 + C_s²) / 2,   a = λ·S, μ = 1/S, C_s² = 0 (deterministic),

with ``C(c, a)`` the Erlang C probability of waiting (exact M/M/c formula, Erlang B recursion).
Allen–Cunneen is exact for M/M/c and for M/D/1 (Pollaczek–Khinchine) and within a few per cent
of the exact M/D/c wait at moderate to high load. The waiting-time tail of M/M/c,
``P(W > t) = C · exp(−(cμ − λ)·t)``, is used with the same factor (its rate doubled for
deterministic service) for the percentile wait::

    W_p = max(0, ln(C / (1 − p))) / (2 · (cμ − λ))

At ρ = a / c ≥ 1 the queue is unstable: the wait is +inf.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def erlang_c(servers: FloatArray, offered: FloatArray) -> FloatArray:
    """Probability that an arrival waits in an M/M/c queue with *servers* (whole numbers, ≥ 1)
    and offered load *offered* = λ·S (broadcast); 1 where the load reaches the servers."""
    c = np.asarray(servers, dtype=np.float64)
    a = np.asarray(offered, dtype=np.float64)
    c, a = np.broadcast_arrays(c, a)
    b = np.ones(a.shape)
    top = int(np.nanmax(c)) if c.size else 0
    for k in range(1, top + 1):
        nxt = a * b / (k + a * b)
        b = np.where(k <= c, nxt, b)
    rho = a / np.maximum(c, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        wait = b / (1.0 - rho * (1.0 - b))
    result: FloatArray = np.where(rho >= 1.0, 1.0, np.clip(wait, 0.0, 1.0))
    return result


def mdc_wait_s(
    servers: FloatArray, service_s: FloatArray, lam: FloatArray, percentile: float | None
) -> FloatArray:
    """Waiting time in queue (mean when *percentile* is None, else that percentile) of an M/D/c
    queue (the module docstring's formulas), seconds; +inf at ρ ≥ 1, 0 at λ = 0."""
    c = np.asarray(servers, dtype=np.float64)
    s = np.asarray(service_s, dtype=np.float64)
    lam = np.asarray(lam, dtype=np.float64)
    a = lam * s
    prob = erlang_c(c, a)
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = c / s - lam  # cμ − λ
        if percentile is None:
            wait = prob / gap * 0.5
        else:
            tail = np.log(np.maximum(prob, 1e-300) / (1.0 - percentile / 100.0))
            wait = np.maximum(tail, 0.0) / (2.0 * gap)
    result: FloatArray = np.where(a >= c, np.inf, np.where(lam <= 0.0, 0.0, wait))
    return result
