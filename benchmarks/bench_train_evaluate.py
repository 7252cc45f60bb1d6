"""Time ``wattgpu train`` (target < 2 min) and the full ``wattgpu evaluate`` (target < 10 min).

Both run as fresh processes on the public measurements (default ../shared/data/measurements);
the trained models go to a temporary directory so the shipped ones are untouched, and the
evaluation report to a temporary file. Run::

    python benchmarks/bench_train_evaluate.py [--data DIR] [--skip-evaluate]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "planner.cli.app", *args], check=True, cwd=REPO)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "measurements"))
    parser.add_argument("--skip-evaluate", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t_train = timed(["train", "--data", args.data, "--output", f"{tmp}/trained"])
        print(f"train: {t_train:.1f} s (target < 120 s: {'met' if t_train < 120 else 'MISSED'})")
        if not args.skip_evaluate:
            t_eval = timed(["evaluate", "--data", args.data, "--output", f"{tmp}/accuracy.md"])
            verdict = "met" if t_eval < 600 else "MISSED"
            print(f"evaluate: {t_eval:.1f} s (target < 600 s: {verdict})")


if __name__ == "__main__":
    main()
