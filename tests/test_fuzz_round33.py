"""Fuzz round 33 (wide attention-DP replicas after the batch limit became per DP rank): a
disaggregated side's engine and precision as the predictors read them, and the at-load error
when the serving model's largest batch, not the replica, bounds the rate."""

from __future__ import annotations

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.rows import predict_rows
from predictors.serving.curves import BATCH_GRID
from predictors.serving.disagg_build import disagg_curves


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.load()


def test_a_disaggregated_side_reads_engine_and_precision_as_predict_does(
    predictor: Predictor,
) -> None:
    """``trtllm``, ``FP8`` or an empty precision (DeepSeek-V3's checkpoint is fp8) are the same
    unit as ``tensorrt-llm`` / ``fp8``: the same decode batch limit (TensorRT-LLM's 2,048 per DP
    rank, not the 256 of an unknown engine) and no false 'no room for KV' refusal."""
    base = {
        "model": "deepseek-ai/DeepSeek-V3",
        "input_tokens": 1024.0,
        "output_tokens": 1024.0,
        "prefill_gpu": "GB200",
        "prefill_gpu_count": 4.0,
        "prefill_workers": 2.0,
        "prefill_dp": 4.0,
        "decode_gpu": "GB200",
        "decode_gpu_count": 16.0,
        "decode_workers": 1.0,
        "decode_dp": 16.0,
    }
    cases = [
        ("tensorrt-llm", "fp8"),
        ("trtllm", "fp8"),
        ("TensorRT-LLM", "FP8"),
        ("tensorrt-llm", None),
    ]
    units = pl.DataFrame(
        [{**base, "engine": e, "precision": p} for e, p in cases],
        schema_overrides={"precision": pl.String},
    )
    t = disagg_curves(predictor, units)
    assert t.error == [""] * len(cases)
    limits = t.decode.max_batch.tolist()
    assert limits == [limits[0]] * len(cases) and limits[0] >= 2048 * 16 // 2
    assert t.kv.bytes_per_request.tolist() == [t.kv.bytes_per_request[0]] * len(cases)


def test_a_rate_beyond_the_largest_tabulated_batch_says_so(predictor: Predictor) -> None:
    """A 144-GPU DP-144 replica holds more than the serving model tabulates; the error names
    that bound and does not advise more GPUs, which would not raise it."""
    rows = pl.DataFrame(
        {
            "model": ["deepseek-ai/DeepSeek-V3"],
            "gpu": ["GB200"],
            "gpu_count": ["144"],
            "data_parallel": ["144"],
            "engine": ["tensorrt-llm"],
            "precision": ["fp8"],
            "input_tokens": ["1024"],
            "output_tokens": ["1024"],
            "requests_per_s": ["600"],
        }
    )
    error = predict_rows(predictor, rows)["error"][0]
    assert f"largest useful batch of {BATCH_GRID[-1]} sequences" in error
    assert "the most the serving model tabulates" in error and "raise gpu_count" not in error
