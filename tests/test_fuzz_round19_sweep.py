"""Fuzz round 19a: ``wattgpu sweep``.

Each test failed before its fix: SIGTERM left a local sweep's workers running; a seed above
2**63 − 1 and an output path that cannot be written were found after every draw had run; the
JSON carried a solve time; draws stopped at the time limit without a plan were in no count;
with regions, fleet labels left out where each deployment runs; one GPU named twice under
``gpu_available`` dropped grid values; a typo in a grid range key had no did-you-mean."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planner.inputs import deployment_text
from tests.cli_runner import run_cli

REPO = Path(__file__).resolve().parent.parent
SCENARIO = (REPO / "scenarios" / "paper-llama8b-low-load.yaml").read_text(encoding="utf-8")


def _children(pid: int) -> list[int]:
    """Live processes whose parent is *pid* (Linux /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields["PPid"]) == pid and "zombie" not in fields.get("State", ""):
            out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "zombie" not in state


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc to find the workers")
def test_sigterm_stops_a_local_sweep_and_its_workers(tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    cmd = [sys.executable, "-m", "planner.cli.app", "sweep", "enterprise-fleet"]
    cmd += ["--draws", "400", "-w", "2", "-f", "json", "-o", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while len(_children(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2.0)  # the workers are running draws
        workers = _children(proc.pid)
        assert len(workers) >= 2, "the sweep started no workers"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()
    deadline = time.monotonic() + 15
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(_alive, workers)), "a worker outlived the sweep"
    assert not out.exists()


def test_a_seed_above_the_documented_range_is_refused_before_the_work() -> None:
    result = run_cli("sweep", "paper-llama8b-low-load", "--draws", "3", "--seed", str(2**63))
    assert result.code == 2
    assert "tasks done" not in result.err


def test_an_output_that_cannot_be_written_is_refused_before_the_work(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    result = run_cli("sweep", "paper-llama8b-low-load", "--draws", "3", "-o", str(folder))
    assert result.code == 1
    assert result.errors == [f"error: --output {folder}: is a directory — give a file name"]
    assert "draws" not in result.err.replace(result.errors[0], "")


def _scenario(tmp_path: Path, sweep: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO + "\n" + sweep, encoding="utf-8")
    return path


def test_one_gpu_named_twice_under_gpu_available_is_refused(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path, "sweep:\n  grid:\n    gpu_available: {H100-SXM5-80GB: [0], H100: [2, 9]}\n"
    )
    for command in (("validate",), ("sweep",)):
        result = run_cli(*command, str(path))
        assert result.code == 1, result.err
        assert "sweep.grid.gpu_available.H100: names the same GPU as" in result.err


def test_a_typo_in_a_grid_range_gets_did_you_mean(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "sweep:\n  grid:\n    load_growth: {start: 1, stop: 2, step: 3}\n")
    result = run_cli("validate", str(path))
    assert result.code == 1
    # a misspelt required key is one line that says to rename it (fuzz round 31)
    assert "unknown key 'step', and steps is required here — rename it to steps" in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert "(allowed here: start, steps, stop)" in result.err


def test_fleet_labels_name_the_region() -> None:
    key = ("chat", "H100-SXM5-80GB", 8, 1, 1, 1, "fr")
    assert deployment_text(key, 2) == "chat H100-SXM5-80GB tp8 x2 in fr"
    assert deployment_text((*key[:6], ""), 2) == "chat H100-SXM5-80GB tp8 x2"


@pytest.mark.slow
def test_draws_without_a_plan_are_counted_and_the_json_holds_no_time(tmp_path: Path) -> None:
    args = ["eu-power-cap-carbon", "--draws", "11", "-f", "json"]
    args += ["--set", "sweep.arrival_rate_sd=3", "--set", "sweep.idle_power_sd=3"]
    texts = []
    for name in ("a.json", "b.json"):
        result = run_cli("sweep", *args, "-o", str(tmp_path / name))
        assert result.code == 0, result.err
        texts.append((tmp_path / name).read_bytes())
    assert texts[0] == texts[1]
    doc = json.loads(texts[0])
    s = doc["summary"]
    counted = s["draws_with_plan"] + s["draws_infeasible"] + s["draws_failed"]
    assert counted + s["draws_time_limit"] == s["draws"]
    stopped = [r for r in doc["records"] if r["status"] == "time_limit" and not r.get("optimal")]
    assert s["draws_time_limit"] == len(stopped)
