"""Fuzz round 24: ``wattgpu evaluate --output`` never replaces the models or catalogs it reads.

Before: ``--output M/power.ubj --metrics-to M`` wrote the Markdown report over the booster and
exited 0 (the model directory could no longer be loaded); ``--output M/model_card.json`` wrote it
over the card and then failed; and ``--output`` naming the shipped predictors or a catalog was
refused only at the final write, after the whole evaluation (minutes on the public data). Each
is now refused in one line before any work, the file untouched.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from predictors.core.paths import trained_dir
from tests.cli_runner import run_cli

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def models(tmp_path: Path) -> Path:
    """A copy of the shipped model directory (card, boosters, evaluation summary)."""
    out = tmp_path / "models"
    shutil.copytree(trained_dir(), out)
    return out


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "runs.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "name", ["power.ubj", "itl.ubj", "model_card.json", "evaluation_summary.json"]
)
def test_the_metrics_directory_is_never_an_output(models: Path, data: Path, name: str) -> None:
    target = models / name
    before = target.read_bytes()
    result = run_cli(
        "evaluate", "--data", str(data), "--output", str(target), "--metrics-to", str(models)
    )
    assert result.code == 1, result.out
    assert len(result.errors) == 1 and str(target) in result.errors[0], result.err
    assert "write" in result.errors[0] and "another path" in result.errors[0]
    assert target.read_bytes() == before
    assert not (models / f"{Path(name).stem}.predictions.csv").exists()


@pytest.mark.parametrize(
    "target",
    [trained_dir() / "model_card.json", trained_dir() / "ttft.ubj", REPO / "catalogs" / "gpus.csv"],
    ids=["card", "booster", "catalog"],
)
def test_the_read_models_and_catalogs_are_refused_before_the_work(data: Path, target: Path) -> None:
    before = target.read_bytes()
    result = run_cli("evaluate", "--data", str(data), "--output", str(target))
    assert result.code == 1
    assert len(result.errors) == 1 and "another path" in result.errors[0], result.err
    assert "no usable measurement rows" not in result.err  # refused before the data is read
    assert target.read_bytes() == before


def test_the_shipped_evaluation_summary_is_never_an_output(data: Path) -> None:
    """Without --metrics-to too: ``train`` reads the summary into the next card (review of round
    24: the report would have replaced it with Markdown and ``train`` then failed)."""
    target = trained_dir() / "evaluation_summary.json"
    before = target.read_bytes()
    result = run_cli("evaluate", "--data", str(data), "--output", str(target))
    assert result.code == 1 and "another path" in result.errors[0], result.err
    assert "no usable measurement rows" not in result.err
    assert target.read_bytes() == before
