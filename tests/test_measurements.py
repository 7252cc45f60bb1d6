"""Tests of the measurement adapters and of load_measurements (quality rules, resolution)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from predictors.catalog.store import load_catalog
from predictors.core.errors import DataError
from predictors.measurements import SCHEMA, discover, load_measurements
from predictors.measurements.aiconfigurator import read_aiconfigurator
from predictors.measurements.amd_mi300x import read_amd_mi300x
from predictors.measurements.argonne import read_argonne, read_blocks
from predictors.measurements.mlenergy_v1 import read_mlenergy_v1
from predictors.measurements.mlenergy_v2 import read_mlenergy_v2
from predictors.measurements.mlenergy_v3 import read_mlenergy_v3
from predictors.measurements.schema import DECODE_COLUMNS, conform, frame_from_rows
from predictors.measurements.watt_counts import read_watt_counts

REQUIRED = ["source", "model", "gpu", "gpu_count", "engine", "precision", "batch_size"]


class StubCatalog:
    """A tiny catalog: a few GPU/LLM aliases, TDPs and default dtypes."""

    gpus = {"A100": "A100-SXM4-40GB", "NVIDIA H100 NVL": "H100-NVL-94GB", "L4": "L4"}
    tdp = {"A100-SXM4-40GB": 400.0, "H100-NVL-94GB": 400.0, "L4": 72.0}
    llms = {"meta-llama/Llama-3.1-8B-Instruct": "meta-llama/Llama-3.1-8B-Instruct"}

    def try_resolve_gpu(self, name: str) -> str | None:
        return self.gpus.get(name) or (name if name in self.tdp else None)

    def try_resolve_llm(self, name: str) -> str | None:
        return self.llms.get(name)

    def gpu(self, name_or_id: str) -> dict[str, Any]:
        return {"tdp_w": self.tdp[name_or_id]}

    def llm(self, name_or_id: str) -> dict[str, Any]:
        return {"default_dtype": "bf16"}


def _min(df: pl.DataFrame, col: str) -> float:
    v = df[col].min()
    assert isinstance(v, int | float)
    return float(v)


def _max(df: pl.DataFrame, col: str) -> float:
    v = df[col].max()
    assert isinstance(v, int | float)
    return float(v)


def _no_nan(df: pl.DataFrame, cols: list[str]) -> None:
    for c in cols:
        assert df[c].null_count() == 0, c
        if df[c].dtype == pl.Float64:
            assert not df[c].is_nan().any(), c


def _check_schema(df: pl.DataFrame) -> None:
    """The canonical columns; every line read (not an unreadable line's placeholder row, which
    only says where and why) has its required values."""
    assert df.columns == list(SCHEMA)
    read = df.filter(~pl.col("quality").str.starts_with("unreadable: "))
    _no_nan(read, REQUIRED + ["input_tokens", "output_tokens"])


# ---------------------------------------------------------------- real shared files


@pytest.mark.shared_data
def test_mlenergy_v1_power_and_prefill_itl(measurements_dir: Path) -> None:
    df = read_mlenergy_v1(measurements_dir / "ml-energy-benchmark/data/legacy")
    _check_schema(df)
    assert df.height == 260
    assert set(df["gpu_raw"]) == {"A100", "A40", "V100"}
    assert set(df["task"]) == {"chat", "chat-concise", "instruct", "instruct-concise"}
    assert _min(df, "power_w_per_gpu") > 30 and _max(df, "power_w_per_gpu") < 400
    assert df["itl_includes_prefill"].all() and (df["batch_size"] == 1).all()
    assert df["input_tokens_assumed"].all()


@pytest.mark.shared_data
def test_mlenergy_v2_per_gpu_power(measurements_dir: Path) -> None:
    df = read_mlenergy_v2(measurements_dir / "ml-energy-benchmark/data/llm_text_generation")
    _check_schema(df)
    assert df.height == 314
    assert set(df["task"]) == {"chat", "code"}
    # per-GPU power between ~0.2 and ~1.1 of TDP (400 W A100, 700 W H100)
    assert _min(df, "power_w_per_gpu") > 80 and _max(df, "power_w_per_gpu") < 720
    assert _max(df, "gpu_count") == 16
    assert not df["itl_includes_prefill"].any()


@pytest.mark.shared_data
def test_mlenergy_v3_total_power_divided(measurements_dir: Path) -> None:
    df = read_mlenergy_v3(measurements_dir / "ml-energy-leaderboard-v3/public/data")
    _check_schema(df)
    assert df.height > 200
    assert set(df["task"]) <= {"gpqa", "lm-arena-chat", "sourcegraph-fim"}
    assert set(df["precision"]) <= {"bf16", "fp8", "fp4"}
    # total / num_gpus: every GPU's per-GPU power stays near or below its TDP (H100 SXM 700 W,
    # B200 1000 W); an undivided total would be 2-8x over on the multi-GPU rows
    catalog = load_catalog()
    for (gpu,), rows in df.group_by("gpu"):
        tdp_w = catalog.gpu(catalog.resolve_gpu(str(gpu)))["tdp_w"]
        assert _max(rows, "power_w_per_gpu") < 1.07 * tdp_w, gpu
    assert set(df["gpu"]) >= {"H100", "B200"}
    assert _max(df, "itl_s") < 1.0 and df["input_tokens_assumed"].all()


@pytest.mark.shared_data
@pytest.mark.slow
def test_argonne_units_and_dedup(measurements_dir: Path) -> None:
    df = read_argonne(measurements_dir / "argonne-llm-inference-bench")
    _check_schema(df)
    power = df.filter(pl.col("power_w_per_gpu").is_not_null())
    assert _min(power, "power_w_per_gpu") > 100 and _max(power, "power_w_per_gpu") < 800  # mW -> W
    ok_power = power.filter(pl.col("quality") == "ok")
    assert ok_power.height == 56 and _max(ok_power, "power_w_per_gpu") < 720
    llama_cpp = df.filter((pl.col("engine") == "llama.cpp") & (pl.col("batch_size") > 1))
    assert llama_cpp["quality"].str.starts_with("doubtful").all()
    fig10 = df.filter(pl.col("file").str.contains("Fig_10"))
    assert fig10["quality"].str.starts_with("doubtful").all()
    assert not df["file"].str.contains("Fig_18|Fig_2_a|Fig_21").any()
    # no configuration is counted twice with the same ITL
    key = ["gpu_raw", "gpu_count", "engine", "model_raw", "input_tokens", "batch_size", "itl_s"]
    assert df.filter(pl.col("itl_s").is_not_null()).select(key).is_duplicated().sum() == 0
    assert df["ttft_s"].drop_nulls().len() > 0


@pytest.mark.shared_data
def test_aiconfigurator_gpu_counts(measurements_dir: Path) -> None:
    df = read_aiconfigurator(measurements_dir / "aiconfigurator-silicon/silicon_sample.csv")
    _check_schema(df)
    assert df.height > 2000 and df["power_w_per_gpu"].is_null().all()
    assert _min(df, "itl_s") > 1e-3 and _max(df, "itl_s") < 1.0
    disagg = df.filter(pl.col("note").str.contains("mode=disagg"))
    assert _min(disagg, "gpu_count") >= 2
    # the disaggregated flag is the source's mode, and a disaggregated run states no layout
    assert (df["disaggregated"] == df["note"].str.contains("mode=disagg")).all()
    assert disagg.height > 0 and disagg["tensor_parallel"].is_null().all()


def test_rows_without_the_disaggregated_key_are_one_replica() -> None:
    """An adapter that never sets ``disaggregated`` (every source but aiconfigurator) gets
    False, not an empty required value."""
    row = {
        "source": "argonne",
        "model": "m",
        "gpu": "g",
        "gpu_count": 1,
        "engine": "vllm",
        "precision": "bf16",
        "batch_size": 1.0,
        "input_tokens": 128.0,
        "output_tokens": 128.0,
        "itl_includes_prefill": False,
        "quality": "ok",
        "model_raw": "m",
        "gpu_raw": "g",
        "file": "f.csv",
        "input_tokens_assumed": False,
    }
    out = conform(frame_from_rows([row, row | {"disaggregated": True}]))
    # after the layout, before the decode pool's columns (both added at the end of the schema)
    at = out.columns.index("disaggregated")
    assert out.columns[at - 1] == "expert_parallel"
    assert tuple(out.columns[at + 1 :]) == DECODE_COLUMNS
    assert out["disaggregated"].to_list() == [False, True]


@pytest.mark.shared_data
def test_amd_power_window(measurements_dir: Path) -> None:
    df = read_amd_mi300x(measurements_dir / "amd-mi300x-sample/datasets/sample-results")
    _check_schema(df)
    assert df.height == 4
    assert _min(df, "power_w_per_gpu") > 150 and _max(df, "power_w_per_gpu") <= 750
    assert df["quality"].str.starts_with("doubtful: low sample count").all()


@pytest.mark.shared_data
def test_discover_shared_layout(measurements_dir: Path) -> None:
    formats = {s.format for s in discover(measurements_dir)}
    assert formats == {
        "mlenergy_v1",
        "mlenergy_v2",
        "mlenergy_v3",
        "argonne",
        "aiconfigurator",
        "amd_mi300x",
    }


# ---------------------------------------------------------------- small written files


def test_repeated_and_changing_headers(tmp_path: Path) -> None:
    f = tmp_path / "power_results_x.csv"
    f.write_text(
        "Hardware,Num of Hardware,Framework,Model,Input Output Length,Batch Size,Latency,"
        "Throughput,avg_power\n\n"
        "Nvidia A100 GPU,1,vLLM,m/a,1024,1,10.0,204.8,250000.0\n"
        "Hardware,Num of Hardware,Framework,Model,Input Output Length,Batch Size,"
        "avg_power,latency\n"
        "Nvidia A100 GPU,1,TensorRT-LLM,m/a,1024,16,300000.0,20.0\n"
        "Model Name,throughput,latency,Avg Power\n"
        "m/a,1.0,2.0,300000.0\n",
        encoding="utf-8",
    )
    blocks = read_blocks(f)
    assert len(blocks.rows) == 2 and blocks.unattributed == 1
    assert blocks.bad == [(7, "no Hardware or Framework cell", ["m/a", "1.0", "2.0", "300000.0"])]
    every = read_argonne(tmp_path)  # the unattributable line is a row saying where and why
    unreadable = every.filter(pl.col("quality").str.starts_with("unreadable: "))
    assert unreadable["quality"].to_list() == [
        "unreadable: power_results_x.csv line 7: no Hardware or Framework cell"
    ]
    df = every.filter(pl.col("quality") == "ok")
    assert df.height == 2
    by_engine = {r["engine"]: r for r in df.iter_rows(named=True)}
    assert by_engine["vllm"]["power_w_per_gpu"] == pytest.approx(250.0)
    assert by_engine["vllm"]["itl_s"] == pytest.approx(10.0 / 1024)
    assert by_engine["tensorrt-llm"]["power_w_per_gpu"] == pytest.approx(300.0)
    assert by_engine["tensorrt-llm"]["output_throughput_tok_s"] == pytest.approx(1024 * 16 / 20)


def _watt_counts_csv(path: Path) -> None:
    header = (
        ",model,gpu_type,lambda_qps,generation_tokens_total,measurement_duration,gpu_energy,"
        "gpu_0_power_draw_watts_mean,gpu_0_power_draw_watts_min,gpu_0_power_draw_watts_max,"
        "gpu_0_power_draw_watts_std,time_to_first_token_seconds_events,"
        "e2e_request_latency_seconds_events,request_generation_tokens,request_prompt_tokens\n"
    )
    offline = (
        "0,meta-llama/Llama-3.1-8B-Instruct,NVIDIA H100 NVL,,1000,20.0,5000,250.5,100,300,10,"
        '"[0.5, 0.6]","[10.0, 12.0]","[500, 500]","[100, 300]"\n'
    )
    server = (
        "1,meta-llama/Llama-3.1-8B-Instruct,NVIDIA H100 NVL,0.33,300,60.0,3000,120.0,90,200,5,"
        '"[0.2, 0.4, 0.1]","[2.2, 4.4, 0.3]","[101, 201, 1]","[50, 60, 70]"\n'
    )
    unknown_gpu = (
        "2,meta-llama/Llama-3.1-8B-Instruct,Mystery GPU 9000,0,10,1.0,1,50.0,50,50,0,"
        '"[0.1]","[1.0]","[10]","[5]"\n'
    )
    path.write_text(header + offline + server + unknown_gpu, encoding="utf-8")


def test_watt_counts_itl_formulas(tmp_path: Path) -> None:
    f = tmp_path / "nested" / "wc.csv"
    f.parent.mkdir()
    _watt_counts_csv(f)
    df = read_watt_counts(f)
    _check_schema(df)
    off, srv = df.row(0, named=True), df.row(1, named=True)
    assert off["arrival_rate_rps"] is None and off["itl_s"] == pytest.approx(20.0 / 1000)
    assert off["batch_size"] == pytest.approx(2 / 20.0 * 11.0)  # Little: (n/duration) x mean e2e
    assert off["input_tokens"] == pytest.approx(200.0) and off["power_w_per_gpu"] == 250.5
    # server: requests with >= 2 tokens: (2.2-0.2)/100, (4.4-0.4)/200 -> mean 0.02
    assert srv["itl_s"] == pytest.approx(((2.0 / 100) + (4.0 / 200)) / 2)
    assert srv["arrival_rate_rps"] == pytest.approx(0.33)
    assert srv["batch_size"] == pytest.approx(0.33 * (2.2 + 4.4 + 0.3) / 3)
    assert srv["ttft_s"] == pytest.approx((0.2 + 0.4 + 0.1) / 3)
    assert srv["output_throughput_tok_s"] == pytest.approx(300 / 60.0)


def test_watt_counts_bad_list_cell(tmp_path: Path) -> None:
    f = tmp_path / "wc.csv"
    _watt_counts_csv(f)
    f.write_text(f.read_text().replace('"[100, 300]"', '"[100, oops]"'), encoding="utf-8")
    df = read_watt_counts(f)  # the bad line is a row saying where and why; the others are read
    bad = df.filter(pl.col("quality").str.starts_with("unreadable: "))
    assert bad.height == 1 and "request_prompt_tokens" in bad["quality"][0]
    assert df.height > bad.height


def test_load_unresolved_reported_and_rules(tmp_path: Path) -> None:
    deep = tmp_path / "deep" / "dir"
    deep.mkdir(parents=True)
    _watt_counts_csv(deep / "wc.csv")  # discovered anywhere by its header
    ms = load_measurements(tmp_path, StubCatalog())
    assert ms.all_rows.height == 3 and ms.table.height == 2
    assert ms.unresolved.to_dicts() == [
        {"source": "watt-counts", "kind": "gpu", "name": "Mystery GPU 9000", "rows": 1}
    ]
    assert ms.dropped.to_dicts() == [{"reason": "unresolved gpu", "rows": 1}]
    assert set(ms.table["gpu"]) == {"H100-NVL-94GB"}
    assert set(ms.table["precision"]) == {"bf16"}  # "auto" -> catalog default dtype


def test_load_drops_impossible_rows(tmp_path: Path) -> None:
    f = tmp_path / "wc.csv"
    _watt_counts_csv(f)
    text = f.read_text().replace("250.5", "900.0").replace(",0.33,300,60.0", ",0.33,300,0.001")
    f.write_text(text, encoding="utf-8")
    ms = load_measurements(tmp_path, StubCatalog())
    assert ms.all_rows.height == 3  # dropped rows stay in all_rows with their reason
    got = {r["reason"]: r["rows"] for r in ms.dropped.to_dicts()}
    assert got["power above 1.5 x TDP"] == 1  # 900 W > 1.5 x 400 W
    assert ms.table.height == 1


def test_v2_and_v3_written_files(tmp_path: Path) -> None:
    run = tmp_path / "v2" / "chat" / "A100" / "org" / "m" / "bs8+tp2+pp1.json"
    run.parent.mkdir(parents=True)
    run.write_text(
        json.dumps(
            {
                "Model": "org/m",
                "GPU": "A100",
                "TP": 2,
                "PP": 1,
                "Energy/req (J)": 100.0,
                "Avg TPOT (s)": 0.05,
                "Token tput (tok/s)": 400.0,
                "Avg Output Tokens": 200.0,
                "Avg BS (reqs)": 7.9,
                "Max BS (reqs)": 8,
            }
        )
    )
    df = read_mlenergy_v2(tmp_path / "v2")
    assert df["power_w_per_gpu"][0] == pytest.approx(100.0 / 200.0 * 400.0 / 2)
    assert df["gpu_count"][0] == 2 and df["task"][0] == "chat"
    # the decoding batch by Little's law (400 tok/s x 0.05 s), not the scheduler's Avg BS 7.9
    assert df["batch_size"][0] == pytest.approx(20.0) and "avg_bs=7.9" in df["note"][0]
    assert [s.format for s in discover(tmp_path)] == ["mlenergy_v2"]


def test_missing_data_dir_is_clear(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        load_measurements(tmp_path / "nope", StubCatalog())
    with pytest.raises(DataError, match="no measurement files"):
        load_measurements(tmp_path, StubCatalog())
