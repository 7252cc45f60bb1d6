"""Solver scaling benchmark: random fleets of M models × G GPU types × T periods.

Targets (issue 5): 50 × 30 × 24 proven optimal (gap <= 0.1 %) in < 10 s on 2 cores;
500 × 30 × 24 with gap <= 1 % in < 60 s. Every size runs in three variants (``VARIANTS``):
binding inventory, unlimited inventory and binding inventory plus a power cap. Run::

    /work/venv/bin/python benchmarks/bench_solver.py            # both sizes, 3 seeds
    /work/venv/bin/python benchmarks/bench_solver.py --models 50 --variants linked --seeds 1

A run meets its target when the reported gap is within the target and the wall time of
``solve`` (without baselines) is under the limit.

Measured on the concave power curves (issue 10, default; ``--linear`` gives the former linear
model), 2-core machine shared with other work (load average 6-8): linked 50 (the target
benchmark): optimal, 1.0-1.3 s (0.42-0.46 s at load average 3.6), gap <= 0.007 %;
unlimited 50: exact (per-model DP), 0.23-0.27 s;
power-cap 50: seeds 1-2 optimal in 3.0-3.2 s (gap 0.05 % / 0.10 %), seed 0 stops at 0.13 %
after 5.1 s (Lagrangian bound); linked 500 (seed 0): 7.9 s, gap 0.19 %; unlimited 500: exact,
2.1 s; power-cap 500: 26.5 s, gap 0.14 %. Before issue 10 (linear power): linked 50 0.11-0.19 s,
power-cap 50 seeds 1-2 at the 10 s limit with 0.14 % / 0.12 %.

Instances are synthetic but shaped like real ones: GPU types with spread-out price, speed and
idle power; per model a 24-hour load profile; ~25 % of (model, GPU) pairs infeasible (memory
or SLA); large models only on TP 2/4; a third of the GPU types in short supply so that the
inventory binds; objective cost + carbon price (weighted).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.inputs import (  # noqa: E402
    Candidate,
    GpuInfo,
    ModelDemand,
    Objective,
    PlanningInputs,
)


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


VARIANTS: tuple[str, ...] = ("linked", "unlimited", "power-cap")
"""linked: the inventory of a third of the GPU types binds (column generation);
unlimited: every GPU type unlimited (exact decomposition by model);
power-cap: linked plus a facility power cap at 90 % of the unconstrained plan's peak."""


def variant_inputs(
    variant: str,
    n_models: int,
    n_gpus: int,
    n_periods: int,
    seed: int,
    gap: float,
    limit_s: float,
    curves: bool = True,
) -> PlanningInputs:
    """The benchmark instance of *variant* (see :data:`VARIANTS`)."""
    from planner.solve.optimize import solve

    inputs = random_inputs(
        n_models, n_gpus, n_periods, seed, time_limit_s=limit_s, relative_gap=gap, curves=curves
    )
    if variant == "unlimited":
        return replace(inputs, inventory={g: None for g in inputs.inventory})
    if variant == "power-cap":
        free = solve(
            replace(inputs, inventory={g: None for g in inputs.inventory}), baselines=False
        )
        assert free.totals is not None
        return replace(inputs, power_cap_kw=round(0.9 * free.totals.peak_facility_power_kw, 3))
    return inputs


def run(
    variant: str,
    n_models: int,
    n_gpus: int,
    n_periods: int,
    seed: int,
    gap: float,
    limit_s: float,
    curves: bool = True,
) -> bool:
    """Solve one instance, print one result line; True when it meets the target."""
    from planner.solve.optimize import solve

    inputs = variant_inputs(variant, n_models, n_gpus, n_periods, seed, gap, limit_s, curves)
    start = time.perf_counter()
    plan = solve(inputs, baselines=False)
    wall_s = time.perf_counter() - start
    met = plan.solve.gap is not None and plan.solve.gap <= gap and wall_s < limit_s
    gap_pct = "n/a" if plan.solve.gap is None else f"{100 * plan.solve.gap:.4f} %"
    print(
        f"{variant:>9} {n_models:4d} x {n_gpus} x {n_periods} seed {seed}: "
        f"{plan.status.value}, solve {plan.solve.seconds:.2f} s, wall {wall_s:.2f} s "
        f"(limit {limit_s:g} s), gap {gap_pct} (target {100 * gap:.2f} %), "
        f"objective {plan.solve.objective:.6g}, bound {plan.solve.bound:.6g} "
        f"[{'ok' if met else 'MISSED'}; {plan.solve.solver}]",
        flush=True,
    )
    return met


def main(argv: list[str] | None = None) -> None:
    """Command line: sizes, variants, seeds."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", type=int, nargs="*", default=[50, 500])
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--gpus", type=int, default=30)
    parser.add_argument("--periods", type=int, default=24)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--linear", action="store_true", help="linear power (the model before issue 10)"
    )
    args = parser.parse_args(argv)
    results = []
    for n_models in args.models:
        gap, limit_s = (1e-3, 10.0) if n_models <= 50 else (1e-2, 60.0)
        for variant in args.variants:
            for seed in range(args.seeds):
                results.append(
                    run(
                        variant,
                        n_models,
                        args.gpus,
                        args.periods,
                        seed,
                        gap,
                        limit_s,
                        not args.linear,
                    )
                )
    print(f"{sum(results)} of {len(results)} runs met their target", flush=True)


if __name__ == "__main__":
    main()
