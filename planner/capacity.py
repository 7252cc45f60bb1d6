"""Capacity model: per (model entry, GPU type, TP degree) the operating point and its coefficients.

For every candidate deployment the shipped predictors are asked for power per GPU and ITL at each
concurrency of :data:`BATCH_GRID` (one vectorised call for the whole scenario). Then, per
candidate (formulas in docs/method.md):

* **memory**: the weights must fit beside the runtime reserve; the operating concurrency is capped
  by the KV cache that fits (:mod:`predictors.physics`);
* **operating concurrency** ``b``: the largest grid value whose ITL (the upper 90 % bound when the
  scenario is ``robust``) meets the SLA;
* **TTFT**: prefill time = 2 · active params · input tokens / (TP · peak FLOPS · MFU) plus one
  weight read (MFU = :data:`PREFILL_MFU`); must meet the TTFT SLA when one is given;
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

import polars as pl

from planner.inputs import Candidate
from predictors import physics
from predictors.api import Predictor

#: Concurrency values tried for the operating point.
BATCH_GRID: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
#: Fraction of the saturated request rate a replica is planned to carry (queueing slack).
CAPACITY_HEADROOM = 0.9
#: Model FLOPS utilisation assumed for prefill (compute-bound).
PREFILL_MFU = 0.5


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
    rows: dict[str, list[Any]] = {
        "_spec": [],
        "model": [],
        "gpu": [],
        "gpu_count": [],
        "engine": [],
        "precision": [],
        "batch_size": [],
        "input_tokens": [],
        "output_tokens": [],
    }
    for i, s in enumerate(specs):
        for b in BATCH_GRID:
            rows["_spec"].append(i)
            rows["model"].append(s.model)
            rows["gpu"].append(s.gpu)
            rows["gpu_count"].append(s.tp)
            rows["engine"].append(s.engine)
            rows["precision"].append(s.precision)
            rows["batch_size"].append(b)
            rows["input_tokens"].append(s.input_tokens)
            rows["output_tokens"].append(s.output_tokens)
    return pl.DataFrame(rows)


def _physics(specs: list[CandidateSpec], predictor: Predictor) -> pl.DataFrame:
    """Per spec: weight GB, usable GB, TTFT estimate (s) and idle power per GPU (W)."""
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
    prefill = 2.0 * pl.col("active_params_b") * 1e9 * pl.col("input_tokens") / (
        physics.peak_tflops() * 1e12 * pl.col("gpu_count") * PREFILL_MFU
    ) + physics.weight_bytes() / (pl.col("memory_bandwidth_gb_s") * 1e9 * pl.col("gpu_count"))
    return j.select(
        "_spec",
        (physics.weight_bytes() / 1e9).alias("weights_gb"),
        (
            (pl.col("memory_gb") * physics.MEMORY_UTILISATION - physics.RUNTIME_RESERVE_GB_PER_GPU)
            * pl.col("gpu_count")
        ).alias("usable_gb"),
        prefill.alias("ttft_s"),
        pl.col("idle_power_w").fill_null(pl.col("tdp_w") * 0.2).alias("idle_w"),
    )


def evaluate_candidates(
    specs: list[CandidateSpec], predictor: Predictor, *, robust: bool = False
) -> list[Candidate]:
    """Operating point, capacity and linear power coefficients of every spec (see module doc)."""
    if not specs:
        return []
    grid = _grid(specs)
    pred = predictor.predict(grid.drop("_spec")).with_columns(grid["_spec"])
    phys = {r["_spec"]: r for r in _physics(specs, predictor).iter_rows(named=True)}
    by_spec = {k[0]: g for k, g in pred.group_by("_spec")}
    out = []
    for i, spec in enumerate(specs):
        out.append(_one(spec, by_spec[i], phys[i], robust))
    return out


def _infeasible(spec: CandidateSpec, reason: str, itl_s: float = math.inf) -> Candidate:
    return Candidate(
        name=spec.name,
        model=spec.model,
        gpu=spec.gpu,
        tp=spec.tp,
        gpus_per_replica=spec.tp,
        feasible=False,
        reason=reason,
        batch_size=0,
        itl_s_at_capacity=itl_s,
        max_requests_per_s_per_replica=0.0,
        idle_power_w_per_replica=0.0,
        energy_j_per_request=0.0,
        usd_per_hour_per_replica=(spec.usd_per_hour_per_gpu or 0.0) * spec.tp,
        power_w_per_gpu_at_capacity=0.0,
    )


def _one(spec: CandidateSpec, rows: pl.DataFrame, phys: dict[str, Any], robust: bool) -> Candidate:
    if spec.excluded_reason:
        return _infeasible(spec, spec.excluded_reason)
    ok = rows.filter(pl.col("error") == "").sort("batch_size")
    if ok.is_empty():
        first_error = rows.sort("batch_size")["error"][0]
        if first_error.startswith("does not fit"):
            return _infeasible(
                spec,
                f"needs {phys['weights_gb'] + physics.RUNTIME_RESERVE_GB_PER_GPU * spec.tp:.0f} GB"
                f" for weights, has {phys['usable_gb']:.0f} GB usable on "
                f"{spec.tp}× {spec.gpu}",
            )
        return _infeasible(spec, first_error)
    itl_col = "itl_s_hi" if robust else "itl_s"
    meets = ok.filter(pl.col(itl_col) <= spec.itl_sla_s)
    best_itl = float(ok[itl_col].min())  # type: ignore[arg-type]
    if meets.is_empty():
        b1 = ok.row(0, named=True)
        bound = " (upper 90 % bound)" if robust else ""
        return _infeasible(
            spec,
            f"ITL {b1[itl_col] * 1000:.0f} ms{bound} > SLA {spec.itl_sla_s * 1000:.0f} ms at "
            f"batch {int(b1['batch_size'])}",
            best_itl,
        )
    ttft = float(phys["ttft_s"])
    if spec.ttft_sla_s is not None and ttft > spec.ttft_sla_s:
        return _infeasible(
            spec, f"TTFT {ttft:.2f} s > SLA {spec.ttft_sla_s:.2f} s (prefill estimate)", best_itl
        )
    if spec.usd_per_hour_per_gpu is None:
        return _infeasible(
            spec, f"no $/hour for {spec.gpu} in the catalog: set gpus.{spec.gpu}.usd_per_hour"
        )
    op = meets.sort("batch_size").row(-1, named=True)
    b = float(op["batch_size"])
    itl = float(op[itl_col])
    saturated_rps = b / (ttft + spec.output_tokens * itl)
    idle_w = float(phys["idle_w"])
    power_w = max(float(op["power_w_per_gpu"]), idle_w)
    energy_j = spec.tp * (power_w - idle_w) / saturated_rps
    return Candidate(
        name=spec.name,
        model=spec.model,
        gpu=spec.gpu,
        tp=spec.tp,
        gpus_per_replica=spec.tp,
        feasible=True,
        reason="" if op["in_domain"] else "outside the predictors' training domain",
        batch_size=int(b),
        itl_s_at_capacity=itl,
        max_requests_per_s_per_replica=CAPACITY_HEADROOM * saturated_rps,
        idle_power_w_per_replica=spec.tp * idle_w,
        energy_j_per_request=energy_j,
        usd_per_hour_per_replica=spec.usd_per_hour_per_gpu * spec.tp,
        power_w_per_gpu_at_capacity=idle_w + CAPACITY_HEADROOM * (power_w - idle_w),
        in_domain=bool(op["in_domain"]),
        itl_s_lo=float(op["itl_s_lo"]),
        itl_s_hi=float(op["itl_s_hi"]),
    )
