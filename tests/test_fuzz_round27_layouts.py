"""Fuzz round 27 (layouts): a 12-head model on 8 GPUs.

GH200's 4-GPU NVLink domain resolves 8 GPUs to tensor parallelism 4 × pipeline 2 by itself;
B300's 8-GPU domain takes TP 8, which does not divide the 12 heads, and the refusal offered TP
1, 2, 4 or 6 only, none of which uses the 8 GPUs asked for. The refusal now also names the
pipeline split that keeps them, and that split, stated, is predicted (no slower than the GPU
that B300 dominates in every spec).
"""

from __future__ import annotations

import polars as pl
import pytest

from predictors.api import Predictor

ROW = {
    "model": "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
    "gpu_count": 8,
    "engine": "sglang",
    "precision": "fp8",
    "batch_size": 1,
    "input_tokens": 1024,
    "output_tokens": 512,
}


@pytest.mark.slow
def test_the_refusal_names_the_pipeline_split_and_that_split_is_served(
    predictor: Predictor,
) -> None:
    rows = pl.DataFrame([{**ROW, "gpu": "GH200-96GB"}, {**ROW, "gpu": "B300"}])
    out = predictor.predict(rows)
    gh200_error, b300_error = out["error"].to_list()
    assert gh200_error == ""
    assert b300_error.endswith(
        "use a tensor-parallel degree of 1, 2, 4, 6, or keep 8 GPUs with pipeline_parallel 2 "
        "(tensor parallelism 4 × pipeline 2)"
    ), b300_error
    fixed = predictor.predict(rows.with_columns(pl.lit(2).alias("pipeline_parallel")))
    assert fixed["error"].to_list() == ["", ""]
    gh200_itl, b300_itl = fixed["itl_s"].to_list()
    assert b300_itl <= gh200_itl


def test_a_stated_pipeline_gets_no_other_pipeline_offered(predictor: Predictor) -> None:
    """``pipeline_parallel 1`` stated: the user chose the stages, so the refusal offers the
    tensor-parallel degrees only."""
    rows = pl.DataFrame([{**ROW, "gpu": "B300", "gpu_count": 8, "pipeline_parallel": 1}])
    error = predictor.predict(rows)["error"][0]
    assert "tensor-parallel degree of 1, 2, 4, 6" in error and "pipeline_parallel 2" not in error
