"""Fuzz round 17c: measurement data a user gives wattgpu.

Each test failed before its fix: a cell that is not a number stopped every adapter with an
internal error (and one bad line stopped the whole load); an Argonne line of a failed run became
the header of every row after it, which were lost without a word; a truncated ML.ENERGY v3
``index.json`` dropped the source silently; impossible values (0 or negative GPUs, negative token
counts, power in W read as mW) were kept as usable rows; a file and a link to it were read twice
and a linked folder not at all; unresolved names had no did-you-mean."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from predictors.core.errors import DataError
from predictors.measurements import load_measurements

HEADER = (
    ",model,gpu_type,lambda_qps,generation_tokens_total,measurement_duration,gpu_energy,"
    "gpu_0_power_draw_watts_mean,gpu_0_power_draw_watts_min,gpu_0_power_draw_watts_max,"
    "gpu_0_power_draw_watts_std,time_to_first_token_seconds_events,"
    "e2e_request_latency_seconds_events,request_generation_tokens,request_prompt_tokens\n"
)


def _line(
    i: int, power: str = "250.5", gpu: str = "NVIDIA L40S", tokens: str = "[500, 600]"
) -> str:
    return (
        f"{i},meta-llama/Llama-3.1-8B-Instruct,{gpu},,1000,20.0,5000,{power},100,300,10,"
        f'"[0.5, 0.6]","[10.0, 12.0]","[500, 500]","{tokens}"\n'
    )


def _data(tmp_path: Path, *lines: str) -> Path:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "wc.csv").write_text(HEADER + "".join(lines), encoding="utf-8")
    return data


def _reasons(data: Path) -> dict[str, int]:
    return dict(load_measurements(data).dropped.rows())


def test_a_bad_cell_drops_its_line_only_and_says_where(tmp_path: Path) -> None:
    data = _data(tmp_path, _line(0), _line(1, power="250 W"), _line(2), _line(3, tokens="[true]"))
    ms = load_measurements(data)
    assert ms.table.height == 2
    assert _reasons(data) == {
        "unreadable: wc.csv line 3: gpu_0_power_draw_watts_mean: '250 W' is not a number": 1,
        "unreadable: wc.csv line 5: column request_prompt_tokens: expected a JSON list of "
        "numbers": 1,
    }


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (_line(1, power="0.25"), "power below 0.5 x idle"),  # 250 W written in kW
        (
            _line(1, tokens="[-500, -400]"),
            "unreadable: wc.csv line 3: token counts must be positive",
        ),
    ],
)
def test_impossible_values_are_dropped_with_a_reason(
    tmp_path: Path, line: str, reason: str
) -> None:
    data = _data(tmp_path, _line(0), line)
    assert load_measurements(data).table.height == 1
    assert _reasons(data) == {reason: 1}


def test_a_zero_gpu_count_is_unreadable(tmp_path: Path) -> None:
    header = HEADER.rstrip("\n") + ",gpu_count\n"
    data = tmp_path / "data"
    data.mkdir()
    rows = _line(0).rstrip("\n") + ",1\n" + _line(1).rstrip("\n") + ",0\n"
    (data / "wc.csv").write_text(header + rows, encoding="utf-8")
    assert load_measurements(data).table.height == 1
    assert list(_reasons(data)) == [
        "unreadable: wc.csv line 3: gpu_count: '0' is not a whole number of GPUs (>= 1)"
    ]


def test_a_failed_argonne_run_does_not_swallow_the_rows_after_it(tmp_path: Path) -> None:
    folder = tmp_path / "argonne-llm-inference-bench"
    folder.mkdir()
    (folder / "Plots_All_results.csv").write_text(
        "Hardware,Num of Hardware,Framework,Model,Input Output Length,Batch Size,Latency,"
        "Throughput\n"
        "Nvidia A100 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,128,1,2.7,93.8\n"
        "Nvidia A100 GPU,,vLLM,meta-llama/Llama-2-7b-hf,,,,\n"
        "Nvidia A100 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,256,1,4.0,127.2\n"
        ",1,vLLM,meta-llama/Llama-2-7b-hf,512,1,8.0,128.0\n"
        "Nvidia A100 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,1024,1,16.0,128.0\n",
        encoding="utf-8",
    )
    ms = load_measurements(tmp_path)
    assert ms.table.height == 3
    assert _reasons(tmp_path) == {
        "unreadable: Plots_All_results.csv line 3: no number in the line (a failed run?)": 1,
        "unreadable: Plots_All_results.csv line 5: no Hardware or Framework cell": 1,
    }


def test_a_truncated_v3_index_is_an_error_naming_it(tmp_path: Path) -> None:
    v3 = tmp_path / "v3"
    (v3 / "tasks").mkdir(parents=True)
    (v3 / "index.json").write_text('{"architectures": {"llm": ["gpqa"', encoding="utf-8")
    _data(tmp_path, _line(0))
    with pytest.raises(DataError, match=r"index\.json: not valid JSON"):
        load_measurements(tmp_path)


def test_links_read_each_file_once_and_follow_linked_folders(tmp_path: Path) -> None:
    data = _data(tmp_path, _line(0), _line(1))
    (data / "again.csv").symlink_to(data / "wc.csv")
    (data / "up").symlink_to(tmp_path)  # back above the data: not followed
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "more.csv").write_text(HEADER + _line(0, gpu="L40"), encoding="utf-8")
    (data / "linked").symlink_to(elsewhere)
    ms = load_measurements(data)
    assert ms.all_rows.height == 3
    assert sorted(ms.table["file"].unique().to_list()) == ["linked/more.csv", "wc.csv"]


def test_unresolved_names_get_the_nearest_catalog_names(tmp_path: Path) -> None:
    data = _data(tmp_path, _line(0, gpu="NVIDA L40S"))
    unresolved = load_measurements(data).unresolved
    row = unresolved.filter(pl.col("kind") == "gpu").row(0, named=True)
    assert row["name"] == "NVIDA L40S" and row["did_you_mean"].startswith("L40S")


def test_a_v2_run_file_that_is_not_a_run_is_one_dropped_row(tmp_path: Path) -> None:
    run = tmp_path / "chat" / "A100-SXM4-40GB" / "org" / "model"
    run.mkdir(parents=True)
    good = {
        "Model": "meta-llama/Llama-2-7b-chat-hf", "GPU": "A100-SXM4-40GB", "TP": 1, "PP": 1,
        "Energy/req (J)": 50.0, "Avg TPOT (s)": 0.03, "Token tput (tok/s)": 900.0,
        "Avg Output Tokens": 250.0, "Avg BS (reqs)": 32.0, "Max BS (reqs)": 32,
    }  # fmt: skip
    (run / "bs32+tp1+pp1.json").write_text(json.dumps(good), encoding="utf-8")
    (run / "bs64+tp1+pp1.json").write_text(json.dumps({**good, "TP": 0}), encoding="utf-8")
    ms = load_measurements(tmp_path)
    assert ms.table.height == 1
    assert _reasons(tmp_path) == {
        "unreadable: chat/A100-SXM4-40GB/org/model/bs64+tp1+pp1.json run: TP: '0' is not a "
        "whole number from 1 to 1,000,000": 1
    }
