"""``--models DIR`` and ``$WATTGPU_MODELS``: the commands predict with a trained model directory
the user chose (what ``wattgpu train --output DIR`` writes), not always the shipped one.

Before, only the Python API (``Predictor.load(directory)``) could use a user's trained models; every
command loaded ``predictors/trained``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.core.paths import MODELS_ENV, trained_dir
from tests.cli_runner import run_cli

ROW = ("--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "A30", "--batch-size", "8")
ROW += ("--input-tokens", "1024", "--output-tokens", "256", "--format", "json")


@pytest.fixture
def slower_models(tmp_path: Path) -> Path:
    """The shipped models with vLLM's fitted bandwidth efficiency halved: a model directory whose
    ITL is visibly different from the shipped one's."""
    out = tmp_path / "models"
    shutil.copytree(trained_dir(), out)
    card_path = out / "model_card.json"
    card = json.loads(card_path.read_text(encoding="utf-8"))
    card["targets"]["itl"]["step_params"]["eta_bw"]["vllm"] /= 2.0
    card_path.write_text(json.dumps(card, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out


def _itl_s(*args: str) -> float:
    result = run_cli("predict", *ROW, *args)
    assert result.code == 0, result.err
    return float(json.loads(result.out)["itl_s"])


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_predict_uses_the_given_model_directory(
    slower_models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MODELS_ENV, raising=False)
    shipped = _itl_s()
    chosen = _itl_s("--models", str(slower_models))
    row = pl.DataFrame(
        {
            "model": ["meta-llama/Llama-3.1-8B-Instruct"],
            "gpu": ["A30"],
            "batch_size": [8],
            "input_tokens": [1024],
            "output_tokens": [256],
        }
    )
    api = Predictor.load(slower_models).predict(row)["itl_s"][0]
    assert chosen == pytest.approx(api, rel=1e-12)
    assert chosen > 1.2 * shipped  # half the bandwidth efficiency: a slower memory-bound step
    monkeypatch.setenv(MODELS_ENV, str(slower_models))
    assert _itl_s() == pytest.approx(chosen, rel=1e-12)
    assert _itl_s("--models", str(trained_dir())) == pytest.approx(shipped, rel=1e-12)


@pytest.mark.slow
def test_compare_uses_the_given_model_directory(
    slower_models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MODELS_ENV, raising=False)
    args = ("compare", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--requests-per-s", "2")
    args += ("--itl-ms", "40", "--gpus", "A30", "--format", "json")

    def row(*more: str) -> dict[str, Any]:
        result = run_cli(*args, *more)
        assert result.code == 0, result.err
        found: dict[str, Any] = json.loads(result.out)["rows"][0]
        return found

    # a slower step sizes another fleet (the ITL at capacity sits at the SLA whatever the
    # models): its energy differs, and the variable chooses the same directory as the option
    slow, shipped = row("--models", str(slower_models)), row()
    assert abs(slow["energy_kwh"] / shipped["energy_kwh"] - 1.0) > 0.01
    monkeypatch.setenv(MODELS_ENV, str(slower_models))
    assert row() == slow


@pytest.mark.parametrize(
    ("broken", "expected"),
    [
        (lambda d: shutil.rmtree(d), "not a directory"),
        (lambda d: (d / "itl.ubj").unlink(), "missing booster file"),
        (lambda d: (d / "model_card.json").write_text("{", encoding="utf-8"), "not valid JSON"),
    ],
)
def test_a_bad_model_directory_is_one_error_naming_where_it_came_from(
    slower_models: Path, monkeypatch: pytest.MonkeyPatch, broken: object, expected: str
) -> None:
    monkeypatch.delenv(MODELS_ENV, raising=False)
    broken(slower_models)  # type: ignore[operator]
    result = run_cli("predict", *ROW, "--models", str(slower_models))
    assert result.code == 1
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --models: "), result.err
    assert expected in lines[0] and "Traceback" not in result.err
    monkeypatch.setenv(MODELS_ENV, str(slower_models))
    result = run_cli("predict", *ROW)
    assert result.code == 1 and result.err.startswith(f"error: ${MODELS_ENV}: "), result.err


@pytest.mark.slow  # four plans of the bundled low-load scenario: about 10 s
def test_plan_report_and_sweep_plan_with_the_given_model_directory(
    slower_models: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(MODELS_ENV, raising=False)

    def planned_itl_ms(*more: str) -> list[float]:
        out = tmp_path / "plan.json"
        result = run_cli("plan", "paper-llama8b-low-load", "-f", "json", "-o", str(out), *more)
        assert result.code == 0, result.err
        doc = json.loads(out.read_text(encoding="utf-8"))
        return [a["itl_s_at_served_load"] for a in doc["allocations"]]

    shipped, chosen = planned_itl_ms(), planned_itl_ms("--models", str(slower_models))
    assert shipped != chosen
    report = run_cli("report", "paper-llama8b-low-load", "-f", "json", "--pareto-points", "0",
                     "--models", str(slower_models))  # fmt: skip
    assert report.code == 0, report.err
    allocations = json.loads(report.out)["plan"]["allocations"]
    assert [a["itl_s_at_served_load"] for a in allocations] == chosen
    sweep = run_cli("sweep", "paper-llama8b-low-load", "--draws", "2", "-f", "json",
                    "--models", str(slower_models))  # fmt: skip
    assert sweep.code == 0, sweep.err
    monkeypatch.setenv(MODELS_ENV, str(slower_models))
    assert planned_itl_ms() == chosen
