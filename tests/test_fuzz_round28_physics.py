"""Fuzz round 28 (physics): attention data parallelism held to the GPU-count bound of TTFT.

Before the fix, 70 of 14,712 doublings of the DP ranks (at a fixed TP degree) predicted a TTFT
more than halved, up to 2.18 x: Qwen1.5-MoE-A2.7B on L40S with SGLang, one 128-token prompt,
0.250 s on one GPU and 0.117 s at DP 2. The TTFT trees have no DP input and fall with the
prefill roofline, which DP shortens, so the guard of the TP degree did not apply."""

from __future__ import annotations

import itertools
import random

import polars as pl

from predictors.api import Predictor

GPUS = ("L40S", "H100-SXM5-80GB", "B200", "MI300X", "A100-SXM4-80GB")


def test_ttft_never_falls_more_than_the_dp_ranks_grow(predictor: Predictor) -> None:
    moe = predictor.catalog.llms.filter(pl.col("is_moe"))["id"].to_list()
    rng = random.Random(28)
    records = []
    for model, gpu in itertools.product(moe, GPUS):
        engine = rng.choice(("vllm", "sglang", "tensorrt-llm"))
        tp, batch = rng.choice((1, 2)), rng.choice((1, 2, 8, 64))
        prompt = rng.choice((128, 2048, 16384))
        records += [
            {"model": model, "gpu": gpu, "gpu_count": tp * dp, "data_parallel": dp,
             "engine": engine, "batch_size": batch, "input_tokens": prompt,
             "output_tokens": 16}
            for dp in (1, 2, 4)
        ]  # fmt: skip
    out = predictor.predict(pl.DataFrame(records), with_ttft=True, beyond_memory=True)
    ttft = out["ttft_s"].to_numpy().reshape(-1, 3)
    checked = 0
    for row in ttft:
        for small, large in itertools.pairwise(row):
            if small == small and large == large:  # both predicted (not NaN)
                assert large >= small / 2 * (1 - 1e-9), row
                checked += 1
    assert checked > 100, checked


def test_the_reported_lone_prompt_is_at_most_halved(predictor: Predictor) -> None:
    base = {"model": "Qwen/Qwen1.5-MoE-A2.7B-Chat", "gpu": "L40S", "engine": "sglang",
            "batch_size": 1, "input_tokens": 128, "output_tokens": 2048}  # fmt: skip
    rows = pl.DataFrame([base | {"gpu_count": d, "data_parallel": d} for d in (1, 2, 4, 8)])
    ttft = predictor.predict(rows, with_ttft=True)["ttft_s"].to_list()
    assert all(t == t for t in ttft), ttft
    assert all(b >= a / 2 * (1 - 1e-9) for a, b in itertools.pairwise(ttft)), ttft
