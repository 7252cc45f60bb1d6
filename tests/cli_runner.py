"""Run the ``wattgpu`` command line in-process or in a bounded subprocess, for the fuzz suites."""

from __future__ import annotations

import contextlib
import io
import json
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.cli.app import main


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    @property
    def errors(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("error: ")]


def run_cli(*args: str) -> Result:
    """Run ``wattgpu ARGS`` in-process; exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return Result(code, out.getvalue(), err.getvalue())


def plan_text(folder: Path, scenario: str, *args: str) -> tuple[Result, Path]:
    """``wattgpu plan`` of the scenario YAML *scenario* (written to *folder*) as JSON to
    ``folder/plan.json``, with *args*; the result and the JSON's path."""
    path = folder / "scenario.yaml"
    path.write_text(scenario, encoding="utf-8")
    out = folder / "plan.json"
    return run_cli("plan", str(path), "-f", "json", "-o", str(out), *args), out


def run_bounded(*args: str, cwd: Path, timeout_s: float = 120.0) -> Result:
    """Run ``wattgpu ARGS`` in a subprocess limited to 2 GiB of address space and *timeout_s*."""

    def limit() -> None:  # pragma: no cover - runs in the child
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    proc = subprocess.run(
        [sys.executable, "-c", "from planner.cli.app import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        preexec_fn=limit,
        timeout=timeout_s,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def one_error_line(result: Result, *parts: str, never: tuple[str, ...] = ()) -> str:
    """The single ``error:`` line of a command that failed with exit 1 (no traceback, no internal
    error, none of *never* in stderr), which holds every one of *parts*."""
    assert result.code == 1, (result.code, result.err)
    for bad in ("Traceback", "internal error", *never):
        assert bad not in result.err, (bad, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


def planned_json(out: Path, scenario: str) -> dict[str, Any]:
    """``wattgpu plan SCENARIO --format json -o OUT``, read back (the caller patches the
    predictor it wants loaded)."""
    result = run_cli("plan", scenario, "--format", "json", "-o", str(out))
    assert result.code == 0, result.err
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data
