"""Typed output documents: the plan JSON round trip, schemas in docs/, and reports from a saved
plan JSON alone (no scenario file, no predictor)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planner.cli.app import app
from planner.documents import SCHEMA_NAMES, schema_text
from planner.documents.plan import PlanDocument, load_plan, plan_document
from planner.pipeline import PlanRun, plan_file
from planner.text import to_json
from predictors.api import Predictor
from predictors.core.errors import WattgpuError
from predictors.estimators.card import ModelCard, load_card

REPO = Path(__file__).resolve().parent.parent
SCHEMA_DIR = REPO / "docs" / "schemas"
SCENARIO = """\
name: documents-test
description: One chat model for the document tests.
horizon_hours: 48
region: FR
pue: 1.3
electricity_usd_per_kwh: 0.15
objective: {minimize: energy}
gpus:
  L4: {}
  A100-SXM4-80GB: {}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    precision: fp8
    load: {requests_per_s_by_period: [2.0, 0.5], input_tokens: 512, output_tokens: 256}
    sla: {itl_ms: 60}
"""
#: Report keys that differ between two runs of the same plan (clock, input file name).
RUN_KEYS = ("generated_at", "scenario")


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("documents") / "scenario.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def run(scenario_file: Path) -> PlanRun:
    r = plan_file(scenario_file)
    assert r.plan.has_solution, r.plan.solve.messages
    return r


@pytest.fixture(scope="module")
def plan_json(scenario_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("saved") / "plan.json"
    # every candidate: a report or front of the saved plan then re-solves what the scenario's did
    # (by default a plan keeps the best 5 alternatives per entry; this scenario has 8 candidates)
    args = ["plan", str(scenario_file), "--format", "json", "--candidates", "all"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    path.write_text(result.stdout, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_committed_schemas_are_current(name: str) -> None:
    path = SCHEMA_DIR / f"{name}.schema.json"
    assert path.is_file(), f"missing {path}: run `wattgpu schema {name} -o {path}`"
    assert path.read_text(encoding="utf-8") == schema_text(name), (
        f"{path} is stale: run `wattgpu schema {name} -o docs/schemas/{name}.schema.json`"
    )


def test_plan_document_round_trip_keeps_keys_and_values(run: PlanRun) -> None:
    text = to_json(plan_document(run.plan).to_json_dict())
    again = PlanDocument.model_validate(json.loads(text))
    assert to_json(again.to_json_dict()) == text


def test_plan_records_provenance_and_intervals(run: PlanRun) -> None:
    doc = plan_document(run.plan)
    a = doc.assumptions
    assert a.engine == run.scenario.engine and a.robust is False
    assert a.grid_region == "FR" and a.grid_year is not None and a.capacity_headroom == 1.0
    assert [m.precision for m in doc.models] == ["fp8"]
    card = load_card()
    assert doc.predictors.training_data_sha256 == card.training_data.sha256
    for c in doc.candidates:
        if not c.feasible:
            continue
        assert c.power_w_per_gpu_lo is not None and c.power_w_per_gpu_hi is not None
        assert c.power_w_per_gpu_predicted is not None and c.idle_power_w_per_gpu is not None
        assert c.tdp_w_per_gpu is not None and c.idle_power_w_per_gpu <= c.tdp_w_per_gpu
        assert c.power_w_per_gpu_lo <= c.power_w_per_gpu_predicted <= c.power_w_per_gpu_hi
    for alloc in doc.allocations:
        assert alloc.power_w_by_period is not None
        hours = a.period_hours
        energy = sum(p * h for p, h in zip(alloc.power_w_by_period, hours, strict=True)) / 1000
        assert energy == pytest.approx(alloc.energy_kwh, rel=1e-12)


def _report(args: list[str]) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["report", *args, "--format", "json", "--pareto-points", "2"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _strip(report: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in report.items() if k not in RUN_KEYS}
    out["solve"] = {**out["solve"], "seconds": 0}
    out["plan"] = {**out["plan"], "solve": {**out["plan"]["solve"], "seconds": 0}}
    for key in ("candidates", "candidates_kept", "candidate_counts"):  # the saved plan keeps all
        out["plan"].pop(key, None)
    return out


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_report_from_saved_plan_equals_report_from_scenario(
    scenario_file: Path, plan_json: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = plan_json
    from_scenario = _report([str(scenario_file)])

    def no_predictor(*args: object, **kwargs: object) -> Predictor:
        raise AssertionError("a report from a saved plan must not load the predictors")

    monkeypatch.setattr(Predictor, "load", no_predictor)
    from_plan = _report([str(plan)])
    assert from_plan["scenario"]["file"] == str(plan)
    assert from_plan["scenario"]["description"] == "One chat model for the document tests."
    assert _strip(from_plan) == _strip(from_scenario)
    assert from_plan["uncertainty"]["total"]["energy_kwh"]["high"] > 0
    assert from_plan["pareto"]["points"]
    for fmt, start in (("md", "# "), ("html", "<!DOCTYPE html>"), ("text", "Estimated")):
        out = CliRunner().invoke(app, ["report", str(plan), "-f", fmt, "--pareto-points", "0"])
        assert out.exit_code == 0, out.output
        assert out.stdout.startswith(start), fmt


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_report_from_plan_imports_no_predictor(plan_json: Path, tmp_path: Path) -> None:
    plan = plan_json
    code = (
        "import sys; from planner.cli.app import main\n"
        "try:\n"
        f"    main(['report', {str(plan)!r}, '-f', 'json', '-o', {str(tmp_path / 'r.json')!r},"
        " '--pareto-points', '0'])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print(sorted(m for m in ('xgboost', 'predictors.api') if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_every_statement_is_rendered_in_every_format(run: PlanRun) -> None:
    from planner.report.build import ESTIMATE_NOTE, make_report
    from planner.report.card_info import METHOD_TEXT
    from planner.report.render import render_report

    report, _ = make_report(run.plan, run.predictor_card)
    # whitespace folded: the text form wraps paragraphs
    texts = {fmt: " ".join(render_report(report, fmt).split()) for fmt in ("md", "html", "text")}
    unc = report.uncertainty
    assert unc is not None
    for statement in (ESTIMATE_NOTE, METHOD_TEXT, unc.method, report.assumptions.grid_text):
        for fmt, text in texts.items():
            needle = statement.replace("'", "&#x27;") if fmt == "html" else statement
            if fmt == "md":  # brackets escaped: "\[idle, TDP\]" renders "[idle, TDP]"
                needle = needle.replace("[", "\\[").replace("]", "\\]")
            assert text.count(needle) == 1, (fmt, statement[:40])


@pytest.mark.parametrize(
    ("content", "expect"),
    [
        ("{not json", "not valid JSON (line 1"),
        ("[1, 2]", "expected a JSON object"),
        ('{"scenario": "x"}', "not a valid plan JSON: status: Field required"),
    ],
)
def test_bad_plan_json_is_one_clear_line(tmp_path: Path, content: str, expect: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(WattgpuError, match="bad.json") as exc:
        load_plan(path)
    assert expect in str(exc.value) and "wattgpu plan" in str(exc.value)
    assert len(str(exc.value).splitlines()) == 1


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_bad_field_in_saved_plan_names_the_field(plan_json: Path, tmp_path: Path) -> None:
    data = json.loads(plan_json.read_text())
    data["allocations"][0]["replicas"] = "two"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, "-m", "planner.cli.app", "report", str(bad)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert str(bad) in lines[0] and "allocations[0].replicas" in lines[0]
    said = 'valid integer, got the text "two"; give a file written by `wattgpu plan SCENARIO'
    assert lines[0].endswith(said + " --format json`")


def test_saved_plan_refuses_what_if_options(plan_json: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(plan_json), "--set", "pue=1.1"])
    assert result.exit_code != 0
    assert "saved plan" in str(result.exception)


def test_model_card_is_typed_and_keeps_every_key() -> None:
    card = load_card()
    raw = json.loads((REPO / "predictors" / "trained" / "model_card.json").read_text())
    assert isinstance(card, ModelCard) and card.as_dict() == raw
    assert card.interval_level() == pytest.approx(0.9)


def test_bad_model_card_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "model_card.json"
    path.write_text('{"schema": 2, "training_data": {"rows_by_source": {"a": "many"}}}')
    with pytest.raises(WattgpuError, match="training_data.rows_by_source.a"):
        load_card(path)


def test_pareto_from_saved_plan(plan_json: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_predictor(*args: object, **kwargs: object) -> Predictor:
        raise AssertionError("a front of a saved plan must not load the predictors")

    monkeypatch.setattr(Predictor, "load", no_predictor)
    result = CliRunner().invoke(app, ["pareto", str(plan_json), "-n", "3", "-f", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    saved = json.loads(plan_json.read_text())
    assert data["chosen"]["facility_energy_kwh"] == saved["totals"]["facility_energy_kwh"]
    assert min(p["facility_energy_kwh"] for p in data["points"]) <= (
        saved["totals"]["facility_energy_kwh"] * (1 + 1e-9)
    )


def test_saved_plan_rebuilds_the_optimiser_inputs(run: PlanRun) -> None:
    from dataclasses import replace

    from planner.documents.plan import planning_inputs_of

    saved = plan_document(run.plan, "all").to_json_dict()
    doc = PlanDocument.model_validate(json.loads(to_json(saved)))
    assert planning_inputs_of(doc) == replace(run.inputs, gpu_info={})
