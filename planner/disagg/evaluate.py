"""Disaggregated units -> planner candidates: one vectorised call of the disaggregated serving
model (:mod:`predictors.serving.disagg`) per SLA percentile, then per unit its capacity (both
pools within their SLAs), its pools' power curves and the unit's (their sum) on the same knots.

GPUs a worker holds but does not run (a partly used node) idle, as in :mod:`planner.capacity`.
A feasible unit's ``itl_s_hi`` is its decode step on the upper interval curves at its decode
concurrency at capacity (one more call of the model, on the feasible units; none with
``robust``, whose capacity is on those curves already).
Of the units of one (model entry, prefill GPU, decode GPU) every feasible one is kept; when none
is, the one closest to the SLA stays as the excluded unit that says why (:func:`kept_units`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from planner.disagg.units import Side, UnitSpec, unit_nodes
from planner.inputs import Candidate, Exclusion, Pool, ms_over, ms_text
from planner.inputs.candidate import least_slope_w
from predictors.api import Predictor
from predictors.catalog import validity
from predictors.serving.curves import step_time_s
from predictors.serving.disagg import (
    DisaggCapacity,
    DisaggTable,
    disagg_at_rate,
    disagg_capacity,
    take_curves,
)
from predictors.serving.disagg_build import disagg_curves


def _frame(specs: Sequence[UnitSpec]) -> pl.DataFrame:
    columns: dict[str, list[object]] = {
        "model": [s.model for s in specs],
        "engine": [s.facts.engine for s in specs],
        "precision": [s.facts.precision for s in specs],
        "input_tokens": [float(s.facts.input_tokens) for s in specs],
        "output_tokens": [float(s.facts.output_tokens) for s in specs],
    }
    for role in ("prefill", "decode"):
        sides: list[Side] = [getattr(s, role) for s in specs]
        columns[f"{role}_gpu"] = [d.gpu for d in sides]
        columns[f"{role}_gpu_count"] = [d.gpus_per_worker for d in sides]
        columns[f"{role}_workers"] = [d.workers for d in sides]
        columns[f"{role}_tp"] = [d.tp for d in sides]
        columns[f"{role}_pp"] = [d.pp for d in sides]
        columns[f"{role}_dp"] = [d.dp for d in sides]
        columns[f"{role}_ep"] = [d.ep for d in sides]
    return pl.DataFrame(columns)


def evaluate_units(
    specs: Sequence[UnitSpec], predictor: Predictor, *, robust: bool = False
) -> list[Candidate]:
    """The candidate of every unit spec, in spec order (module doc)."""
    out: list[Candidate | None] = [None] * len(specs)
    gpus = {side.gpu for s in specs for side in (s.prefill, s.decode)}
    node_gpus = {g: validity.node_gpus(predictor.catalog.gpu(g)) for g in gpus}
    for pct in {s.facts.percentile for s in specs}:
        idx = [i for i, s in enumerate(specs) if s.facts.percentile == pct]
        group = [specs[i] for i in idx]
        table = disagg_curves(predictor, _frame(group), robust=robust)
        cap = disagg_capacity(
            table,
            np.asarray([s.facts.itl_sla_s for s in group], dtype=np.float64),
            np.asarray(
                [math.inf if s.facts.ttft_sla_s is None else s.facts.ttft_sla_s for s in group],
                dtype=np.float64,
            ),
            pct,
        )
        at = disagg_at_rate(table, cap.max_requests_per_s)
        for j, i in enumerate(idx):
            decoding = float(at.decoding_per_worker[j])
            out[i] = _candidate(specs[i], j, table, cap, decoding, node_gpus)
        if not robust:
            _with_itl_bounds(out, idx, specs, at.decoding_per_worker, predictor)
    return [c for c in out if c is not None]


def _decode_worker(spec: UnitSpec) -> UnitSpec:
    """A unit of one decode worker of *spec* on both sides: its decode curves are *spec*'s."""
    worker = replace(spec.decode, workers=1)
    return UnitSpec("", spec.model, spec.facts, worker, worker)


def _with_itl_bounds(
    out: list[Candidate | None],
    idx: list[int],
    specs: Sequence[UnitSpec],
    decoding: np.ndarray,
    predictor: Predictor,
) -> None:
    """``itl_s_hi`` of the feasible units of *idx* (in place): the decode step on the upper 90 %
    interval curves at the unit's decode concurrency at capacity, as for an aggregated replica
    (:mod:`planner.capacity`); at least the point ITL at capacity."""
    live = [(j, i) for j, i in enumerate(idx) if (c := out[i]) is not None and c.feasible]
    if not live:
        return
    # the bound depends on the decode worker alone: one row per distinct decode worker
    rows: dict[UnitSpec, int] = {}
    for _, i in live:
        rows.setdefault(_decode_worker(specs[i]), len(rows))
    upper = disagg_curves(predictor, _frame(list(rows)), robust=True)
    pick = np.asarray([rows[_decode_worker(specs[i])] for _, i in live], dtype=np.int64)
    b = np.asarray([decoding[j] for j, _ in live], dtype=np.float64)[:, None]
    hi = step_time_s(take_curves(upper.decode, pick), b)[:, 0]
    for (_, i), h in zip(live, hi.tolist(), strict=True):
        c = out[i]
        if c is not None and math.isfinite(h):
            out[i] = replace(c, itl_s_hi=max(h, c.itl_s_at_capacity))


def _pool(side: Side, role: str, curve_w_per_gpu: np.ndarray, idle_w: float) -> Pool:
    """A pool whose running GPUs follow *curve_w_per_gpu* and whose spare held GPUs idle."""
    running = side.workers * side.gpus_per_worker
    spare_w = idle_w * side.workers * (side.held_per_worker - side.gpus_per_worker)
    idle = idle_w * running + spare_w
    curve = np.maximum.accumulate(np.maximum(curve_w_per_gpu * running + spare_w, idle))
    return Pool(
        role="prefill" if role == "prefill" else "decode",
        gpu=side.gpu,
        workers=side.workers,
        tp=side.tp,
        pipeline_parallel=side.pp,
        data_parallel=side.dp,
        expert_parallel=side.ep,
        gpus_per_worker=side.held_per_worker,
        power_w_at_capacity=float(curve[-1]),
        idle_power_w=idle,
        power_curve_w=tuple(curve.tolist()),
    )


def _pools(
    spec: UnitSpec, j: int, table: DisaggTable, cap: DisaggCapacity | None
) -> tuple[Pool, Pool]:
    """The unit's pools; with *cap* their power curves on the unit's knots."""
    knots = 1 if cap is None else cap.curve_requests_per_s[j].size
    p_idle, d_idle = float(table.prefill.idle_w[j]), float(table.decode.idle_w[j])
    p_curve = np.full(knots, p_idle) if cap is None else cap.curve_prefill_power_w_per_gpu[j]
    d_curve = np.full(knots, d_idle) if cap is None else cap.curve_decode_power_w_per_gpu[j]
    return (
        _pool(spec.prefill, "prefill", p_curve, p_idle),
        _pool(spec.decode, "decode", d_curve, d_idle),
    )


def _identity(
    spec: UnitSpec, pools: tuple[Pool, Pool], node_gpus: Mapping[str, int]
) -> dict[str, object]:
    """The fields naming a unit: its decode pool's GPU and layout, both pools' GPUs, nodes and
    price."""
    d = spec.decode
    sides = (spec.prefill, d)
    return {
        "nodes": unit_nodes(sides, node_gpus),
        "name": spec.name,
        "model": spec.model,
        "gpu": d.gpu,
        "tp": d.tp,
        "gpus_per_replica": sum(p.gpus for p in pools),
        "pipeline_parallel": d.pp,
        "data_parallel": d.dp,
        "expert_parallel": d.ep,
        "deployment": "disaggregated",
        "pools": pools,
        "usd_per_hour_per_replica": sum(
            s.usd_per_hour_per_gpu * s.workers * s.held_per_worker for s in sides
        ),
    }


def _excluded(
    spec: UnitSpec,
    j: int,
    table: DisaggTable,
    cap: DisaggCapacity,
    error: str,
    node_gpus: Mapping[str, int],
) -> Candidate:
    """The excluded candidate of a unit the model refuses or that misses the SLA."""
    pools = _pools(spec, j, table, None)
    f = spec.facts
    ttft, itl = float(cap.ttft_s_light[j]), float(cap.itl_s_light[j])
    if error:
        code, reason = Exclusion.PREDICTION, error
    elif cap.limit[j] == "ttft" and f.ttft_sla_s is not None:
        code = Exclusion.TTFT_SLA
        kv = ms_text(float(table.kv.seconds[j]))
        shown, sla = ms_over(ttft, f.ttft_sla_s)
        reason = f"TTFT {shown} ms (KV transfer {kv} ms) > SLA {sla} ms even at the lightest load"
    elif cap.limit[j] == "memory":
        code = Exclusion.MEMORY
        reason = "no room for one sequence's KV cache on the decode workers"
    else:
        pct = f" p{f.percentile:g}" if f.percentile is not None else ""
        code = Exclusion.ITL_SLA
        reason = "ITL{} {} ms > SLA {} ms even at the lightest load".format(
            pct, *ms_over(itl, f.itl_sla_s)
        )
    return Candidate(
        **_identity(spec, pools, node_gpus),  # type: ignore[arg-type]
        feasible=False,
        reason=reason,
        exclusion=code,
        batch_size=0,
        itl_s_at_capacity=itl if math.isfinite(itl) and not error else math.inf,
        max_requests_per_s_per_replica=0.0,
        idle_power_w_per_replica=0.0,
        energy_j_per_request=0.0,
        power_w_per_gpu_at_capacity=0.0,
        ttft_s=ttft if math.isfinite(ttft) and not error else None,
        capacity_limit=cap.limit[j] if not error else "",
    )


def _candidate(
    spec: UnitSpec,
    j: int,
    table: DisaggTable,
    cap: DisaggCapacity,
    decoding: float,
    node_gpus: Mapping[str, int],
) -> Candidate:
    error = table.error[j]
    if error or cap.max_requests_per_s[j] <= 0.0:
        return _excluded(spec, j, table, cap, error, node_gpus)
    pools = _pools(spec, j, table, cap)
    xs = cap.curve_requests_per_s[j]
    power = np.asarray(pools[0].power_curve_w) + np.asarray(pools[1].power_curve_w)
    idle = float(power[0])
    held = sum(p.gpus for p in pools)
    tdp = (
        float(table.prefill.tdp_w[j]) * pools[0].gpus + float(table.decode_tdp_w[j]) * pools[1].gpus
    ) / held
    in_domain = bool(table.in_domain[j])
    band = _power_band(pools, j, table, decoding)
    return Candidate(
        **_identity(spec, pools, node_gpus),  # type: ignore[arg-type]
        feasible=True,
        reason="" if in_domain else "outside the predictors' training domain",
        batch_size=max(1, round(decoding * spec.decode.workers)),
        itl_s_at_capacity=float(cap.itl_s_at_capacity[j]),
        max_requests_per_s_per_replica=float(xs[-1]),
        idle_power_w_per_replica=idle,
        energy_j_per_request=least_slope_w(xs.tolist(), power.tolist()),
        power_w_per_gpu_at_capacity=float(power[-1]) / held,
        in_domain=in_domain,
        power_w_per_gpu_predicted=None if band is None else band[0],
        power_w_per_gpu_lo=None if band is None else band[1],
        power_w_per_gpu_hi=None if band is None else band[2],
        idle_power_w_per_gpu=idle / held,
        tdp_w_per_gpu=tdp,
        ttft_s=float(cap.ttft_s_light[j]),
        load_curve_requests_per_s=tuple(xs.tolist()),
        power_curve_w_per_replica=tuple(power.tolist()),
        itl_curve_s=tuple(cap.curve_itl_s[j].tolist()),
        capacity_limit=cap.limit[j],
        ttft_curve_s=tuple(cap.curve_ttft_s[j].tolist()),
    )


def _power_band(
    pools: tuple[Pool, Pool], j: int, table: DisaggTable, decoding: float
) -> tuple[float, float, float] | None:
    """(point, lower, upper) power per held GPU of the unit at capacity (None without the pools'
    intervals), as an aggregated replica records its own (:mod:`planner.capacity`): the point is
    the unit's power at capacity; each pool's power above idle is scaled by its interval, the
    prefill pool's by the interval of its busy power (its power is linear in it), the decode
    pool's by the lower and upper power curves against the point curve at the decode concurrency
    at capacity."""
    bands = table.power_bands
    if bands is None:
        return None
    p_idle, d_idle = float(table.prefill.idle_w[j]), float(table.decode.idle_w[j])
    busy = float(table.prefill.busy_power_w[j])
    grid = table.decode.batch
    b = max(decoding, float(grid[0]))
    d_point = float(np.interp(b, grid, table.decode.power_w[j]))
    held = sum(p.gpus for p in pools)
    total = sum(p.power_w_at_capacity for p in pools)
    above = [p.power_w_at_capacity - p.idle_power_w for p in pools]
    out = []
    for pre_w, curve in (
        (float(bands.prefill_busy_lo_w[j]), bands.decode_lo_w[j]),
        (float(bands.prefill_busy_hi_w[j]), bands.decode_hi_w[j]),
    ):
        f_pre = (pre_w - p_idle) / (busy - p_idle) if busy > p_idle else 1.0
        f_dec = (
            (float(np.interp(b, grid, curve)) - d_idle) / (d_point - d_idle)
            if d_point > d_idle
            else 1.0
        )
        out.append((total + above[0] * (f_pre - 1.0) + above[1] * (f_dec - 1.0)) / held)
    point = total / held
    return point, min(out[0], point), max(out[1], point)


def kept_units(units: Sequence[Candidate]) -> list[Candidate]:
    """Per (model entry, prefill GPU, decode GPU) its feasible units; when it has none, the one
    closest to the SLA (lowest ITL, then TTFT), which says why (module doc). Input order kept."""
    groups: dict[tuple[str, ...], list[Candidate]] = {}
    for c in units:
        groups.setdefault((c.name, *(p.gpu for p in c.pools)), []).append(c)
    keep: set[int] = set()
    for group in groups.values():
        ok = [c for c in group if c.feasible]
        if not ok:
            ok = [min(group, key=lambda c: (c.itl_s_at_capacity, c.ttft_s or math.inf))]
        keep.update(id(c) for c in ok)
    return [c for c in units if id(c) in keep]
