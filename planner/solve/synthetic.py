"""Synthetic but realistic fleet problems (:class:`PlanningInputs`) for the solver benchmarks
(``benchmarks/bench_solver.py``) and the solver tests.

Instances are shaped like real ones: GPU types with spread-out price, speed and idle power; per
model a daily load profile; ~25 % of (model, GPU) pairs infeasible (memory or SLA); large models
only on TP 2/4; a third of the GPU types in short supply so that the inventory binds; objective
cost + carbon price (weighted). Everything is deterministic in the seed.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace
from typing import Any

from planner.inputs import Candidate, GpuInfo, ModelDemand, Objective, PlanningInputs


def random_inputs(
    n_models: int,
    n_gpus: int,
    n_periods: int = 24,
    seed: int = 0,
    *,
    time_limit_s: float = 60.0,
    relative_gap: float = 1e-3,
    threads: int = 1,
    power_cap: bool = False,
    curves: bool = False,
) -> PlanningInputs:
    """A random but realistic :class:`PlanningInputs` (deterministic in *seed*). With
    *curves*, every candidate has a concave power curve shaped like the serving model's
    (:data:`CURVE_FRACTIONS` knots; it saturates early: a few requests in flight keep a GPU
    busy) instead of a linear one."""
    rng = random.Random(seed)
    gpus: list[tuple[str, float, float, float, float]] = []  # id, speed, idle_w, peak_w, usd/h
    gpu_info: dict[str, GpuInfo] = {}
    for g in range(n_gpus):
        speed = rng.uniform(0.2, 4.0)
        peak_w = 70 + 230 * speed * rng.uniform(0.7, 1.3)
        idle_w = peak_w * rng.uniform(0.08, 0.25)
        usd_per_hour = 0.25 + 0.9 * speed * rng.uniform(0.6, 1.5)
        gid = f"GPU-{g:02d}"
        gpus.append((gid, speed, idle_w, peak_w, usd_per_hour))
        gpu_info[gid] = GpuInfo(gid, tflops_per_w=speed * 400 / peak_w, usd_per_hour=usd_per_hour)
    inventory: dict[str, int | None] = {}
    for gid, *_ in gpus:
        inventory[gid] = rng.randint(4, 8 + n_models // 2) if rng.random() < 0.33 else None
    hours_per_period = 8760.0 / n_periods
    models: list[ModelDemand] = []
    candidates: list[Candidate] = []
    for m in range(n_models):
        size = rng.choice((1.0, 1.0, 2.0, 4.0, 8.0))  # relative model size
        base_rps = math.exp(rng.uniform(math.log(0.05), math.log(30.0)))
        phase = rng.uniform(0, 2 * math.pi)
        profile = tuple(
            round(base_rps * (0.65 + 0.35 * math.sin(2 * math.pi * t / n_periods + phase)), 4)
            for t in range(n_periods)
        )
        name = f"model-{m:03d}"
        models.append(
            ModelDemand(
                name=name,
                model=f"org/llm-{m:03d}",
                requests_per_s_by_period=profile,
                itl_sla_s=rng.choice((0.03, 0.05, 0.08, 0.15)),
                min_replicas=rng.choice((0, 0, 1, 2)),
                input_tokens=512,
                output_tokens=256,
            )
        )
        tp = 1 if size <= 2 else (2 if size <= 4 else 4)
        for gid, speed, idle_w, peak_w, usd_per_hour in gpus:
            feasible = rng.random() > 0.25
            cap = speed / size * rng.uniform(1.5, 6.0) * tp
            power_w = idle_w + (peak_w - idle_w) * rng.uniform(0.5, 0.95)
            shape = rng.uniform(3.0, 30.0)
            candidates.append(
                _with_curve(shape, curves)(
                    Candidate(
                        name=name,
                        model=f"org/llm-{m:03d}",
                        gpu=gid,
                        tp=tp,
                        gpus_per_replica=tp,
                        feasible=feasible,
                        reason="" if feasible else "ITL above SLA at batch 1",
                        batch_size=rng.randint(1, 64),
                        itl_s_at_capacity=0.02,
                        max_requests_per_s_per_replica=round(cap, 4),
                        idle_power_w_per_replica=round(idle_w * tp, 2),
                        energy_j_per_request=round((power_w - idle_w) * tp / cap, 3),
                        usd_per_hour_per_replica=round(usd_per_hour * tp, 4),
                        power_w_per_gpu_at_capacity=round(power_w, 2),
                    )
                )
            )
    return PlanningInputs(
        scenario=f"random-{n_models}x{n_gpus}x{n_periods}-s{seed}",
        models=tuple(models),
        candidates=tuple(candidates),
        inventory=inventory,
        period_hours=tuple([hours_per_period] * n_periods),
        pue=1.2,
        electricity_usd_per_kwh=0.15,
        grid_g_co2_per_kwh=350.0,
        carbon_usd_per_kg=None,
        power_cap_kw=None,
        budget_usd=None,
        objective=Objective("weighted", {"cost_usd": 1.0, "carbon_kg": 0.05}),
        gpu_info=gpu_info,
        time_limit_s=time_limit_s,
        threads=threads,
        seed=0,
        relative_gap=relative_gap,
    )


CURVE_FRACTIONS: tuple[float, ...] = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
"""Knots of the benchmark's power curves as fractions of the capacity."""


def _with_curve(shape: float, curves: bool) -> Any:
    """A function giving a candidate the concave curve idle + (top − idle)(1 − e^(−k u)) /
    (1 − e^(−k)), u = rate / capacity (identity without *curves*)."""

    def apply(c: Candidate) -> Candidate:
        if not curves or not c.feasible:
            return c
        cap, idle = c.max_requests_per_s_per_replica, c.idle_power_w_per_replica
        top = idle + c.energy_j_per_request * cap
        xs = tuple(cap * u for u in CURVE_FRACTIONS)
        ps = tuple(
            idle + (top - idle) * (1 - math.exp(-shape * u)) / (1 - math.exp(-shape))
            for u in CURVE_FRACTIONS
        )
        slope = min((p - idle) / x for x, p in zip(xs[1:], ps[1:], strict=True))
        return replace(
            c,
            energy_j_per_request=slope,
            load_curve_requests_per_s=xs,
            power_curve_w_per_replica=ps,
        )

    return apply
