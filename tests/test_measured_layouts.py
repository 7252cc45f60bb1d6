"""The measured layouts of the public data (issue 18): every aggregated configuration measured
running (ML.ENERGY v3; aiconfigurator with mode agg) is a valid configuration at its measured
tensor × pipeline × data × expert parallel layout, and the loaders read those layouts."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from predictors.api import BATCH_INPUT_COLUMNS, Predictor
from predictors.catalog.store import Catalog, load_catalog
from predictors.measurements import load_measurements
from predictors.measurements.layouts import read_layouts
from predictors.measurements.schema import LAYOUT_COLUMNS
from predictors.training.train import TRAIN_ON_MEASURED_LAYOUT, prepare, training_table

AGGREGATED = pl.col("source").is_in(["mlenergy-v3", "aiconfigurator"]) & ~pl.col(
    "note"
).str.contains("mode=disagg")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def table(measurements_dir: Path, catalog: Catalog) -> pl.DataFrame:
    return load_measurements(measurements_dir, catalog).table


def configurations(table: pl.DataFrame) -> pl.DataFrame:
    """The distinct aggregated (model, GPU, count, precision, engine, layout) measured."""
    keys = ["source", "model", "gpu", "gpu_count", "precision", "engine", *LAYOUT_COLUMNS]
    return table.filter(AGGREGATED).select(keys).unique().sort(keys)


def test_loaders_carry_the_measured_layout(table: pl.DataFrame) -> None:
    agg = table.filter(AGGREGATED)
    assert agg.height > 3_000 and set(agg["source"]) == {"mlenergy-v3", "aiconfigurator"}
    for col in ("tensor_parallel", "pipeline_parallel", "data_parallel"):
        assert agg[col].null_count() == 0, col
    product = agg["tensor_parallel"] * agg["pipeline_parallel"] * agg["data_parallel"]
    assert (product == agg["gpu_count"]).all()
    disagg = table.filter(pl.col("note").str.contains("mode=disagg"))
    assert disagg.height > 0 and disagg["tensor_parallel"].null_count() == disagg.height
    # ML.ENERGY v3: (8 GPUs, tp 1, ep 8, dp 1) is TP 8 × EP 8; (8, tp 1, ep 8, dp 8) is
    # attention DP 8 × EP 8
    v3 = agg.filter(pl.col("source") == "mlenergy-v3")
    ep8 = v3.filter((pl.col("gpu_count") == 8) & (pl.col("expert_parallel") == 8))
    assert {(r[0], r[1]) for r in ep8.select("tensor_parallel", "data_parallel").rows()} == {
        (8, 1),
        (1, 8),
    }
    # aiconfigurator wide EP on GB200 (tp_size 12-72 with a TP that does not divide DeepSeek's
    # 128 heads): attention DP = EP = the world size
    gb200 = agg.filter((pl.col("gpu") == "GB200") & (pl.col("gpu_count") > 8))
    wide = gb200.filter(128 % pl.col("gpu_count") != 0)
    assert wide.height == 53 and set(wide["model"]) == {"deepseek-ai/DeepSeek-R1"}
    assert (wide["tensor_parallel"] == 1).all()
    assert (wide["data_parallel"] == wide["gpu_count"]).all()
    assert (wide["expert_parallel"] == wide["gpu_count"]).all()
    # TP 32 and 64 divide the heads and stay as stated
    assert (gb200.filter(128 % pl.col("gpu_count") == 0)["tensor_parallel"] > 8).all()


def test_no_measured_aggregated_configuration_is_refused(
    table: pl.DataFrame, catalog: Catalog
) -> None:
    """0 refusals at the measured layout (a refusal because the weights alone do not fit
    would be allowed, and there is none)."""
    cfg = configurations(table)
    rows = cfg.drop("source", "tensor_parallel").with_columns(
        pl.lit(1).alias("batch_size"),
        pl.lit(128).alias("input_tokens"),
        pl.lit(64).alias("output_tokens"),
    )
    out = Predictor.load(catalog=catalog).predict(rows)
    result = pl.concat(
        [cfg, out.select("error", pl.col("tensor_parallel").alias("tp"))], how="horizontal"
    )
    assert result.height > 200
    refused = result.filter(pl.col("error") != "")
    weights = refused.filter(pl.col("error").str.starts_with("does not fit"))
    assert weights.is_empty(), weights.head(5).to_dicts()
    assert refused.is_empty(), refused.head(5).to_dicts()
    # the predictor resolved exactly the measured layout
    assert (result["tp"] == result["tensor_parallel"]).all()


def test_wide_ep_reading_applies_only_where_the_stated_tp_cannot_run(catalog: Catalog) -> None:
    rows = pl.DataFrame(
        {
            "source": ["aiconfigurator"] * 4 + ["mlenergy-v3"],
            "model": ["deepseek-ai/DeepSeek-R1"] * 3
            + ["Qwen/Qwen3-32B", "deepseek-ai/DeepSeek-R1"],
            "drop_reason": [None] * 5,
            "tensor_parallel": [36, 16, 36, 36, 36],
            "pipeline_parallel": [1] * 5,
            "data_parallel": [1, 1, 2, 1, 1],
            "expert_parallel": [1, 4, None, None, 1],
        },
        schema_overrides={"drop_reason": pl.String},
    )
    out = read_layouts(rows, catalog).select("tensor_parallel", "data_parallel", "expert_parallel")
    assert out.rows() == [
        (1, 36, 36),  # DeepSeek-R1 TP 36: 128 heads do not split, read as wide EP
        (16, 1, 4),  # TP 16 divides the heads: kept
        (36, 2, None),  # attention DP stated: kept (the validity rules judge it)
        (36, 1, None),  # dense model: kept
        (36, 1, 1),  # other sources: kept
    ]


@pytest.mark.slow
def test_training_and_evaluation_read_the_measured_layout(
    table: pl.DataFrame, catalog: Catalog
) -> None:
    """With the switch on (issue 18), training and evaluation feed every row's measured layout
    to the physics, and rows without one get the layout ``predict`` assumes."""
    assert TRAIN_ON_MEASURED_LAYOUT is True
    seen = training_table(table)
    assert set(LAYOUT_COLUMNS) <= set(seen.columns)
    assert seen.height == table.height
    # the rows of the table come first; the decode rows of disaggregated runs follow
    # (tests/test_decode_rows.py)
    frame = prepare(table, catalog).head(table.height)
    stated = table["tensor_parallel"].is_not_null().to_numpy()
    for col in ("tensor_parallel", "pipeline_parallel", "data_parallel"):
        assert (frame[col].to_numpy()[stated] == table[col].to_numpy()[stated]).all(), col
    usual = table.filter(pl.col("tensor_parallel").is_null())
    assert usual.height > 0
    sample = usual.unique(["model", "gpu", "gpu_count"], keep="first", maintain_order=True)
    layout = ("tensor_parallel", "pipeline_parallel", "data_parallel")
    fed = prepare(sample, catalog).head(sample.height).select(layout)
    pred = Predictor.load(catalog=catalog).predict(
        sample.select(BATCH_INPUT_COLUMNS).with_columns(pl.col("batch_size").cast(pl.Float64))
    )
    ok = (pred["error"].fill_null("") == "").to_numpy()
    assert ok.sum() > 0
    resolved = pred.select(pl.col(c).cast(pl.Float64) for c in layout)
    assert fed.filter(pl.Series(ok)).rows() == resolved.filter(pl.Series(ok)).rows()
    card = Predictor.load(catalog=catalog).card["training_data"]["layout"]
    assert card["rows"] == {"measured": int(stated.sum()), "usual_layout": usual.height}
