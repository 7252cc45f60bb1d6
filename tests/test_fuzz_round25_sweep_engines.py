"""Fuzz round 25 G: ``wattgpu sweep`` engines under signals, and a grid axis that repeats.

Each test failed before its fix: with ``--engine ray`` a SIGTERM exited 15 while ``ray.init``
ran (Ray's own handler) and 1 during ``ray.wait`` (Ray turned the exit into its own), and Ray's
handler stayed after the engine stopped; a Ctrl-C or SIGTERM while the local pool or a Dask
``LocalCluster`` started printed tracebacks (a spawned worker's ``KeyboardInterrupt`` or
truncated pickle, Dask's exit hook closing a half-started cluster), the engine being built
before the protected region; a ``gpu_available`` range rounded to repeated whole numbers (0,
0, 1, 1, 2) was planned twice and its grid tornado counted planned points as left out.

Engines are started for real. The Ray tests and the subprocess tests that wait on a signal's
timing are slow (the CI's slow run)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from planner.sweep import aggregate
from planner.sweep.executors import open_engine
from predictors.core.signals import stop_signals_exit
from tests.cli_runner import one_error_line, run_cli

REPO = Path(__file__).resolve().parent.parent
LINUX = Path("/proc/self/status").is_file()

# 3. A grid axis that gives a value twice is refused; the grid tornado pairs a repeated point
# once.


def _scenario(tmp_path: Path, grid: str) -> Path:
    text = (REPO / "scenarios" / "paper-llama8b-low-load.yaml").read_text(encoding="utf-8")
    path = tmp_path / "s.yaml"
    path.write_text(text + f"sweep:\n  grid:\n{textwrap.indent(grid, '    ')}", encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_gpu_range_that_rounds_to_repeated_whole_numbers_is_one_line(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "gpu_available: {L4: {start: 0, stop: 2, steps: 5}}\n")
    fix = (
        "sweep.grid.gpu_available.L4: steps 5 over 0..2 gives repeated whole numbers 0, 1; "
        "use at most 3 steps or list the values"
    )
    one_error_line(run_cli("sweep", str(path), "--draws", "0"), f"{path}: {fix}")
    one_error_line(run_cli("validate", str(path)), fix)
    # the same range in steps that fit, and a range given with --set
    assert (
        run_cli(
            "validate",
            str(_scenario(tmp_path, "gpu_available: {L4: {start: 0, stop: 2, steps: 3}}\n")),
        ).code
        == 0
    )
    result = run_cli(
        "sweep",
        "paper-llama8b-low-load",
        "--draws",
        "0",
        "--set",
        "sweep.grid.gpu_available={L4: {start: 0.9, stop: 2, steps: 5}}",
    )
    one_error_line(result, "--set", "repeated whole numbers 1; use at most 3 steps")


def test_a_list_that_repeats_a_value_and_a_range_from_a_value_to_itself_are_refused(
    tmp_path: Path,
) -> None:
    path = _scenario(tmp_path, "load_growth: [1.0, 1.0, 1.3]\n")
    one_error_line(run_cli("validate", str(path)), "sweep.grid.load_growth: repeats 1; list each")
    path = _scenario(tmp_path, "budget_usd: {start: 5.0e+5, stop: 5.0e+5, steps: 3}\n")
    one_error_line(
        run_cli("validate", str(path)),
        "sweep.grid.budget_usd: steps 3 over 500000..500000 gives repeated values 500000; use "
        "at most 1 step or list the values",
    )


def _record(cost: float | None) -> dict[str, Any]:
    return {"status": "infeasible"} if cost is None else {"optimal": {"cost_usd": cost}}


def test_the_grid_tornado_pairs_a_repeated_point_once_and_leaves_no_planned_one_out() -> None:
    gpus = [0, 0, 1, 1, 2]  # what steps 5 over 0..2 gave
    points = [{"gpu_available": {"H100": g}, "load_growth": lg} for g in gpus for lg in (1.0, 1.3)]
    cost = {(0, 1.0): 10.0, (0, 1.3): 14.0, (1, 1.0): 20.0, (1, 1.3): 26.0, (2, 1.0): 30.0}
    cost[(2, 1.3)] = 38.0
    records = [_record(cost[p["gpu_available"]["H100"], p["load_growth"]]) for p in points]
    bars = {
        b["factor"]: b
        for b in aggregate.tornado_grid(["gpu_available.H100", "load_growth"], points, records)
    }
    gpu = bars["grid gpu_available.H100 0 → 2"]
    assert gpu["points_left_out"] == 0  # every point has a plan and a pair
    assert gpu["low_cost_usd"] == pytest.approx(12.0) and gpu["high_cost_usd"] == pytest.approx(
        34.0
    )
    load = bars["grid load_growth 1 → 1.3"]
    assert load["points_left_out"] == 0
    # each distinct point weighs once: the means of 10, 20, 30 and of 14, 26, 38
    assert load["low_cost_usd"] == pytest.approx(20.0) and load["high_cost_usd"] == pytest.approx(
        26.0
    )
    # a copy without a plan takes the plan of its twin; a point with none on any copy is out
    records[0] = _record(None)  # (0, 1.0), first copy
    records[9] = _record(None)  # (2, 1.3), its only copy
    bars = {
        b["factor"]: b
        for b in aggregate.tornado_grid(["gpu_available.H100", "load_growth"], points, records)
    }
    assert bars["grid gpu_available.H100 0 → 2"]["points_left_out"] == 2  # (0, 1.3), (2, 1.3)
    load = bars["grid load_growth 1 → 1.3"]
    assert load["points_left_out"] == 2  # (2, 1.0), (2, 1.3)
    assert load["low_cost_usd"] == pytest.approx(15.0) and load["high_cost_usd"] == 20.0


# 1 and 2, in this process: a stop signal a library turned into its own exit, the workers'
# SIGINT.


def test_a_stop_signal_that_a_library_turned_into_another_exit_still_exits_143() -> None:
    """What Ray's ``ray.wait`` does: the handler's ``SystemExit(143)`` leaves as its own
    ``SystemExit(1)``."""
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as caught:
        with stop_signals_exit():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
            except SystemExit:
                raise SystemExit(1) from None
    assert caught.value.code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == before
    with pytest.raises(SystemExit) as caught:  # the next command starts afresh
        with stop_signals_exit():
            raise SystemExit(1)
    assert caught.value.code == 1


def _sigint_blocked(shared: object, batch: int) -> bool:
    status = Path("/proc/self/status").read_text(encoding="utf-8")
    mask = int(next(x for x in status.splitlines() if x.startswith("SigBlk:")).split()[1], 16)
    return bool(mask & (1 << (signal.SIGINT - 1)))


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
@pytest.mark.skipif(not LINUX, reason="reads the signal mask from Linux /proc")
def test_local_pool_workers_leave_a_ctrl_c_to_the_parent() -> None:
    handlers = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)]
    with open_engine("local", None, workers=2) as session:
        assert session.run(_sigint_blocked, [0, 1, 2, 3], lambda i: None) == [True] * 4
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # here: as it was
    assert [
        signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)
    ] == handlers


# 2. A signal while the local pool or a Dask LocalCluster starts: no traceback, nothing left.

POOL_SCRIPT = """
import multiprocessing, os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal, even if ignored
sys.path.insert(0, {repo!r})
from planner.sweep.executors import open_engine
from predictors.core.signals import stop_signals_exit


def _arrive():
    os.write(2, b"worker unpickling\\n")  # the test signals now, the parent still writing
    time.sleep(1.0)


class Slow:
    def __reduce__(self):
        return (_arrive, ())


def _task(shared, batch):
    return batch


if __name__ == "__main__":
    shared = (Slow(), b"x" * 4_000_000)  # more than a pipe holds: the parent waits to write it
    try:
        with stop_signals_exit(), open_engine("local", shared, workers=2) as session:
            session.run(_task, [1, 2], lambda i: None)
    except BaseException as exc:
        alive = [c for c in multiprocessing.active_children() if c.is_alive()]
        print(type(exc).__name__, len(alive), flush=True)
        raise SystemExit(130 if isinstance(exc, KeyboardInterrupt) else exc.code) from None
"""

DASK_SCRIPT = """
import os, signal, sys, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {repo!r})
from planner.sweep.executors import open_engine


def _a_worker_is_starting():
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            parent = open(f"/proc/{{entry}}/stat").read().rsplit(") ", 1)[1].split()[1]
            command = open(f"/proc/{{entry}}/cmdline", "rb").read()
        except OSError:
            continue
        if parent == str(os.getpid()) and b"spawn_main" in command:
            return True
    return False


def _ctrl_c_while_the_workers_start():
    while not _a_worker_is_starting():
        time.sleep(0.005)
    os.killpg(0, signal.SIGINT)  # as at a terminal: this process and its workers


if __name__ == "__main__":
    threading.Thread(target=_ctrl_c_while_the_workers_start, daemon=True).start()
    try:
        with open_engine("dask", None, workers=2):
            time.sleep(30)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        raise SystemExit(130) from None
"""


def _script(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "probe.py"
    path.write_text(text.format(repo=str(REPO)), encoding="utf-8")
    return [sys.executable, str(path)]


class _Stderr:
    """A process's stderr, read as it comes (a thread), so that a wait for a line is bounded."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.text = ""
        self.proc = proc
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.text += line

    def wait_for(self, marker: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while marker not in self.text:
            assert self.proc.poll() is None, f"ended before {marker!r}: {self.text}"
            assert time.monotonic() < deadline, f"no {marker!r} within {timeout_s} s"
            time.sleep(0.02)

    def end(self, timeout_s: float) -> str:
        self.proc.wait(timeout=timeout_s)
        self.thread.join(timeout=timeout_s)
        return self.text


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "group", "code"),
    [
        (signal.SIGINT, True, 130),  # Ctrl-C at a terminal: the whole process group
        (signal.SIGINT, False, 130),  # the parent alone: it was writing a worker's start data
        (signal.SIGTERM, False, 143),
    ],
)
def test_a_signal_while_the_local_pool_starts_is_handled_without_a_traceback(
    tmp_path: Path, sig: int, group: bool, code: int
) -> None:
    proc = subprocess.Popen(
        _script(tmp_path, POOL_SCRIPT),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        start_new_session=True,  # a process group of its own, as a terminal's job
    )
    try:
        stderr = _Stderr(proc)
        stderr.wait_for("worker unpickling", 60)
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        err = stderr.end(60)
        assert proc.stdout is not None
        out = proc.stdout.read()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == code, err
    assert "Traceback" not in err and "Error" not in err, err
    assert set(err.split("\n")) <= {"", "worker unpickling"}, err
    assert out.split()[1] == "0", out  # no worker left


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="needs Linux /proc to see the workers start")
def test_ctrl_c_while_a_dask_local_cluster_starts_closes_it_without_a_traceback(
    tmp_path: Path,
) -> None:
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    result = subprocess.run(
        _script(tmp_path, DASK_SCRIPT),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=180,
        start_new_session=True,  # a process group of its own, as a terminal's job
    )
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr and "AssertionError" not in result.stderr
    assert "Exception ignored" not in result.stderr, result.stderr
    assert result.stdout.split()[0] == "KeyboardInterrupt"


# 1. Ray: the command's SIGTERM handler holds across the engine's life.


@pytest.mark.slow
def test_the_commands_stop_handler_holds_while_ray_runs_and_after() -> None:
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    from tests.pool_probe import pid_and_shared

    with stop_signals_exit():
        handler = signal.getsignal(signal.SIGTERM)
        with open_engine("ray", 7, workers=1) as session:
            during = signal.getsignal(signal.SIGTERM)
            (result,) = session.run(pid_and_shared, [[1, 2]], lambda i: None)
        after = signal.getsignal(signal.SIGTERM)
    assert result[1:] == (7, 3)
    assert during is handler and after is handler
    assert not ray.is_initialized()


def _ray_processes(root: str) -> list[int]:
    """Live processes whose command line names the Ray temporary folder *root*."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                state = Path(f"/proc/{entry}/status").read_text(encoding="utf-8")
            except OSError:
                continue
            if root.encode() in cmdline and "zombie" not in state:
                found.append(int(entry))
    return found


def _interrupted_ray_sweep(marker: str, after_s: float, sig: int) -> tuple[int, str, bool]:
    """Exit status and stderr of a Ray sweep sent *sig* *after_s* seconds after *marker* shows on
    its stderr, and whether its output file was written; no Ray process of it may be left."""
    root = tempfile.mkdtemp(prefix="wray", dir="/tmp")  # Ray's socket paths must stay short
    out = Path(root) / "s.json"
    ctrl_c = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)"
    cmd = [sys.executable, "-c", f"{ctrl_c}; from planner.cli.app import main; main()"]
    cmd += ["sweep", "enterprise-fleet", "--draws", "300", "-w", "2", "--engine", "ray"]
    cmd += ["-f", "json", "-o", str(out)]
    env = {**os.environ, "RAY_TMPDIR": root}
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env
    )
    try:
        stderr = _Stderr(proc)
        stderr.wait_for(marker, 180)
        time.sleep(after_s)
        proc.send_signal(sig)
        err = stderr.end(120)
        deadline = time.monotonic() + 60
        while _ray_processes(root) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = _ray_processes(root)
        written = out.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _ray_processes(root):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
    assert not left, f"Ray processes left: {left}"
    return proc.returncode, err, written


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="needs Linux /proc to find Ray's processes")
@pytest.mark.parametrize(
    ("marker", "after_s", "sig", "code"),
    [
        ("grid points on ray", 1.0, signal.SIGTERM, 143),  # while ray.init runs: it was 15
        ("tasks done", 0.0, signal.SIGTERM, 143),  # while ray.wait waits: it was 1
        ("tasks done", 0.0, signal.SIGINT, 130),
    ],
)
def test_a_signal_stops_a_ray_sweep_with_the_documented_exit(
    marker: str, after_s: float, sig: int, code: int
) -> None:
    pytest.importorskip("ray", reason="the ray extra is not installed")
    status, err, written = _interrupted_ray_sweep(marker, after_s, sig)
    assert status == code, err
    assert not written
    assert all(not line or line.startswith("  ") for line in err.splitlines()), err
