"""Fuzz round 18c: the same question gets the same answer from every command.

Each test failed before its fix: a scenario's top-level ``precision`` lost to the precision a
quantised checkpoint's name implies (``compare --precision`` and ``predict --precision`` kept
it), and no plan output but the JSON said which precision was planned; ``report`` of a scenario
with ``user_catalog:`` built its disclosure against the bundled catalogs (the user's model "not
in the catalog": no parameters, no FLOPs); a bad ``$WATTGPU_MODELS`` reporting a saved plan
named the card's path but not the variable it came from."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from predictors.core.errors import WattgpuError
from predictors.core.paths import MODELS_ENV
from predictors.estimators.card import load_card
from tests.cli_runner import run_cli

AWQ = """\
name: awq
region: US
electricity_usd_per_kwh: 0.12
objective: {minimize: energy}
gpus:
  L4: {}
models:
  - name: m
    model: Qwen/Qwen2.5-7B-Instruct-AWQ
    load: {requests_per_s: 1, input_tokens: 1024, output_tokens: 256}
    sla: {itl_ms: 60}
"""


def _plan(tmp_path: Path, text: str, *args: str) -> dict[str, object]:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(text, encoding="utf-8")
    out = tmp_path / "plan.json"
    result = run_cli("plan", str(scenario), "-f", "json", "-o", str(out), *args)
    assert result.code == 0, result.err
    loaded: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return loaded


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_a_scenarios_precision_wins_over_the_checkpoints_implied_one(tmp_path: Path) -> None:
    implied = _plan(tmp_path, AWQ)
    stated = _plan(tmp_path, AWQ + "precision: fp8\n")
    assert implied["models"][0]["precision"] == "int4"  # type: ignore[index]
    assert stated["models"][0]["precision"] == "fp8"  # type: ignore[index]
    question = ("--model", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--requests-per-s", "1")
    question += ("--itl-ms", "60", "--gpus", "L4", "-f", "json")
    compare = run_cli("compare", *question, "--precision", "fp8")
    assert compare.code == 0, compare.err
    row = json.loads(compare.out)["rows"][0]
    energy = stated["totals"]["energy_kwh"]  # type: ignore[index]
    assert row["energy_kwh"] == pytest.approx(energy, rel=1e-9)


@pytest.mark.slow
def test_plan_table_and_csv_state_the_precision(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(AWQ, encoding="utf-8")
    table = run_cli("plan", str(scenario))
    assert table.code == 0 and "int4 on every model entry, engine vllm" in table.out, table.err
    out = run_cli("plan", str(scenario), "-f", "csv")
    assert out.code == 0, out.err
    rows = list(csv.DictReader(io.StringIO(out.out)))
    assert list(rows[0])[-1] == "precision" and rows[0]["precision"] == "int4"


@pytest.mark.slow
def test_report_discloses_a_model_of_the_scenarios_user_catalog(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
             "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
             "num_hidden_layers": 32, "vocab_size": 128256, "max_position_embeddings": 131072,
             "torch_dtype": "bfloat16", "tie_word_embeddings": False, "head_dim": 128}
        ),
        encoding="utf-8",
    )  # fmt: skip
    ucat = tmp_path / "ucat"
    made = run_cli("catalog", "import-hf", str(config), "--id", "myorg/my-8b",
                   "--user-catalog", str(ucat))  # fmt: skip
    assert made.code == 0, made.err
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: uc\nregion: US\nelectricity_usd_per_kwh: 0.12\nuser_catalog: ucat\n"
        "gpus:\n  H100: {}\nmodels:\n  - name: m\n    model: myorg/my-8b\n"
        "    load: {requests_per_s: 3, input_tokens: 1024, output_tokens: 256}\n"
        "    sla: {itl_ms: 40}\n",
        encoding="utf-8",
    )
    out = tmp_path / "report.json"
    result = run_cli("report", str(scenario), "-f", "json", "-o", str(out), "--pareto-points", "0")
    assert result.code == 0, result.err
    fields = json.loads(out.read_text(encoding="utf-8"))["disclosure"]["models"][0]["fields"]
    assert fields["total_params_b"]["value"] == pytest.approx(8.0, rel=0.01)
    assert isinstance(fields["inference_flops"]["value"], float)


def test_a_bad_models_variable_is_named_when_the_card_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MODELS_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(WattgpuError, match=r"^\$WATTGPU_MODELS: .*nowhere"):
        load_card()
    monkeypatch.delenv(MODELS_ENV)
    assert load_card().name  # the shipped card
