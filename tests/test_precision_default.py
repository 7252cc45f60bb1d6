"""One default precision in every command: a model without a stated precision is served at its
checkpoint's (catalog ``default_dtype``, FP32 as FP16, or what a quantised name implies).

``predict``, ``compare`` and ``plan`` then agree on the precision, and on the replica's ITL and
power, for the same model, GPU and workload (issue 17: gpt-oss-120b was fp4 in compare, bf16 in
plan and "does not fit" in predict).
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from planner.analysis.compare import CompareRequest, compare
from planner.pipeline import plan_scenario
from planner.scenario.load import scenario_from_dict
from predictors.api import Predictor
from predictors.catalog import quantised

GPT_OSS = "openai/gpt-oss-120b"
GPU = "H100-SXM5-80GB"
TOKENS = {"input_tokens": 1024, "output_tokens": 256}


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.load()


def test_the_default_is_the_checkpoints_precision(predictor: Predictor) -> None:
    catalog = predictor.catalog
    assert str(catalog.llm(GPT_OSS)["default_dtype"]) == "fp4"
    assert quantised.checkpoint_precision(catalog, GPT_OSS) == "fp4"
    fp32 = catalog.llms.filter(pl.col("default_dtype") == "fp32")["id"].to_list()
    assert fp32, "the catalog has FP32 checkpoints"
    assert {quantised.checkpoint_precision(catalog, m) for m in fp32} == {"fp16"}
    llama = "meta-llama/Llama-3.1-8B-Instruct"
    assert quantised.checkpoint_precision(catalog, llama) == "bf16"


def _scenario(predictor: Predictor, precision: str | None = None) -> Any:
    data: dict[str, Any] = {
        "name": "one-model",
        "horizon_hours": 24,
        "electricity_usd_per_kwh": 0.1,
        "pue": 1.2,
        "region": "US",
        "gpus": {GPU: {"available": 8, "usd_per_hour": 3.0}},
        "models": [
            {
                "name": "chat",
                "model": GPT_OSS,
                "load": {"requests_per_s": 0.5, **TOKENS},
                "sla": {"itl_ms": 200},
            }
        ],
    }
    if precision is not None:
        data["precision"] = precision
    return scenario_from_dict(data, "test", predictor.catalog)


def test_predict_compare_and_plan_agree_without_a_stated_precision(predictor: Predictor) -> None:
    row = pl.DataFrame({"model": [GPT_OSS], "gpu": [GPU], "batch_size": [1], **{
        k: [v] for k, v in TOKENS.items()}})  # fmt: skip
    predicted = predictor.predict(row).row(0, named=True)
    assert predicted["precision"] == "fp4" and predicted["error"] == "", predicted

    result = compare(CompareRequest(model=GPT_OSS, requests_per_s=0.5, itl_ms=200,
                                    gpus=(GPU,), **TOKENS), predictor)  # fmt: skip
    assert result.precision == "fp4"

    plan = plan_scenario(_scenario(predictor), predictor=predictor).plan
    assert plan.has_solution
    (demand,) = plan.inputs.models
    assert demand.precision == "fp4"
    chosen = plan.allocations[0].candidate
    best = next(r for r in result.rows if r.gpu == GPU)
    assert best.fits and chosen.tp == best.tp
    assert best.itl_ms == pytest.approx(1000 * chosen.itl_s_at_capacity, rel=1e-9)


@pytest.mark.slow
def test_a_stated_precision_still_wins(predictor: Predictor) -> None:
    plan = plan_scenario(_scenario(predictor, "fp8"), predictor=predictor).plan
    assert plan.inputs.models[0].precision == "fp8"
    row = pl.DataFrame({"model": [GPT_OSS], "gpu": [GPU], "precision": ["fp8"]})
    assert predictor.predict(row)["precision"].to_list() == ["fp8"]


@pytest.mark.slow
def test_predict_at_a_rate_uses_the_checkpoints_precision(predictor: Predictor) -> None:
    """The at-load rows of ``predict --requests-per-s`` are served at the precision the output
    states (gpt-oss-120b at fp4 fits one H100; at bf16, as they were read before, it did not),
    and a quantised checkpoint's name resolves there too (it was "0 sequences")."""
    from predictors.rows import predict_rows

    rows = pl.DataFrame(
        {
            "model": [GPT_OSS, GPT_OSS, "nvidia/Llama-3.1-8B-Instruct-FP8"],
            "gpu": [GPU] * 3,
            "precision": ["", "fp4", ""],
            "requests_per_s": [0.5, 0.5, 1.0],
            **{k: [v] * 3 for k, v in TOKENS.items()},
        }
    )
    out = predict_rows(predictor, rows)
    assert out["error"].to_list() == ["", "", ""], out["error"].to_list()
    assert out["precision"].to_list() == ["fp4", "fp4", "fp8"]
    assert (
        out["itl_s"][0] == out["itl_s"][1]
        and out["power_w_per_gpu"][0] == out["power_w_per_gpu"][1]
    )
    base = pl.lit("meta-llama/Llama-3.1-8B-Instruct").alias("model")
    plain = predict_rows(predictor, rows[2:].with_columns(base, pl.lit("fp8").alias("precision")))
    assert out["itl_s"][2] == plain["itl_s"][0] and out["concurrency"][2] == plain["concurrency"][0]
