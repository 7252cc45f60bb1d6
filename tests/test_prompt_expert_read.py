"""The routed experts a prompt reads (:func:`predictors.physics.prompt_expert_read_s`), over the
whole catalog: 0 for dense models; for MoE models positive, non-decreasing in the prompt's
length, never above one read of every routed expert, and never below the share its first token
touches; and it reaches the serving model's per-prompt cost (``prefill_s``)."""

from __future__ import annotations

import numpy as np
import polars as pl

from predictors import physics
from predictors.api import Predictor
from predictors.features import join_specs, with_layout
from predictors.serving.grid import row_physics

PROMPTS = (1.0, 16.0, 200.0, 2048.0, 32768.0)


def _frame(predictor: Predictor) -> pl.DataFrame:
    llms = predictor.catalog.llms["id"].to_list()
    gpus = ["H100-SXM5-80GB", "B200", "MI300X"]
    rows = pl.DataFrame(
        [
            {"model": m, "gpu": g, "gpu_count": 8.0, "engine": "vllm", "precision": "bf16"}
            | {"batch_size": 1.0, "input_tokens": i, "output_tokens": 256.0}
            for m in llms
            for g in gpus
            for i in PROMPTS
        ]
    )
    return with_layout(join_specs(rows, predictor.catalog))


def test_expert_read_is_zero_for_dense_and_bounded_for_moe() -> None:
    predictor = Predictor.load()
    frame = _frame(predictor).with_columns(
        physics.prompt_expert_read_s().alias("read_s"),
        (
            physics._routed_params_b()
            * 1e9
            * physics._BYTES
            / (pl.col("memory_bandwidth_gb_s") * 1e9 * pl.col("gpu_count"))
        ).alias("all_experts_s"),
    )
    moe = frame["is_moe"].fill_null(False).to_numpy() & (frame["all_experts_s"] > 0).to_numpy()
    read = frame["read_s"].to_numpy()
    assert moe.sum() > 20 and (~moe).sum() > 20
    assert (read[~moe] == 0.0).all()
    assert (read[moe] > 0.0).all()
    assert (read[moe] <= frame["all_experts_s"].to_numpy()[moe] * (1 + 1e-12)).all()
    # per (model, GPU), longer prompts touch at least as many experts
    per = read.reshape(-1, len(PROMPTS))
    assert (np.diff(per, axis=1) >= 0.0).all()


def test_the_serving_models_prompt_cost_carries_the_expert_read() -> None:
    predictor = Predictor.load()
    frame = _frame(predictor).filter(pl.col("input_tokens") == 200.0)
    keys = frame.select(
        "model", "gpu", "gpu_count", "engine", "precision", "input_tokens", "output_tokens"
    )
    prefill = row_physics(keys, predictor)["prefill_s"].to_numpy()
    read = frame.select(physics.prompt_expert_read_s()).to_series().to_numpy()
    flops = frame.select(physics.prefill_compute_s()).to_series().to_numpy()
    ok = np.isfinite(prefill)
    assert ok.sum() > 20
    assert (prefill[ok] >= flops[ok] + read[ok] - 1e-15).all()
