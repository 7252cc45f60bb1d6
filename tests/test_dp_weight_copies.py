"""Weights each attention-DP rank copies (:func:`predictors.physics.dp_copied_weight_bytes`).

vLLM's data-parallel ranks and TensorRT-LLM's attention DP copy every weight but the routed
experts; SGLang's DP attention copies the attention layers and the token embedding only (its
dense MLPs, shared experts and LM head stay tensor-parallel over the worker). Properties over
every catalog LLM at DP 1-8:

* at DP 1 no engine copies anything, so the engines' memory agrees;
* SGLang never holds more than vLLM, and holds less exactly where an MoE model has dense
  layers, shared experts or an untied head;
* a dense model is copied whole by every engine (DP of a dense model is replication);
* a copy never exceeds the non-routed weights, and the resident weights grow with DP.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from predictors import physics
from predictors.catalog.store import load_catalog
from predictors.features import join_specs, with_layout

_CATALOG = load_catalog()
DP_DEGREES = (1, 2, 4, 8)


def _frame(engine: str) -> pl.DataFrame:
    rows = pl.DataFrame(
        list(itertools.product(_CATALOG.llms["id"].to_list(), DP_DEGREES)),
        schema=["model", "data_parallel"],
        orient="row",
    ).with_columns(
        pl.lit("B200").alias("gpu"),
        pl.lit("fp8").alias("precision"),
        pl.lit(engine).alias("engine"),
        (pl.col("data_parallel") * 2).cast(pl.Float64).alias("gpu_count"),
        pl.lit(2.0).alias("tensor_parallel"),
        pl.lit(1.0).alias("pipeline_parallel"),
        pl.col("data_parallel").cast(pl.Float64),
        pl.lit(8.0).alias("batch_size"),
        pl.lit(1024.0).alias("input_tokens"),
        pl.lit(1024.0).alias("output_tokens"),
    )
    return with_layout(join_specs(rows, _CATALOG)).with_columns(
        physics.dp_copied_weight_bytes().alias("copied"),
        physics.resident_weight_bytes().alias("resident"),
        physics.weight_bytes_read_per_step().alias("read"),
        (physics.weight_bytes() * 1.0).alias("all_weights"),
    )


def test_sglang_copies_the_attention_only() -> None:
    vllm, sglang = _frame("vllm"), _frame("sglang")
    v, s = vllm["copied"].to_numpy(), sglang["copied"].to_numpy()
    assert np.all(s <= v + 1e-6)
    moe = vllm["is_moe"].to_numpy()
    np.testing.assert_allclose(s[~moe], v[~moe])
    # DeepSeek-V3: 3 dense MLPs, one shared expert per MoE layer and an untied head stay sharded
    ds = (vllm["model"] == "deepseek-ai/DeepSeek-V3").to_numpy()
    assert np.all(s[ds] < 0.8 * v[ds])


def test_no_copy_at_dp_one_and_resident_weights_grow_with_dp() -> None:
    for engine in ("vllm", "sglang", "tensorrt-llm"):
        f = _frame(engine)
        one = (f["data_parallel"] == 1).to_numpy()
        np.testing.assert_allclose(f["resident"].to_numpy()[one], f["all_weights"].to_numpy()[one])
        assert np.all(f["copied"].to_numpy() <= f["all_weights"].to_numpy() + 1e-6)
        for key in ("resident", "read"):
            per_model = f.sort("model", "data_parallel").group_by("model", maintain_order=True)
            diffs = per_model.agg(pl.col(key).diff().drop_nulls().min().alias("d"))["d"]
            assert (diffs >= 0).all(), (engine, key)
