"""Fuzz round 17c: ``wattgpu train`` never leaves a model directory broken or mixed.

Each test failed before its fix: a train with too few rows rewrote an existing directory's card
with no targets (then stopped on an internal ``KeyError``); the files were written one by one into
the live directory, so a kill after the first booster left new trees under the old card; an
``evaluation_summary.json`` that is not JSON stopped train with an internal error."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from predictors.core import atomic_dir
from predictors.core.paths import trained_dir
from predictors.estimators import artifacts
from tests.cli_runner import run_cli

WATT_COUNTS = (
    ",model,gpu_type,lambda_qps,generation_tokens_total,measurement_duration,gpu_energy,"
    "gpu_0_power_draw_watts_mean,gpu_0_power_draw_watts_min,gpu_0_power_draw_watts_max,"
    "gpu_0_power_draw_watts_std,time_to_first_token_seconds_events,"
    "e2e_request_latency_seconds_events,request_generation_tokens,request_prompt_tokens\n"
    '0,meta-llama/Llama-3.1-8B-Instruct,NVIDIA L40S,,400,10,2000,200,180,220,5,"[0.1,0.2]",'
    '"[4.0,5.0]","[200,200]","[500,600]"\n'
)


def _digests(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.iterdir()}


@pytest.fixture
def models_copy(tmp_path: Path) -> Path:
    out = tmp_path / "models"
    shutil.copytree(trained_dir(), out)
    return out


def test_too_few_rows_is_one_error_and_writes_nothing(tmp_path: Path, models_copy: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "wc.csv").write_text(WATT_COUNTS, encoding="utf-8")
    before = _digests(models_copy)
    result = run_cli("train", "--data", str(data), "--output", str(models_copy))
    assert result.code == 1 and "Traceback" not in result.err
    assert "too few usable rows to train" in result.err and "nothing written" in result.err
    assert _digests(models_copy) == before
    fresh = tmp_path / "fresh"
    assert run_cli("train", "--data", str(data), "--output", str(fresh)).code == 1
    assert not fresh.exists()


def test_a_save_that_fails_midway_leaves_the_old_models_whole(
    tmp_path: Path, models_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = artifacts.load(models_copy)
    models.card["note"] = "a newer training"
    before = _digests(models_copy)
    written: list[Path] = []
    real = atomic_dir.atomic_write

    def fail_after_one(target: Path, data: bytes) -> None:
        if written:
            raise OSError(28, "No space left on device")
        written.append(target)
        real(target, data)

    monkeypatch.setattr(atomic_dir, "atomic_write", fail_after_one)
    with pytest.raises(OSError):
        artifacts.save(models, models_copy)
    assert _digests(models_copy) == before
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name or ".old-" in p.name]
    monkeypatch.setattr(atomic_dir, "atomic_write", real)
    artifacts.save(models, models_copy)
    assert artifacts.load(models_copy).card["note"] == "a newer training"
    assert "evaluation_summary.json" in _digests(models_copy)  # kept across the swap


@pytest.mark.parametrize("text", ['{"power": ', "[1, 2]"])
def test_a_bad_stored_metrics_file_is_one_error(
    tmp_path: Path, models_copy: Path, text: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "wc.csv").write_text(WATT_COUNTS, encoding="utf-8")
    (models_copy / "evaluation_summary.json").write_text(text, encoding="utf-8")
    result = run_cli("train", "--data", str(data), "--output", str(models_copy))
    assert result.code == 1 and "evaluation_summary.json" in result.err
    assert "internal error" not in result.err
