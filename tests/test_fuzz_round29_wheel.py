"""Fuzz round 29 (the installed wheel): an XGBoost older than 3.1 reads the shipped boosters
(saved by 3.2, ``base_score`` a vector) without error but with its default base score, so every
prediction was silently off (an L40S ITL of 52.0 ms instead of 31.1 ms with xgboost 3.0.5):
loading the predictors refuses it, naming the versions and the fix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import xgboost

from predictors.core.errors import WattgpuError
from predictors.core.paths import trained_dir
from predictors.estimators import artifacts


def test_the_shipped_card_records_an_xgboost_that_needs_the_guard() -> None:
    card = artifacts.load(trained_dir()).card
    saved = artifacts._major_minor(card["library_versions"]["xgboost"])
    assert saved is not None and saved >= artifacts.VECTOR_BASE_SCORE


@pytest.mark.parametrize("running", ["3.0.5", "2.1.4", "3.0.0rc1"])
def test_an_older_xgboost_is_refused_before_it_predicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, running: str
) -> None:
    models = tmp_path / "models"
    shutil.copytree(trained_dir(), models)
    monkeypatch.setattr(xgboost, "__version__", running)
    with pytest.raises(WattgpuError) as err:
        artifacts.load(models)
    text = str(err.value)
    assert f"this xgboost {running}" in text and "xgboost-cpu>=3.1" in text
    assert "model_card.json" in text and "\n" not in text


@pytest.mark.parametrize(
    ("saved", "running", "refused"),
    [
        ("3.2.0", "3.1.3", False),
        ("3.2.0", "3.2.0", False),
        ("3.0.5", "2.1.4", False),  # saved before the vector base score: older readers agree
        ("3.1.0", "3.0.5", True),
        ("", "2.1.4", False),  # no recorded version: nothing to compare
    ],
)
def test_the_rule_compares_the_saved_and_the_running_versions(
    monkeypatch: pytest.MonkeyPatch, saved: str, running: str, refused: bool
) -> None:
    monkeypatch.setattr(xgboost, "__version__", running)
    assert (artifacts.xgboost_problem({"xgboost": saved}) is not None) == refused


def test_the_note_of_a_card_without_metrics_gives_a_fix_that_works_in_an_install() -> None:
    """It said 'the shipped model card' of a user's card and `--metrics-to predictors/trained`,
    a checkout path."""
    from planner.report.card_info import card_metrics
    from predictors.estimators.card import ModelCard

    card = artifacts.load(trained_dir()).card
    empty = ModelCard.model_validate({**card, "metrics": []})
    note = card_metrics(empty)["note"]
    assert "predictors/trained" not in note and "shipped" not in note
    assert "--metrics-to MODELS" in note and "wattgpu evaluate --data DIR" in note


def test_an_unknown_region_points_at_the_command_that_lists_the_regions() -> None:
    from planner.scenario.names import canonicalize
    from predictors.catalog.store import load_catalog

    _, problems = canonicalize({"region": "Atlantis"}, load_catalog())
    assert "`wattgpu catalog regions` lists" in problems[0][1]
