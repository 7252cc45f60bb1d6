"""The serving model's per-replica curves: step time, arrival rate, TTFT and number in system.

The model itself (the operating point at a rate, capacity) is :mod:`predictors.serving.operating`;
this
module holds its inputs (:class:`ServingCurves`) and the Little's-law quantities of a decode
concurrency ``b``. The whole model is described in :mod:`predictors.serving`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: Batch sizes at which the predictors are asked for ITL and power.
BATCH_GRID: tuple[int, ...] = (
    1, 3, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
)  # fmt: skip
#: Decode concurrencies at which the power curve of a replica is tabulated (knots).
CURVE_B: tuple[float, ...] = (
    0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0,
    32.0, 40.0, 48.0, 56.0, 64.0, 80.0, 96.0, 112.0, 128.0, 160.0, 192.0, 224.0, 256.0, 320.0,
    384.0, 448.0, 512.0, 640.0, 768.0, 896.0, 1024.0, 1280.0, 1536.0, 1792.0, 2048.0, 2560.0,
    3072.0, 4096.0, 5120.0, 6144.0, 8192.0, 10240.0, 12288.0, 16384.0, 24576.0, 32768.0, 49152.0,
    65536.0,
)  # fmt: skip
#: Quantile of the number in system that must fit the memory / engine batch limit.
MEMORY_QUANTILE = 0.99


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
    """(N,) seconds of one request's prompt on the replica (c_p: FLOPs, the routed experts it
    reads, TP comm)."""
    ttft_base_s: FloatArray
    """(N,) TTFT of one request alone, ``t_1``: the predictors' TTFT at batch 1, at least the
    physics prefill time ``t_p`` (compute + one weight read;
    :func:`predictors.serving.grid.lone_prompt_ttft_s`)."""
    comm_s_per_token: FloatArray
    """(N,) TP all-reduce seconds per token (0 at TP 1); charged to the prompt tokens (in
    ``prefill_s``), the decode step's own is in the predictors' ITL."""
    output_tokens: FloatArray
    """(N,) mean output tokens per request (O)."""
    max_batch: FloatArray
    """(N,) sequences the KV cache (paged, current length) and the engine allow, lowered by
    :func:`rising_throughput` to where the throughput stops rising."""
    memory_batch: FloatArray | None = None
    """(N,) the KV cache's and the engine's own limit where :func:`rising_throughput` lowered
    ``max_batch`` below it (None: ``max_batch`` is that limit); tells a capacity the memory sets
    from one the throughput peak sets."""

    @property
    def rows(self) -> int:
        """Number of rows."""
        return int(self.idle_w.size)


def take_curves(c: ServingCurves, idx: npt.NDArray[np.int64]) -> ServingCurves:
    """The rows *idx* of *c* (the batch grid shared)."""
    arrays = {
        f.name: getattr(c, f.name)[idx]
        for f in fields(c)
        if f.name != "batch" and getattr(c, f.name) is not None
    }
    return replace(c, **arrays)


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


def isotonic_falling(values: FloatArray, weights: FloatArray) -> FloatArray:
    """The weighted least-squares non-increasing fit of each row of *values* (N, G) (pool
    adjacent violators, by the min-max formula ``f_i = min_{j<=i} max_{k>=i} mean(j..k)``,
    vectorised over rows; G is the batch grid's few points). *weights* (N, G) > 0."""
    n, g = values.shape
    wy = np.concatenate((np.zeros((n, 1)), np.cumsum(weights * values, axis=1)), axis=1)
    w = np.concatenate((np.zeros((n, 1)), np.cumsum(weights, axis=1)), axis=1)
    j = np.arange(g)[:, None]
    k = np.arange(g)[None, :]
    upper = k >= j  # mean(j..k) exists for j <= k
    mean = (wy[:, None, 1:] - wy[:, :-1, None]) / np.where(
        upper, w[:, None, 1:] - w[:, :-1, None], 1.0
    )
    mean = np.where(upper, mean, -np.inf)
    # over k >= i: the running max from the right, per start j
    tail = np.maximum.accumulate(mean[:, :, ::-1], axis=2)[:, :, ::-1]
    tail = np.where(upper, tail, np.inf)  # cell (j, i) counts for j <= i only
    fitted: FloatArray = tail.min(axis=1)
    return fitted


def steady_throughput(itl_s: FloatArray, predicted: npt.NDArray[np.bool_]) -> FloatArray:
    """*itl_s* (N, G, non-decreasing along :data:`BATCH_GRID`) with the time per sequence
    ``ITL(b) / b`` non-increasing along the grid, so that the decode throughput ``b / ITL(b)``
    never falls as the batch grows (docs/method.md §3): the step reads the weights once for the
    whole batch and its KV and FLOPs grow with b, so a step time ``A + B·b`` (``A >= 0``) gives
    a throughput that rises and saturates. The trees' steps can break this (Llama-3.1-8B on
    H200: the throughput at batch 160 below that at 128, above it again at 224), and the
    serving model would then stop at the first dip. The fit is the isotonic regression of
    ``log(ITL / b)`` (the trees' errors are multiplicative), cells the predictors gave weighing
    1 and cells :func:`monotone_curves` filled (*predicted* false) next to nothing; then ITL is
    made non-decreasing again, which keeps ``ITL / b`` non-increasing. Between grid points
    ``ITL`` is linear with an intercept >= 0, so ``b / ITL(b)`` rises there too."""
    g = itl_s.shape[1]
    batch = np.asarray(BATCH_GRID[:g], dtype=np.float64)[None, :]
    per_seq = np.log(np.maximum(itl_s, 1e-300) / batch)
    rising = (np.diff(per_seq, axis=1) > 0).any(axis=1)  # only these rows change at all
    out: FloatArray = np.array(itl_s, dtype=np.float64)
    if rising.any():
        weights = np.where(predicted[rising], 1.0, 1e-6)
        fitted = np.exp(isotonic_falling(per_seq[rising], weights)) * batch
        out[rising] = np.maximum.accumulate(fitted, axis=1)
    return out


def rising_throughput(c: ServingCurves) -> ServingCurves:
    """*c* with ``max_batch`` lowered to where λ(b) stops rising (first knot of
    :data:`CURVE_B` after which the rate falls): beyond the throughput peak more sequences in
    flight serve fewer requests, so the model's fixed point would not be unique."""
    knots = np.broadcast_to(np.asarray(CURVE_B), (c.rows, len(CURVE_B)))
    b = np.minimum(knots, c.max_batch[:, None])
    lam = rate_per_s(c, np.maximum(b, 1e-9))
    # falls, not flat: a throughput that saturates (:func:`steady_throughput` pools the grid
    # points the trees had falling) is no peak, and rounding must not make one
    falls = np.diff(lam, axis=1) < -1e-9 * lam[:, 1:]
    first = np.where(falls.any(axis=1), falls.argmax(axis=1), len(CURVE_B) - 1)
    peak = b[np.arange(c.rows), first]
    return replace(
        c,
        max_batch=np.where(falls.any(axis=1), np.minimum(c.max_batch, peak), c.max_batch),
        memory_batch=c.max_batch if c.memory_batch is None else c.memory_batch,
    )


def interp_rows(grid: FloatArray, values: FloatArray, x: FloatArray) -> FloatArray:
    """Per-row linear interpolation of ``values`` (N, G) on the shared ``grid`` at ``x`` (N, M);
    constant below the first and linear beyond the last grid point.

    Points the rows share (``x`` broadcast from one row, :func:`shared_points`) are located on
    the grid once; the arithmetic per value is the same either way."""
    g = grid.size
    if x.ndim == 2 and x.shape[0] > 1 and x.strides[0] == 0:
        row = x[0]
        idx = np.clip(np.searchsorted(grid, row, side="right") - 1, 0, g - 2)
        t_row = (np.maximum(row, grid[0]) - grid[idx]) / (grid[idx + 1] - grid[idx])
        v0, v1 = values.take(idx, axis=1), values.take(idx + 1, axis=1)
        shared: FloatArray = v0 + t_row * (v1 - v0)
        return shared
    idx = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, g - 2)
    x0, x1 = grid.take(idx), grid.take(idx + 1)
    # the (row, idx) cells of values, through flat positions (cheaper than 2-D fancy indexing)
    flat = np.ascontiguousarray(values).ravel()
    at = idx + (np.arange(values.shape[0]) * values.shape[1])[:, None]
    v0, v1 = flat.take(at), flat.take(at + 1)
    t = (np.maximum(x, grid[0]) - x0) / (x1 - x0)
    out: FloatArray = v0 + t * (v1 - v0)
    return out


def shared_points(points: FloatArray, rows: int) -> FloatArray:
    """The 1-D *points* as the (rows, M) points of every row (a broadcast view: the curve
    functions then locate them on the grid once for all rows)."""
    return np.broadcast_to(points, (rows, points.size))


def as_column(a: FloatArray) -> FloatArray:
    """A per-row vector (N,) as a column (N, 1) that broadcasts against points per row."""
    return a[:, None]


def step_time_s(c: ServingCurves, b: FloatArray) -> FloatArray:
    """τ(b) (N, M): decode step (the predictors' ITL, TP all-reduce included) + the prompt
    tokens arriving per step."""
    if b.ndim == 2 and b.shape[0] > 1 and b.strides[0] == 0:  # shared points stay shared
        at = shared_points(np.maximum(b[0], 1.0), b.shape[0])
    else:
        at = np.maximum(b, 1.0)
    dec = interp_rows(c.batch, c.itl_s, at)
    result: FloatArray = dec + b * as_column(c.prefill_s) / as_column(c.output_tokens)
    return result


def rate_per_s(c: ServingCurves, b: FloatArray) -> FloatArray:
    """λ(b) (N, M): arrival rate that keeps b sequences decoding."""
    result: FloatArray = b / (as_column(c.output_tokens) * step_time_s(c, b))
    return result


def in_system(c: ServingCurves, b: FloatArray, tau: FloatArray | None = None) -> FloatArray:
    """n(b) (N, M): mean requests in the system (decoding + in prefill); *tau*: τ(b) when the
    caller has it already."""
    tau = step_time_s(c, b) if tau is None else tau
    lam = b / (as_column(c.output_tokens) * tau)
    result: FloatArray = b + lam * (as_column(c.ttft_base_s) + tau)
    return result


def ttft_s(c: ServingCurves, b: FloatArray) -> FloatArray:
    """TTFT(b) (N, M) = t_p + τ(b)."""
    result: FloatArray = as_column(c.ttft_base_s) + step_time_s(c, b)
    return result
