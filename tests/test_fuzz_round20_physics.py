"""Fuzz round 20e: physics invariants on user GPUs the catalog does not hold.

Each test failed before its fix:

* TP 5 × PP 2 on 10 GPUs (8-GPU nodes) paid no network for its stage boundary, which must leave
  the node: on a 1 Gb/s network it was predicted as fast as on the H100's 400 Gb/s (9.77 ms
  against a hop of 11.5 ms);
* a GPU with less memory (batch limit 1) got a better p90 ITL at the same rate than the same
  GPU with 80 GB, its curve extended flat past batch 1 (14.6 against 18.3 ms);
* on a 4 GB/s interconnect a TP 8 replica's ITL was 0.82 × its own all-reduce transfer time;
* mean power at a rate fell by 0.046 W as the Poisson mean passed 24, where the exact sum gave
  way to Gauss-Hermite.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from predictors.api import Predictor
from predictors.rows import predict_rows
from tests.test_fuzz_round16_physics import _user_gpus


def _rows(**columns: list[object]) -> pl.DataFrame:
    return pl.DataFrame({k: [str(v) for v in vs] for k, vs in columns.items()})


def test_a_stage_boundary_that_leaves_the_node_pays_the_network(tmp_path: Path) -> None:
    slow = {"scale_out_gbit_s": "1", "scale_out_latency_us": "1000"}
    p = _user_gpus(tmp_path, "H100-SXM5-80GB", {"X-SLOWNET": slow})
    n = 2
    q = _rows(
        model=["meta-llama/Llama-2-13b-hf"] * n,
        gpu=["X-SLOWNET", "H100-SXM5-80GB"],
        gpu_count=[10] * n,
        pipeline_parallel=[2] * n,
        batch_size=[256] * n,
        input_tokens=[128] * n,
        output_tokens=[16] * n,
    )
    out = predict_rows(p, q)
    assert (out["error"] == "").all(), out["error"].to_list()
    slow_itl, fast_itl = out["itl_s"].to_list()
    hop_s = 128 * 5120 * 2.0 / (1e9 / 8) + 1e-3  # one boundary: 128 tokens per cycle, 1 ms
    assert slow_itl >= hop_s
    assert out["itl_s_lo"][0] >= hop_s
    assert slow_itl > fast_itl


def test_less_memory_never_gives_a_better_p90_itl_at_a_rate(tmp_path: Path) -> None:
    p = _user_gpus(tmp_path, "H100-SXM5-80GB", {"X-H100-22GB": {"memory_gb": "22"}})
    n = 2
    q = _rows(
        model=["meta-llama/Llama-3.1-8B-Instruct"] * n,
        gpu=["X-H100-22GB", "H100-SXM5-80GB"],
        input_tokens=[22563] * n,
        output_tokens=[152] * n,
        requests_per_s=[0.3] * n,
    )
    out = predict_rows(p, q)
    assert (out["error"] == "").all(), out["error"].to_list()
    for col in ("itl_s", "itl_s_p90"):
        small, big = out[col].to_list()
        assert big <= small * (1 + 1e-9), (col, small, big)


def test_tensor_parallel_itl_never_beats_its_all_reduce(tmp_path: Path) -> None:
    p = _user_gpus(tmp_path, "H100-SXM5-80GB", {"X-IC4": {"interconnect_gb_s": "4"}})
    q = _rows(
        model=["meta-llama/Llama-3.1-70B-Instruct"],
        gpu=["X-IC4"],
        gpu_count=[8],
        engine=["sglang"],
        batch_size=[64],
        input_tokens=[256],
        output_tokens=[64],
    )
    out = predict_rows(p, q)
    assert out["error"][0] == ""
    # 80 layers x 2 all-reduces of 64 tokens x 8192 x 2 B, ring 2 (n - 1) / n, at 4 GB/s
    all_reduce_s = 80 * 2 * 2 * (7 / 8) * 64 * 8192 * 2 / 4e9
    assert out["itl_s"][0] >= all_reduce_s
    assert out["itl_s_lo"][0] >= all_reduce_s


def test_mean_power_never_falls_as_the_poisson_mean_passes_the_exact_range(
    predictor: Predictor,
) -> None:
    rates = np.linspace(5.0, 8.5, 160)  # concurrency about 18 to 55
    n = rates.size
    q = _rows(
        model=["Qwen/Qwen3-30B-A3B"] * n,
        gpu=["A100-PCIE-80GB"] * n,
        engine=["tensorrt-llm"] * n,
        precision=["bf16"] * n,
        input_tokens=[33] * n,
        output_tokens=[121] * n,
        requests_per_s=list(rates),
    )
    out = predict_rows(predictor, q)
    concurrency = out["concurrency"].to_numpy()
    assert concurrency.min() < 24 < concurrency.max()
    for col in ("power_w_per_gpu", "power_w_per_gpu_lo", "power_w_per_gpu_hi"):
        assert (np.diff(out[col].to_numpy()) >= 0).all(), col
