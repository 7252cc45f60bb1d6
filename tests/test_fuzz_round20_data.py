"""Fuzz round 20b: commands that read the user's measurements and models.

Each test failed before its fix: ``train --output DIR`` deleted every sub-directory of DIR (the
data itself when DIR was the ``--data`` directory); ``evaluate --output`` replaced the
measurement CSV it had read; ``-o`` replaced the card or a booster of the ``--models`` directory
being read; a damaged booster or card was an internal error; one empty name cell, unknown engine
or non-numeric cell stopped a whole source; counts beyond 64 bits, fractions and negative
degrees were internal errors or silently truncated; NaN or absurd sizes were usable rows; a card
with a NaN score was not strict JSON."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import polars as pl
import pytest

from predictors.core.errors import DataError, WattgpuError
from predictors.estimators import artifacts
from predictors.measurements.load import apply_rules
from predictors.measurements.mlenergy_v1 import read_mlenergy_v1
from predictors.measurements.schema import conform, frame_from_rows, whole_number
from tests.cli_runner import run_cli

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "predictors" / "trained"
ROW: dict[str, object] = {
    "source": "watt-counts",
    "model": "meta-llama/Llama-2-7b-hf",
    "gpu": "H100",
    "gpu_count": 1,
    "engine": "vllm",
    "precision": "fp16",
    "batch_size": 8.0,
    "input_tokens": 512.0,
    "output_tokens": 128.0,
    "power_w_per_gpu": 400.0,
    "itl_s": 0.02,
    "itl_includes_prefill": False,
    "quality": "ok",
    "model_raw": "meta-llama/Llama-2-7b-hf",
    "gpu_raw": "H100",
    "file": "/data/runs.csv",
    "input_tokens_assumed": False,
}


def _models(tmp_path: Path) -> Path:
    target = tmp_path / "models"
    shutil.copytree(SHIPPED, target)
    return target


def test_train_never_deletes_what_its_output_directory_holds(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "keep").mkdir(parents=True)
    (out / "keep" / "notes.txt").write_text("x", encoding="utf-8")
    result = run_cli("train", "--data", str(tmp_path / "nowhere"), "--output", str(out))
    assert result.code == 1
    assert result.errors and "not a model directory" in result.errors[0]
    assert (out / "keep" / "notes.txt").read_text(encoding="utf-8") == "x"
    models = _models(tmp_path)
    (models / "sub").mkdir()
    result = run_cli("train", "--data", str(tmp_path / "nowhere"), "--output", str(models))
    assert result.code == 1 and "not a plain file" in result.errors[0]
    assert (models / "sub").is_dir()


def test_evaluate_never_writes_into_its_data_directory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "runs.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    result = run_cli("evaluate", "--data", str(data), "--output", str(data / "runs.csv"))
    assert result.code == 1 and "inside the --data directory" in result.errors[0]
    assert (data / "runs.csv").read_text(encoding="utf-8") == "a,b\n1,2\n"
    result = run_cli(
        "evaluate", "--data", str(data), "--output", str(tmp_path / "r.md"), "--metrics-to", "typo"
    )
    assert result.code == 1 and "no model_card.json" in result.errors[0]
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize("name", ["model_card.json", "itl.ubj"])
def test_an_output_never_replaces_the_models_being_read(tmp_path: Path, name: str) -> None:
    models = _models(tmp_path)
    before = (models / name).read_bytes()
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "model,gpu,batch_size,input_tokens,output_tokens\n"
        "meta-llama/Llama-3.1-8B-Instruct,A30,1,64,16\n",
        encoding="utf-8",
    )
    args = ("--models", str(models), "--input", str(rows), "--output", str(models / name))
    result = run_cli("predict", *args)
    assert result.code == 1 and "is the input file" in result.errors[0]
    assert (models / name).read_bytes() == before


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("itl.ubj", b"garbage", "not a readable XGBoost booster"),
        ("model_card.json", b"[]", "not a model card"),
        ("model_card.json", b'{"schema": 2}', "not a model card"),
    ],
)
def test_a_damaged_model_directory_is_one_line(
    tmp_path: Path, name: str, content: bytes, says: str
) -> None:
    models = _models(tmp_path)
    (models / name).write_bytes(content)
    with pytest.raises(WattgpuError, match=says) as caught:
        artifacts.load(models)
    assert "\n" not in str(caught.value)


def test_a_target_without_its_interval_is_named(tmp_path: Path) -> None:
    models = _models(tmp_path)
    card = json.loads((models / "model_card.json").read_text(encoding="utf-8"))
    del card["targets"]["power"]["interval"]
    (models / "model_card.json").write_text(json.dumps(card), encoding="utf-8")
    with pytest.raises(WattgpuError, match="target 'power' lacks 'interval'"):
        artifacts.load(models)


def test_a_card_with_a_score_no_fold_could_give_is_strict_json(tmp_path: Path) -> None:
    models = artifacts.load(SHIPPED)
    models.card["selection"] = {"itl": {"scores": {"physics": math.nan}}}
    artifacts.save(models, tmp_path / "m")
    text = (tmp_path / "m" / "model_card.json").read_text(encoding="utf-8")
    card = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON {c}"))
    assert card["selection"]["itl"]["scores"]["physics"] is None


def test_one_bad_row_never_stops_the_others() -> None:
    rows = [
        ROW,
        {**ROW, "model": None},
        {**ROW, "engine": "FooServe"},
        {**ROW, "gpu_count": 10**30},
    ]
    frame = conform(frame_from_rows(rows), origin="/data")
    quality = frame["quality"].to_list()
    assert quality[0] == "ok"
    assert quality[1] == "unreadable: runs.csv: model is empty (required)"
    assert quality[2] == "unreadable: runs.csv: unknown engine FooServe"
    assert quality[3].startswith("unreadable: runs.csv a record: gpu_count:")


def test_a_v1_cell_that_is_not_a_number_is_its_lines_problem(tmp_path: Path) -> None:
    folder = tmp_path / "ml-energy-benchmark"
    folder.mkdir()
    (folder / "A40_chat_benchmark.csv").write_text(
        "model,throughput,response_length,latency,energy\n"
        "meta-llama/Llama-2-7b-hf,20,200,10,2000\n"
        "meta-llama/Llama-2-7b-hf,20,abc,10,2000\n",
        encoding="utf-8",
    )
    frame = read_mlenergy_v1(folder)
    assert frame["quality"].to_list() == [
        "ok",
        "unreadable: A40_chat_benchmark.csv line 3: response_length: abc is not a number",
    ]


@pytest.mark.parametrize("value", [2.7, -2, math.inf, math.nan, "x", 1e30])
def test_a_count_must_be_a_whole_number(value: object) -> None:
    with pytest.raises(DataError, match="tp_size"):
        whole_number(value, "tp_size")


class _Catalog:
    """A resolver that knows every name (the rules under test do not depend on it)."""

    def gpu(self, gpu_id: str) -> dict[str, object]:
        return {"tdp_w": 700.0, "idle_power_w": 70.0}

    def try_resolve_llm(self, name: str) -> str:
        return name

    def resolve_gpu(self, name: str, hint: str | None = None) -> str:
        return name

    def try_resolve_gpu(self, name: str) -> str:
        return name

    def default_precision(self, model_id: str) -> str:
        return "fp16"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"batch_size": math.nan}, "non-finite size"),
        ({"input_tokens": math.inf}, "non-finite size"),
        ({"input_tokens": 1e12}, "size above 10,000,000 tokens or 1,000,000 sequences"),
        ({"tensor_parallel": -2}, "non-positive size"),
    ],
)
def test_impossible_sizes_are_dropped_with_their_reason(
    change: dict[str, object], reason: str
) -> None:
    raw = conform(frame_from_rows([ROW, {**ROW, **change}]), origin="/data")
    ruled = apply_rules(raw, _Catalog())  # type: ignore[arg-type]
    assert ruled["drop_reason"].to_list() == [None, reason]


def test_a_watt_counts_list_cell_that_is_a_number_says_what_it_expected(tmp_path: Path) -> None:
    from predictors.measurements import load_measurements
    from tests.test_fuzz_round17_train import WATT_COUNTS

    (tmp_path / "wc.csv").write_text(WATT_COUNTS.replace('"[500,600]"', "5"), encoding="utf-8")
    rows = load_measurements(tmp_path).all_rows
    reason = rows["drop_reason"][0]
    assert "request_prompt_tokens: expected a JSON list of numbers" in reason, reason


def test_a_bad_number_cell_is_written_empty_and_never_reformats_the_others(
    predictor: object,
) -> None:
    from predictors.rows import predict_rows

    rows = pl.DataFrame(
        {
            "model": ["meta-llama/Llama-3.1-8B-Instruct"] * 3,
            "gpu": ["h100"] * 3,
            "batch_size": ["8", "nan", "1e400"],
        }
    )
    out = predict_rows(predictor, rows)  # type: ignore[arg-type]
    assert out["batch_size"].dtype == pl.Int64
    assert out["batch_size"].to_list() == [8, None, None]
    assert out["error"][0] == "" and out["error"][1] and out["error"][2]


def test_the_domain_reason_shows_the_value_as_given(predictor: object) -> None:
    from predictors.rows import predict_rows

    rows = pl.DataFrame(
        {"model": ["meta-llama/Llama-3.1-8B-Instruct"], "gpu": ["h100"], "batch_size": ["18023"]}
    )
    reason = predict_rows(predictor, rows)["domain_reason"][0]  # type: ignore[arg-type]
    assert "batch_size 18023.0 outside the trained range [0, 18022.3]" in reason, reason


@pytest.mark.parametrize(
    ("column", "meant"),
    [("data_parallel_size", "data_parallel"), ("tp", "tensor_parallel"), ("moe_ep_size",
     "expert_parallel"), ("num_gpus", "gpu_count")],
)  # fmt: skip
def test_an_engines_own_name_of_a_layout_column_is_refused(column: str, meant: str) -> None:
    from predictors.api import PREDICTION_COLUMNS
    from predictors.row_header import header_problem
    from predictors.rows import INPUT_COLUMNS

    problem = header_problem(["model", "gpu", column], INPUT_COLUMNS, PREDICTION_COLUMNS)
    assert problem is not None and f"did you mean {meant!r}" in problem
