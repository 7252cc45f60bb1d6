"""Fuzz round 18d: rows at a rate, held to the contract and the ITL invariants.

Each test failed before its fix: a row with a ``requests_per_s`` was refused for memory at its
``batch_size``, which the contract says is ignored (971 of 6,056 rate rows at batch 8-4096 whose
batch-1 sibling was predicted), and its TTFT columns were the at-batch estimator's at that batch
(0.135 s at batch 1, 0.381 s at batch 64, beside a ``ttft_s_at_load`` of 0.055 s); the p90 ITL
charged the prompts of ``1 + k`` sequences' arrivals to every step, so at a near-zero load it was
2.6 x the mean ITL and fell as the output grew (2,720 of 5,358 output-ladder steps)."""

from __future__ import annotations

import itertools

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.rows import predict_rows

CASES = [
    ("Qwen/Qwen3-30B-A3B", "H100-NVL-94GB", 2048, 256, 0.5),
    ("meta-llama/Llama-3.1-8B-Instruct", "A30", 512, 256, 0.33),
    ("meta-llama/Llama-3.1-8B-Instruct", "H100-SXM5-80GB", 8192, 16, 0.01),
    ("openai/gpt-oss-20b", "L40S", 4096, 1024, 0.2),
]


def _rows(records: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(records).with_columns(pl.all().cast(pl.String))


def test_a_rate_rows_batch_size_is_ignored(predictor: Predictor) -> None:
    records = [
        {"model": m, "gpu": g, "batch_size": b, "input_tokens": i, "output_tokens": o,
         "requests_per_s": lam}
        for (m, g, i, o, lam), b in itertools.product(CASES, (1, 64, 1024, 4096, "abc"))
    ]  # fmt: skip
    out = predict_rows(predictor, _rows(records), with_ttft=True)
    assert (out["error"] == "").all(), out.filter(pl.col("error") != "")["error"].to_list()
    columns = ["power_w_per_gpu", "itl_s", "itl_s_hi", "concurrency", "itl_s_p90", "ttft_s",
               "ttft_s_lo", "ttft_s_hi", "in_domain", "domain_reason"]  # fmt: skip
    for j in range(len(CASES)):
        block = out.slice(5 * j, 5).select(columns)
        assert block.n_unique() == 1, block
    assert out["ttft_s"].to_list() == out["ttft_s_at_load"].to_list()
    assert out["batch_size"].to_list()[:5] == [1, 64, 1024, 4096, None]


@pytest.mark.parametrize("rate", [0.001, 0.05, 0.5])
def test_p90_itl_never_falls_as_the_output_grows_and_stays_above_the_mean(
    predictor: Predictor, rate: float
) -> None:
    ladder = (16, 32, 64, 128, 256, 512, 1024, 2048)
    records = [
        {"model": m, "gpu": g, "input_tokens": i, "output_tokens": o, "requests_per_s": rate}
        for (m, g, i, _, _), o in itertools.product(CASES, ladder)
    ]
    out = predict_rows(predictor, _rows(records))
    for j in range(len(CASES)):
        block = out.slice(len(ladder) * j, len(ladder)).filter(pl.col("error") == "")
        p90, mean = block["itl_s_p90"].to_list(), block["itl_s"].to_list()
        assert all(b >= a * (1 - 1e-9) for a, b in zip(p90, p90[1:], strict=False)), p90
        assert all(p >= m * (1 - 1e-12) for p, m in zip(p90, mean, strict=True))
        if rate <= 0.001:  # almost never another sequence decoding: the lone step
            assert all(p <= m * 1.01 for p, m in zip(p90, mean, strict=True)), (p90, mean)


def test_ttft_never_falls_more_than_the_tp_degree_grows(predictor: Predictor) -> None:
    """Before: 81 of 21,831 TP doublings predicted a TTFT more than halved (worst 3.14 x; the
    trees fall in both the TP degree and the roofline, which shrinks with TP already)."""
    llms = predictor.catalog.llms.filter(pl.col("total_params_b") < 80)["id"].to_list()
    gpus = ("A100-SXM4-40GB", "H100-SXM5-80GB", "L40S", "A10G", "B200", "MI300X")
    rng = __import__("random").Random(18)
    records = []
    for model, gpu in itertools.product(rng.sample(llms, 40), gpus):
        engine = rng.choice(("vllm", "sglang", "tensorrt-llm"))
        batch, prompt = rng.choice((1, 16, 256)), rng.choice((128, 512, 4096))
        records += [
            {"model": model, "gpu": gpu, "gpu_count": n, "engine": engine, "batch_size": batch,
             "input_tokens": prompt, "output_tokens": 1}
            for n in (1, 2, 4, 8)
        ]  # fmt: skip
    out = predictor.predict(pl.DataFrame(records), with_ttft=True)
    ttft = out["ttft_s"].to_numpy().reshape(-1, 4)
    checked = 0
    for row in ttft:
        for small, large in itertools.pairwise(row):
            if small == small and large == large:  # both predicted (not NaN)
                assert large >= small / 2 * (1 - 1e-9), row
                checked += 1
    assert checked > 300


def test_a_rate_rows_ttft_upper_bound_is_empty_where_the_upper_curves_cannot_carry_it(
    predictor: Predictor,
) -> None:
    """Before: ``ttft_s_hi`` came back equal to ``ttft_s`` (a zero-width upper bound) where
    ``itl_s_hi`` is empty because the upper interval curves cannot carry the rate."""
    rows = _rows(
        [{"model": "llama-3.1-8b", "gpu": "H100-SXM5-80GB", "input_tokens": 32000,
          "output_tokens": 256, "requests_per_s": 0.5}]
    )  # fmt: skip
    out = predict_rows(predictor, rows, with_ttft=True).row(0, named=True)
    assert out["error"] == "" and out["itl_s_hi"] is None
    assert out["ttft_s_hi"] is None and out["ttft_s"] > 0
