"""Fuzz round 25 (helper E): the measurement data path, training and user model directories.

A JSON list nested too deeply in a Watt Counts cell stopped every command on an internal
``RecursionError``; TTFT had no quality rule (a TTFT <= 0 counted as usable in ``data summary``
and was dropped by ``train`` unsaid, 1e-15 s and 1e6 s were trained on); ``evaluate`` on a small
data directory ended in ``cannot concat empty list``; a damaged or foreign model directory gave
internal errors (and its card could point a booster at any file); empty required cells and
ML.ENERGY v2 run files were named without their line or path; a CSV with bare CR line ends and
a UTF-32 CSV were misnamed; ``train --output -`` wrote a directory named ``-``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from predictors.catalog.store import load_catalog
from predictors.core.errors import WattgpuError
from predictors.estimators.card import load_card
from predictors.measurements import load_measurements
from predictors.measurements.load import RULES, apply_rules
from predictors.measurements.schema import conform, frame_from_rows
from predictors.measurements.unit_rules import TTFT_REASON
from predictors.training.evaluate import TARGETS, target_rows
from predictors.training.train import prepare
from tests.cli_runner import one_error_line, run_cli

SHIPPED = Path(__file__).resolve().parents[1] / "predictors" / "trained"

WC_HEADER = (
    ",model,gpu_type,lambda_qps,generation_tokens_total,measurement_duration,gpu_energy,"
    "gpu_0_power_draw_watts_mean,gpu_0_power_draw_watts_min,gpu_0_power_draw_watts_max,"
    "gpu_0_power_draw_watts_std,time_to_first_token_seconds_events,"
    "e2e_request_latency_seconds_events,request_generation_tokens,request_prompt_tokens\n"
)


def _wc_line(
    i: int,
    model: str = "meta-llama/Llama-3.1-8B-Instruct",
    gpu: str = "NVIDIA A100-SXM4-80GB",
    ttft: str = "[0.1,0.2]",
) -> str:
    return (
        f'{i},{model},{gpu},1,400,10,2000,200,180,220,5,"{ttft}","[4.0,5.0]","[200,200]",'
        '"[500,600]"\n'
    )


AI_HEADER = (
    "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,"
    "gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,"
    "moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"
)


def _ai_line(i: int, ttft_ms: str) -> str:
    return (
        f"r{i},silicon_concurrency=8,vllm,0.19.0,meta-llama/Llama-3.1-8B-Instruct,h100_sxm,bf16,"
        f"agg,1024,256,bf16,bf16,8,1,1,1,1,1,{ttft_ms},12.25\n"
    )


def _data(tmp_path: Path, text: str | bytes, name: str = "wc.csv") -> Path:
    folder = tmp_path / "data"
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return folder


def _dropped(folder: Path) -> dict[str, int]:
    return dict(load_measurements(folder).dropped.select("reason", "rows").rows())


# F1. a JSON list nested too deeply is its line's reason, not an internal error


def test_a_deeply_nested_list_in_a_watt_counts_cell_drops_only_its_line(tmp_path: Path) -> None:
    deep = "[" * 1100 + "]" * 1100
    text = WC_HEADER + _wc_line(1) + _wc_line(2, ttft=deep) + _wc_line(3)
    folder = _data(tmp_path, text)
    result = run_cli("data", "summary", "--data", str(folder))
    assert result.code == 0, result.err
    assert "internal error" not in result.err
    ms = load_measurements(folder)
    assert ms.table.height == 2
    (reason,) = ms.dropped["reason"].to_list()
    assert reason.startswith(
        "unreadable: wc.csv line 3: column time_to_first_token_seconds_events: "
    ), reason
    assert "nested too deeply" in reason


# F2. TTFT has quality rules; the summary counts the TTFT rows training uses


def _rule_row(**change: object) -> dict[str, object]:
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
        "ttft_s": 0.3,
        "itl_includes_prefill": False,
        "quality": "ok",
        "model_raw": "meta-llama/Llama-3.1-8B-Instruct",
        "gpu_raw": "A100-SXM4-80GB",
        "file": "/data/runs.csv",
        "input_tokens_assumed": False,
    } | change


def test_a_ttft_at_or_below_zero_too_small_or_far_too_large_is_dropped_with_a_reason() -> None:
    rows = [
        _rule_row(),
        _rule_row(ttft_s=-0.5),
        _rule_row(ttft_s=0.0),
        _rule_row(ttft_s=1e-15),
        _rule_row(ttft_s=1e6),  # 11.6 days: the batch is served whole in 8 x 768 x 20 ms
        _rule_row(ttft_s=100.0),  # slow but within the batch's service: kept
        _rule_row(ttft_s=None),  # no TTFT: not checked
    ]
    raw = conform(frame_from_rows(rows), origin="/data")
    got = apply_rules(raw, load_catalog())["drop_reason"].to_list()
    assert got == [
        None,
        "non-positive ttft",
        "non-positive ttft",
        "ttft below 0.1 ms",
        TTFT_REASON,
        None,
        None,
    ]
    legend = "\n".join(RULES)
    assert "non-positive ttft" in legend and "ttft below 0.1 ms" in legend
    assert any(r.startswith(TTFT_REASON) for r in RULES)


def test_the_summary_counts_the_ttft_rows_that_training_uses(tmp_path: Path) -> None:
    lines = [_ai_line(i, t) for i, t in enumerate(("120.5", "-500", "0", "1e-12", "95.0", "1e9"))]
    ms = load_measurements(_data(tmp_path, AI_HEADER + "".join(lines), "aic.csv"))
    usable = ms.table.filter(ms.table["ttft_s"].is_not_null()).height
    trained = target_rows(prepare(ms.table, load_catalog()), TARGETS["ttft"]).height
    assert usable == trained == 2
    assert dict(ms.dropped.select("reason", "rows").rows()) == {
        "non-positive ttft": 2,
        "ttft below 0.1 ms": 1,
        TTFT_REASON: 1,
    }


# F3. evaluate on too few rows: one line, as train gives


def test_evaluate_on_too_few_rows_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    folder = _data(tmp_path, WC_HEADER + "".join(_wc_line(i) for i in range(5)))
    out = tmp_path / "acc.md"
    one_error_line(
        run_cli("evaluate", "--data", str(folder), "--output", str(out)),
        f"--data {folder}: too few usable rows to evaluate",
        "power 5 rows < 50",
        "itl 5 rows < 50",
        "wattgpu data summary",
    )
    assert not out.exists() and not out.with_suffix(".predictions.csv").exists()


# F4. a damaged model directory is one line naming the card; boosters stay inside it


def _models(tmp_path: Path, edit: object = None) -> Path:
    models = tmp_path / "models"
    shutil.copytree(SHIPPED, models)
    if callable(edit):
        card_path = models / "model_card.json"
        card = json.loads(card_path.read_text(encoding="utf-8"))
        edit(card)
        card_path.write_text(json.dumps(card), encoding="utf-8")
    return models


def _predict(models: Path) -> tuple[str, ...]:
    return (
        "predict",
        "--model",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--gpu",
        "A30",
        "--batch-size",
        "8",
        "--models",
        str(models),
    )


def _drop_power(card: dict) -> None:
    del card["targets"]["power"]


def _short_features(card: dict) -> None:
    card["targets"]["itl"]["features"] = card["targets"]["itl"]["features"][:-2]


def _renamed_feature(card: dict) -> None:
    card["targets"]["itl"]["features"][3] = "bogus"


def _bad_gpu_specs(card: dict) -> None:
    card["domain"]["gpu_specs"] = "x"


def _bad_spec_value(card: dict) -> None:
    next(iter(card["domain"]["gpu_specs"].values()))["tdp_w"] = "high"


def _absolute_booster(card: dict) -> None:
    card["targets"]["itl"]["file"] = "/etc/passwd"


def _parent_booster(card: dict) -> None:
    card["targets"]["power"]["file"] = "../power.ubj"


@pytest.mark.parametrize(
    ("edit", "parts"),
    [
        (_drop_power, ("no target 'power'", "power and itl", "retrain")),
        (_short_features, ("target 'itl'", "booster takes 19 features", "lists 17", "retrain")),
        (_renamed_feature, ("target 'itl'", "feature 'bogus' is not one wattgpu computes")),
        (_bad_gpu_specs, ("domain.gpu_specs: must be an object", "retrain")),
        (_bad_spec_value, ("domain.gpu_specs.", ".tdp_w: must be a number or null")),
        (_absolute_booster, ("target 'itl'", "'/etc/passwd' lies outside the model directory")),
        (_parent_booster, ("target 'power'", "'../power.ubj' lies outside the model directory")),
    ],
)
def test_a_damaged_card_is_one_line_naming_it(
    tmp_path: Path, edit: object, parts: tuple[str, ...]
) -> None:
    models = _models(tmp_path, edit)
    line = one_error_line(run_cli(*_predict(models)), f"{models}/model_card.json", *parts)
    assert "/etc/passwd:" not in line


def test_a_booster_of_another_target_is_one_line(tmp_path: Path) -> None:
    models = _models(tmp_path)
    shutil.copyfile(models / "power.ubj", models / "itl.ubj")
    one_error_line(
        run_cli(*_predict(models)),
        "target 'itl': its booster takes 17 features and the card lists 19",
        "retrain",
    )


def test_a_card_that_is_not_utf8_is_one_line_for_predict_and_report(tmp_path: Path) -> None:
    models = _models(tmp_path)
    card = models / "model_card.json"
    card.write_bytes(b"\xff\xfe" + card.read_text(encoding="utf-8").encode("utf-16-le"))
    one_error_line(run_cli(*_predict(models)), f"{card}: not UTF-8 text (byte 0xff at offset 0")
    with pytest.raises(WattgpuError, match=r"not UTF-8 text \(byte 0xff at offset 0") as caught:
        load_card(models)
    assert str(caught.value).startswith(str(card)) and "\n" not in str(caught.value)


# F5. an empty required cell names its line and the file's own column


def test_an_empty_model_or_gpu_type_cell_names_its_line_and_column(tmp_path: Path) -> None:
    text = WC_HEADER + _wc_line(1) + _wc_line(2, model="") + _wc_line(3, gpu="")
    assert _dropped(_data(tmp_path, text)) == {
        "unreadable: wc.csv line 3: model is empty (required)": 1,
        "unreadable: wc.csv line 4: gpu_type is empty (required)": 1,
    }


def test_an_empty_v1_response_length_names_its_line_and_column(tmp_path: Path) -> None:
    text = (
        "model,throughput,response_length,latency,energy\n"
        "lmsys/vicuna-7B,29.8,271.9,9.1,2143\n"
        "lmsys/vicuna-7B,29.8,,9.1,2143\n"
    )
    folder = _data(tmp_path, text, "A40_chat_benchmark.csv")
    assert _dropped(folder) == {
        "unreadable: A40_chat_benchmark.csv line 3: response_length is empty (required)": 1
    }


# F6. an ML.ENERGY v2 run file is named by its path and the field of a bad number


V2_RUN = {
    "Model": "meta-llama/Meta-Llama-3.1-8B-Instruct",
    "GPU": "NVIDIA A100-SXM4-40GB",
    "TP": 1,
    "PP": 1,
    "Energy/req (J)": 59.6,
    "Avg TPOT (s)": 0.079,
    "Token tput (tok/s)": 1516.8,
    "Avg Output Tokens": 480.9,
    "Avg BS (reqs)": 127.8,
    "Max BS (reqs)": 128,
}


def test_a_v2_run_file_is_named_by_its_path_and_the_bad_field(tmp_path: Path) -> None:
    base = "llm_text_generation/chat/A100-SXM4-40GB/google"
    runs = {
        f"{base}/gemma-2-2b-it/bs32+tp1+pp1.json": V2_RUN | {"Avg TPOT (s)": "fast"},
        f"{base}/gemma-2-9b-it/bs32+tp1+pp1.json": V2_RUN | {"Model": ""},
        f"{base}/gemma-2-9b-it/bs64+tp1+pp1.json": V2_RUN,
    }
    for name, run in runs.items():
        folder = _data(tmp_path, json.dumps(run), name)
    assert _dropped(folder) == {
        f"unreadable: {base}/gemma-2-2b-it/bs32+tp1+pp1.json run: Avg TPOT (s): 'fast' is not "
        "a number": 1,
        f"unreadable: {base}/gemma-2-9b-it/bs32+tp1+pp1.json run: Model is empty (required)": 1,
    }


# F7. bare CR line ends: the message predict --input gives


@pytest.mark.parametrize("lines", [1, 2])
def test_a_measurement_csv_with_bare_cr_line_ends_names_them(tmp_path: Path, lines: int) -> None:
    text = (WC_HEADER + "".join(_wc_line(i) for i in range(lines))).replace("\n", "\r")
    folder = _data(tmp_path, text)
    one_error_line(
        run_cli("data", "summary", "--data", str(folder)),
        f"{folder / 'wc.csv'}: lines end with a bare carriage return (CR); save it with LF or "
        "CRLF line ends",
        never=("appear more than once", "lacks"),
    )


# F8. UTF-32 is named UTF-32, with a fix that works


def test_a_utf32_measurement_csv_is_named_utf32(tmp_path: Path) -> None:
    folder = _data(tmp_path, (WC_HEADER + _wc_line(1)).encode("utf-32"))
    one_error_line(
        run_cli("data", "summary", "--data", str(folder)),
        "wc.csv: the file is UTF-32 encoded; save it as UTF-8 (e.g. iconv -f UTF-32 -t UTF-8)",
        never=("UTF-16",),
    )


# F9. train --output - is refused, as docs/cli.md says


def test_train_output_dash_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _data(tmp_path, WC_HEADER + "".join(_wc_line(i) for i in range(3)))
    one_error_line(
        run_cli("train", "--data", str(folder), "--output", "-"),
        "--output -: names no directory",
        "./- for a directory named '-'",
    )
    assert not (tmp_path / "-").exists()
    # './-' is a directory named '-': refused here only for its too few rows
    one_error_line(
        run_cli("train", "--data", str(folder), "--output", "./-"), "too few usable rows to train"
    )
