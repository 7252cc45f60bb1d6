"""A file of one of wattgpu's kinds given where another is read is named by what it is, and
``report`` takes a scenario written as JSON and a plan saved under another name (fuzz round 31).

``report`` decided by the suffix alone: a scenario written as ``.json`` (which ``plan`` and
``validate`` accept) was "not a valid plan JSON: scenario: Field required", a plan saved as
``.yaml`` was told to "use report … on it" while running ``report``, a sweep JSON given as a plan
got "status: Field required" and a plan given as ``--model-card`` "card schema None, expected 2".
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from planner.paths import scenarios_dir
from predictors.core.document_kinds import KINDS, document_kind
from tests.cli_runner import run_cli

SCENARIO = scenarios_dir() / "paper-llama8b-low-load.yaml"


@pytest.fixture(scope="module")
def plan_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kinds") / "plan.json"
    assert run_cli("plan", str(SCENARIO), "-f", "json", "-o", str(path)).code == 0
    return path


def test_report_plans_a_scenario_written_as_json(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(yaml.safe_load(SCENARIO.read_text(encoding="utf-8"))))
    result = run_cli("report", str(scenario), "-f", "md", "--pareto-points", "0")
    assert result.code == 0, result.err
    assert "paper-llama8b-low-load" in result.out


def test_report_reads_a_plan_saved_under_another_name(tmp_path: Path, plan_json: Path) -> None:
    renamed = tmp_path / "plan.yaml"
    shutil.copyfile(plan_json, renamed)
    as_yaml = run_cli("report", str(renamed), "-f", "json", "--pareto-points", "0")
    as_json = run_cli("report", str(plan_json), "-f", "json", "--pareto-points", "0")
    assert as_yaml.code == as_json.code == 0, as_yaml.err
    ours, theirs = json.loads(as_yaml.out), json.loads(as_json.out)
    assert ours["headline"] == theirs["headline"]


def test_a_file_of_another_kind_is_named_by_what_it_is(tmp_path: Path, plan_json: Path) -> None:
    card = Path(__file__).resolve().parent.parent / "predictors" / "trained" / "model_card.json"
    report = tmp_path / "report.json"
    assert run_cli("report", str(plan_json), "-f", "json", "-o", str(report)).code == 0
    cases = [
        (("report", str(report)), "a report JSON (wattgpu report --format json), not a plan JSON"),
        (
            ("report", str(plan_json), "--model-card", str(plan_json)),
            "a saved plan JSON (wattgpu plan --format json), not a model card",
        ),
        (
            ("report", str(plan_json), "--sweep", str(plan_json)),
            "a saved plan JSON (wattgpu plan --format json), not a sweep JSON",
        ),
        (("validate", str(card)), "a model card (model_card.json, written by wattgpu train)"),
    ]
    for args, said in cases:
        result = run_cli(*args, "--pareto-points", "0") if args[0] == "report" else run_cli(*args)
        assert result.code == 1, (args, result.err)
        lines = result.err.strip().splitlines()
        assert len(lines) == 1 and said in lines[0], (args, result.err)


def test_every_kind_is_told_apart_from_the_others() -> None:
    for kind, marks, what in KINDS:
        assert document_kind(dict.fromkeys(marks)) == (
            next((k, w) for k, m, w in KINDS if m <= marks)
        )
        assert document_kind(dict.fromkeys(marks))[0] == kind, what
    assert document_kind({"name": "x"}) is None and document_kind([1]) is None


def test_an_edited_pue_is_named_first(tmp_path: Path, plan_json: Path) -> None:
    """An edited ``assumptions.pue`` gave a dozen lines blaming the allocations' facility
    energy, none naming the PUE (fuzz round 31)."""
    data = json.loads(plan_json.read_text(encoding="utf-8"))
    pue = data["assumptions"]["pue"]
    data["assumptions"]["pue"] = pue + 0.05
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    result = run_cli("report", str(edited), "--pareto-points", "0")
    assert result.code == 1
    first = result.err.splitlines()[0]
    assert f"assumptions.pue: {pue + 0.05!r}, but the facility energy of every allocation" in first
    assert f"GPU energy × {pue:.6g}" in first
