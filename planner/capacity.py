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
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from planner.inputs import Candidate, Exclusion, layout_text, ms_text
from predictors import physics
from predictors.api import Predictor
from predictors.serving.curves import CURVE_B, FloatArray, interp_rows, step_time_s
from predictors.serving.grid import ServingTable, serving_table
from predictors.serving.operating import capacity, itl_at_percentile_s

#: Fraction of the capacity a replica is planned to carry. 1: the serving model's queueing
#: (Poisson number in system, percentile ITL, 99th-percentile memory check) is the headroom.
CAPACITY_HEADROOM = 1.0


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
class _Point:
    """One spec's capacity result and the latencies its candidate reports."""

    rate: float
    b_star: float
    limit: str
    xs: FloatArray
    power_w_per_gpu: FloatArray
    itls: FloatArray
    itl_cap: float
    itl_lo: float
    itl_hi: float
    itl_light: float
    ttft_light: float
    power_at_b: tuple[float, float, float]
    """Power per GPU on the batch curves (point, lower, upper) at the capacity's concurrency."""


def _capacities(specs: list[CandidateSpec], table: ServingTable) -> list[_Point]:
    """The :class:`_Point` of every spec; one serving-model call per SLA percentile."""
    out: list[_Point | None] = [None] * len(specs)
    for pct in sorted({s.percentile for s in specs}, key=lambda p: -1.0 if p is None else p):
        idx = np.asarray([i for i, s in enumerate(specs) if s.percentile == pct])
        sub = _take(table.curves, idx)
        cap = capacity(
            sub,
            np.asarray([specs[i].itl_sla_s for i in idx], dtype=np.float64),
            np.asarray(
                [math.inf if specs[i].ttft_sla_s is None else specs[i].ttft_sla_s for i in idx],
                dtype=np.float64,
            ),
            pct,
        )
        at = cap.decoding_at_capacity[:, None]
        light = np.full((idx.size, 1), CURVE_B[0])
        itl_cap = itl_at_percentile_s(sub, at, pct)[:, 0]
        lo = step_time_s(_take(table.curves_lo, idx), at)[:, 0]
        hi = step_time_s(_take(table.curves_hi, idx), at)[:, 0]
        itl_light = itl_at_percentile_s(sub, light, pct)[:, 0]
        ttft_light = sub.ttft_base_s + step_time_s(sub, light)[:, 0]
        at_b = np.maximum(at, 1.0)
        p_mid, p_lo, p_hi = (
            interp_rows(sub.batch, _take(curves, idx).power_w, at_b)[:, 0]
            for curves in (table.curves, table.curves_lo, table.curves_hi)
        )
        for j, i in enumerate(idx):
            out[int(i)] = _Point(
                float(cap.max_requests_per_s[j]),
                float(cap.decoding_at_capacity[j]),
                cap.limit[j],
                cap.curve_requests_per_s[j],
                cap.curve_power_w_per_gpu[j],
                cap.curve_itl_s[j],
                float(itl_cap[j]),
                float(lo[j]),
                float(hi[j]),
                float(itl_light[j]),
                float(ttft_light[j]),
                (float(p_mid[j]), float(p_lo[j]), float(p_hi[j])),
            )
    return [o for o in out if o is not None]


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
    if live:
        table = serving_table(_rows(live), predictor, robust=robust)
        caps = _capacities(live, table)
        evaluated = [
            _one(spec, i, table, point, robust)
            for i, (spec, point) in enumerate(zip(live, caps, strict=True))
        ]
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
    spec: CandidateSpec, i: int, table: ServingTable, point: _Point, robust: bool
) -> Candidate:
    """The candidate of live spec *i* from its capacity result *point*."""
    error = table.error[i]
    if not table.fits[i] or (error == "" and table.curves.max_batch[i] < 1):
        usable = table.kv_budget_gb[i] + table.weights_gb[i]
        reserve = physics.RUNTIME_RESERVE_GB_PER_GPU * spec.gpus
        memory = {
            "code": Exclusion.MEMORY,
            "memory_needed_gb": float(table.weights_gb[i]),
            "memory_usable_gb": float(usable),
        }
        if table.weights_gb[i] > usable or error:
            return _infeasible(
                spec,
                f"needs {table.weights_gb[i] + reserve:.0f} GB for weights, has "
                f"{usable + reserve:.0f} GB usable on {spec.gpus}× {spec.gpu}"
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
    itl_light, ttft_light = point.itl_light, point.ttft_light
    if point.rate <= 0.0:
        bound = " (upper 90 % bound)" if robust else ""
        pct = f" p{spec.percentile:g}" if spec.percentile is not None else ""
        if point.limit == "ttft" and spec.ttft_sla_s is not None:
            return _infeasible(
                spec,
                f"TTFT {ms_text(ttft_light)} ms > SLA {ms_text(spec.ttft_sla_s)} ms even at the "
                "lightest load",
                itl_light,
                code=Exclusion.TTFT_SLA,
                ttft_s=ttft_light,
            )
        return _infeasible(
            spec,
            f"ITL{pct} {ms_text(itl_light)} ms{bound} > SLA {ms_text(spec.itl_sla_s)} ms "
            "even at the lightest load",
            itl_light,
            code=Exclusion.ITL_SLA,
        )
    if spec.usd_per_hour_per_gpu is None:
        return _infeasible(
            spec,
            f"no $/hour for {spec.gpu} in the catalog: set gpus.{spec.gpu}.usd_per_hour",
            code=Exclusion.NO_PRICE,
        )
    b_star, itl_cap, lo, hi = point.b_star, point.itl_cap, point.itl_lo, point.itl_hi
    # GPUs held but not running the replica (a partly used node or rack) idle
    spare_w = float(table.curves.idle_w[i]) * (spec.held - spec.gpus)
    power = point.power_w_per_gpu * spec.gpus + spare_w
    idle = float(table.curves.idle_w[i]) * spec.held
    slope = float(((power[1:] - idle) / point.xs[1:]).min())
    xs = tuple(point.xs.tolist())
    ps = tuple(power.tolist())
    itls = tuple(point.itls.tolist())
    in_domain = bool(table.in_domain[i])
    return Candidate(
        **_identity(spec),
        feasible=True,
        reason="" if in_domain else "outside the predictors' training domain",
        batch_size=max(1, round(b_star)),
        itl_s_at_capacity=itl_cap,
        max_requests_per_s_per_replica=xs[-1],
        idle_power_w_per_replica=idle,
        energy_j_per_request=max(0.0, slope),
        usd_per_hour_per_replica=spec.usd_per_hour_per_gpu * spec.held,
        power_w_per_gpu_at_capacity=ps[-1] / spec.held,
        in_domain=in_domain,
        itl_s_lo=min(lo, itl_cap),
        itl_s_hi=max(hi, itl_cap),
        power_w_per_gpu_predicted=point.power_at_b[0],
        power_w_per_gpu_lo=point.power_at_b[1],
        power_w_per_gpu_hi=point.power_at_b[2],
        idle_power_w_per_gpu=float(table.curves.idle_w[i]),
        tdp_w_per_gpu=float(table.tdp_w[i]) if math.isfinite(table.tdp_w[i]) else None,
        ttft_s=point.ttft_light,
        load_curve_requests_per_s=xs,
        power_curve_w_per_replica=ps,
        itl_curve_s=itls,
        capacity_limit=point.limit,
    )
