"""Capacity model: per (model entry, GPU type, layout) the capacity and the power curve.

One vectorised call of the serving model (:mod:`predictors.serving`,
:mod:`predictors.serving.grid`) for the whole scenario gives, per candidate (formulas in
docs/method.md, "Capacity"):

* **capacity**: the largest per-replica Poisson arrival rate whose ITL (at the SLA's
  ``percentile``, the mean when absent; the upper 90 % interval curve when ``robust``) and TTFT
  meet the SLA and whose number of requests in the system fits the paged KV cache and the
  engine's batch limit (99th percentile). No extra headroom: queueing is in the model;
* **power curve**: the replica's mean GPU power at the rates of the curve knots (idle at 0),
  linear between them; the optimiser prices energy on exactly this curve;
* **ITL curve**: the mean ITL at the same knots (the ITL "at served load").

Excluded candidates keep their reason ("ITL 31 ms > SLA 20 ms even at the lightest load",
"needs 142 GB for weights, has 80 GB", ...).
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from planner.inputs import Candidate, Exclusion, layout_text, ms_over
from planner.text import apart
from predictors.api import Predictor
from predictors.serving.curves import CURVE_B, interp_rows, step_time_s
from predictors.serving.grid import ServingTable, serving_table
from predictors.serving.operating import capacity, itl_at_percentile_s

#: Fraction of the capacity a replica is planned to carry. 1: the serving model's queueing
#: (Poisson number in system, percentile ITL, 99th-percentile memory check) is the headroom.
CAPACITY_HEADROOM = 1.0
#: Specs per serving-model call: the predictions of every batch of the grid for a chunk are the
#: build's memory peak (each spec is evaluated on its own, so the chunks give the same result).
EVALUATION_CHUNK = 4096


@dataclass(frozen=True)
class CandidateSpec:
    """One deployment to evaluate: the scenario facts a candidate needs."""

    name: str
    model: str
    gpu: str
    tp: int
    engine: str
    precision: str
    input_tokens: float
    output_tokens: float
    itl_sla_s: float
    ttft_sla_s: float | None
    usd_per_hour_per_gpu: float | None
    excluded_reason: str = ""
    percentile: float | None = None
    """SLA percentile (None: the mean)."""
    pp: int = 1
    """Pipeline stages (``tp`` is the tensor-parallel degree)."""
    dp: int = 1
    """Attention data-parallel ranks."""
    ep: int = 1
    """Expert-parallel degree (1 for dense models)."""
    held_gpus: int = 0
    """GPUs of inventory one replica takes (whole nodes or racks, docs/method.md "Layouts in
    the planner"); 0: its ``tp × pp × dp`` GPUs."""
    nodes: int = 1
    """Nodes one replica spans."""

    @property
    def gpus(self) -> int:
        """GPUs that run the replica: tp × pp × dp."""
        return self.tp * self.pp * self.dp

    @property
    def held(self) -> int:
        """GPUs of inventory one replica takes (at least :attr:`gpus`)."""
        return max(self.held_gpus, self.gpus)


def _rows(specs: list[CandidateSpec]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "model": [s.model for s in specs],
            "gpu": [s.gpu for s in specs],
            "gpu_count": [float(s.gpus) for s in specs],
            "engine": [s.engine for s in specs],
            "precision": [s.precision for s in specs],
            "input_tokens": [float(s.input_tokens) for s in specs],
            "output_tokens": [float(s.output_tokens) for s in specs],
            "pipeline_parallel": [float(s.pp) for s in specs],
            "data_parallel": [float(s.dp) for s in specs],
            "expert_parallel": [float(s.ep) for s in specs],
        }
    )


@dataclass(frozen=True)
class _Points:
    """Every spec's capacity result and the latencies its candidate reports, per spec (Python
    values, built in bulk: the per-candidate work is then list indexing)."""

    rate: list[float]
    b_star: list[float]
    limit: list[str]
    xs: list[array[float]]
    """Curve knots (req/s per replica, from 0)."""
    power_w: list[array[float]]
    """Power of one replica at the knots: per GPU × the GPUs running it + the spare GPUs'
    idle."""
    itls: list[array[float]]
    slope_w: list[float]
    """Least watts above the replica's idle per req/s over the knots after the first (inf
    without one)."""
    itl_cap: list[float]
    itl_lo: list[float]
    itl_hi: list[float]
    itl_light: list[float]
    ttft_light: list[float]
    power_at_b: list[tuple[float, float, float]]
    """Power per GPU on the batch curves (point, lower, upper) at the capacity's concurrency."""


def _per_spec(values: list[Any], idx: np.ndarray | None, out: list[Any]) -> None:
    """Scatter one percentile group's *values* to its specs *idx* in *out* (None: the group is
    every spec, in order)."""
    if idx is None:
        out[:] = values
        return
    for j, i in enumerate(idx.tolist()):
        out[i] = values[j]


def _curves(flat: np.ndarray, bounds: list[tuple[int, int]]) -> list[array[float]]:
    """Each row's slice ``[a, b)`` of the flat knots *flat*, as a packed curve (the same
    doubles, 8 bytes a knot: :data:`planner.inputs.candidate.CURVE_FIELDS`)."""
    data = np.ascontiguousarray(flat, dtype=np.float64).tobytes()
    return [array("d", data[8 * a : 8 * b]) for a, b in bounds]


def _capacities(specs: list[CandidateSpec], table: ServingTable) -> _Points:
    """The :class:`_Points` of *specs*; one serving-model call per SLA percentile."""
    size = len(specs)
    cols: list[list[Any]] = [[None] * size for _ in range(13)]
    (rate, b_star, limit, xs, power_w, itls, slope_w) = cols[:7]
    (itl_cap, itl_lo, itl_hi, itl_light, ttft_light, power_at_b) = cols[7:13]
    gpus = [s.tp * s.pp * s.dp for s in specs]
    running = np.asarray(gpus, dtype=np.float64)
    held = np.asarray([max(s.held_gpus, n) for s, n in zip(specs, gpus, strict=True)], np.float64)
    spare = held - running
    percentiles = [s.percentile for s in specs]
    for pct in sorted(set(percentiles), key=lambda p: -1.0 if p is None else p):
        idx: np.ndarray | None = None
        sub, sub_lo, sub_hi = table.curves, table.curves_lo, table.curves_hi
        itl_sla = np.asarray([s.itl_sla_s for s in specs], dtype=np.float64)
        ttft_sla = np.asarray(
            [math.inf if s.ttft_sla_s is None else s.ttft_sla_s for s in specs], dtype=np.float64
        )
        if len(set(percentiles)) > 1:  # this percentile's specs only
            idx = np.flatnonzero(np.asarray([p == pct for p in percentiles]))
            sub, sub_lo, sub_hi = (_take(c, idx) for c in (sub, sub_lo, sub_hi))
            itl_sla, ttft_sla = itl_sla[idx], ttft_sla[idx]
        rows = np.arange(size) if idx is None else idx
        cap = capacity(sub, itl_sla, ttft_sla, pct)
        at = cap.decoding_at_capacity[:, None]
        light = np.full((rows.size, 1), CURVE_B[0])
        lo = step_time_s(sub_lo, at)[:, 0]
        hi = step_time_s(sub_hi, at)[:, 0]
        at_b = np.maximum(at, 1.0)
        p_mid, p_lo, p_hi = (
            interp_rows(sub.batch, curves.power_w, at_b)[:, 0] for curves in (sub, sub_lo, sub_hi)
        )
        # the band holds its point, as the saved-plan check requires (lo <= power <= hi)
        p_lo, p_hi = np.minimum(p_lo, p_mid), np.maximum(p_hi, p_mid)
        # the curves of all rows at once, flat (row after row): the same elementwise
        # arithmetic as row by row, so the same numbers
        counts = cap.curve_knots
        flat_x = cap.flat_requests_per_s
        idle = np.repeat(sub.idle_w, counts)
        flat_p = cap.flat_power_w_per_gpu * np.repeat(running[rows], counts)
        flat_p = flat_p + idle * np.repeat(spare[rows], counts)
        ends = np.cumsum(counts)
        starts = ends - counts
        with np.errstate(divide="ignore", invalid="ignore"):
            per_rps = (flat_p - idle * np.repeat(held[rows], counts)) / flat_x
        per_rps[starts] = np.inf  # the first knot (rate 0) is not a slope
        least = np.minimum.reduceat(per_rps, starts) if per_rps.size else per_rps
        bounds = list(zip(starts.tolist(), ends.tolist(), strict=True))
        _per_spec(cap.max_requests_per_s.tolist(), idx, rate)
        _per_spec(cap.decoding_at_capacity.tolist(), idx, b_star)
        _per_spec(cap.limit, idx, limit)
        _per_spec(_curves(flat_x, bounds), idx, xs)
        _per_spec(_curves(flat_p, bounds), idx, power_w)
        _per_spec(_curves(cap.flat_itl_s, bounds), idx, itls)
        _per_spec(least.tolist(), idx, slope_w)
        _per_spec(itl_at_percentile_s(sub, at, pct)[:, 0].tolist(), idx, itl_cap)
        _per_spec(lo.tolist(), idx, itl_lo)
        _per_spec(hi.tolist(), idx, itl_hi)
        _per_spec(itl_at_percentile_s(sub, light, pct)[:, 0].tolist(), idx, itl_light)
        _per_spec((sub.ttft_base_s + step_time_s(sub, light)[:, 0]).tolist(), idx, ttft_light)
        triples = zip(p_mid.tolist(), p_lo.tolist(), p_hi.tolist(), strict=True)
        _per_spec(list(triples), idx, power_at_b)
    return _Points(*cols[:13])


def _take(curves: Any, idx: np.ndarray) -> Any:
    from dataclasses import fields, replace

    return replace(
        curves,
        **{
            f.name: getattr(curves, f.name)[idx]
            for f in fields(curves)
            if f.name != "batch" and isinstance(getattr(curves, f.name), np.ndarray)
        },
    )


def evaluate_candidates(
    specs: list[CandidateSpec], predictor: Predictor, *, robust: bool = False
) -> list[Candidate]:
    """Capacity and power curve of every spec (see module doc), in spec order."""
    live = [s for s in specs if not s.excluded_reason]
    evaluated: list[Candidate] = []
    for lo in range(0, len(live), EVALUATION_CHUNK):
        chunk = live[lo : lo + EVALUATION_CHUNK]
        table = serving_table(_rows(chunk), predictor, robust=robust)
        points = _capacities(chunk, table)
        idle_w, max_batch = table.curves.idle_w.tolist(), table.curves.max_batch.tolist()
        evaluated.extend(
            _one(spec, i, table, points, robust, idle_w[i], max_batch[i])
            for i, spec in enumerate(chunk)
        )
        del table, points  # the chunk's prediction grid is the build's memory peak
    done = iter(evaluated)
    return [
        _infeasible(s, s.excluded_reason, code=Exclusion.RULE) if s.excluded_reason else next(done)
        for s in specs
    ]


def _identity(spec: CandidateSpec) -> dict[str, Any]:
    """The fields naming a candidate's deployment (model entry, GPU type, TP degree)."""
    return {
        "name": spec.name,
        "model": spec.model,
        "gpu": spec.gpu,
        "tp": spec.tp,
        "gpus_per_replica": spec.held,
        "pipeline_parallel": spec.pp,
        "data_parallel": spec.dp,
        "expert_parallel": spec.ep,
        "nodes": spec.nodes,
    }


def _shape(spec: CandidateSpec) -> str:
    return layout_text(spec.tp, spec.pp, spec.dp, spec.ep)


def _infeasible(
    spec: CandidateSpec,
    reason: str,
    itl_s: float = math.inf,
    *,
    code: Exclusion,
    memory_needed_gb: float | None = None,
    memory_usable_gb: float | None = None,
    ttft_s: float | None = None,
) -> Candidate:
    return Candidate(
        **_identity(spec),
        feasible=False,
        reason=reason,
        exclusion=code,
        memory_needed_gb=memory_needed_gb,
        memory_usable_gb=memory_usable_gb,
        ttft_s=ttft_s,
        batch_size=0,
        itl_s_at_capacity=itl_s,
        max_requests_per_s_per_replica=0.0,
        idle_power_w_per_replica=0.0,
        energy_j_per_request=0.0,
        usd_per_hour_per_replica=(spec.usd_per_hour_per_gpu or 0.0) * spec.held,
        power_w_per_gpu_at_capacity=0.0,
    )


def _one(
    spec: CandidateSpec,
    i: int,
    table: ServingTable,
    points: _Points,
    robust: bool,
    idle_w: float,
    max_batch: float,
) -> Candidate:
    """The candidate of live spec *i* from its capacity result in *points* (*idle_w* and
    *max_batch*: its row of the table's curves)."""
    error = table.error[i]
    if not table.fits[i] or (error == "" and max_batch < 1):
        usable = table.kv_budget_gb[i] + table.weights_gb[i]
        memory = {
            "code": Exclusion.MEMORY,
            "memory_needed_gb": float(table.weights_gb[i]),
            "memory_usable_gb": float(usable),
        }
        if table.weights_gb[i] > usable or error:
            need, has = apart(table.weights_gb[i], usable, 0)  # they read apart
            return _infeasible(  # usable: after the runtime reserve, as predict says it
                spec,
                f"needs {need} GB for weights, has {has} GB usable on {spec.gpus}× {spec.gpu}"
                + ("" if spec.gpus == spec.tp else f" (TP {_shape(spec)})"),
                **memory,  # type: ignore[arg-type]
            )
        return _infeasible(
            spec,
            f"needs {table.weights_gb[i]:.0f} GB for weights: no room for one sequence's KV",
            **memory,  # type: ignore[arg-type]
        )
    if error:
        return _infeasible(spec, error, code=Exclusion.PREDICTION)
    itl_light, ttft_light = points.itl_light[i], points.ttft_light[i]
    if points.rate[i] <= 0.0:
        bound = " (upper 90 % bound)" if robust else ""
        pct = f" p{spec.percentile:g}" if spec.percentile is not None else ""
        if points.limit[i] == "ttft" and spec.ttft_sla_s is not None:
            ttft, sla = ms_over(ttft_light, spec.ttft_sla_s)
            return _infeasible(
                spec,
                f"TTFT {ttft} ms > SLA {sla} ms even at the lightest load",
                itl_light,
                code=Exclusion.TTFT_SLA,
                ttft_s=ttft_light,
            )
        itl, sla = ms_over(itl_light, spec.itl_sla_s)
        return _infeasible(
            spec,
            f"ITL{pct} {itl} ms{bound} > SLA {sla} ms even at the lightest load",
            itl_light,
            code=Exclusion.ITL_SLA,
        )
    if spec.usd_per_hour_per_gpu is None:
        return _infeasible(
            spec,
            f"no $/hour for {spec.gpu} in the catalog: set gpus.{spec.gpu}.usd_per_hour",
            code=Exclusion.NO_PRICE,
        )
    itl_cap, lo, hi = points.itl_cap[i], points.itl_lo[i], points.itl_hi[i]
    xs, ps = points.xs[i], points.power_w[i]
    in_domain = bool(table.in_domain[i])
    tdp_w = table.tdp_w[i]
    p_mid, p_lo, p_hi = points.power_at_b[i]
    held = spec.held
    return Candidate(  # the fields of _identity, written out: built by the ten thousand
        name=spec.name,
        model=spec.model,
        gpu=spec.gpu,
        tp=spec.tp,
        gpus_per_replica=held,
        pipeline_parallel=spec.pp,
        data_parallel=spec.dp,
        expert_parallel=spec.ep,
        nodes=spec.nodes,
        feasible=True,
        reason="" if in_domain else "outside the predictors' training domain",
        batch_size=max(1, round(points.b_star[i])),
        itl_s_at_capacity=itl_cap,
        max_requests_per_s_per_replica=xs[-1],
        idle_power_w_per_replica=idle_w * held,
        energy_j_per_request=max(0.0, points.slope_w[i]),
        usd_per_hour_per_replica=spec.usd_per_hour_per_gpu * held,
        power_w_per_gpu_at_capacity=ps[-1] / held,
        in_domain=in_domain,
        itl_s_lo=min(lo, itl_cap),
        itl_s_hi=max(hi, itl_cap),
        power_w_per_gpu_predicted=p_mid,
        power_w_per_gpu_lo=p_lo,
        power_w_per_gpu_hi=p_hi,
        idle_power_w_per_gpu=idle_w,
        tdp_w_per_gpu=tdp_w if math.isfinite(tdp_w) else None,
        ttft_s=ttft_light,
        load_curve_requests_per_s=xs,
        power_curve_w_per_replica=ps,
        itl_curve_s=points.itls[i],
        capacity_limit=points.limit[i],
    )
