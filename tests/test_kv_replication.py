"""KV copies across tensor-parallel ranks (:func:`predictors.physics.kv_replication`).

Tensor parallelism splits the KV cache by KV head. Multi-head latent attention caches one latent
head that every rank keeps whole; grouped-query attention with TP above its KV heads copies each
head ``TP / kv_heads`` times. Properties over every catalog LLM and TP degree:

* the factor is 1 at TP 1, ``TP`` for MLA, ``max(1, TP / kv_heads)`` otherwise;
* per GPU, a sequence's KV never grows with more GPUs (a copy per rank at most), so more GPUs
  never refuse a batch (also ``test_kv_memory``);
* attention data parallelism is what removes the copy: an MLA model's KV per sequence at TP 1 ×
  DP n is ``1/n`` of TP n's, and ``predict`` accepts a batch on DP 8 that TP 8 of the same GPUs
  refuses;
* the copies are held, not read: the decode step's KV read (``kv_read_bytes``) stays one copy
  (docs/method.md, "Parallel layouts": held-out ITL got worse with them read).
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from predictors import memory_rule, physics
from predictors.api import Predictor
from predictors.catalog import validity
from predictors.catalog.store import load_catalog
from predictors.features import join_specs, with_layout

_CATALOG = load_catalog()
TP_DEGREES = (1, 2, 4, 8, 16, 32, 64)


def _frame(tp: tuple[int, ...] = TP_DEGREES, dp: int = 1) -> pl.DataFrame:
    rows = pl.DataFrame(
        list(itertools.product(_CATALOG.llms["id"].to_list(), tp)),
        schema=["model", "tensor_parallel"],
        orient="row",
    ).with_columns(
        pl.lit("B200").alias("gpu"),
        pl.lit("fp8").alias("precision"),
        pl.lit("vllm").alias("engine"),
        (pl.col("tensor_parallel") * dp).cast(pl.Float64).alias("gpu_count"),
        pl.col("tensor_parallel").cast(pl.Float64),
        pl.lit(1.0).alias("pipeline_parallel"),
        pl.lit(float(dp)).alias("data_parallel"),
        pl.lit(64.0).alias("batch_size"),
        pl.lit(4096.0).alias("input_tokens"),
        pl.lit(1024.0).alias("output_tokens"),
    )
    return with_layout(join_specs(rows, _CATALOG)).with_columns(
        physics.kv_replication().alias("copies"),
        memory_rule.paged_kv_bytes_per_sequence().alias("kv_per_seq"),
    )


def test_copies_follow_the_attention_kind() -> None:
    f = _frame()
    tp = f["tensor_parallel"].to_numpy()
    heads = f["num_kv_heads"].cast(pl.Float64).to_numpy()
    mla = (f["attention_kind"] == "mla").to_numpy()
    expected = np.where(mla, tp, np.maximum(1.0, tp / heads))
    known = mla | np.isfinite(heads)
    assert mla.any() and (~mla & (tp > heads)).any()  # both kinds of copy occur in the catalog
    np.testing.assert_allclose(f["copies"].to_numpy()[known], expected[known])
    assert (f.filter(pl.col("tensor_parallel") == 1)["copies"] == 1.0).all()


def test_per_gpu_kv_never_grows_with_more_gpus() -> None:
    f = _frame().sort("model", "tensor_parallel")
    per_gpu = f.with_columns(
        (pl.col("kv_per_seq") / pl.col("gpu_count")).alias("seq"),
    )
    step = per_gpu.group_by("model", maintain_order=True).agg(
        (pl.col("seq") <= pl.col("seq").shift(1) * (1 + 1e-12)).fill_null(True).all().alias("ok")
    )
    assert step["ok"].all(), step.filter(~pl.col("ok"))["model"].to_list()[:5]
    # MLA keeps the same KV per GPU at any TP (every rank a full copy)
    mla = per_gpu.filter(pl.col("attention_kind") == "mla")
    spread = mla.group_by("model").agg((pl.col("seq").max() / pl.col("seq").min()).alias("r"))
    np.testing.assert_allclose(spread["r"].to_numpy(), 1.0)


def test_attention_data_parallelism_removes_the_copy() -> None:
    tp8 = _frame(tp=(8,)).filter(pl.col("attention_kind") == "mla")
    dp8 = _frame(tp=(1,), dp=8).filter(pl.col("attention_kind") == "mla")
    assert tp8.height > 0 and tp8["model"].to_list() == dp8["model"].to_list()
    np.testing.assert_allclose(dp8["kv_per_seq"].to_numpy(), tp8["kv_per_seq"].to_numpy() / 8.0)


def test_predict_refuses_on_tp_what_attention_dp_of_the_same_gpus_holds() -> None:
    """DeepSeek-V3 fp8 on 8 x H200, 1,000 running sequences at 4,096 + 1,024 tokens: TP 8 keeps
    8 copies of the latent cache (about 1.2 GB per sequence, some 400 GB free for KV), attention
    DP 8 one copy (its extra shared-weight copies cost about 120 GB)."""
    rows = pl.DataFrame(
        {
            "model": ["deepseek-ai/DeepSeek-V3"] * 2,
            "gpu": ["H200-SXM-141GB"] * 2,
            "gpu_count": [8, 8],
            "engine": ["sglang"] * 2,
            "precision": ["fp8"] * 2,
            "batch_size": [1000, 1000],
            "input_tokens": [4096, 4096],
            "output_tokens": [1024, 1024],
            "data_parallel": [1, 8],
        }
    )
    out = Predictor.load().predict(rows, with_fit=True)
    assert out["fits_in_memory"].to_list() == [False, True]
    assert "does not fit" in out["error"][0] and out["error"][1] == ""
    assert "held 8 times" in out["error"][0] and "data_parallel > 1" in out["error"][0]


def test_the_step_reads_one_copy() -> None:
    from predictors.features import add_features

    rows = pl.DataFrame(
        {
            "model": ["deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3"],
            "gpu": ["B200", "B200"],
            "gpu_count": [8.0, 8.0],
            "engine": ["vllm", "vllm"],
            "precision": ["fp8", "fp8"],
            "batch_size": [64.0, 64.0],
            "input_tokens": [4096.0, 4096.0],
            "output_tokens": [1024.0, 1024.0],
            "tensor_parallel": [8.0, 1.0],
            "pipeline_parallel": [1.0, 1.0],
            "data_parallel": [1.0, 8.0],
        }
    )
    f = add_features(join_specs(rows, _CATALOG)).with_columns(
        physics.kv_replication().alias("copies"),
        (physics.kv_bytes_per_token() * pl.col("batch_size") * physics.mean_context_tokens()).alias(
            "one_copy"
        ),
    )
    assert f["copies"].to_list() == [8.0, 1.0]
    # the same bytes on either layout: one copy of the batch's latent cache, not eight
    np.testing.assert_allclose(f["kv_read_bytes"].to_numpy(), f["one_copy"].to_numpy())
    assert f["kv_read_bytes"][0] == f["kv_read_bytes"][1] > 0


def test_the_scalar_rule_agrees_with_the_memory_rule() -> None:
    """``validity.kv_copies`` (the planner's ladder) and ``physics.kv_replication`` (memory)."""
    f = _frame()
    llms = {r["id"]: r for r in _CATALOG.llms.iter_rows(named=True)}
    scalar = [
        validity.kv_copies(llms[m], int(t))
        for m, t in zip(f["model"], f["tensor_parallel"], strict=True)
    ]
    np.testing.assert_allclose(scalar, f["copies"].to_numpy())
