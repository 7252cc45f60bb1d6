"""End-to-end timing of ``wattgpu plan`` on the default scenario (target: < 3 s, issue 5).

Each run is a fresh process (``python -m planner.cli.app plan [ARGS]`` by default, or the
``wattgpu`` console script with ``--script``), timed from process start until it has written
its whole output and exited: imports, loading the predictors and catalogs, prediction, the
solve, the three baselines and rendering. Also reports ``wattgpu --version`` (start-up alone)
and, with ``--stages``, where the time of one in-process run goes. Run::

    /work/venv/bin/python benchmarks/bench_cli.py                 # 5 runs, table format
    /work/venv/bin/python benchmarks/bench_cli.py --runs 3 --format json --stages
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_S = 3.0


def command(args: list[str], *, script: bool) -> list[str]:
    """The command line of one run."""
    if script:
        return [str(Path(sys.executable).with_name("wattgpu")), *args]
    return [sys.executable, "-m", "planner.cli.app", *args]


def time_run(cmd: list[str]) -> float:
    """Seconds from process start to exit; raises when the command fails."""
    env = {**os.environ, "COLUMNS": "140"}
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {done.returncode}):\n{done.stderr}")
    return seconds


def stages() -> list[tuple[str, float]]:
    """Time of each stage of one in-process plan of the default scenario."""
    marks: list[tuple[str, float]] = []
    t0 = time.perf_counter()
    from planner.build import planning_inputs
    from planner.paths import default_scenario
    from planner.report.plan_view import render_plan
    from planner.scenario.load import load_scenario
    from planner.solve.optimize import plan_baselines, solve
    from predictors.api import Predictor

    marks.append(("imports", time.perf_counter() - t0))
    t = time.perf_counter()
    predictor = Predictor.load()
    marks.append(("load predictors + catalog", time.perf_counter() - t))
    t = time.perf_counter()
    scenario = load_scenario(default_scenario(), catalog=predictor.catalog)
    marks.append(("load scenario", time.perf_counter() - t))
    t = time.perf_counter()
    inputs = planning_inputs(scenario, predictor)
    marks.append((f"capacity model ({len(inputs.candidates)} candidates)", time.perf_counter() - t))
    t = time.perf_counter()
    plan = solve(inputs, baselines=False)
    marks.append((f"solve ({plan.status.value})", time.perf_counter() - t))
    t = time.perf_counter()
    plan_baselines(inputs)
    marks.append(("3 baselines", time.perf_counter() - t))
    t = time.perf_counter()
    render_plan(plan, "table")
    marks.append(("render table", time.perf_counter() - t))
    return marks


def main(argv: list[str] | None = None) -> int:
    """Print the timings; exit 1 when the median exceeds the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs (after one warm-up)")
    parser.add_argument("--format", default="table", choices=["table", "json", "md", "csv"])
    parser.add_argument("--script", action="store_true", help="run the wattgpu console script")
    parser.add_argument("--stages", action="store_true", help="also time each stage in-process")
    args = parser.parse_args(argv)

    startup = command(["--version"], script=args.script)
    plan = command(["plan", "--format", args.format], script=args.script)
    time_run(plan)  # warm-up: file system cache, compiled bytecode
    version_s = statistics.median(time_run(startup) for _ in range(3))
    times = [time_run(plan) for _ in range(args.runs)]
    median = statistics.median(times)
    print(f"wattgpu --version: {version_s:.2f} s (median of 3)")
    print(
        f"wattgpu plan --format {args.format} (default scenario): median {median:.2f} s, "
        f"min {min(times):.2f} s, max {max(times):.2f} s over {len(times)} runs "
        f"(target < {TARGET_S:g} s): {'ok' if median < TARGET_S else 'SLOW'}"
    )
    print(f"cpu count {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    if args.stages:
        for name, seconds in stages():
            print(f"  {name:<40} {seconds:6.2f} s")
    return 0 if median < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
