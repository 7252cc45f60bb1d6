"""Reading the measured disaggregated (prefill/decode) runs, and predicting them (issue 19).

The aggregated reading (the training table) changes only with a retrain: its hash is the model
card's (training reads each disaggregated row's TPOT on its decode workers,
tests/test_decode_rows.py).
Every measured disaggregated row is predicted at its measured configuration; the only refusals
allowed are the memory rule's, on a layout the source states.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.catalog.store import load_catalog
from predictors.core.errors import DataError
from predictors.estimators import artifacts
from predictors.measurements.aiconfigurator import read_aiconfigurator, read_aiconfigurator_disagg
from predictors.measurements.disagg_rows import SMALLEST_FITTING, as_units, load_disagg_rows
from predictors.measurements.load import load_measurements
from predictors.serving.disagg import closed_loop_point
from predictors.serving.disagg_build import disagg_curves

HEADER = (
    "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,"
    "gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,"
    "moe_ep_size,prefill_batch_size,prefill_num_workers,prefill_tp_size,prefill_pp_size,"
    "prefill_attention_dp_size,prefill_moe_tp_size,prefill_moe_ep_size,decode_batch_size,"
    "decode_num_workers,decode_tp_size,decode_pp_size,decode_attention_dp_size,"
    "decode_moe_tp_size,decode_moe_ep_size,silicon_ttft_ms,silicon_tpot_ms"
)
ROWS = (
    # aggregated: ignored by the disaggregated reader
    "1,silicon_concurrency=8,trtllm,1.0,Qwen/Qwen3-32B,h100_sxm,fp8,agg,1024,128,,,8,2,1,1,,,"
    ",,,,,,,,,,,,,,300,20",
    # stated workers, 2P3D, decode attention DP 2 and EP 4
    "2,x; silicon_concurrency=48,trtllm,1.0,deepseek-ai/DeepSeek-R1,gb200,fp4,disagg,4096,512,"
    ",,,,,,,,1,2,4,1,1,1,4,8,3,2,1,2,1,4,800,12.5",
    # no worker counts, no silicon_concurrency: decode batch x workers x DP
    "3,source_file=a.csv,sglang,0.5,Qwen/Qwen3-32B,h100_sxm,fp8,disagg,2000,1000,,,,,,,,,"
    "1,,2,1,1,1,1,16,,4,1,1,1,1,450,30",
)


def _csv(tmp_path: Path, rows: tuple[str, ...]) -> Path:
    path = tmp_path / "silicon.csv"
    path.write_text("\n".join((HEADER, *rows)) + "\n", encoding="utf-8")
    return path


def test_disaggregated_rows_keep_both_sides(tmp_path: Path) -> None:
    df = read_aiconfigurator_disagg(_csv(tmp_path, ROWS))
    assert df.height == 2
    a, b = df.to_dicts()
    assert (a["prefill_workers"], a["prefill_tp"], a["prefill_ep"]) == (2, 4, 4)
    assert (a["decode_workers"], a["decode_tp"], a["decode_dp"], a["decode_ep"]) == (3, 2, 2, 4)
    assert a["workers_stated"] and not b["workers_stated"]
    assert (b["prefill_workers"], b["decode_workers"]) == (1, 1)
    assert a["concurrency"] == 48 and b["concurrency"] == 16
    assert a["gpu_count"] == 2 * 4 + 3 * 2 * 2 and b["gpu_count"] == 2 + 4
    assert a["ttft_s"] == pytest.approx(0.8) and a["itl_s"] == pytest.approx(0.0125)
    rate = 48 * 512 / (0.8 + 511 * 0.0125)
    assert a["output_throughput_tok_s"] == pytest.approx(rate)
    assert a["output_throughput_tok_s_per_gpu"] == pytest.approx(rate / a["gpu_count"])
    # the aggregated reader is unchanged: the disaggregated rows' GPUs summed, no layout
    agg = read_aiconfigurator(_csv(tmp_path, ROWS))
    assert agg["gpu_count"].to_list() == [2, 20, 6]
    assert agg["tensor_parallel"].to_list() == [2, None, None]


def test_a_disaggregated_row_without_concurrency_is_one_clear_error(tmp_path: Path) -> None:
    bad = ROWS[2].replace(",1,1,1,1,16,,4,", ",1,1,1,1,,,4,")
    with pytest.raises(DataError, match=r"silicon\.csv: line 2: disagg row .*concurrency"):
        read_aiconfigurator_disagg(_csv(tmp_path, (bad,)))


@pytest.fixture(scope="module")
def measured(measurements_dir: Path) -> pl.DataFrame:
    return load_disagg_rows(measurements_dir, load_catalog())


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
@pytest.mark.shared_data
def test_the_training_table_is_unchanged(measurements_dir: Path, predictor: Predictor) -> None:
    table = load_measurements(measurements_dir).table
    digest = artifacts.data_hash(table.sort(table.columns))
    assert digest == predictor.card["training_data"]["sha256"]


@pytest.mark.shared_data
def test_every_measured_disaggregated_row_is_read(measured: pl.DataFrame) -> None:
    counts = dict(measured.group_by("gpu").len().iter_rows())
    assert counts == {"GB200": 550, "B200": 358, "GB300": 277, "B300": 126, "H100-SXM5-80GB": 107}
    assert measured["model"].null_count() == 0
    assert (measured["concurrency"] >= 1).all()
    read = measured.filter(pl.col("prefill_layout_read") == SMALLEST_FITTING)
    assert read.height and (read["prefill_tp"] > 1).all() and not read["workers_stated"].any()


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
@pytest.mark.shared_data
def test_every_measured_disaggregated_row_is_predicted(
    measured: pl.DataFrame, predictor: Predictor
) -> None:
    table = disagg_curves(predictor, as_units(measured))
    pt, ttft = closed_loop_point(table, measured["concurrency"].to_numpy().astype(np.float64))
    ok = table.ok
    for values in (ttft, pt.itl_s, pt.output_throughput_tok_s, pt.power_w):
        assert np.all(np.isfinite(values[ok]) & (values[ok] > 0))
    # none refused (issue 19); the last three, SGLang DP-attention DeepSeek-V3 fp8 on 4 GB200,
    # fit since SGLang's ranks copy only the attention layers and the embedding
    refused = measured.with_columns(pl.Series("error", table.error)).filter(~pl.Series(ok))
    assert refused.height == 0, refused.select("gpu", "model", "error").to_dicts()


@pytest.mark.slow
@pytest.mark.shared_data
def test_the_shipped_settings_are_the_choice_on_every_stated_row(
    measured: pl.DataFrame, predictor: Predictor
) -> None:
    from predictors.serving.disagg import DEFAULT_SETTINGS, take_units
    from predictors.training.disagg_accuracy import choose, in_source_protocol

    stated = np.flatnonzero(measured["workers_stated"].to_numpy())
    table = disagg_curves(in_source_protocol(predictor), as_units(measured))
    best, scores = choose(take_units(table, stated), measured[stated])
    assert best == DEFAULT_SETTINGS, scores
