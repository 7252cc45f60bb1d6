"""The serving model of a disaggregated prefill/decode unit (numpy core, vectorised over rows).

A unit is ``x`` prefill workers and ``y`` decode workers, each side with its own GPU type, GPUs
per worker and parallel layout. Requests arrive as a Poisson stream of rate λ (requests/s per
unit); each has ``I`` prompt and ``O`` output tokens. docs/method.md, "Disaggregated prefill and
decode", states the model; in short:

* **prefill pool**: an M/D/c queue (:mod:`predictors.serving.disagg_queue`) with ``c`` servers
  (the ``x`` workers, or their ``x · DP`` attention-DP ranks) and the service time
  ``s = max(c_p, κ · T_1)`` (:class:`DisaggSettings`): ``c_p`` is the prompt's compute (its FLOPs
  at the prefill MFU plus its TP all-reduce, :func:`predictors.serving.grid.row_physics`;
  prompts batched by tokens share the weight read), ``T_1`` the TTFT of a lone prompt (the
  predictors' TTFT at batch 1 on the worker, at least ``c_p``). TTFT = wait ``W_q`` + ``T_1`` +
  KV transfer ``t_kv``; at a percentile, the wait's percentile.
* **KV transfer**: the prompt's KV, ``bytes = kv_bytes_per_sequence(I)``
  (:func:`predictors.physics.kv_bytes_per_sequence`: precision, MLA or KV heads, windowed layers
  at most their window, recurrent state, from the catalog) over ``links`` parallel GPU links
  (the GPUs of one attention-DP rank, ``TP · PP``, the smaller side), NVLink when both pools sit
  in one NVLink domain, else the scale-out network:
  ``t_kv = latency + bytes / (links · link bandwidth)``.
* **decode pool**: each decode worker at ``λ / y`` is the aggregated serving model
  (:mod:`predictors.serving`) with no prefill chunks in its steps (``c_p = 0``): its decode
  concurrency ``b``, mean ITL ``τ(b)``, percentile ITL, memory check and power ``E[P(K)]``.
* **power**: prefill GPUs at ``idle + ρ · (P_busy − idle)`` with the busy share ``ρ = λ·s / c``
  and ``P_busy`` the power of a forward pass over the prompt's ``I`` tokens; decode GPUs at
  ``E[P(K)]``; unit power = ``x · g_p · P_p + y · g_d · P_d``.
* **capacity**: the largest λ at which the prefill side meets the TTFT SLA (transfer included,
  queue stable) and the decode side the ITL SLA and its memory quantile; each constraint is
  monotone in λ, so capacity = min(prefill capacity, y · decode-worker capacity).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predictors.serving.curves import CURVE_B, FloatArray, take_curves
from predictors.serving.disagg_queue import mdc_wait_s
from predictors.serving.disagg_table import (
    DEFAULT_SETTINGS,
    SETTING_CANDIDATES,
    DisaggSettings,
    DisaggTable,
    KvTransfer,
    PrefillPool,
    decode_curves,
    refused_table,
    take_units,
    with_settings,
)
from predictors.serving.operating import itl_at_percentile_s
from predictors.serving.shared_rows import CurveGroups, at_rates, capacity_rows, curve_groups

#: Fractions of the capacity at which the unit's power and latency curves are tabulated.
CURVE_FRACTIONS: tuple[float, ...] = (
    0.0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98,
    1.0,
)  # fmt: skip
#: Bisection steps of the prefill capacity (relative precision 2^-40).
_BISECT = 40


@dataclass(frozen=True)
class DisaggPoint:
    """The operating point of every unit at its rate (each field (N,); NaN above capacity:
    prefill queue unstable or decode workers above their memory/engine limit)."""

    requests_per_s: FloatArray
    prefill_utilisation: FloatArray
    ttft_wait_s: FloatArray
    ttft_s: FloatArray
    """Mean TTFT: wait + lone-prompt TTFT + KV transfer."""
    kv_transfer_s: FloatArray
    decoding_per_worker: FloatArray
    itl_s: FloatArray
    itl_s_p90: FloatArray
    prefill_power_w_per_gpu: FloatArray
    decode_power_w_per_gpu: FloatArray
    prefill_power_w: FloatArray
    """Whole prefill pool, W."""
    decode_power_w: FloatArray
    """Whole decode pool, W."""
    power_w: FloatArray
    """Whole unit, W."""
    output_throughput_tok_s: FloatArray


def prefill_power_w_per_gpu(p: PrefillPool, lam: FloatArray) -> FloatArray:
    """Mean power per prefill GPU at unit rate *lam* (broadcast (N,) or (N, M)):
    idle + ρ · (P_busy − idle), ρ = min(λ·S / x, 1)."""
    col = (lambda a: a[:, None]) if np.ndim(lam) == 2 else (lambda a: a)
    rho = np.clip(lam * col(p.service_s) / col(p.servers), 0.0, 1.0)
    result: FloatArray = col(p.idle_w) + rho * (col(p.busy_power_w) - col(p.idle_w))
    return result


def ttft_s(t: DisaggTable, lam: FloatArray, percentile: float | None) -> FloatArray:
    """TTFT (mean, or at *percentile*) at unit rate *lam* (N,): wait + T_1 + t_kv (inf when
    the prefill queue is unstable)."""
    wait = mdc_wait_s(t.prefill.servers, t.prefill.service_s, lam, percentile)
    result: FloatArray = wait + t.prefill.latency_s + t.kv.seconds
    return result


def disagg_at_rate(
    t: DisaggTable, lam: FloatArray, groups: CurveGroups | None = None
) -> DisaggPoint:
    """The operating point of every unit at unit rate *lam* requests/s: (N,), or (N, M) for M
    rates per unit (then every field is (N, M)). *groups*: the decode workers' identical rows
    (:func:`predictors.serving.shared_rows.curve_groups`; found here when not given), each
    distinct decode worker and rate evaluated once."""
    lam = np.asarray(lam, dtype=np.float64)
    flat = lam.ndim == 1
    lam2 = lam[:, None] if flat else lam

    def col(a: FloatArray) -> FloatArray:
        return np.asarray(a)[:, None]

    y = col(t.decode_workers)
    dec = at_rates(t.decode, lam2 / y, curve_groups(t.decode) if groups is None else groups)
    wait = mdc_wait_s(col(t.prefill.servers), col(t.prefill.service_s), lam2, None)
    stable = np.isfinite(wait) & np.isfinite(dec.itl_s) & t.ok[:, None]
    rho = lam2 * col(t.prefill.service_s) / col(t.prefill.servers)
    pp_gpu = prefill_power_w_per_gpu(t.prefill, lam2)
    pd_gpu = dec.power_w_per_gpu
    pp = pp_gpu * col(t.prefill.workers * t.prefill.gpus_per_worker)
    pd = pd_gpu * y * col(t.decode_gpus_per_worker)
    kv = np.broadcast_to(col(t.kv.seconds), lam2.shape)
    fields = (
        rho,
        wait,
        wait + col(t.prefill.latency_s) + kv,
        kv,
        dec.decoding,
        dec.itl_s,
        dec.itl_s_p90,
        pp_gpu,
        pd_gpu,
        pp,
        pd,
        pp + pd,
        lam2 * col(t.output_tokens),
    )
    shaped = [np.where(stable, f, np.nan) for f in fields]
    if flat:
        return DisaggPoint(lam, *(f[:, 0] for f in shaped))
    return DisaggPoint(lam2, *shaped)


@dataclass(frozen=True)
class DisaggCapacity:
    """Per unit: the largest rate meeting both SLAs and the curves up to it."""

    max_requests_per_s: FloatArray
    """(N,) 0 where not even the lightest load meets the SLAs (or the unit is refused)."""
    limit: list[str]
    """What sets the capacity (or fails at the lightest load): 'ttft' (prefill side, transfer
    included), 'itl', 'memory' or 'throughput' (decode side, as
    :class:`predictors.serving.operating.Capacity` says them)."""
    prefill_max_requests_per_s: FloatArray
    decode_max_requests_per_s: FloatArray
    """(N,) all y decode workers together."""
    itl_s_at_capacity: FloatArray
    """(N,) at the SLA percentile (mean when None)."""
    ttft_s_at_capacity: FloatArray
    """(N,) at the SLA percentile (mean when None)."""
    itl_s_light: FloatArray
    """(N,) ITL of a lone request (at the SLA percentile: the same)."""
    ttft_s_light: FloatArray
    """(N,) TTFT of a lone request: T_1 + t_kv."""
    curve_requests_per_s: list[FloatArray]
    """Per unit, ascending rates (first 0, last the capacity)."""
    curve_power_w: list[FloatArray]
    """Per unit, whole-unit mean power at the knots (first = every GPU idle), non-decreasing."""
    curve_prefill_power_w_per_gpu: list[FloatArray]
    curve_decode_power_w_per_gpu: list[FloatArray]
    curve_itl_s: list[FloatArray]
    """Per unit, mean ITL at the knots."""
    curve_ttft_s: list[FloatArray]
    """Per unit, mean TTFT at the knots."""


def prefill_capacity(
    t: DisaggTable, ttft_sla_s: FloatArray, percentile: float | None
) -> FloatArray:
    """Largest unit rate whose TTFT (at *percentile*) meets *ttft_sla_s* (may hold inf) with the
    prefill queue stable; 0 where a lone prompt misses it. TTFT rises with λ: bisection."""
    sla = np.asarray(ttft_sla_s, dtype=np.float64)
    hi = t.prefill.servers / t.prefill.service_s * (1.0 - 1e-9)
    ok0 = ttft_s(t, np.zeros(t.rows), percentile) <= sla
    lo = np.zeros(t.rows)
    top_ok = ttft_s(t, hi, percentile) <= sla
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        good = ttft_s(t, mid, percentile) <= sla
        lo = np.where(good, mid, lo)
        hi = np.where(good, hi, mid)
    result: FloatArray = np.where(ok0, np.where(top_ok, hi, lo), 0.0)
    return result


def disagg_capacity(
    t: DisaggTable,
    itl_sla_s: FloatArray,
    ttft_sla_s: FloatArray,
    percentile: float | None,
) -> DisaggCapacity:
    """Capacity of every unit under the SLAs (ITL on the decode side, TTFT on the prefill side;
    ``ttft_sla_s`` may hold inf) at the SLA *percentile* (None: means), same conventions as
    :func:`predictors.serving.operating.capacity`, and its curves (module docstring)."""
    n = t.rows
    y = t.decode_workers
    inf = np.full(n, np.inf)
    groups = curve_groups(t.decode)
    dec = capacity_rows(t.decode, np.asarray(itl_sla_s, dtype=np.float64), percentile, groups)
    lam_d = dec.max_requests_per_s * y
    lam_p = prefill_capacity(t, ttft_sla_s, percentile)
    lam_star = np.where(t.ok, np.minimum(lam_d, lam_p), 0.0)
    limit = [
        "ttft" if lp < ld else str(lim)
        for lp, ld, lim in zip(lam_p.tolist(), lam_d.tolist(), dec.limit, strict=True)
    ]
    # the curve's rates do not depend on the SLA (so a looser SLA never prices the same unit
    # higher): fractions of the SLA-free capacity (prefill queue stable, decode memory) and the
    # decode curve's own knots (where the power curve bends), up to λ*; the power at λ* is on
    # the chord between the rates around it, its latencies its own
    free_d = capacity_rows(t.decode, inf, percentile, groups).max_requests_per_s * y
    free_p = t.prefill.servers / t.prefill.service_s * (1.0 - 1e-6)
    lam_ref = np.where(t.ok, np.maximum(np.minimum(free_d, free_p), lam_star), 0.0)
    b = np.broadcast_to(np.asarray(CURVE_B), (n, len(CURVE_B)))
    fixed = np.sort(
        np.concatenate(
            (
                lam_ref[:, None] * np.asarray(CURVE_FRACTIONS)[None, :],
                np.minimum(at_rate_grid_rates(t, b), lam_ref[:, None]),
            ),
            axis=1,
        ),
        axis=1,
    )
    below = fixed < lam_star[:, None]  # the largest fixed rate, lam_ref >= λ*, becomes λ*
    grid = np.where(below, fixed, lam_star[:, None])
    # every fixed rate, λ* and 0 in one call: each distinct decode worker and rate once
    rates = np.concatenate((fixed, lam_star[:, None], np.zeros((n, 1))), axis=1)
    every = disagg_at_rate(t, rates, groups)
    m = fixed.shape[1]

    def column(name: str, j: int) -> FloatArray:
        out: FloatArray = np.asarray(getattr(every, name))[:, j]
        return out

    def curve(name: str, on_chord: bool) -> FloatArray:
        """*name* at the grid's rates: at the fixed rates below λ*, then at λ* its own value
        or (*on_chord*) the one interpolated between the fixed rates around it."""
        along = np.asarray(getattr(every, name))[:, :m]
        if on_chord:
            top = np.array([np.interp(lam_star[i], fixed[i], along[i]) for i in range(n)])
        else:
            top = column(name, m)
        out: FloatArray = np.where(below, along, top[:, None])
        return out

    power, ttft, itl = curve("power_w", True), curve("ttft_s", False), curve("itl_s", False)
    pp = curve("prefill_power_w_per_gpu", True)
    pd = curve("decode_power_w_per_gpu", True)
    curves: tuple[list[FloatArray], ...] = ([], [], [], [], [], [])
    idle_w = t.idle_w  # a property computed over every unit: once, not once per unit
    for i in range(n):
        keep = np.concatenate(([True], np.diff(grid[i]) > 0)) & np.isfinite(power[i])
        if lam_star[i] <= 0.0 or not keep.any():
            keep = np.zeros(grid.shape[1], dtype=bool)
            keep[0] = True
        idle = float(idle_w[i])
        curves[0].append(grid[i][keep])
        curves[1].append(np.maximum.accumulate(np.maximum(power[i][keep], idle)))
        curves[2].append(pp[i][keep])
        curves[3].append(pd[i][keep])
        curves[4].append(itl[i][keep])
        curves[5].append(ttft[i][keep])
    at_cap = lam_star
    # the decode concurrency at the unit's capacity λ* (below the decode pool's own where the
    # prefill side or the TTFT sets λ*)
    held_at_cap = column("decoding_per_worker", m)
    held_at_cap = np.where(np.isfinite(held_at_cap), held_at_cap, dec.decoding_at_capacity)
    return DisaggCapacity(
        lam_star,
        limit,
        lam_p,
        lam_d,
        itl_at_percentile_s(t.decode, held_at_cap[:, None], percentile)[:, 0],
        ttft_s(t, at_cap, percentile),
        itl_at_percentile_s(t.decode, np.zeros((n, 1)), percentile)[:, 0],
        column("ttft_s", m + 1),
        *curves,
    )


def at_rate_grid_rates(t: DisaggTable, b: FloatArray) -> FloatArray:
    """Unit rates (N, M) at which the decode workers hold *b* sequences each: y · λ_d(b)."""
    from predictors.serving.curves import rate_per_s

    result: FloatArray = rate_per_s(t.decode, np.maximum(b, 1e-9)) * t.decode_workers[:, None]
    return result


def wave_ttft_s(t: DisaggTable, concurrency: FloatArray) -> FloatArray:
    """Mean TTFT of a closed loop of *concurrency* users (N,) whose prompts arrive in waves of
    all ``N`` (:class:`DisaggSettings` ``waves``): each of the ``c`` servers takes ``m = N / c``
    of them in turn, so the k-th waits ``(k − 1) · s`` and the mean wait is ``(m − 1) · s / 2``
    (none while ``N ≤ c``); TTFT = that wait + T_1 + t_kv. It does not depend on the loop's
    rate; :func:`closed_loop_point` adds the wait of a saturated pool."""
    m = np.asarray(concurrency, dtype=np.float64) / t.prefill.servers
    wait = 0.5 * np.maximum(m - 1.0, 0.0) * t.prefill.service_s
    result: FloatArray = wait + t.prefill.latency_s + t.kv.seconds
    return result


def closed_loop_rate(t: DisaggTable, concurrency: FloatArray, waves: bool = False) -> FloatArray:
    """Unit rate at which the mean number of requests in the unit is *concurrency* (N,):
    ``λ · (TTFT(λ) + (O − 1) · ITL(λ)) = N`` (Little's law; rises with λ), TTFT the M/D/c
    queue's at λ or, with *waves*, :func:`wave_ttft_s`. Where even the top stable rate holds
    fewer, that top rate (the surplus waits before prefill)."""
    n_target = np.asarray(concurrency, dtype=np.float64)
    d_top = at_rate_grid_rates(t, t.decode.max_batch[:, None])[:, 0]
    hi = np.minimum(t.prefill.servers / t.prefill.service_s, d_top) * (1.0 - 1e-9)
    lo = np.zeros(t.rows)
    wave = wave_ttft_s(t, n_target) if waves else None
    groups = curve_groups(t.decode)

    def held(lam: FloatArray) -> FloatArray:
        pt = disagg_at_rate(t, lam, groups)
        ttft = pt.ttft_s if wave is None else np.where(np.isfinite(pt.ttft_s), wave, np.nan)
        result: FloatArray = lam * (ttft + (t.output_tokens - 1.0) * pt.itl_s)
        return result

    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        below = held(mid) < n_target
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return lo


def closed_loop_point(
    t: DisaggTable, concurrency: FloatArray, waves: bool = False
) -> tuple[DisaggPoint, FloatArray]:
    """The operating point at :func:`closed_loop_rate` and the TTFT a closed-loop benchmark of
    *concurrency* users sees there: the model's TTFT (the M/D/c queue's or, with *waves*,
    :func:`wave_ttft_s`), or where the unit saturates first the time the surplus users wait,
    ``N / λ − (O − 1) · ITL`` (Little's law), whichever is larger."""
    lam = closed_loop_rate(t, concurrency, waves)
    pt = disagg_at_rate(t, lam)
    model = pt.ttft_s
    if waves:
        model = np.where(np.isfinite(pt.ttft_s), wave_ttft_s(t, np.asarray(concurrency)), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        little = np.asarray(concurrency) / lam - (t.output_tokens - 1.0) * pt.itl_s
    ttft: FloatArray = np.fmax(model, np.where(np.isfinite(model), little, np.nan))
    return pt, ttft


__all__ = [
    "DEFAULT_SETTINGS",
    "SETTING_CANDIDATES",
    "DisaggCapacity",
    "DisaggPoint",
    "DisaggSettings",
    "DisaggTable",
    "KvTransfer",
    "PrefillPool",
    "closed_loop_point",
    "closed_loop_rate",
    "decode_curves",
    "disagg_at_rate",
    "disagg_capacity",
    "refused_table",
    "take_curves",
    "take_units",
    "wave_ttft_s",
    "with_settings",
]
