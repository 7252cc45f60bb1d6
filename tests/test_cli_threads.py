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


@pytest.mark.slow
def test_a_wattgpu_process_sizes_the_pool_before_polars_is_imported() -> None:
    assert _pool_size({}) == threads.pool_threads(threads.usable_cpus())


def test_the_users_pool_size_is_kept() -> None:
    assert _pool_size({threads.POOL_VARIABLE: "3"}) == 3


def test_nothing_is_set_once_polars_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    import polars  # noqa: F401  (imported: its pool is sized, the variable would change nothing)

    monkeypatch.delenv(threads.POOL_VARIABLE, raising=False)
    threads.size_polars_pool()
    assert threads.POOL_VARIABLE not in os.environ


def _wattgpu(env_extra: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != threads.POOL_VARIABLE}
    env |= env_extra
    code = "import sys; from planner.cli.app import main; main(sys.argv[1:])"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120
    )


#: each a fresh process (~0.7 s): the cases that reach another branch of the check run by default,
#: the rest in the slow run
_SLOW = pytest.mark.slow


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
@pytest.mark.parametrize(
    "given",
    [
        "0",
        "abc",
        "99999",
        pytest.param("-1", marks=_SLOW),
        pytest.param("1.5", marks=_SLOW),
        pytest.param("", marks=_SLOW),
    ],
)
def test_an_unusable_pool_size_is_one_line_and_exit_1(given: str) -> None:
    # polars panics on 0, warns and falls back to its default on abc / -1 / '', and spends
    # minutes starting 99,999 threads: each is refused before polars reads it.
    done = _wattgpu({threads.POOL_VARIABLE: given}, "catalog", "gpus")
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    limit = threads.most_threads(threads.usable_cpus())
    assert lines[0].startswith(f"error: environment variable {threads.POOL_VARIABLE}={given!r}")
    assert f"whole number from 1 to {limit}" in lines[0]
    assert done.stdout == ""


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
@pytest.mark.parametrize(
    "given", [" 2 ", pytest.param("1", marks=_SLOW), pytest.param("32", marks=_SLOW)]
)
def test_a_usable_pool_size_runs(given: str) -> None:
    done = _wattgpu({threads.POOL_VARIABLE: given}, "catalog", "gpus")
    assert done.returncode == 0, done.stderr
    assert done.stdout


def test_the_largest_pool_is_16_threads_per_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    limit = threads.most_threads(threads.usable_cpus())
    monkeypatch.setenv(threads.POOL_VARIABLE, str(limit))
    assert threads.pool_variable_problem() is None
    monkeypatch.setenv(threads.POOL_VARIABLE, str(limit + 1))
    assert threads.pool_variable_problem() is not None
    assert threads.most_threads(3) == 48
