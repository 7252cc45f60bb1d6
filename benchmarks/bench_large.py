"""End-to-end timing of the 500-entry scenario, plain and with an infeasible power cap.

Targets (issue 10): ``wattgpu plan scenarios/large-generated.yaml`` in < 30 s; the same with
``--set power_cap_kw=60`` reported infeasible, with the reason, in < 10 s. Each run is a fresh
process timed from start to exit (imports, YAML, predictions and the serving model for ~45k
candidates, solve, rendering); the in-process split (build vs solve) is printed too, because
the shared 2-core machine's load moves the wall time. Run::

    .venv/bin/python benchmarks/bench_large.py            # both runs
    .venv/bin/python benchmarks/bench_large.py --only capped

Measured after issue 23 (free routing, exact search per model; machine shared, load average
~6, so wall times are inflated): plain 58.9 s wall, 33.2 s CPU, status feasible with a 0.65 %
gap to a valid bound (a few models' searches are cut short; the merit-order plan it replaces
said "optimal" under its own rule); the solve alone 12.3 s. Capped (60 kW) 27.5 s wall,
16.0 s CPU, infeasible with the reason (the bound check before any solver, unchanged).
`wattgpu plan large-generated --set power_cap_kw=125`: 105 s wall, 70 s CPU, 0.77 GB, exit 1,
proven infeasible ("in period 13 every plan draws at least 125.327 kW", the exact least-power
proof after column generation found no plan; before: 245 s, 5.9 GB, status error with a gap of
9e15 %) — the < 30 s target of issue 23 is not met.
Measured 2026-12-01 after the predictor rooms and the 1 M-row predict work (quiet 2-core
machine): plain 15.0 s wall, 16.5 s CPU, optimal; capped 9.1 s wall, 10.3 s CPU, infeasible with
the reason (needs at least 68.7 kW in period 13). The same plan as ``--format json`` (the issue-22
table, not timed here): 30.1 s wall, 31.6 s CPU, 1.46 GB, a 167 MB file, half of it writing the
JSON of all 44,430 candidates with their curves.
Measured on the final main of issue 10 (quiet 2-core machine, validity checked once per distinct
configuration): plain 13.2 s wall, optimal; capped 9.2 s wall (8.9 s as a plain `wattgpu plan`
run), infeasible with the reason. Earlier (machine shared with other helpers), on main as of
13:05 (predictors v2, input hardening): plain 14.5-20.4 s wall, optimal; capped 10.1-11.2 s wall
at load average ~1 (9.4-10.8 s before the input-hardening merge), infeasible before any solver
("needs at least 70.4 kW facility power in period 13, cap is 60 kW"; solve stage 0.27 s),
0.5-0.6 GB resident (before issue 10: 92-105 s, 3.9 GB, "status error"). The time is the
candidate build: the predictors' own call on the (candidate, batch) rows (name resolution,
validity checks, domain reasons, XGBoost) about half, the serving model and candidate checks
most of the rest. At load average 4-8 wall time is 2-4 × the CPU time.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "scenarios" / "large-generated.yaml"
RUNS: dict[str, tuple[list[str], float]] = {
    "plain": ([], 30.0),
    "capped": (["--set", "power_cap_kw=60"], 10.0),
}


def wall(args: list[str]) -> tuple[float, int, str, float]:
    """(seconds, exit code, last lines of output, child CPU seconds) of one fresh process."""
    env = {**os.environ, "COLUMNS": "200"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "planner.cli.app", "plan", str(SCENARIO), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    status = [line for line in done.stdout.splitlines() if line.startswith(("status", "- "))]
    return seconds, done.returncode, "\n    ".join(status[:3]), cpu


def stages(args: list[str]) -> str:
    """Build (YAML, predictions, capacity) and solve seconds of one in-process run."""
    from planner.build import planning_inputs
    from planner.scenario.load import load_scenario
    from planner.solve.optimize import solve
    from predictors.api import Predictor

    overrides = [args[1]] if args else []
    t0 = time.perf_counter()
    predictor = Predictor.load()
    scenario = load_scenario(SCENARIO, overrides, predictor.catalog)
    t1 = time.perf_counter()
    inputs = planning_inputs(scenario, predictor)
    t2 = time.perf_counter()
    plan = solve(inputs)
    t3 = time.perf_counter()
    return (
        f"load {t1 - t0:.1f} s, build {t2 - t1:.1f} s ({len(inputs.candidates)} candidates), "
        f"solve {t3 - t2:.2f} s -> {plan.status.value}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", choices=list(RUNS), default=None)
    parser.add_argument("--stages", action="store_true", help="also time the stages in-process")
    ns = parser.parse_args(argv)
    for name, (args, target) in RUNS.items():
        if ns.only and name != ns.only:
            continue
        seconds, code, status, cpu = wall(args)
        verdict = "ok" if seconds < target else "MISSED"
        print(f"{name}: {seconds:.1f} s wall, {cpu:.1f} s CPU (target {target:g} s) [{verdict}]")
        print(f"    exit {code}; {status}")
        if ns.stages:
            print(f"    {stages(args)}")


if __name__ == "__main__":
    main()
