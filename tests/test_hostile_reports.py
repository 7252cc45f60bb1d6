"""Issue 22 cases that had a check below the command line only.

* ``report`` on a plan with a negative energy, 1,000 replicas or ``status: infeasible`` with
  allocations exited 0; ``plan_problems`` catches each edit (tests/test_plan_verify.py), and
  here the command itself exits 1 with nothing on stdout and one line naming the field (1,000
  replicas named nine fields: every figure that follows from the replica count, and the flags).
* An ASCII-only locale (``LC_ALL=C`` without Python's UTF-8 coercion) gives stdout an ASCII
  encoding with the ``surrogateescape`` handler, a different path from
  ``PYTHONIOENCODING=ascii`` (tests/test_fuzz_writes.py); it ended in "internal error".
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from test_plan_verify import (
    _infeasible_with_allocations,
    _negative_energy,
    _plan,
    _saved,
    _thousand_replicas,
)


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (_negative_energy, "allocations[0].energy_kwh"),
        (_thousand_replicas, "allocations[0].replicas"),
        (_infeasible_with_allocations, "status"),
    ],
    ids=["negative-energy", "thousand-replicas", "infeasible-with-allocations"],
)
def test_report_of_an_impossible_plan_exits_1_naming_the_field(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None], named: str
) -> None:
    path = _saved(tmp_path, edit)
    for fmt in ("json", "md"):
        result = run_cli("report", str(path), "-f", fmt, "--pareto-points", "0")
        assert result.code == 1 and result.out == "", result.err
        assert "internal error" not in result.err
        (line,) = result.errors  # one line: the edited field, not every figure following it
        assert named in line and path.name in line, result.err


def test_report_of_replicas_beyond_the_inventory_names_the_inventory(tmp_path: Path) -> None:
    data = copy.deepcopy(_plan("enterprise-fleet"))
    data["solve"]["seconds"] = 0.1  # goldens leave out the wall-clock time
    _thousand_replicas(data)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = run_cli("report", str(path), "-f", "json", "--pareto-points", "0")
    assert result.code == 1 and result.out == "", result.err
    assert any("the inventory has" in line for line in result.errors), result.err


@pytest.mark.slow  # a fresh process
def test_ascii_only_c_locale_is_not_an_internal_error() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIO"))}
    env.update({"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0",
                "WATTGPU_NO_PROGRESS": "1"})  # fmt: skip
    probe = subprocess.run([sys.executable, "-c", "import sys; print(sys.stdout.encoding)"],
                           capture_output=True, text=True, env=env, check=True)  # fmt: skip
    if probe.stdout.strip().lower() not in {"ascii", "ansi_x3.4-1968"}:
        pytest.skip(f"the C locale is not ASCII-only here ({probe.stdout.strip()})")
    done = subprocess.run(
        [sys.executable, "-c", "from planner.cli.app import main; main()",
         "plan", "paper-llama8b-low-load"],
        capture_output=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode("ascii")  # every byte is ASCII
    assert "status     optimal" in text and "internal error" not in done.stderr.decode()
