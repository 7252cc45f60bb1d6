"""The size of polars' thread pool for a ``wattgpu`` process, set before polars is imported.

polars sizes its pool once, from ``POLARS_MAX_THREADS`` or else the number of CPUs, when it is
first imported. wattgpu's commands drive polars from one Python thread that does much of the work
itself (row checks, the estimators' numpy, the solver), and between two polars steps the pool's
idle threads spin before they sleep: with as many pool threads as CPUs they take the CPU the
interpreter thread needs next. So the pool gets one thread fewer than the CPUs this process may
run on (at least one), leaving a CPU to the interpreter. Measured on 2 CPUs (benchmarks/README.md,
2026-12-04): ``wattgpu predict --input`` on 1,000,000 rows took 0.1-2.2 s less CPU (median
0.7 s, 7 %) in 6 alternating pairs, for 0.9 s more wall time (median; -0.3 to +1.6 s): the trade
the issue's CPU target asks for (``POLARS_MAX_THREADS=2`` gives the other);
``wattgpu plan large-generated`` the same CPU and wall time. A ``POLARS_MAX_THREADS`` the
user set is kept when it is a whole number from 1 to :func:`most_threads`; any other value is
refused with one line before polars reads it (polars panics on ``0``, silently falls back to its
default on ``abc`` or ``-1``, and takes minutes starting 100,000 threads).
"""

from __future__ import annotations

import os
import sys
import warnings

POOL_VARIABLE = "POLARS_MAX_THREADS"
THREADS_PER_CPU_MAX = 16


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
    already imported (its pool is then sized; setting the variable would change nothing). A
    value :func:`pool_variable_problem` refuses also silences polars' own warning about it, so
    the CLI's error is the only line."""
    if POOL_VARIABLE in os.environ:
        if pool_variable_problem() is not None:  # refused by the CLI in one line; not twice
            warnings.filterwarnings("ignore", message=f"illegal value .*'{POOL_VARIABLE}'")
        return
    if "polars" in sys.modules:
        return
    os.environ[POOL_VARIABLE] = str(pool_threads(usable_cpus()))


def most_threads(cpus: int) -> int:
    """The largest pool a user may ask for on *cpus* CPUs: 16 per CPU (oversubscribing is
    allowed; a pool of thousands only costs seconds of thread start-up)."""
    return THREADS_PER_CPU_MAX * max(1, cpus)


def pool_variable_problem() -> str | None:
    """One line saying why the ``POLARS_MAX_THREADS`` in the environment cannot be used, or None
    when it is unset or a whole number from 1 to :func:`most_threads`."""
    given = os.environ.get(POOL_VARIABLE)
    if given is None:
        return None
    cpus = usable_cpus()
    limit = most_threads(cpus)
    text = given.strip()
    if text.isascii() and text.isdigit() and 1 <= int(text) <= limit:
        return None
    # not predictors.core.escape.short_repr: it imports polars, whose pool this module sizes
    shown = repr(given) if len(given) <= 40 else repr(given[:40] + "...")
    return (
        f"environment variable {POOL_VARIABLE}={shown} is not a usable thread count: set it to "
        f"a whole number from 1 to {limit} ({THREADS_PER_CPU_MAX} per CPU, {cpus} CPU(s) here), "
        f"or unset it to let wattgpu choose ({pool_threads(cpus)} here)"
    )
