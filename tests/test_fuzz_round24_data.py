"""Fuzz round 24 (helper D): malformed lines in measurement files and batch inputs, unit
mix-ups in measurements, unknown names, a corrupt booster and empty or '-' paths."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from predictors.catalog.store import load_catalog
from predictors.estimators.base import from_target
from predictors.measurements import load_measurements
from predictors.measurements.load import RULES, apply_rules
from predictors.measurements.schema import conform, frame_from_rows
from tests.cli_runner import one_error_line, run_cli

SHIPPED = Path(__file__).resolve().parents[1] / "predictors" / "trained"

WC_HEADER = (
    ",model,gpu_type,lambda_qps,generation_tokens_total,measurement_duration,gpu_energy,"
    "gpu_0_power_draw_watts_mean,gpu_0_power_draw_watts_min,gpu_0_power_draw_watts_max,"
    "gpu_0_power_draw_watts_std,time_to_first_token_seconds_events,"
    "e2e_request_latency_seconds_events,request_generation_tokens,request_prompt_tokens\n"
)


def _wc_line(i: int, model: str = "meta-llama/Llama-3.1-8B-Instruct", **lists: str) -> str:
    cells = {
        "ttft": "[0.1,0.2]",
        "e2e": "[4.0,5.0]",
        "gen": "[200,200]",
        "prompt": "[500,600]",
    } | lists
    return (
        f'{i},{model},NVIDIA A100-SXM4-80GB,1,400,10,2000,200,180,220,5,"{cells["ttft"]}",'
        f'"{cells["e2e"]}","{cells["gen"]}","{cells["prompt"]}"\n'
    )


GOOD = WC_HEADER + "".join(_wc_line(i) for i in range(3))

AI_HEADER = (
    "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,"
    "gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,"
    "moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"
)
AI_LINE = (
    "r{i},silicon_concurrency=8,vllm,0.19.0,meta-llama/Llama-3.1-8B-Instruct,h100_sxm,bf16,agg,"
    "1024,256,bf16,bf16,8,1,1,1,1,1,120.5,12.25\n"
)


def _summary(folder: Path) -> dict[str, object]:
    ms = load_measurements(folder)
    return {
        "rows": ms.all_rows.height,
        "usable": ms.table.height,
        "dropped": dict(ms.dropped.select("reason", "rows").rows()),
    }


def _data(tmp_path: Path, text: str | bytes, name: str = "wc.csv") -> Path:
    folder = tmp_path / "data"
    folder.mkdir(exist_ok=True)
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return folder


# 2. one malformed line is that line's dropped row, not the whole file's refusal


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (_wc_line(9).rstrip("\n") + ",extra\n", "more cells than the header"),
        (_wc_line(9).replace('"[0.1,0.2]"', '"[0.1,0.2]"x'), "a stray quote in column"),
        # a cell appended to a CRLF line by a tool that kept the CR (sed 's/$/,x/')
        (_wc_line(9).rstrip("\n") + "\r,extra\n", "a carriage return inside the line"),
    ],
)
def test_a_malformed_watt_counts_line_is_dropped_and_the_others_read(
    tmp_path: Path, bad: str, says: str
) -> None:
    folder = _data(tmp_path, GOOD + bad + _wc_line(10))
    got = _summary(folder)
    assert got["usable"] == 4, got
    (reason,) = got["dropped"]  # type: ignore[misc]
    assert reason.startswith("unreadable: wc.csv line 5: ") and says in reason, reason
    assert run_cli("data", "summary", "--data", str(folder)).code == 0


def test_a_byte_that_is_not_utf8_drops_its_line_only(tmp_path: Path) -> None:
    bad = _wc_line(9, model="mistr\xe4l").encode("latin-1")
    folder = _data(tmp_path, GOOD.encode() + bad + _wc_line(10).encode())
    got = _summary(folder)
    assert got["usable"] == 4
    (reason,) = got["dropped"]  # type: ignore[misc]
    assert "line 5: not UTF-8 text (byte 0xe4 in column 'model')" in reason, reason


def test_an_aiconfigurator_line_with_extra_cells_is_dropped_alone(tmp_path: Path) -> None:
    lines = [AI_LINE.format(i=i) for i in range(4)]
    lines[2] = lines[2].rstrip("\n") + ",x,y\n"
    folder = _data(tmp_path, AI_HEADER + "".join(lines), "silicon.csv")
    got = _summary(folder)
    assert got["rows"] == 4 and got["usable"] == 3, got
    (reason,) = got["dropped"]  # type: ignore[misc]
    assert reason.startswith("unreadable: silicon.csv line 4: more cells than the header")


def test_an_unclosed_quote_refuses_the_file_naming_the_line_and_fix(tmp_path: Path) -> None:
    lines = [AI_LINE.format(i=i) for i in range(4)]
    lines[1] = lines[1].replace(",agg,", ',"agg,')
    folder = _data(tmp_path, AI_HEADER + "".join(lines), "silicon.csv")
    line = one_error_line(run_cli("data", "summary", "--data", str(folder)), "silicon.csv")
    assert "line 3: a quote opens a cell and is never closed" in line and "close the quote" in line


def test_a_quote_closed_by_the_next_lines_quote_names_both_lines(tmp_path: Path) -> None:
    unclosed = _wc_line(9).replace('"[500,600]"', '"[500,600]')
    got = _summary(_data(tmp_path, GOOD + unclosed + _wc_line(10) + _wc_line(11)))
    assert got["usable"] == 4, got
    (reason,) = got["dropped"]  # type: ignore[misc]
    assert "line 5: a quote in column 'request_prompt_tokens' is not closed on its line" in reason
    assert "lines 5-6 read as one" in reason


# 10. duplicate columns and per-request lists of different lengths


def test_a_column_named_twice_in_a_measurement_file_is_refused_naming_it(tmp_path: Path) -> None:
    text = GOOD.replace("request_prompt_tokens\n", "request_prompt_tokens,model\n")
    text = text.replace('"[500,600]"\n', '"[500,600]",other/model\n')
    folder = _data(tmp_path, text)
    one_error_line(
        run_cli("train", "--data", str(folder), "--output", str(tmp_path / "m")),
        "'model'",
        "appear more than once",
    )
    assert not (tmp_path / "m").exists()


def test_per_request_lists_of_different_lengths_are_a_dropped_row(tmp_path: Path) -> None:
    folder = _data(tmp_path, GOOD + _wc_line(9, e2e="[4.0]"))
    got = _summary(folder)
    assert got["usable"] == 3
    (reason,) = got["dropped"]  # type: ignore[misc]
    assert "line 5: per-request lists of different lengths (ttft 2, e2e 1" in reason, reason


# 5. a seconds/milliseconds mix-up


def test_watt_counts_latencies_in_ms_are_dropped(tmp_path: Path) -> None:
    from predictors.measurements.unit_rules import ITL_REASON

    ms = _wc_line(9, ttft="[100,200]", e2e="[4000,5000]")  # ITL 22 s: 8B streams in 16 s
    got = _summary(_data(tmp_path, GOOD + ms))
    assert got["usable"] == 3 and got["dropped"] == {ITL_REASON: 1}, got


def _row(**change: object) -> dict[str, object]:
    return {
        "source": "watt-counts",
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "gpu": "A100-SXM4-80GB",
        "gpu_count": 1,
        "engine": "vllm",
        "precision": "bf16",
        "batch_size": 8.0,
        "input_tokens": 512.0,
        "output_tokens": 256.0,
        "power_w_per_gpu": 300.0,
        "itl_s": 0.02,
        "itl_includes_prefill": False,
        "quality": "ok",
        "model_raw": "meta-llama/Llama-3.1-8B-Instruct",
        "gpu_raw": "A100-SXM4-80GB",
        "file": "/data/runs.csv",
        "input_tokens_assumed": False,
    } | change


def test_the_unit_rules_drop_an_itl_or_a_batch_from_ms_read_as_s() -> None:
    from predictors.measurements.unit_rules import BATCH_REASON, ITL_REASON

    rows = [
        _row(),
        _row(itl_s=20.0),  # 20 ms read as 20 s: 8B in bf16 streams in 16 s at 1 GB/s
        _row(batch_size=8_000.0 * 20),  # a Little's-law batch from e2e in ms: 1000 x too large
        _row(batch_size=800.0, itl_s=0.5),  # slow, big, but physical: kept
    ]
    raw = conform(frame_from_rows(rows), origin="/data")
    got = apply_rules(raw, load_catalog())["drop_reason"].to_list()
    assert got == [None, ITL_REASON, BATCH_REASON, None]
    assert any(r.startswith(ITL_REASON) for r in RULES)
    assert any(r.startswith(BATCH_REASON) for r in RULES)


def test_a_wild_log_target_is_taken_back_without_an_overflow_warning() -> None:
    frame = pl.DataFrame({"roofline_itl_s": [0.01, 0.01], "prefill_time_s": [0.1, 0.1]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for transform in ("log_itl", "log_ttft", "log_itl_over_roofline", "log_ttft_over_prefill"):
            out = from_target(transform, frame, np.array([1_000.0, -1_000.0]))
            assert np.isfinite(out).all() and (out > 0).all()


# 3. predict --input: a stray quote is that row's error


def test_a_stray_quote_in_a_batch_cell_is_that_rows_error(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    good = "meta-llama/Llama-3.1-8B-Instruct,A30,ok\n"
    rows.write_text("model,gpu,note\n" + good * 2 + good.replace("ok", '"a"b') + good, "utf-8")
    out = tmp_path / "out.csv"
    result = run_cli("predict", "--input", str(rows), "-o", str(out))
    assert result.code == 0, result.err
    table = pl.read_csv(out, infer_schema=False)
    assert table.height == 4
    errors = table["error"].fill_null("").to_list()
    assert errors[0] == errors[1] == errors[3] == ""
    assert errors[2].startswith("line 4: a stray quote in column 'note'") and '"a""b"' in errors[2]
    assert table["itl_s"].null_count() == 1


def test_an_unclosed_quote_in_a_batch_names_its_line_and_the_fix(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text('model,gpu\nLlama-3.1-8B-Instruct,A30\n"Llama-3.1-8B-Instruct,A30\n', "utf-8")
    result = run_cli("predict", "--input", str(rows), "-o", str(tmp_path / "o.csv"))
    one_error_line(result, "--input", "line 3: a quote opens a cell", "close the quote")


# 7. an unknown name with no close match says what to do


@pytest.mark.slow
def test_an_unknown_model_or_gpu_without_a_close_match_gets_the_fix(tmp_path: Path) -> None:
    one_error_line(
        run_cli("predict", "--model", "zzzzqqq", "--gpu", "A30"),
        "unknown llm 'zzzzqqq'",
        "wattgpu catalog llms",
        "import-hf",
    )
    one_error_line(
        run_cli("predict", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "qqqqzzzz"),
        "unknown gpu 'qqqqzzzz'",
        "wattgpu catalog gpus",
    )
    rows = tmp_path / "rows.csv"
    rows.write_text("model,gpu\nzzzzqqq,A30\nLlama-3.1-8B-Instuct,A30\n", "utf-8")
    result = run_cli("predict", "--input", str(rows))
    errors = pl.read_csv(result.out.encode(), infer_schema=False)["error"].to_list()
    assert "wattgpu catalog llms" in errors[0]
    assert "did you mean" in errors[1] and "wattgpu catalog" not in errors[1]


# 8. a corrupt booster: a reason and the fix, no C++ backtrace


def test_a_corrupt_booster_gives_a_reason_and_the_fix(tmp_path: Path) -> None:
    models = tmp_path / "models"
    shutil.copytree(SHIPPED, models)
    (models / "itl.ubj").write_bytes(b"not a booster")
    args = ("predict", "--models", str(models), "--model", "Llama-3.1-8B-Instruct", "--gpu", "A30")
    line = one_error_line(
        run_cli(*args), "not a readable XGBoost booster", "retrain", never=("[bt]",)
    )
    assert "Invalid model format" in line and "libxgboost" not in line
    (models / "itl.ubj").write_bytes(b"")
    one_error_line(run_cli(*args), "the file is empty", "retrain")


# 10. empty directory options and '-o -'


def test_an_empty_data_option_is_refused_not_read_as_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "u16.csv").write_bytes("a,b\n".encode("utf-16"))
    for args in (("data", "summary"), ("train",), ("evaluate", "--output", "acc.md")):
        one_error_line(run_cli(*args, "--data", ""), "--data: is empty", "give a directory")
    good = _data(tmp_path, GOOD)
    one_error_line(run_cli("train", "--data", str(good), "--output", ""), "--output: is empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "u16.csv"]


def test_dash_as_an_output_file_is_refused_as_the_docs_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rows = tmp_path / "rows.csv"
    rows.write_text("model,gpu\nLlama-3.1-8B-Instruct,A30\n", "utf-8")
    one_error_line(
        run_cli("predict", "--input", str(rows), "-o", "-"), "--output -", "standard output"
    )
    assert not (tmp_path / "-").exists()
    assert "`-o -` is refused" in (SHIPPED.parents[1] / "docs" / "cli.md").read_text("utf-8")


@pytest.mark.parametrize(
    ("column", "meant"),
    [
        ("isl", "input_tokens"),
        ("osl", "output_tokens"),
        ("dtype", "precision"),
        ("max_tokens", "output_tokens"),
        ("batch", "batch_size"),
        ("qps", "requests_per_s"),
    ],
)
def test_a_benchmark_tools_name_of_a_missing_input_is_refused(
    tmp_path: Path, column: str, meant: str
) -> None:
    """Round 24 (finding 9): aiconfigurator's isl/osl, vLLM's dtype and the like were kept as
    extra columns while every row took the input's default."""
    rows = tmp_path / "rows.csv"
    rows.write_text(f"model,gpu,{column}\nmeta-llama/Llama-3.1-8B-Instruct,H100,7\n", "utf-8")
    result = run_cli("predict", "--input", str(rows), "--output", str(tmp_path / "o.csv"))
    assert result.code == 1 and len(result.errors) == 1, result.err
    assert f"did you mean {meant!r}" in result.errors[0], result.errors[0]
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("column", ["Error", "ITL_S", "power_w_per_gpu "])
def test_an_outputs_name_in_another_case_or_spacing_is_refused(tmp_path: Path, column: str) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(f"model,gpu,{column}\nmeta-llama/Llama-3.1-8B-Instruct,H100,x\n", "utf-8")
    result = run_cli("predict", "--input", str(rows), "--output", str(tmp_path / "o.csv"))
    assert result.code == 1 and "named like the output column" in result.errors[0], result.err
