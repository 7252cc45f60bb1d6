"""Physics of fuzz round 22b, over the whole catalog.

* The decode step reads each layer's KV as the layer holds it: a sliding-window or chunked layer
  at most its window, a Mamba / linear-attention layer its fixed state (before: every layer for
  the whole context, so Falcon3-Mamba-7B at batch 64 and 8,192 prompt tokens was predicted at
  4.3 s per token, 200 times Llama-3.1-8B).
* A GPU of a pipeline-parallel replica works only its stage's share of a token cycle
  (``min(b, PP) / PP``; ``1 / PP`` for engines whose stages run in turn) and idles the rest
  (before: every stage drew a busy GPU's power, 610 W per H100 for Llama-3.1-70B at PP 8 and
  batch 1).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from predictors.api import Predictor
from predictors.core.vocab import LAYER_SPLIT_ENGINES
from predictors.rows import predict_rows


def _rows(**columns: list[object]) -> pl.DataFrame:
    return pl.DataFrame({k: [str(v) for v in vs] for k, vs in columns.items()})


def test_a_step_reads_no_more_kv_than_its_layers_hold_for_every_catalog_llm(
    predictor: Predictor,
) -> None:
    """For every catalog LLM whose layers are all windowed or recurrent, the ITL at four times
    its window (or the longest context it takes) stays within 25 % of the ITL at the window: the
    KV read stops growing, what is left is the trees' context residual (a full-attention 7B
    reads four times the KV there)."""
    llms = predictor.catalog.llms
    windowed = llms.filter(
        (pl.col("full_attention_layers") == 0) & (pl.col("window_attention_layers") > 0)
    )
    assert windowed.height >= 10  # Mistral-7B-v0.1 and its fine-tunes, StarCoder2, RWKV, Mamba
    window = windowed["sliding_window"].cast(pl.Float64).fill_null(1.0).clip(lower_bound=256.0)
    longest = windowed["max_position_embeddings"].cast(pl.Float64) - 64.0
    short = window.to_numpy()
    long = np.minimum(4.0 * short, longest.to_numpy())
    n = windowed.height
    q = _rows(
        model=windowed["id"].to_list() * 2,
        gpu=["H100-SXM5-80GB"] * (2 * n),
        batch_size=[8] * (2 * n),
        input_tokens=[int(v) for v in short] + [int(v) for v in long],
        output_tokens=[16] * (2 * n),
    )
    out = predict_rows(predictor, q)
    assert (out["error"] == "").all(), out["error"].to_list()
    itl = out["itl_s"].to_numpy()
    ratio = itl[n:] / itl[:n]
    assert (ratio < 1.25).all(), dict(zip(windowed["id"].to_list(), ratio.round(3), strict=True))


def test_pure_recurrent_itl_does_not_grow_with_the_prompt(predictor: Predictor) -> None:
    q = _rows(
        model=["tiiuae/Falcon3-Mamba-7B-Instruct"] * 2 + ["meta-llama/Llama-3.1-8B-Instruct"],
        gpu=["H100-SXM5-80GB"] * 3,
        batch_size=[32] * 3,
        input_tokens=[128, 8192, 8192],
        output_tokens=[256] * 3,
    )
    out = predict_rows(predictor, q)
    assert (out["error"] == "").all(), out["error"].to_list()
    short, long, llama = out["itl_s"].to_list()
    assert long < 1.25 * short  # the trees' context residual; the KV read is the same
    assert long < llama  # a 7B recurrent model reads less per step than an 8B transformer


def test_a_pipeline_stage_draws_power_for_its_share_of_the_cycle(predictor: Predictor) -> None:
    """Layer-split engines: with their stages in turn, n GPUs at PP n draw about idle + (one
    GPU's dynamic power) / n each; vLLM at PP 8 and batch 1 likewise, and its power rises with
    batch until the stages are full."""
    gpu = "H100-SXM5-80GB"
    idle = float(predictor.catalog.gpu(gpu)["idle_power_w"])
    for engine in LAYER_SPLIT_ENGINES:
        q = _rows(
            model=["meta-llama/Llama-3.1-8B-Instruct"] * 3,
            gpu=[gpu] * 3,
            engine=[engine] * 3,
            gpu_count=[1, 2, 4],
            batch_size=[1] * 3,
        )
        out = predict_rows(predictor, q)
        assert (out["error"] == "").all(), out["error"].to_list()
        one, two, four = out["power_w_per_gpu"].to_list()
        assert abs((two - idle) - (one - idle) / 2) <= 0.05 * (one - idle), engine
        assert abs((four - idle) - (one - idle) / 4) <= 0.05 * (one - idle), engine
    batches = [1, 2, 4, 8, 16, 64]
    q = _rows(
        model=["meta-llama/Llama-3.1-70B-Instruct"] * (len(batches) + 1),
        gpu=[gpu] * (len(batches) + 1),
        engine=["vllm"] * (len(batches) + 1),
        gpu_count=[8] * (len(batches) + 1),
        pipeline_parallel=[8] * len(batches) + [1],
        batch_size=[*batches, 1],
    )
    out = predict_rows(predictor, q)
    assert (out["error"] == "").all(), out["error"].to_list()
    power = out["power_w_per_gpu"].to_numpy()
    pp, tp = power[:-1], power[-1]
    assert (np.diff(pp) >= -1e-9).all(), pp  # never falls with load
    assert pp[0] < idle + (tp - idle)  # one of 8 stages busy at batch 1
    lo, hi = out["power_w_per_gpu_lo"].to_numpy(), out["power_w_per_gpu_hi"].to_numpy()
    assert ((lo <= power + 1e-9) & (power <= hi + 1e-9) & (lo >= idle - 1e-9)).all()
