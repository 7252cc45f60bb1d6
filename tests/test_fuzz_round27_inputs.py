"""Fuzz round 27 (inputs kept): an output never replaces a file the command reads.

``wattgpu report --model-card FILE -o FILE`` and ``report --accuracy CSV -f html -o CSV``
exited 0 and replaced the model card and the accuracy CSV with the report (the scenario, the
overlays and the ``--sweep`` file were protected, those two not); ``wattgpu sweep -o`` on a file
of ``--models DIR`` was refused only after the whole sweep had run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

REPO = Path(__file__).resolve().parent.parent
CARD = REPO / "predictors" / "trained" / "model_card.json"
PLAN_ARGS = ("--pareto-points", "0", "-f", "text")

pytestmark = pytest.mark.usefixtures("cached_predictor")


@pytest.fixture
def saved_plan(tmp_path: Path) -> Path:
    out = tmp_path / "plan.json"
    result = run_cli("plan", "paper-llama8b-low-load", "-f", "json", "-o", str(out))
    assert result.code == 0, result.err
    return out


def _refused(result_err: str, path: Path) -> bool:
    return any(line.startswith(f"error: --output {path}") for line in result_err.splitlines())


def test_report_never_replaces_its_model_card(tmp_path: Path, saved_plan: Path) -> None:
    card = tmp_path / "card.json"
    shutil.copyfile(CARD, card)
    before = card.read_bytes()
    result = run_cli(
        "report", str(saved_plan), "--model-card", str(card), *PLAN_ARGS, "-o", str(card)
    )
    assert result.code != 0 and _refused(result.err, card), result.err
    assert card.read_bytes() == before


def test_report_never_replaces_its_accuracy_csv(tmp_path: Path, saved_plan: Path) -> None:
    csv = tmp_path / "acc.csv"
    csv.write_text("row,source\n", encoding="utf-8")
    result = run_cli(
        "report", str(saved_plan), "--accuracy", str(csv), "--pareto-points", "0", "-f", "html",
        "-o", str(csv),
    )  # fmt: skip
    assert result.code != 0 and _refused(result.err, csv), result.err
    assert csv.read_text(encoding="utf-8") == "row,source\n"


def test_sweep_refuses_a_models_file_as_output_before_it_sweeps(tmp_path: Path) -> None:
    models = tmp_path / "mym"
    shutil.copytree(CARD.parent, models)
    target = models / "model_card.json"
    before = target.read_bytes()
    result = run_cli(
        "sweep", "paper-llama8b-low-load", "--draws", "2", "--models", str(models),
        "-o", str(target),
    )  # fmt: skip
    assert result.code != 0 and _refused(result.err, target), result.err
    assert "sweeping" not in result.err and "draws" not in result.err  # refused before the work
    assert target.read_bytes() == before
