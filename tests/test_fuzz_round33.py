"""Fuzz round 33: wide attention-DP replicas after the batch limit became per DP rank (a
disaggregated side's engine and precision as the predictors read them; the at-load error when
the serving model's largest batch, not the replica, bounds the rate), and batch CSVs that polars
read otherwise than Python's csv (a quote, a header byte that is not UTF-8)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.core.errors import WattgpuError
from predictors.rows import predict_rows, read_rows_csv
from predictors.serving.curves import BATCH_GRID
from predictors.serving.disagg_build import disagg_curves


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.load()


def test_a_disaggregated_side_reads_engine_and_precision_as_predict_does(
    predictor: Predictor,
) -> None:
    """``trtllm``, ``FP8`` or an empty precision (DeepSeek-V3's checkpoint is fp8) are the same
    unit as ``tensorrt-llm`` / ``fp8``: the same decode batch limit (TensorRT-LLM's 2,048 per DP
    rank, not the 256 of an unknown engine) and no false 'no room for KV' refusal."""
    base = {
        "model": "deepseek-ai/DeepSeek-V3",
        "input_tokens": 1024.0,
        "output_tokens": 1024.0,
        "prefill_gpu": "GB200",
        "prefill_gpu_count": 4.0,
        "prefill_workers": 2.0,
        "prefill_dp": 4.0,
        "decode_gpu": "GB200",
        "decode_gpu_count": 16.0,
        "decode_workers": 1.0,
        "decode_dp": 16.0,
    }
    cases = [
        ("tensorrt-llm", "fp8"),
        ("trtllm", "fp8"),
        ("TensorRT-LLM", "FP8"),
        ("tensorrt-llm", None),
    ]
    units = pl.DataFrame(
        [{**base, "engine": e, "precision": p} for e, p in cases],
        schema_overrides={"precision": pl.String},
    )
    t = disagg_curves(predictor, units)
    assert t.error == [""] * len(cases)
    limits = t.decode.max_batch.tolist()
    assert limits == [limits[0]] * len(cases) and limits[0] >= 2048 * 16 // 2
    assert t.kv.bytes_per_request.tolist() == [t.kv.bytes_per_request[0]] * len(cases)


def test_a_rate_beyond_the_largest_tabulated_batch_says_so(predictor: Predictor) -> None:
    """A 144-GPU DP-144 replica holds more than the serving model tabulates; the error names
    that bound and does not advise more GPUs, which would not raise it."""
    rows = pl.DataFrame(
        {
            "model": ["deepseek-ai/DeepSeek-V3"],
            "gpu": ["GB200"],
            "gpu_count": ["144"],
            "data_parallel": ["144"],
            "engine": ["tensorrt-llm"],
            "precision": ["fp8"],
            "input_tokens": ["1024"],
            "output_tokens": ["1024"],
            "requests_per_s": ["600"],
        }
    )
    error = predict_rows(predictor, rows)["error"][0]
    assert f"largest useful batch of {BATCH_GRID[-1]} sequences" in error
    assert "the most the serving model tabulates" in error and "raise gpu_count" not in error


# --- batch CSV reading: a quote or a header byte polars reads otherwise than Python's csv ---

M = "meta-llama/Llama-3.1-8B-Instruct"


def _csv(tmp_path: Path, text: str | bytes, name: str = "rows.csv") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def test_an_odd_quote_in_a_header_name_loses_no_row(tmp_path: Path) -> None:
    """polars read ``screen_12"`` as opening a quoted cell that swallowed the file: 0 rows,
    exit 0. Read as Python's csv reads it, every row is there and the name kept."""
    path = _csv(tmp_path, f'model,gpu,batch_size,screen_12"\n{M},A30,8,a\n{M},H100,8,b\n')
    rows = read_rows_csv(path)
    assert rows.height == 2 and 'screen_12"' in rows.columns
    assert rows['screen_12"'].to_list() == ["a", "b"]


def test_an_odd_quote_inside_a_cell_refuses_neither_file_nor_row(
    tmp_path: Path, predictor: Predictor
) -> None:
    path = _csv(tmp_path, f'model,gpu,batch_size,note\n{M},A30,8,12" panel\n{M},H100,8,ok\n')
    out = predict_rows(predictor, read_rows_csv(path))
    assert out["note"].to_list() == ['12" panel', "ok"] and out["error"].to_list() == ["", ""]


def test_header_names_with_escaped_quotes_come_back_as_read(tmp_path: Path) -> None:
    path = _csv(tmp_path, f'model,gpu,"q""x","a""b",a""b\n{M},A30,1,2,3\n')
    assert read_rows_csv(path).columns[:5] == ["model", "gpu", 'q"x', 'a"b', 'a""b']


def test_a_byte_that_is_not_utf8_is_named_with_its_line(tmp_path: Path) -> None:
    head = _csv(tmp_path, f"model,gpu,n\xe9\n{M},A30\n".encode("latin-1"), "h.csv")
    with pytest.raises(WattgpuError, match=r"line 1: not UTF-8 text \(byte 0xe9\)"):
        read_rows_csv(head)
    cell = _csv(tmp_path, f"model,gpu,note\n{M},A30,caf\xe9\n".encode("latin-1"), "c.csv")
    with pytest.raises(WattgpuError, match=r"line 2: not UTF-8 text \(byte 0xe9\)"):
        read_rows_csv(cell)


def test_a_long_cell_beside_a_malformed_line_keeps_its_row(
    tmp_path: Path, predictor: Predictor
) -> None:
    long = "x" * 200_000
    path = _csv(tmp_path, f"model,gpu,note\n{M},A30,{long}\n{M},H100,ok,EXTRA\n")
    out = predict_rows(predictor, read_rows_csv(path))
    assert out["model"].to_list() == [M, M] and out["note"][0] == long
    assert out["error"][0] == "" and out["error"][1].startswith("line 3: more cells")


def test_a_rate_of_2_to_the_53_or_more_is_written_empty(
    tmp_path: Path, predictor: Predictor
) -> None:
    path = _csv(tmp_path, f"model,gpu,requests_per_s\n{M},A30,12345678901234567890\n{M},A30,1e20\n")
    out = predict_rows(predictor, read_rows_csv(path))
    assert out["requests_per_s"].to_list() == [None, None]
    assert all(e.startswith("requests_per_s: ") for e in out["error"].to_list())


def test_a_catalog_cell_with_a_stray_quote_is_named_by_its_line(tmp_path: Path) -> None:
    from tests.cli_runner import run_cli

    user = tmp_path / "uc"
    user.mkdir()
    (user / "gpus.csv").write_text(
        "id,aliases,vendor,form_factor,release_year,memory_gb,memory_bandwidth_gb_s,tdp_w,"
        'fp16_tflops_dense,source\nMY-GPU,"my"gpu,NVIDIA,PCIe,2024,48,900,300,180,spec sheet\n',
        encoding="utf-8",
    )
    result = run_cli("catalog", "validate", "--user-catalog", str(user))
    assert result.code == 1 and len(result.errors) == 1, result.err
    assert "row 2: a stray quote in column 'aliases'" in result.errors[0]


def test_an_unknown_name_with_a_quote_or_a_quantised_suffix_gets_the_catalog_fix(
    tmp_path: Path,
) -> None:
    from tests.cli_runner import run_cli

    path = _csv(
        tmp_path, f"model,gpu\n{M},O'Reilly GPU\nacme/O'Reilly-LLM,A30\nunknown/foo-FP8,A30\n"
    )
    result = run_cli("predict", "--input", str(path))
    errors = [line.split(",")[-1] for line in result.out.splitlines()[1:]]
    assert result.code == 0 and len(errors) == 3
    assert "add its row to a user catalog's gpus.csv" in result.out.splitlines()[1]
    assert "add it with `wattgpu catalog import-hf`" in result.out.splitlines()[2]
    assert "add the base model with `wattgpu catalog import-hf`" in result.out.splitlines()[3]
    single = run_cli("predict", "--model", M, "--gpu", "O'Reilly GPU")
    assert single.code == 1 and "gpus.csv (--user-catalog DIR)" in single.errors[0]


def test_a_fractional_token_count_is_one_answer_in_both_forms(tmp_path: Path) -> None:
    """``--input-tokens 512.5`` was a malformed command line (exit 2) while a CSV row, compare
    and scenarios take it; both forms now give the same prediction."""
    import json

    from tests.cli_runner import run_cli

    single = run_cli("predict", "-m", M, "--gpu", "A30", "--input-tokens", "512.5", "-f", "json")
    assert single.code == 0, single.err
    path = _csv(tmp_path, f"model,gpu,input_tokens\n{M},A30,512.5\n")
    batch = run_cli("predict", "--input", str(path), "-o", str(tmp_path / "out.csv"))
    assert batch.code == 0, batch.err
    row = pl.read_csv(tmp_path / "out.csv").row(0, named=True)
    one = json.loads(single.out)
    assert one["input_tokens"] == row["input_tokens"] == 512.5
    assert one["itl_s"] == pytest.approx(row["itl_s"], rel=1e-12)
