"""The held-out accuracy by parallel layout (issue 18 item 5): layout classes read from the
layout the physics is fed, MdAPE per class and the capacity ratio, on a small synthetic frame."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.catalog.store import load_catalog
from predictors.serving.grid import row_physics
from predictors.training.evaluate import TARGETS, target_rows
from predictors.training.layout_report import ORDER, by_layout, layout_flags, layout_section
from predictors.training.train import prepare

DENSE, BIG, MOE, R1 = (
    "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Llama-3.1-70B-Instruct",
    "Qwen/Qwen3-30B-A3B",
    "deepseek-ai/DeepSeek-R1",
)
#: (model, gpu, gpu_count, TP, PP, DP, EP) -> the classes the row belongs to.
CASES: list[tuple[tuple[str, str, int, int | None, int | None, int | None, int | None], set[str]]]
CASES = [
    ((DENSE, "H100-SXM5-80GB", 1, 1, 1, 1, None), {"pure_tp"}),
    ((BIG, "H100-SXM5-80GB", 8, 8, 1, 1, None), {"pure_tp"}),
    ((BIG, "H100-SXM5-80GB", 16, 8, 2, 1, None), {"multi_node"}),
    ((BIG, "H100-SXM5-80GB", 16, 16, 1, 1, None), {"multi_node"}),
    # no stated layout: the engines' usual one, TP 8 x PP 2 over two HGX nodes
    ((BIG, "H100-SXM5-80GB", 16, None, None, None, None), {"multi_node"}),
    ((MOE, "H100-SXM5-80GB", 8, 8, 1, 1, 8), {"ep"}),
    ((MOE, "H100-SXM5-80GB", 8, 1, 1, 8, 8), {"ep", "attention_dp"}),
    ((R1, "GB200", 36, 1, 1, 36, 36), {"ep", "attention_dp", "nvl72"}),
    ((BIG, "GB200", 8, 8, 1, 1, None), {"pure_tp"}),
    # a MoE row without a stated EP is not counted as EP (the data does not say it)
    ((MOE, "H100-SXM5-80GB", 2, 2, 1, 1, None), {"pure_tp"}),
    # the layers split over 4 GPUs of one node (llama.cpp's usual layout)
    ((BIG, "H100-SXM5-80GB", 4, 1, 4, 1, None), {"layer_split"}),
]
#: Relative ITL / TTFT error given to every row of a class (first class of the row in ORDER).
ERROR = {
    "pure_tp": 0.10,
    "multi_node": 0.40,
    "ep": 0.20,
    "attention_dp": 0.30,
    "nvl72": 0.50,
    "layer_split": 0.25,
}


def _table(batch: float = 16.0) -> pl.DataFrame:
    rows = []
    for (model, gpu, n, tp, pp, dp, ep), _ in CASES:
        rows.append(
            {
                "source": "aiconfigurator",
                "model": model,
                "gpu": gpu,
                "gpu_count": n,
                "engine": "sglang",
                "precision": "fp8",
                "batch_size": batch,
                "arrival_rate_rps": None,
                "input_tokens": 1024.0,
                "output_tokens": 256.0,
                "power_w_per_gpu": None,
                "itl_s": 0.02,
                "ttft_s": 0.5,
                "output_throughput_tok_s": None,
                "itl_includes_prefill": False,
                "quality": "ok",
                "tensor_parallel": tp,
                "pipeline_parallel": pp,
                "data_parallel": dp,
                "expert_parallel": ep,
            }
        )
    return pl.DataFrame(rows, schema_overrides={"arrival_rate_rps": pl.Float64})


def _long(frame: pl.DataFrame) -> pl.DataFrame:
    """Held-out predictions as :func:`accuracy.run` lays them out, off by :data:`ERROR`."""
    parts = []
    for name in ("itl", "ttft"):
        rows = target_rows(frame, TARGETS[name])
        flags = layout_flags(rows)
        err = [ERROR[next(k for k in ORDER if f[k])] for f in flags.iter_rows(named=True)]
        measured = rows[TARGETS[name].column].to_numpy()
        for split in ("logo", "lolo"):
            parts.append(
                rows.select("model", "gpu")
                .with_row_index("row")
                .with_columns(
                    pl.lit(name).alias("target"),
                    pl.lit(split).alias("split"),
                    pl.lit("ours").alias("method"),
                    pl.Series("measured", measured),
                    pl.Series("predicted", measured * (1.0 + np.asarray(err))),
                )
            )
    return pl.concat(parts)


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return prepare(_table(), load_catalog())


def test_every_row_lands_in_its_layout_classes(frame: pl.DataFrame) -> None:
    flags = layout_flags(frame)
    assert flags.columns == list(ORDER)
    for row, (_, expected) in zip(flags.iter_rows(named=True), CASES, strict=True):
        assert {k for k, v in row.items() if v} == expected


def test_mdape_per_class_and_no_capacity_without_measured_throughput(frame: pl.DataFrame) -> None:
    table = by_layout(_long(frame), frame, Predictor.load())
    assert table.height == 2 * len(ORDER)
    for r in table.iter_rows(named=True):
        members = [
            first
            for _, classes in CASES
            if r["layout"] in classes
            for first in [next(k for k in ORDER if k in classes)]
        ]
        assert r["itl_rows"] == r["ttft_rows"] == len(members)
        # each row's error is that of its first class; the MdAPE is their median
        expected = float(np.median([ERROR[k] for k in members])) * 100.0
        assert r["itl_mdape_pct"] == pytest.approx(expected)
        assert r["ttft_mdape_pct"] == pytest.approx(expected)
        assert r["capacity_rows"] == 0 and math.isnan(r["capacity_median_ratio"])
    text = "\n".join(layout_section(table))
    assert "capacity: no throughput rows" in text
    assert "ITL ≤ 25 %: **missed**" in text  # multi-node rows at 40 %
    assert "ITL ≤ 25 %: met" in text  # EP rows at 20 % (or their first class's error)


@pytest.mark.parametrize("over", [1.0, 1.3, 0.6])
def test_capacity_ratio_is_predicted_over_measured_throughput(over: float) -> None:
    """Measured throughput set to the serving model's ``b / τ(b)`` at the exact ITL, divided by
    *over*: the signed median ratio is *over* in every class that has rows."""
    catalog = load_catalog()
    predictor = Predictor.load(catalog=catalog)
    base = prepare(_table(), catalog)
    prefill = row_physics(base, predictor)["prefill_s"].to_numpy()
    b, out = base["batch_size"].to_numpy(), base["output_tokens"].to_numpy()
    tau = base["itl_s"].to_numpy() + b * prefill / out
    table = _table().with_columns(pl.Series("output_throughput_tok_s", b / tau / over))
    frame = prepare(table, catalog)
    exact = _long(frame).with_columns(pl.col("measured").alias("predicted"))
    result = by_layout(exact, frame, predictor)
    for r in result.iter_rows(named=True):
        assert r["capacity_rows"] == r["itl_rows"] > 0
        assert r["capacity_median_ratio"] == pytest.approx(over, rel=1e-9)
        assert r["itl_mdape_pct"] == pytest.approx(0.0)
    lo_hi_met = 0.8 <= over <= 1.25
    text = "\n".join(layout_section(result))
    assert ("capacity 0.8–1.25: met" in text) == lo_hi_met
    assert ("capacity 0.8–1.25: **missed**" in text) == (not lo_hi_met)


def test_capacity_of_a_source_whose_itl_includes_the_prefill_is_b_over_itl() -> None:
    """Where the source's per-token latency is latency / L (prefill included, Argonne), its
    throughput is ``b / ITL`` by construction: the step time is the ITL alone, so exact ITL gives
    a ratio of exactly 1 (adding the chunked prefill again would count it twice)."""
    catalog = load_catalog()
    predictor = Predictor.load(catalog=catalog)
    base = _table().with_columns(pl.lit(True).alias("itl_includes_prefill"))
    b, itl = base["batch_size"].to_numpy(), base["itl_s"].to_numpy()
    frame = prepare(base.with_columns(pl.Series("output_throughput_tok_s", b / itl)), catalog)
    exact = _long(frame).with_columns(pl.col("measured").alias("predicted"))
    result = by_layout(exact, frame, predictor).filter(pl.col("capacity_rows") > 0)
    assert result.height > 0
    assert result["capacity_median_ratio"].to_list() == pytest.approx([1.0] * result.height)
    # the same rows read as a median ITL without the prefill: b / τ(b) < b / ITL
    plain = prepare(base.with_columns(pl.lit(False).alias("itl_includes_prefill")), catalog)
    plain = plain.with_columns(pl.Series("output_throughput_tok_s", b / itl))
    lower = by_layout(exact, plain, predictor).filter(pl.col("capacity_rows") > 0)
    assert (lower["capacity_median_ratio"] < 1.0).all()
