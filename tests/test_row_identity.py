"""The batch contract's last columns: the catalog ids a row's names resolve to and the definition
of its ITL (issue 17 item 4: a prediction states which definition it is in), and the single
form's errors naming the option a user typed."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.row_identity import IDENTITY_COLUMNS, metric_definition
from predictors.rows import OUTPUT_COLUMNS, predict_rows
from tests.cli_runner import run_cli


@pytest.mark.slow
def test_each_row_states_its_ids_and_its_itl_definition() -> None:
    predictor = Predictor.load()
    source = predictor.card["reference_source"]
    rows = pl.DataFrame(
        {
            "model": ["llama-3.1-8b", "Qwen3-32B-AWQ", "no-such-llm", "llama-3.1-8b"],
            "gpu": ["h100", "A100", "B200", "H100"],
            "batch_size": ["8", "4", "1", "1"],
            "requests_per_s": ["", "", "", "2"],
        }
    )
    out = predict_rows(predictor, rows)
    assert tuple(out.columns[-3:]) == IDENTITY_COLUMNS == OUTPUT_COLUMNS[-3:]
    assert out["model_id"].to_list() == [
        "meta-llama/Llama-3.1-8B-Instruct",
        "Qwen/Qwen3-32B",  # a quantised checkpoint's base model
        None,
        "meta-llama/Llama-3.1-8B-Instruct",
    ]
    assert out["gpu_id"].to_list() == ["H100-SXM5-80GB", "A100-SXM4-80GB", "B200", "H100-SXM5-80GB"]
    at_batch, at_rate = metric_definition(source, False), metric_definition(source, True)
    assert "median" in at_batch and "mean" in at_rate and source in at_batch
    assert out["metric_definition"].to_list() == [at_batch, at_batch, "", at_rate]
    assert out["error"][2].startswith("model: unknown llm")


@pytest.mark.slow
def test_the_csv_and_the_single_form_give_the_same_identity(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("model,gpu\nllama-3.1-8b,h100\n", encoding="utf-8")
    batch = run_cli("predict", "--input", str(rows))
    assert batch.code == 0, batch.err
    (row,) = list(csv.DictReader(io.StringIO(batch.out)))
    single = run_cli("predict", "--model", "llama-3.1-8b", "--gpu", "h100", "--format", "json")
    assert single.code == 0, single.err
    keys = json.loads(single.out)
    for column in IDENTITY_COLUMNS:
        assert row[column] == keys[column] and row[column]
    assert list(keys)[-3:] == list(IDENTITY_COLUMNS)


def test_an_identity_column_in_the_input_is_refused(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("model,gpu,gpu_id\nllama-3.1-8b,h100,B200\n", encoding="utf-8")
    result = run_cli("predict", "--input", str(rows))
    assert result.code == 1 and "gpu_id" in result.err and "Traceback" not in result.err


def test_the_single_form_names_the_option_not_the_csv_column() -> None:
    result = run_cli(
        "predict", "--model", "qwen3-30b-a3b", "--gpu", "H100", "--expert-parallel", "3"
    )
    assert result.code == 1
    assert result.err.startswith("error: predict: --expert-parallel: 3 is more than the 1 GPU ")
