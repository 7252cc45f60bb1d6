"""polars' thread pool in a wattgpu process: one thread fewer than the CPUs, the user's
``POLARS_MAX_THREADS`` kept (planner.cli.threads)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from planner.cli import threads

SHOW_POOL = "import planner.cli, polars; print(polars.thread_pool_size())"


def _pool_size(env_extra: dict[str, str]) -> int:
    env = {k: v for k, v in os.environ.items() if k != threads.POOL_VARIABLE}
    env |= env_extra
    done = subprocess.run(
        [sys.executable, "-c", SHOW_POOL], capture_output=True, text=True, env=env, check=True
    )
    return int(done.stdout.strip())


@pytest.mark.parametrize(("cpus", "pool"), [(1, 1), (2, 1), (3, 2), (16, 15), (192, 191)])
def test_one_cpu_is_left_to_the_interpreter(cpus: int, pool: int) -> None:
    assert threads.pool_threads(cpus) == pool


def test_a_wattgpu_process_sizes_the_pool_before_polars_is_imported() -> None:
    assert _pool_size({}) == threads.pool_threads(threads.usable_cpus())


def test_the_users_pool_size_is_kept() -> None:
    assert _pool_size({threads.POOL_VARIABLE: "3"}) == 3


def test_nothing_is_set_once_polars_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    import polars  # noqa: F401  (imported: its pool is sized, the variable would change nothing)

    monkeypatch.delenv(threads.POOL_VARIABLE, raising=False)
    threads.size_polars_pool()
    assert threads.POOL_VARIABLE not in os.environ
