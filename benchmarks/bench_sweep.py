"""Timing of ``wattgpu sweep`` on the default scenario (issue 20).

Targets: 1,000 draws of the default scenario (enterprise-fleet) in <= 120 s on 2 cores with the
local engine; a Dask ``LocalCluster`` at 1 and 2 workers shows >= 1.7x speed-up; plans per
CPU-second, to project 10,000 draws on a 32-core cluster (docs/sweep.md). The point-estimate
plan (predictors, candidate table) is built once and not timed. Run::

    python benchmarks/bench_sweep.py                      # local 1,000 draws, 2 workers
    python benchmarks/bench_sweep.py --only dask --draws 400
    python benchmarks/bench_sweep.py --draws 200 --workers 1

Local: the whole ``run_sweep`` is timed (its pool's start-up included); CPU seconds are the
process's own plus its worker processes' (``resource.getrusage`` of self and children).

Dask: the ``LocalCluster`` (single-threaded worker processes, as ``--engine dask`` starts it)
is started and warmed (every worker imports the solver) before the clock starts, and its
start-up is printed on its own line; the sweep then connects to it by address. Printed per
worker count: the sweep's wall (connect, send the table, the draws' tasks, the summary and the
flags), the draws' pass alone (the tasks on the workers), and the CPU seconds of the workers
(each worker's own ``getrusage``, before and after) plus this process's. The speed-up is the
1-worker over the 2-worker sweep wall; the draws' pass speed-up is printed beside it. The
speed-up needs a free core per worker: on a loaded machine it says nothing about the design.

Measured 2026-12-01 on the shared 2-core machine (load average 4.5-5 from other sessions):
local, 2 workers, 1,000 draws: 92.6 s wall, 69.9 s CPU, 14.2 plans per CPU-second; Dask
LocalCluster 400 draws: 1 worker 40.0 s wall (34.1 s CPU, 11.6 plans/CPU-s), 2 workers 41.9 s
(34.7 s CPU): speed-up 0.95x, because the second worker had no free core (docs/sweep.md).
After merging main (disclosure v2, pred-v3): local, 2 workers, 1,000 draws 72.8 s wall, 72.0 s
CPU, 13.7 plans per CPU-second (load average 5).
With the engine sessions and the cluster started before the clock (issue 20 follow-up; the same
machine, load average 3.8-4.5, so loaded), Dask 400 draws: 1 worker 58.9 s wall (draws' pass
56.8 s, 42.2 s CPU, 9.4 plans/CPU-s), 2 workers 32.5 s (32.1 s; 42.2 s CPU, 20.6 + 19.6 s on the
workers): speed-up 1.81x (draws' pass 1.77x); cluster start-up 3.0 s and 4.2 s, not in the wall.
"""

from __future__ import annotations

import argparse
import resource
import time
from typing import Any

from planner.pipeline import PlanRun, plan_file
from planner.sweep.run import run_sweep
from planner.sweep.spec import settings

TARGET_LOCAL_S = 120.0
TARGET_SPEED_UP = 1.7


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _own_cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _warm() -> None:
    import planner.sweep.evaluate  # noqa: F401  (OR-Tools and the solver)


def _sweep(run: PlanRun, engine: str, workers: int, draws: int, **kw: Any) -> tuple[Any, float]:
    s = settings(None, draws=draws, seed=0, choose="none", sla_probability=0.95, force=False)
    t0 = time.perf_counter()
    doc = run_sweep(run, None, s, engine=engine, workers=workers, **kw)
    assert doc.summary is not None
    return doc, time.perf_counter() - t0


def _local(run: PlanRun, workers: int, draws: int) -> None:
    cpu0 = _cpu_s()
    doc, wall = _sweep(run, "local", workers, draws)
    cpu = _cpu_s() - cpu0
    plans = doc.summary.draws_with_plan
    print(
        f"local  {workers} workers  {draws} draws  {wall:6.1f} s wall  {cpu:6.1f} s CPU  "
        f"{plans / cpu:5.1f} plans per CPU-second  (target <= {TARGET_LOCAL_S:g} s)"
    )


def _dask_one(run: PlanRun, workers: int, draws: int) -> tuple[float, float]:
    from dask.distributed import Client, LocalCluster

    t0 = time.perf_counter()
    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.wait_for_workers(workers)
        client.run(_warm)
        start = time.perf_counter() - t0
        before = client.run(_own_cpu_s)
        own0 = _own_cpu_s()
        stages: dict[str, float] = {}
        doc, wall = _sweep(
            run, "dask", workers, draws, address=cluster.scheduler_address, stages=stages
        )
        after = client.run(_own_cpu_s)
        per_worker = [after[w] - before[w] for w in sorted(after)]
        worker_cpu = sum(per_worker)
        own = _own_cpu_s() - own0
    plans = doc.summary.draws_with_plan
    print(
        f"dask   {workers} worker{'s' if workers > 1 else ' '} {draws} draws  "
        f"{wall:6.1f} s wall (draws' pass {stages['draws']:5.1f} s)  "
        f"{worker_cpu + own:6.1f} s CPU ({' + '.join(f'{c:.1f}' for c in per_worker)} workers, "
        f"{own:.1f} client)  "
        f"{plans / (worker_cpu + own):5.1f} plans per CPU-second  "
        f"[cluster start-up {start:.1f} s, not in the wall]"
    )
    return wall, stages["draws"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", choices=["local", "dask"], default=None)
    args = parser.parse_args()
    run = plan_file("enterprise-fleet", baselines=False)
    if args.only in (None, "local"):
        _local(run, args.workers, args.draws)
    if args.only in (None, "dask"):
        one, one_pass = _dask_one(run, 1, args.draws)
        two, two_pass = _dask_one(run, 2, args.draws)
        ok = "met" if one / two >= TARGET_SPEED_UP else "MISSED"
        print(
            f"dask speed-up 1 -> 2 workers: {one / two:.2f}x sweep wall "
            f"(target >= {TARGET_SPEED_UP:g}x: {ok}); draws' pass {one_pass / two_pass:.2f}x"
        )


if __name__ == "__main__":
    main()
