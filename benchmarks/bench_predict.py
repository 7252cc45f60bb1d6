"""Batch prediction throughput: 100,000 rows through features + both models (target < 2 s).

Loads the shipped predictors once (not timed: process start and model loading are excluded, as
the issue states), builds 100,000 rows of random catalog (LLM, GPU, workload) combinations, then
times :meth:`predictors.api.Predictor.predict` (validation, catalog joins, features, both
XGBoost models, intervals, in-domain flags). Run::

    python benchmarks/bench_predict.py [--rows 100000] [--repeats 3]

Measured 2026-12-01 (quiet 2-core machine): best 0.76 s, median 0.90 s (1.55 s before the row
messages were joined by one vectorised concatenation and the engine lookups hashed). The CLI's
``wattgpu predict --input`` on 1,000,000 rows, predicted in chunks of 200,000: 12.3-14.5 s CPU
over repeated runs, 0.79 GB, about 11 s wall (23.1 s CPU and 1.62 GB before; issue 22's targets
are < 10 s CPU and < 1 GB; one piece instead of chunks: 11.7 s CPU, 1.11 GB).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl

from predictors.api import Predictor

TARGET_S = 2.0


def rows(predictor: Predictor, n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    models = predictor.catalog.llms.filter(pl.col("total_params_b") < 80)["id"].to_list()
    gpus = predictor.catalog.gpus["id"].to_list()
    return pl.DataFrame(
        {
            "model": rng.choice(models, n),
            "gpu": rng.choice(gpus, n),
            "gpu_count": rng.choice([1, 2, 4, 8], n),
            "engine": rng.choice(["vllm", "tensorrt-llm", "sglang"], n),
            "precision": rng.choice(["bf16", "fp8"], n),
            "batch_size": rng.choice([1, 4, 16, 64, 256], n),
            "input_tokens": rng.choice([128, 512, 2048], n),
            "output_tokens": rng.choice([128, 256, 1024], n),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    predictor = Predictor.load()
    frame = rows(predictor, args.rows)
    predictor.predict(frame.head(100))  # warm-up (lazy imports, thread pools)
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        out = predictor.predict(frame)
        times.append(time.perf_counter() - start)
    ok = out.filter(pl.col("error") == "").height
    best = min(times)
    median = sorted(times)[len(times) // 2]
    verdict = "met" if best < TARGET_S else "MISSED"
    print(
        f"predict {args.rows:,} rows: best {best:.2f} s, median {median:.2f} s over "
        f"{args.repeats} runs ({ok:,} predicted, {args.rows - ok:,} row errors); "
        f"target < {TARGET_S:.0f} s: {verdict}"
    )


if __name__ == "__main__":
    main()
