"""Capacity model: per (model entry, GPU type, TP degree) the operating point and its coefficients.

For every candidate deployment the shipped predictors are asked for power per GPU and ITL at each
concurrency of :data:`BATCH_GRID` (one vectorised call for the whole scenario). Then, per
candidate (formulas in docs/method.md):

* **memory**: the weights must fit beside the runtime reserve; the operating concurrency is capped
  by the KV cache that fits (:mod:`predictors.physics`);
* **operating concurrency** ``b``: the largest grid value whose ITL (the upper 90 % bound when the
  scenario is ``robust``) meets the SLA;
* **TTFT**: prefill time = 2 · active params · input tokens / (TP · peak FLOPS · MFU) plus one
  weight read (MFU = :data:`predictors.physics.PREFILL_MFU`, see
  :func:`predictors.physics.prefill_time_s`); must meet the TTFT SLA when one is given;
* **capacity**: a request holds a slot for TTFT + output tokens × ITL(b), so a replica completes
  ``b / (TTFT + out · ITL)`` requests/s when saturated (Little's law); we plan at
  :data:`CAPACITY_HEADROOM` of that to leave queueing slack;
* **power**: idle power per GPU from the catalog; at saturation each GPU draws the predicted
  P(b). Between, power is linear in load: replica power = idle + energy_per_request × req/s with
  energy_per_request = TP · (P(b) − P_idle) / saturated req/s.

Excluded candidates keep their reason ("ITL 31 ms > SLA 20 ms at batch 1", "needs 142 GB, has
80 GB", ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from planner.inputs import Candidate, Exclusion, ms_text
from predictors import physics
from predictors.api import Predictor

#: Concurrency values tried for the operating point.
BATCH_GRID: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
#: Fraction of the saturated request rate a replica is planned to carry (queueing slack).
CAPACITY_HEADROOM = 0.9


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


def _grid(specs: list[CandidateSpec]) -> pl.DataFrame:
    """Prediction rows: each spec at each :data:`BATCH_GRID` value, spec-major, batch ascending."""
    width = len(BATCH_GRID)
    frame = pl.DataFrame(
        {
            "model": [s.model for s in specs],
            "gpu": [s.gpu for s in specs],
            "gpu_count": [s.tp for s in specs],
            "engine": [s.engine for s in specs],
            "precision": [s.precision for s in specs],
            "input_tokens": [s.input_tokens for s in specs],
            "output_tokens": [s.output_tokens for s in specs],
        }
    )[np.repeat(np.arange(len(specs)), width)]
    batch = pl.Series("batch_size", np.tile(np.array(BATCH_GRID, dtype=np.int64), len(specs)))
    return frame.insert_column(5, batch)


def _physics(specs: list[CandidateSpec], predictor: Predictor) -> pl.DataFrame:
    """Per spec (in spec order): weight GB, usable GB, TTFT estimate (s), idle W and TDP per GPU."""
    from predictors.features import join_specs

    frame = pl.DataFrame(
        {
            "_spec": list(range(len(specs))),
            "model": [s.model for s in specs],
            "gpu": [s.gpu for s in specs],
            "gpu_count": [float(s.tp) for s in specs],
            "precision": [s.precision for s in specs],
            "batch_size": [1.0] * len(specs),
            "input_tokens": [s.input_tokens for s in specs],
            "output_tokens": [s.output_tokens for s in specs],
        }
    )
    j = join_specs(frame, predictor.catalog)
    return j.select(
        "_spec",
        (physics.weight_bytes() / 1e9).alias("weights_gb"),
        (
            (pl.col("memory_gb") * physics.MEMORY_UTILISATION - physics.RUNTIME_RESERVE_GB_PER_GPU)
            * pl.col("gpu_count")
        ).alias("usable_gb"),
        physics.prefill_time_s().alias("ttft_s"),
        pl.col("idle_power_w").alias("idle_w"),
        pl.col("tdp_w").cast(pl.Float64).alias("tdp_w"),
    ).sort("_spec")


@dataclass(frozen=True)
class _OperatingPoints:
    """Per spec, the grid rows that decide its operating point (indices into :data:`BATCH_GRID`).

    ``first_ok`` is the smallest batch without a prediction error, ``op`` the largest one that
    also meets the ITL SLA (-1 when there is none); ``best_itl_s`` the minimum ITL over the
    error-free rows; the ``*_at_*`` lists hold the grid values at those rows.
    """

    any_ok: list[bool]
    first_error: list[str]
    first_ok: list[int]
    itl_s_at_first_ok: list[float]
    best_itl_s: list[float]
    op: list[int]
    itl_s: list[float]
    itl_s_lo: list[float]
    itl_s_hi: list[float]
    power_w_per_gpu: list[float]
    power_w_per_gpu_lo: list[float]
    power_w_per_gpu_hi: list[float]
    in_domain: list[bool]


def _operating_points(pred: pl.DataFrame, itl_sla_s: list[float], robust: bool) -> _OperatingPoints:
    """Vectorised choice of the operating batch of every spec from the prediction grid.

    *pred* holds :data:`BATCH_GRID` rows per spec (spec-major, batch ascending), as
    :func:`_grid` builds them; nulls compare as "does not meet the SLA".
    """
    width = len(BATCH_GRID)
    n = len(itl_sla_s)
    rows = np.arange(n)
    error = pred["error"]
    ok = (error == "").to_numpy().reshape(n, width)
    itl_col = "itl_s_hi" if robust else "itl_s"
    itl = pred[itl_col].cast(pl.Float64).to_numpy().reshape(n, width)
    any_ok = np.asarray(ok.any(axis=1))
    first_ok = ok.argmax(axis=1)
    best = np.where(ok & ~np.isnan(itl), itl, np.inf).min(axis=1)
    meets = ok & (itl <= np.asarray(itl_sla_s, dtype=np.float64)[:, None])
    op = np.where(meets.any(axis=1), width - 1 - meets[:, ::-1].argmax(axis=1), -1)
    at = np.maximum(op, 0)

    def at_op(col: str) -> list[Any]:
        return pred[col].to_numpy().reshape(n, width)[rows, at].tolist()

    return _OperatingPoints(
        any_ok=any_ok.tolist(),
        first_error=error.gather_every(width).to_list(),
        first_ok=first_ok.tolist(),
        itl_s_at_first_ok=itl[rows, first_ok].tolist(),
        best_itl_s=best.tolist(),
        op=op.tolist(),
        itl_s=itl[rows, at].tolist(),
        itl_s_lo=at_op("itl_s_lo"),
        itl_s_hi=at_op("itl_s_hi"),
        power_w_per_gpu=at_op("power_w_per_gpu"),
        power_w_per_gpu_lo=at_op("power_w_per_gpu_lo"),
        power_w_per_gpu_hi=at_op("power_w_per_gpu_hi"),
        in_domain=at_op("in_domain"),
    )


def evaluate_candidates(
    specs: list[CandidateSpec], predictor: Predictor, *, robust: bool = False
) -> list[Candidate]:
    """Operating point, capacity and linear power coefficients of every spec (see module doc)."""
    live = [s for s in specs if not s.excluded_reason]
    evaluated: list[Candidate] = []
    if live:
        pred = predictor.predict(_grid(live))
        points = _operating_points(pred, [s.itl_sla_s for s in live], robust)
        phys = _physics(live, predictor)
        evaluated = [
            _one(spec, i, points, phys_row, robust)
            for i, (spec, phys_row) in enumerate(
                zip(live, phys.drop("_spec").iter_rows(), strict=True)
            )
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
        "gpus_per_replica": spec.tp,
    }


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
        usd_per_hour_per_replica=(spec.usd_per_hour_per_gpu or 0.0) * spec.tp,
        power_w_per_gpu_at_capacity=0.0,
    )


def _one(
    spec: CandidateSpec,
    i: int,
    points: _OperatingPoints,
    phys: tuple[Any, ...],
    robust: bool,
) -> Candidate:
    """The candidate of spec *i* from its operating point and its physics row."""
    weights_gb, usable_gb, ttft_s, idle_power_w, tdp_w = phys
    if not points.any_ok[i]:
        first_error = points.first_error[i]
        if first_error.startswith("does not fit"):
            return _infeasible(
                spec,
                f"needs {weights_gb + physics.RUNTIME_RESERVE_GB_PER_GPU * spec.tp:.0f} GB"
                f" for weights, has {usable_gb:.0f} GB usable on "
                f"{spec.tp}× {spec.gpu}",
                code=Exclusion.MEMORY,
                memory_needed_gb=float(weights_gb),
                memory_usable_gb=float(usable_gb),
            )
        return _infeasible(spec, first_error, code=Exclusion.PREDICTION)
    best_itl = points.best_itl_s[i]
    op = points.op[i]
    if op < 0:
        bound = " (upper 90 % bound)" if robust else ""
        return _infeasible(
            spec,
            f"ITL {ms_text(points.itl_s_at_first_ok[i])} ms{bound} > SLA "
            f"{ms_text(spec.itl_sla_s)} ms at batch {BATCH_GRID[points.first_ok[i]]}",
            best_itl,
            code=Exclusion.ITL_SLA,
        )
    ttft = float(ttft_s)
    if spec.ttft_sla_s is not None and ttft > spec.ttft_sla_s:
        return _infeasible(
            spec,
            f"TTFT {ms_text(ttft)} ms > SLA {ms_text(spec.ttft_sla_s)} ms (prefill estimate)",
            best_itl,
            code=Exclusion.TTFT_SLA,
            ttft_s=ttft,
        )
    if spec.usd_per_hour_per_gpu is None:
        return _infeasible(
            spec,
            f"no $/hour for {spec.gpu} in the catalog: set gpus.{spec.gpu}.usd_per_hour",
            code=Exclusion.NO_PRICE,
        )
    b = float(BATCH_GRID[op])
    itl = float(points.itl_s[i])
    saturated_rps = b / (ttft + spec.output_tokens * itl)
    idle_w = float(idle_power_w)
    power_w = max(float(points.power_w_per_gpu[i]), idle_w)
    energy_j = spec.tp * (power_w - idle_w) / saturated_rps
    in_domain = bool(points.in_domain[i])
    return Candidate(
        **_identity(spec),
        feasible=True,
        reason="" if in_domain else "outside the predictors' training domain",
        batch_size=int(b),
        itl_s_at_capacity=itl,
        max_requests_per_s_per_replica=CAPACITY_HEADROOM * saturated_rps,
        idle_power_w_per_replica=spec.tp * idle_w,
        energy_j_per_request=energy_j,
        usd_per_hour_per_replica=spec.usd_per_hour_per_gpu * spec.tp,
        power_w_per_gpu_at_capacity=idle_w + CAPACITY_HEADROOM * (power_w - idle_w),
        in_domain=in_domain,
        itl_s_lo=float(points.itl_s_lo[i]),
        itl_s_hi=float(points.itl_s_hi[i]),
        power_w_per_gpu_predicted=float(points.power_w_per_gpu[i]),
        power_w_per_gpu_lo=float(points.power_w_per_gpu_lo[i]),
        power_w_per_gpu_hi=float(points.power_w_per_gpu_hi[i]),
        idle_power_w_per_gpu=idle_w,
        tdp_w_per_gpu=None if tdp_w is None else float(tdp_w),
    )
