"""Fuzz round 19f: the batch contract of ``wattgpu predict --input``.

Each test failed before its fix: ``requests_per_s`` was written after the layout inputs' gap
(out of the input order); a rate that is no number was written ``NaN`` with an error that did
not quote it; a rate above capacity kept an empty or stale ``domain_reason``; an output length
of 1e-50 tokens gave ITLs of 1e28 s as a valid in-domain row; power bounds stepped one bit
outside [idle, TDP]; SIGTERM left a half-written temporary file; one line with an unquoted comma
refused the whole file."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from predictors.catalog.store import load_catalog
from tests.cli_runner import run_cli

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def _predict(tmp_path: Path, text: str) -> pl.DataFrame:
    path = tmp_path / "rows.csv"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "out.csv"
    result = run_cli("predict", "--input", str(path), "-o", str(out))
    assert result.code == 0, result.err
    return pl.read_csv(out, infer_schema=False)


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_the_rate_keeps_its_place_among_the_input_columns(tmp_path: Path) -> None:
    out = _predict(
        tmp_path, f"model,gpu,pipeline_parallel,requests_per_s,note\n{LLAMA},H100,,1,a\n"
    )
    assert out.columns[:3] == ["model", "gpu", "requests_per_s"]
    assert out.columns[3] == "note"
    first = _predict(tmp_path, f"pipeline_parallel,requests_per_s,model,gpu\n,1,{LLAMA},H100\n")
    assert first.columns[0] == "requests_per_s"


@pytest.mark.slow
def test_a_rate_that_is_no_number_is_quoted_and_written_empty(tmp_path: Path) -> None:
    out = _predict(tmp_path, f"model,gpu,requests_per_s\n{LLAMA},H100,abc\n{LLAMA},H100,1\n")
    assert out["requests_per_s"].to_list() == [None, "1"]  # as read (round 21: never 1.0)
    assert out["error"][0] == "requests_per_s: must be a positive number (or empty) (got 'abc')"
    assert out["error"][1] in ("", None)


@pytest.mark.slow
def test_a_rate_above_capacity_says_why_it_is_out_of_domain(tmp_path: Path) -> None:
    out = _predict(tmp_path, f"model,gpu,requests_per_s\n{LLAMA},H100,20\n{LLAMA},L40S,10\n")
    assert out["in_domain"].to_list() == ["false", "false"]
    assert out["domain_reason"].to_list() == ["invalid row (see error)"] * 2
    assert all("more than one replica carries" in e for e in out["error"].to_list())


@pytest.mark.slow
def test_an_output_length_below_one_token_is_a_row_error(tmp_path: Path) -> None:
    rows = f"model,gpu,requests_per_s,output_tokens\n{LLAMA},H100,1,1e-50\n{LLAMA},H100,1,1\n"
    out = _predict(tmp_path, rows)
    assert out["error"][0] == "output_tokens: must be a number from 1 to 10,000,000 (got '1e-50')"
    assert out["itl_s"][0] is None and out["error"][1] in ("", None)


def test_rate_row_power_bounds_stay_inside_idle_and_tdp(tmp_path: Path) -> None:
    rows = "model,gpu,input_tokens,output_tokens,requests_per_s\n"
    rows += "".join(f"gpt2,H200-SXM-141GB,512,64,{r}\n" for r in (0.01, 0.1, 1, 5))
    rows += "".join(f"{LLAMA},{g},1024,256,1\n" for g in ("H100-SXM5-80GB", "A100-SXM4-80GB"))
    out = _predict(tmp_path, rows)
    catalog = load_catalog()
    assert out.filter(pl.col("error").fill_null("") != "").height == 0
    for row in out.iter_rows(named=True):
        gpu = catalog.gpu(row["gpu"])
        idle, tdp = float(gpu["idle_power_w"]), float(gpu["tdp_w"])
        for col in ("power_w_per_gpu", "power_w_per_gpu_lo", "power_w_per_gpu_hi"):
            value = float(row[col])
            assert idle <= value <= tdp, (row["gpu"], row["requests_per_s"], col, value)


def test_a_line_with_an_unquoted_comma_is_that_rows_error(tmp_path: Path) -> None:
    good = f"{LLAMA},H100,ok\n" * 50
    out = _predict(tmp_path, f"model,gpu,note\n{good}{LLAMA},A30,has, a comma\n{good}")
    assert out.height == 101
    bad = out.filter(pl.col("error").str.contains("more cells than the header"))
    assert bad.height == 1 and bad["error"][0].startswith("line 52: ")
    assert bad["itl_s"][0] is None
    assert out.filter(pl.col("error").fill_null("") == "").height == 100
    assert not any(c.startswith("__") for c in out.columns)


@pytest.mark.slow
def test_sigterm_leaves_no_half_written_output(tmp_path: Path) -> None:
    rows = io.StringIO()
    rows.write("model,gpu,batch_size\n")
    for i in range(300_000):
        rows.write(f"{LLAMA},H100,{1 + i % 64}\n")
    (tmp_path / "rows.csv").write_text(rows.getvalue(), encoding="utf-8")
    out = tmp_path / "out.csv"
    out.write_text("before\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "planner.cli.app", "predict", "--input", "rows.csv", "-o"]
    proc = subprocess.Popen([*cmd, "out.csv"], cwd=tmp_path, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
        p.name.startswith(".out.csv.") for p in tmp_path.iterdir()
    ):
        time.sleep(0.05)
    assert proc.poll() is None, "the prediction ended before it wrote"
    os.kill(proc.pid, signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert out.read_text(encoding="utf-8") == "before\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "rows.csv"]


def test_a_rate_row_that_does_not_fit_is_not_told_to_lower_its_batch(tmp_path: Path) -> None:
    big = "meta-llama/Llama-3.1-405B-Instruct"
    out = _predict(tmp_path, f"model,gpu,requests_per_s,batch_size\n{big},L4,1,\n{big},L4,,8\n")
    rate_row, batch_row = out["error"].to_list()
    assert rate_row.startswith("does not fit") and "or lower precision" in rate_row
    assert "batch_size" not in rate_row
    assert "or lower batch_size or precision" in batch_row
