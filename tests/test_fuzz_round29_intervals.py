"""Fuzz round 29 (intervals): a rate row's TTFT band holds the lone prompt's own interval.

The TTFT at load is ``t_1 + τ(b)`` (docs/method.md §3 item 4). Its band was the interval
curves' ``τ`` around the mean ``t_1``: at 0.001 req/s the H100 row's lower bound (0.122 s) lay
above the batch-1 point (0.117 s), its band 1.1 × wide where the batch-1 band is 7 ×. Now it
is ``t_1``'s interval (the predictors' at batch 1) plus each interval curve's step; the
planner's curves keep the mean ``t_1`` (a TTFT SLA is checked on it, also with robust).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.rows import predict_rows
from predictors.serving.grid import serving_table
from predictors.training.accuracy_report import method_text

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.load()


def _rows(gpu: str, rates: list[str]) -> pl.DataFrame:
    n = 1 + len(rates)
    return pl.DataFrame(
        {
            "model": [MODEL] * n,
            "gpu": [gpu] * n,
            "batch_size": ["1"] + [""] * len(rates),
            "input_tokens": ["1024"] * n,
            "output_tokens": ["256"] * n,
            "requests_per_s": ["", *rates],
        }
    )


@pytest.mark.parametrize("gpu", ["H100", "GAUDI3"])
@pytest.mark.slow
def test_rate_row_ttft_band_is_the_lone_prompt_interval_plus_the_step(
    predictor: Predictor, gpu: str
) -> None:
    out = predict_rows(predictor, _rows(gpu, ["0.001"]), with_ttft=True)
    one, rate = out.row(0, named=True), out.row(1, named=True)
    assert one["error"] == "" and rate["error"] == ""
    # at about zero load the TTFT is the lone prompt's plus one step
    assert rate["ttft_s"] == pytest.approx(one["ttft_s"] + rate["itl_s"], rel=1e-9)
    assert rate["ttft_s_lo"] == pytest.approx(one["ttft_s_lo"] + rate["itl_s_lo"], rel=1e-9)
    assert rate["ttft_s_hi"] == pytest.approx(one["ttft_s_hi"] + rate["itl_s_hi"], rel=1e-9)
    # so it is at least as wide as the batch-1 band, and its lower bound is below that point
    assert rate["ttft_s_lo"] < one["ttft_s"]
    assert rate["ttft_s_hi"] - rate["ttft_s_lo"] >= one["ttft_s_hi"] - one["ttft_s_lo"]


@pytest.mark.slow
def test_rate_row_ttft_band_orders_and_stays_empty_near_capacity(predictor: Predictor) -> None:
    rates = ["0.001", "0.5", "2", "5", "10"]
    out = predict_rows(predictor, _rows("H100", rates), with_ttft=True).slice(1)
    assert (out["error"] == "").all()
    assert (out["ttft_s"] == out["ttft_s_at_load"]).all()
    cols = ("ttft_s_lo", "ttft_s", "ttft_s_hi")
    lo, pt, hi = (out[c].to_numpy().astype(np.float64) for c in cols)
    assert np.all(lo <= pt)
    held = np.isfinite(hi)
    assert np.all(pt[held] <= hi[held])
    # an empty upper ITL bound (the upper curves cannot carry the rate) keeps the TTFT's empty
    empty_itl = out["itl_s_hi"].is_null().to_numpy()
    assert empty_itl.any() and not empty_itl.all()
    np.testing.assert_array_equal(~held, empty_itl)
    assert np.all(np.diff(lo) >= 0) and np.all(np.diff(pt) >= 0)


def test_planner_curves_keep_the_mean_lone_prompt_ttft(predictor: Predictor) -> None:
    rows = pl.DataFrame(
        {
            "model": [MODEL] * 2,
            "gpu": ["H100-SXM5-80GB", "MI300X"],
            "gpu_count": [1, 1],
            "engine": ["vllm"] * 2,
            "precision": ["bf16"] * 2,
            "input_tokens": [1024.0] * 2,
            "output_tokens": [256.0] * 2,
        }
    )
    table = serving_table(rows, predictor)
    base = table.curves.ttft_base_s
    np.testing.assert_array_equal(table.curves_lo.ttft_base_s, base)
    np.testing.assert_array_equal(table.curves_hi.ttft_base_s, base)
    assert np.all(table.ttft_1_lo_s < base) and np.all(table.ttft_1_hi_s > base)


def test_interval_difficulty_names_the_gpu_count() -> None:
    text = method_text()
    assert "log2 of the GPU count" in text and "log2 TP" not in text
    doc = Path(__file__).resolve().parents[1] / "docs" / "accuracy.md"
    assert text in doc.read_text(encoding="utf-8")


def test_method_sweep_sigmas_are_the_shipped_cards() -> None:
    root = Path(__file__).resolve().parents[1]
    text = " ".join((root / "docs" / "method.md").read_text(encoding="utf-8").split())
    found = re.search(
        r"ITL `σ_g` ([\d.]+), `σ_l` ([\d.]+) \(leave-one-LLM-out ([\d.]+)\), `σ_e` ([\d.]+); "
        r"power ([\d.]+), ([\d.]+) \(([\d.]+)\), ([\d.]+)\.",
        text,
    )
    assert found is not None
    card = json.loads((root / "predictors" / "trained" / "model_card.json").read_text())
    res = card["residuals"]["targets"]
    expected = []
    for target in ("itl", "power"):
        logo = res[target]["logo"]["by_vendor"]["NVIDIA"]["all"]
        lolo = res[target]["lolo"]["by_vendor"]["NVIDIA"]["all"]
        expected += [logo["gpu_sd"], logo["llm_sd"], lolo["llm_sd"], logo["row_sd"]]
    assert [float(v) for v in found.groups()] == [round(v, 2) for v in expected]
