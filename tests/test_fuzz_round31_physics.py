"""Fuzz round 31 (physics over the whole catalog, the seven GPU types added on 2026-12-07).

* A lone prompt's TTFT was two numbers: ``wattgpu predict`` at batch 1 gave the TTFT trees,
  floored at the hardware (the prompt's FLOPs at peak), while the serving model's ``t_1`` (what a
  rate row, ``plan`` and ``compare`` use) raised them to the physics prefill (FLOPs at half the
  peak plus one weight read). Where the trees extrapolate flat below their training GPUs the two
  differed up to 2 times (H20, Llama-3.1-8B, 8,192 prompt tokens: 0.889 s at batch 1, 1.79 s at
  1e-4 requests/s). The TTFT's floor is now that prefill roofline (every measured TTFT is above
  it), so on one GPU the TTFT at the lightest load is the batch-1 TTFT plus one decode step.
* ``expert_parallel`` larger than a pipeline stage's GPUs read "16 does not divide the ... = 8
  GPUs"; it now says it is more than them and how to give the layout.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.features import join_specs, with_layout
from predictors.physics import prefill_time_s
from predictors.rows import predict_rows

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.load()


def _rows(predictor: Predictor) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "model": MODEL,
                "gpu": gpu,
                "gpu_count": 1,
                "batch_size": 1,
                "input_tokens": prompt,
                "output_tokens": 256,
                "precision": "bf16",
                "engine": "vllm",
            }
            for gpu in predictor.catalog.gpus["id"].to_list()
            for prompt in (128, 2048, 8192)
        ]
    )


def test_ttft_is_never_below_the_prefill_roofline_anywhere(predictor: Predictor) -> None:
    rows = _rows(predictor)
    out = predictor.predict(rows, with_ttft=True)
    ok = (out["error"] == "").to_numpy()
    assert ok.sum() > 100
    roofline = (
        with_layout(join_specs(rows, predictor.catalog))
        .select(prefill_time_s())
        .to_series()
        .to_numpy()
    )
    ttft = out["ttft_s"].to_numpy()
    assert np.all(ttft[ok] >= roofline[ok] * (1 - 1e-12))
    lo = out["ttft_s_lo"].to_numpy()
    assert np.all(lo[ok] >= roofline[ok] * (1 - 1e-12))


def test_lightest_load_ttft_is_the_batch_1_ttft_plus_a_step(predictor: Predictor) -> None:
    """One GPU (no TP or pipeline transfer in ``t_1``): TTFT at 1e-4 requests/s = the batch-1
    TTFT + the step time, on every catalog GPU where the model fits."""
    rows = _rows(predictor)
    at_batch_1 = predictor.predict(rows, with_ttft=True)
    rated = predict_rows(
        predictor, rows.drop("batch_size").with_columns(pl.lit(1e-4).alias("requests_per_s"))
    )
    ok = ((at_batch_1["error"] == "") & (rated["error"] == "")).to_numpy()
    assert ok.sum() > 100
    expected = at_batch_1["ttft_s"].to_numpy() + rated["itl_s"].to_numpy()
    got = rated["ttft_s_at_load"].to_numpy()
    ratio = got[ok] / expected[ok]
    worst = int(np.argmax(np.abs(ratio - 1)))
    assert np.all(np.abs(ratio - 1) < 0.01), rows.filter(pl.Series(ok))[worst].to_dicts()


def test_expert_parallel_beyond_a_stage_says_so(predictor: Predictor) -> None:
    row = pl.DataFrame(
        [
            {
                "model": "deepseek-ai/DeepSeek-V3",
                "gpu": "H100-SXM5-80GB",
                "gpu_count": 16,
                "batch_size": 8,
                "input_tokens": 1024,
                "output_tokens": 256,
                "expert_parallel": 16,
            }
        ]
    )
    error = predictor.predict(row)["error"][0]
    assert error.startswith("expert_parallel: 16 is more than the 8 GPUs of a pipeline stage")
    assert "data_parallel" in error and "does not divide" not in error
