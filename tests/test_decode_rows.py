"""The TPOT of a disaggregated run is read on its decode workers (issue 17, item 4).

aiconfigurator's disaggregated rows carry their decode pool (``decode_*`` columns); training and
evaluation split each into its unit row (TTFT, unchanged) and its decode row (TPOT of one decode
worker at the unit's concurrency shared among the stated decode workers).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from predictors import memory_rule
from predictors.api import Predictor
from predictors.catalog.store import load_catalog
from predictors.feature_sets import ITL_RESIDUAL_FEATURES
from predictors.features import add_features, join_specs
from predictors.measurements.aiconfigurator import read_aiconfigurator
from predictors.measurements.load import load_measurements
from predictors.measurements.schema import DECODE_COLUMNS, SCHEMA
from predictors.serving.disagg_build import on_decode_workers
from predictors.training.decode_rows import DECODE_FLAG, split_disaggregated
from predictors.training.train import prepare, training_table
from tests.test_disagg_rows import HEADER

ROWS = (
    "1,silicon_concurrency=8,trtllm,1.0,Qwen/Qwen3-32B,h100_sxm,fp8,agg,1024,128,,,8,2,1,1,,,"
    ",,,,,,,,,,,,,,300,20",
    # stated workers, 2P3D, decode attention DP 2 and EP 4
    "2,x; silicon_concurrency=48,trtllm,1.0,deepseek-ai/DeepSeek-R1,gb200,fp4,disagg,4096,512,"
    ",,,,,,,,1,2,4,1,1,1,4,8,3,2,1,2,1,4,800,12.5",
    # no worker counts: one decode worker of TP 4
    "3,silicon_concurrency=16,sglang,0.5,Qwen/Qwen3-32B,h100_sxm,fp8,disagg,2000,1000,,,,,,,,,"
    "1,,2,1,1,1,1,16,,4,1,1,1,1,450,30",
    # a MoE decode worker whose stated TP 12 does not fit the attention heads: wide EP
    "4,silicon_concurrency=96,trtllm,1.0,deepseek-ai/DeepSeek-R1,gb200,fp4,disagg,4096,512,"
    ",,,,,,,,1,1,4,1,1,1,4,96,1,12,1,1,12,1,900,20",
)


def _resolved(tmp_path: Path) -> pl.DataFrame:
    path = tmp_path / "silicon.csv"
    path.write_text("\n".join((HEADER, *ROWS)) + "\n", encoding="utf-8")
    catalog = load_catalog()
    raw = read_aiconfigurator(path)
    resolve = catalog.resolve_llm
    return raw.with_columns(
        pl.col("model_raw").map_elements(resolve, return_dtype=pl.String).alias("model"),
        pl.Series("gpu", ["H100-SXM5-80GB", "GB200", "H100-SXM5-80GB", "GB200"]),
    )


def test_the_reader_carries_the_decode_pool_of_disaggregated_rows_only(tmp_path: Path) -> None:
    table = _resolved(tmp_path)
    assert table.columns == list(SCHEMA)
    assert list(SCHEMA)[-len(DECODE_COLUMNS) :] == list(DECODE_COLUMNS)
    agg, stated, unstated, _ = table.select(DECODE_COLUMNS).rows()
    assert agg == (None,) * len(DECODE_COLUMNS)
    assert stated == (3, 2, 1, 2, 4, True)
    assert unstated == (1, 4, 1, 1, 1, False)
    # the unit reading is unchanged: both pools' GPUs summed, no layout
    assert table["gpu_count"].to_list() == [2, 2 * 4 + 3 * 2 * 2, 2 + 4, 4 + 12]
    assert table["tensor_parallel"].to_list() == [2, None, None, None]


def test_each_disaggregated_row_splits_into_its_unit_and_one_decode_worker(
    tmp_path: Path,
) -> None:
    table = _resolved(tmp_path)
    split = split_disaggregated(table, load_catalog())
    assert split.height == table.height + 3
    units, decode = split.head(table.height), split.tail(3)
    # the unit rows keep everything but the TPOT of the disaggregated ones
    assert units.drop("itl_s", DECODE_FLAG).equals(table.drop("itl_s"))
    assert units["itl_s"].to_list() == [0.02, None, None, None]
    assert not units[DECODE_FLAG].any() and decode[DECODE_FLAG].all()
    assert decode["itl_s"].to_list() == [0.0125, 0.03, 0.02]
    assert decode["ttft_s"].null_count() == 3
    # one decode worker: its TP x PP x DP, the concurrency shared among the stated workers
    assert decode["gpu_count"].to_list() == [2 * 2, 4, 12]
    assert decode["batch_size"].to_list() == [48 / 3, 16.0, 96.0]
    assert decode["tensor_parallel"].to_list() == [2, 4, 1]
    assert decode["data_parallel"].to_list() == [2, 1, 12]
    assert decode["expert_parallel"].to_list() == [4, 1, 12]
    frame = add_features(join_specs(split, load_catalog()))
    assert frame["decode_workers_only"].to_list() == [0, 0, 0, 0, 1, 1, 1]
    assert "decode_workers_only" in ITL_RESIDUAL_FEATURES


def test_a_table_without_decode_columns_only_gets_the_flag() -> None:
    table = pl.DataFrame({"source": ["x"], "itl_s": [0.01]})
    out = split_disaggregated(table, load_catalog())
    assert out.height == 1 and out[DECODE_FLAG].to_list() == [False]


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
@pytest.mark.shared_data
def test_every_measured_tpot_is_read_once_and_ttft_rows_are_unchanged(
    measurements_dir: Path,
) -> None:
    catalog = load_catalog()
    table = load_measurements(measurements_dir, catalog).table
    frame = prepare(table, catalog)
    pooled = table.filter(pl.col("decode_tensor_parallel").is_not_null())
    assert pooled.height > 0
    assert frame.height == table.height + pooled.height
    assert frame["itl_s"].is_not_null().sum() == table["itl_s"].is_not_null().sum()
    before = add_features(join_specs(training_table(table), catalog))
    ttft = pl.col("ttft_s").is_not_null()
    columns = [c for c in before.columns if c != "itl_s"]
    assert frame.filter(ttft).select(columns).equals(before.filter(ttft).select(columns))
    decode = frame.filter(pl.col(DECODE_FLAG))
    assert decode.height == pooled.height
    # a decode worker holds its weights (the smallest fitting reading where none is stated),
    # except on the few layouts the source states in full that the serving check refuses too
    # (tests/test_disagg_rows.py)
    fits = decode.select(memory_rule.weights_fit_in_memory()).to_series().to_numpy()
    refused = decode.filter(~pl.Series(fits))
    assert refused.height <= 3, refused.select("model", "gpu", "gpu_count")
    assert refused["decode_workers_stated"].all()


@pytest.mark.slow
def test_a_disaggregated_decode_pool_is_predicted_as_a_decode_worker(predictor: Predictor) -> None:
    """The serving model predicts a disaggregated unit's decode pool with the flag the decode
    rows were trained with; power and TTFT do not see it, and the flag is the same number for
    every GPU (the ITL order of GPUs is unchanged)."""
    gpus = ["B200", "H100-SXM5-80GB", "A100-SXM4-80GB"]
    rows = pl.DataFrame(
        {
            "model": ["Qwen/Qwen3-32B"] * 3,
            "gpu": gpus,
            "gpu_count": [4] * 3,
            "batch_size": [64] * 3,
            "engine": ["tensorrt-llm"] * 3,
            "precision": ["fp8"] * 3,
            "input_tokens": [4096] * 3,
            "output_tokens": [512] * 3,
        }
    )
    plain = predictor.predict(rows, with_ttft=True)
    decode = on_decode_workers(predictor).predict(rows, with_ttft=True)
    assert DECODE_FLAG not in predictor.card
    assert decode["power_w_per_gpu"].to_list() == plain["power_w_per_gpu"].to_list()
    assert decode["ttft_s"].to_list() == plain["ttft_s"].to_list()
    # the same factor on every GPU (these rows lie well above the ITL floor)
    ratio = (decode["itl_s"] / plain["itl_s"]).to_numpy()
    assert ratio.min() == pytest.approx(ratio.max(), rel=1e-9)
    assert decode["itl_s"].arg_sort().to_list() == plain["itl_s"].arg_sort().to_list()
