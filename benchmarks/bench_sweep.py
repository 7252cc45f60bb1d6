"""Timing of ``wattgpu sweep`` on the default scenario (issue 20).

Targets: 1,000 draws of the default scenario (enterprise-fleet) in <= 120 s on 2 cores with the
local engine; a Dask ``LocalCluster`` at 1 and 2 workers shows >= 1.7x speed-up; plans per
CPU-second, to project 10,000 draws on a 32-core cluster (docs/sweep.md). The point-estimate
plan (predictors, candidate table) is built once and not timed. Run::

    python benchmarks/bench_sweep.py                      # local 1,000 draws, 2 workers
    python benchmarks/bench_sweep.py --only dask --draws 400
    python benchmarks/bench_sweep.py --draws 200 --workers 1

CPU seconds are the sweep's own process plus its worker processes (``resource.getrusage`` of
self and children; Dask workers are children of the LocalCluster).

Measured 2026-12-01 on the shared 2-core machine (load average 4.5-5 from other sessions):
local, 2 workers, 1,000 draws: 92.6 s wall, 69.9 s CPU, 14.2 plans per CPU-second; Dask
LocalCluster 400 draws: 1 worker 40.0 s wall (34.1 s CPU, 11.6 plans/CPU-s), 2 workers 41.9 s
(34.7 s CPU): speed-up 0.95x, because the second worker had no free core (docs/sweep.md).
After merging main (disclosure v2, pred-v3): local, 2 workers, 1,000 draws 72.8 s wall, 72.0 s
CPU, 13.7 plans per CPU-second (load average 5).
"""

from __future__ import annotations

import argparse
import resource
import time

from planner.pipeline import plan_file
from planner.sweep.run import run_sweep
from planner.sweep.spec import settings


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _one(run, engine: str, workers: int, draws: int) -> tuple[float, float, int]:  # type: ignore[no-untyped-def]
    s = settings(None, draws=draws, seed=0, choose="none", sla_probability=0.95, force=False)
    cpu0, t0 = _cpu_s(), time.perf_counter()
    doc = run_sweep(run, None, s, engine=engine, workers=workers)
    wall, cpu = time.perf_counter() - t0, _cpu_s() - cpu0
    assert doc.summary is not None
    return wall, cpu, doc.summary.draws_with_plan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", choices=["local", "dask"], default=None)
    args = parser.parse_args()
    run = plan_file("enterprise-fleet", baselines=False)
    if args.only in (None, "local"):
        wall, cpu, plans = _one(run, "local", args.workers, args.draws)
        print(
            f"local  {args.workers} workers  {args.draws} draws  {wall:6.1f} s wall  "
            f"{cpu:6.1f} s CPU  {plans / cpu:5.1f} plans per CPU-second  (target <= 120 s)"
        )
    if args.only in (None, "dask"):
        walls = {}
        for workers in (1, 2):
            wall, cpu, plans = _one(run, "dask", workers, args.draws)
            walls[workers] = wall
            print(
                f"dask   {workers} workers  {args.draws} draws  {wall:6.1f} s wall  "
                f"{cpu:6.1f} s CPU  {plans / cpu:5.1f} plans per CPU-second"
            )
        print(f"dask speed-up 1 -> 2 workers: {walls[1] / walls[2]:.2f}x  (target >= 1.7x)")


if __name__ == "__main__":
    main()
