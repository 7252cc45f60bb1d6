"""The size of polars' thread pool for a ``wattgpu`` process, set before polars is imported.

polars sizes its pool once, from ``POLARS_MAX_THREADS`` or else the number of CPUs, when it is
first imported. wattgpu's commands drive polars from one Python thread that does much of the work
itself (row checks, the estimators' numpy, the solver), and between two polars steps the pool's
idle threads spin before they sleep: with as many pool threads as CPUs they take the CPU the
interpreter thread needs next. So the pool gets one thread fewer than the CPUs this process may
run on (at least one), leaving a CPU to the interpreter. Measured on 2 CPUs (benchmarks/README.md,
2026-12-04): ``wattgpu predict --input`` on 1,000,000 rows took 15 % less CPU and the same wall
time; ``wattgpu plan large-generated`` the same CPU and wall time. A ``POLARS_MAX_THREADS`` the
user set is kept.
"""

from __future__ import annotations

import os
import sys

POOL_VARIABLE = "POLARS_MAX_THREADS"


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the platform tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def pool_threads(cpus: int) -> int:
    """polars' pool size on *cpus* CPUs: one left to the interpreter thread, at least one."""
    return max(1, cpus - 1)


def size_polars_pool() -> None:
    """Set ``POLARS_MAX_THREADS`` to :func:`pool_threads` unless the user set it or polars is
    already imported (its pool is then sized; setting the variable would change nothing)."""
    if POOL_VARIABLE in os.environ or "polars" in sys.modules:
        return
    os.environ[POOL_VARIABLE] = str(pool_threads(usable_cpus()))
