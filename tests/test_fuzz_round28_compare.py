"""Fuzz round 28 (compare): when no row misses the SLA, the closing error does not tell the
user to relax it.

Before: ``compare --model openai/gpt-oss-120b --gpus V100-SXM2-32GB --itl-ms 100000`` ended with
"no GPU type meets ITL ≤ 100000 ms ... — relax the SLA or allow more GPU types", though the row
says the checkpoint's fp4 needs an Ampere or newer GPU (with --precision fp16 it fits)."""

from __future__ import annotations

import pytest

from tests.cli_runner import run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")


@pytest.mark.slow
def test_a_precision_no_gpu_listed_runs_is_named_not_the_sla() -> None:
    args = ["--requests-per-s", "1", "--itl-ms", "100000", "--gpus", "V100-SXM2-32GB"]
    result = run_cli("compare", "--model", "openai/gpt-oss-120b", *args)
    assert result.code == 1
    last = result.err.strip().splitlines()[-1]
    assert last == (
        "error: no GPU type listed can serve openai/gpt-oss-120b at fp4 with vllm (precision: "
        "each row says why) — allow other GPU types, or pass another --precision or --engine"
    ), result.err
    fits = run_cli("compare", "--model", "openai/gpt-oss-120b", *args, "--precision", "fp16")
    assert fits.code == 0, fits.err


@pytest.mark.slow
def test_an_sla_miss_still_names_the_sla() -> None:
    result = run_cli(
        "compare", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--requests-per-s", "1",
        "--itl-ms", "0.5", "--gpus", "A10G,L4",
    )  # fmt: skip
    assert result.code == 1
    assert "relax the SLA" in result.err.strip().splitlines()[-1], result.err
