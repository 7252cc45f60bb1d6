"""Physics properties of two corners the full-attention, tensor-parallel grid of
tests/test_physics_properties.py does not reach, over every catalog GPU (fuzz round 23):

* windowed, hybrid (Mamba) and recurrent LLMs: a longer prompt or output never makes a decode
  step faster (every layer reads at least what it read; the trees' per-token KV input is the
  model's, constant in the context). Before, gpt-oss-120b on H100 at batch 1 went 4.44 → 4.07 ms
  from a 1,024- to an 8,192-token prompt, inside the training domain;
* a layer split (llama.cpp, hf-transformers: the stages run one after another) never beats one
  GPU: Qwen3-30B-A3B on 8 A100 with llama.cpp was predicted 3.3 times faster than on one.
"""

from __future__ import annotations

import itertools

import polars as pl
import pytest

from predictors.api import Predictor

#: Catalog LLMs with windowed, chunked or recurrent layers (read from the catalog).
LAYERED = pl.col("window_attention_layers").fill_null(0) > 0
STATEFUL = pl.col("state_bytes_per_sequence").fill_null(0) > 0


def _falls(frame: pl.DataFrame, by: list[str], order: str) -> pl.DataFrame:
    return (
        frame.sort([*by, order])
        .with_columns(pl.col("itl_s").diff().over(by).alias("_step"))
        .filter(pl.col("_step") < -1e-9 * pl.col("itl_s"))
    )


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.load()


def test_longer_context_never_speeds_a_windowed_or_recurrent_model(predictor: Predictor) -> None:
    models = predictor.catalog.llms.filter(LAYERED | STATEFUL)["id"].to_list()
    assert len(models) >= 10
    gpus = predictor.catalog.gpus["id"].to_list()
    rows = itertools.product(models, gpus, (1, 32), (256, 2048, 16384), (64, 1024))
    frame = pl.DataFrame(
        list(rows),
        schema=["model", "gpu", "batch_size", "input_tokens", "output_tokens"],
        orient="row",
    ).with_columns(pl.lit(1).alias("gpu_count"), pl.lit("vllm").alias("engine"))
    out = predictor.predict(frame).filter(pl.col("error") == "")
    assert out.height > 0.3 * frame.height
    keys = ["model", "gpu", "batch_size"]
    for order, other in (("input_tokens", "output_tokens"), ("output_tokens", "input_tokens")):
        bad = _falls(out, [*keys, other], order)
        assert bad.is_empty(), f"ITL falls with {order}: {bad.head(3).to_dicts()}"


@pytest.mark.parametrize("engine", ["llama.cpp", "hf-transformers"])
def test_a_layer_split_never_beats_one_gpu(predictor: Predictor, engine: str) -> None:
    models = (
        "meta-llama/Llama-3.1-8B-Instruct",
        "Qwen/Qwen3-30B-A3B",
        "mistralai/Mixtral-8x7B-Instruct-v0.1",
    )
    gpus = predictor.catalog.gpus["id"].to_list()
    rows = itertools.product(models, gpus, (1, 2, 4, 8), (1, 8, 64))
    frame = pl.DataFrame(
        list(rows), schema=["model", "gpu", "gpu_count", "batch_size"], orient="row"
    ).with_columns(
        pl.lit(engine).alias("engine"),
        pl.lit(512).alias("input_tokens"),
        pl.lit(256).alias("output_tokens"),
    )
    out = predictor.predict(frame).filter(pl.col("error") == "")
    keys = ["model", "gpu", "batch_size"]
    one = out.filter(pl.col("gpu_count") == 1).select(*keys, pl.col("itl_s").alias("one_gpu"))
    split = out.filter(pl.col("gpu_count") > 1).join(one, on=keys)
    assert split.height > 100
    assert (split["pipeline_parallel"] == split["gpu_count"]).all()
    faster = split.filter(pl.col("itl_s") < pl.col("one_gpu") * (1 - 1e-9))
    assert faster.is_empty(), faster.head(3).to_dicts()
