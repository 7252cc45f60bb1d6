"""The energy disclosure report (json / md / html), its charts and the report-family CLI."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from typer.testing import CliRunner

from planner.cli.app import app
from planner.documents.report import ReportDocument
from planner.pipeline import PlanRun, plan_file
from planner.report.blocks import NOT_EVALUATED
from planner.report.build import build_report, make_report
from planner.report.card_info import card_metrics
from planner.report.html import render_html
from planner.report.markdown import render_markdown
from planner.report.svg_charts import accuracy_chart, all_charts, gpu_mix
from planner.report.tables import metric_rows
from predictors.api import Predictor

SCENARIO = """\
name: report-test
description: Two small chat models for the report tests.
horizon_hours: 720
region: DE
pue: 1.2
electricity_usd_per_kwh: 0.2
carbon_usd_per_tonne: 50
objective: {minimize: cost}
gpus:
  L4: {}
  A100-SXM4-80GB: {}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s_by_period: [2.0, 0.5], input_tokens: 512, output_tokens: 256}
    sla: {itl_ms: 60}
  - name: small
    model: meta-llama/Llama-3.2-1B-Instruct
    load: {requests_per_s_by_period: [4.0, 1.0], input_tokens: 256, output_tokens: 64}
    sla: {itl_ms: 40}
"""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "scenario.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.load()


@pytest.fixture(scope="module")
def run(scenario_file: Path, predictor: Predictor) -> PlanRun:
    r = plan_file(scenario_file, predictor=predictor)
    assert r.plan.has_solution, r.plan.solve.messages
    return r


@pytest.fixture(scope="module")
def report_doc(run: PlanRun) -> ReportDocument:
    data, front = make_report(
        run.plan, run.predictor_card, pareto_points=3, inputs=run.inputs, scenario_file="s.yaml"
    )
    assert front is not None
    return data


@pytest.fixture(scope="module")
def report(report_doc: ReportDocument) -> dict[str, Any]:
    return report_doc.to_json_dict()


def test_report_json_fields(report: dict[str, Any], run: PlanRun) -> None:
    assert report["estimated"] is True and "estimate" in report["note"]
    assert report["wattgpu_version"] and report["generated_at"]
    h = report["headline"]
    totals = run.plan.totals
    assert totals is not None
    assert h["estimated_energy_kwh"] == pytest.approx(totals.energy_kwh)
    assert h["estimated_facility_energy_kwh"] == pytest.approx(totals.facility_energy_kwh)
    assert h["estimated_co2e_kg"] == pytest.approx(totals.carbon_kg)
    assert h["estimated_cost_usd"] == pytest.approx(totals.cost_usd)
    assert h["gpus"] == totals.gpus
    # per model deployment
    names = {m["name"] for m in report["models"]}
    assert names == {"chat", "small"}
    for m in report["models"]:
        assert m["gpus_used"] >= 1 and m["deployments"]
        kwh, tokens, requests = m["estimated_energy_kwh"], m["output_tokens"], m["requests"]
        assert m["estimated_wh_per_1000_output_tokens"] == pytest.approx(kwh * 1000 / tokens * 1000)
        assert m["estimated_wh_per_request"] == pytest.approx(kwh * 1000 / requests)
        assert m["estimated_average_power_w"] == pytest.approx(kwh * 1000 / 720)
        band = m["uncertainty"]["carbon_kg"]
        assert band["low"] <= band["median"] <= band["high"]
        assert band["median"] == pytest.approx(m["estimated_co2e_kg"])
    chat = next(m for m in report["models"] if m["name"] == "chat")
    assert chat["requests"] == pytest.approx((2.0 + 0.5) * 360 * 3600)
    # statements
    expected_status = "evaluated" if run.predictor_card.get("metrics") else NOT_EVALUATED
    assert report["method"]["metrics"]["status"] == expected_status
    assert report["method"]["predictors_version"]
    assert any("embodied" in x for x in report["system_boundary"]["excluded"])
    assert "PUE 1.2" in report["system_boundary"]["facility"]
    provenance = [s["id"] for s in report["data_provenance"]["sources"]]
    assert provenance == run.predictor_card["training_data"]["sources"]
    grid = report["assumptions"]["grid"]
    assert grid["region"] == "DE" and grid["year"] and "grid_carbon.csv" in grid["source"]
    assert {x["name"]: x["output_tokens"] for x in report["assumptions"]["loads"]} == {
        "chat": 256,
        "small": 64,
    }
    unc = report["uncertainty"]
    assert "interval" in unc["method"]
    for band in unc["total"].values():
        assert band["low"] <= band["median"] <= band["high"]
    assert isinstance(report["warnings"]["out_of_domain_allocations"], list)
    assert report["pareto"]["points"]
    assert report["plan"]["status"] == report["status"]
    json.dumps(report)  # plain JSON values only


def test_forecast_per_year_scaling(report: dict[str, Any]) -> None:
    per_year = report["forecast"]["total"]["per_year"]["carbon_kg"]
    assert per_year == pytest.approx(report["headline"]["estimated_co2e_kg"] * 8760 / 720)
    assert report["headline"]["estimated_co2e_kg_per_year"] == pytest.approx(per_year)


def test_card_metrics_read_from_card(run: PlanRun) -> None:
    records = [
        {
            "target": "power",
            "split": "logo",
            "method": "ours",
            "mdape_pct": 12.5,
            "pearson_r": 0.9,
            "coverage_90_pct": 88.0,
            "rows": 100.0,
        },
        {"target": "itl", "split": "lolo", "method": "ours", "mdape_pct": 30.0},
        {"target": "itl", "split": "lolo", "method": "paper", "mdape_pct": 99.0},
    ]
    metrics = card_metrics({"metrics": records})
    assert metrics["status"] == "evaluated"
    assert metrics["unseen_gpus"]["power"]["mdape_pct"] == 12.5
    assert metrics["unseen_llms"]["itl"]["mdape_pct"] == 30.0
    assert metrics["cross_validation"] == NOT_EVALUATED
    assert card_metrics({"metrics": {}})["status"] == NOT_EVALUATED
    fixed = dt.datetime(2025, 1, 2, tzinfo=dt.UTC)
    data = build_report(run.plan, {**run.predictor_card, "metrics": records}, now=lambda: fixed)
    assert data.generated_at.startswith("2025-01-02")
    md = render_markdown(data)
    assert "| unseen gpus | power | 12.5 % | 0.9 | 88 % |" in md


def test_markdown_sections(report_doc: ReportDocument) -> None:
    md = render_markdown(report_doc)
    for heading in (
        "## Fleet totals (estimated)",
        "## Per model deployment (estimated)",
        "## Method",
        "## System boundary",
        "## Data provenance",
        "## Assumptions",
        "## Uncertainty",
        "## Warnings",
        "Pareto front",
    ):
        assert heading in md
    metrics = report_doc.method.metrics
    if metrics["status"] == NOT_EVALUATED:
        assert NOT_EVALUATED in md
    else:
        # every evaluated split and target of the model card is a row of the report, with its
        # MdAPE as the report formats it
        rows = metric_rows(metrics)
        assert rows, "an evaluated model card must give at least one metric row"
        for row in rows:
            assert "| " + " | ".join(row) + " |" in md, row
    assert "none was measured" in md
    assert re.search(r"measured (energy|power)", md) is None


def test_html_self_contained(report_doc: ReportDocument, tmp_path: Path) -> None:
    csv = tmp_path / "accuracy.predictions.csv"
    rows = ["target,split,method,measured,predicted"]
    rows += [f"power,logo,ours,{100 + i},{110 + i}" for i in range(20)]
    rows += [f"itl,lolo,ours,{0.01 + i / 1000},{0.012 + i / 1000}" for i in range(20)]
    rows += ["power,logo,paper,100,300"]
    csv.write_text("\n".join(rows) + "\n")
    charts = all_charts(report_doc, csv)
    assert {c.key for c in charts} == {"energy_cost", "gpu_mix", "power_load", "pareto", "accuracy"}
    for c in charts:  # every chart an inline SVG element that parses as XML
        assert c.svg is not None and c.png is None, c.key
        assert ElementTree.fromstring(c.svg).tag == "svg"
    html = render_html(report_doc, charts)
    assert "http://" not in html and "https://" not in html and "<script" not in html
    assert len(re.findall(r'<figure id="chart-[a-z_]+"><svg ', html)) == 5
    assert 'id="headline-energy"' in html and 'id="headline-co2e"' in html


def test_accuracy_chart_skips_with_reason(tmp_path: Path) -> None:
    svg, note = accuracy_chart(tmp_path / "absent.csv")
    assert svg is None and "wattgpu evaluate" in note
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("a,b\n1,2\n")
    svg, note = accuracy_chart(wrong)
    assert svg is None and "missing columns" in note


def test_gpu_mix_none_without_gpus(report_doc: ReportDocument) -> None:
    headline = report_doc.headline.model_copy(update={"gpus": {}})
    assert gpu_mix(report_doc.model_copy(update={"headline": headline})) is None


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_cli_report_json_and_what_if(scenario_file: Path) -> None:
    runner = CliRunner()
    base = runner.invoke(
        app, ["report", str(scenario_file), "--format", "json", "--pareto-points", "0"]
    )
    assert base.exit_code == 0, base.output
    data = json.loads(base.stdout)
    assert data["pareto"] is None and data["headline"]["estimated_energy_kwh"] > 0
    more = runner.invoke(
        app,
        [
            "report",
            str(scenario_file),
            "--format",
            "json",
            "--pareto-points",
            "0",
            "--set",
            "models[0].load.requests_per_s_by_period=[4.0, 1.0]",
        ],
    )
    assert more.exit_code == 0, more.output
    changed = json.loads(more.stdout)
    chat = [m for m in changed["models"] if m["name"] == "chat"][0]
    assert chat["requests"] == pytest.approx(5.0 * 360 * 3600)


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_cli_report_md_and_html_to_files(scenario_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    md = tmp_path / "r.md"
    result = runner.invoke(
        app, ["report", str(scenario_file), "-f", "md", "-o", str(md), "--pareto-points", "0"]
    )
    assert result.exit_code == 0, result.output
    assert md.read_text().startswith("# Estimated inference energy")
    html = tmp_path / "r.html"
    result = runner.invoke(
        app,
        [
            "report",
            str(scenario_file),
            "-f",
            "html",
            "-o",
            str(html),
            "--pareto-points",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    text = html.read_text()  # the accuracy chart from the checkout's docs/accuracy.predictions.csv
    assert text.startswith("<!DOCTYPE html>") and '<figure id="chart-accuracy"><svg ' in text


@pytest.mark.slow  # the Pareto front's own tests run by default; this is its CLI (~1.4 s)
def test_cli_pareto(scenario_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    chart = tmp_path / "front.png"
    result = runner.invoke(
        app, ["pareto", str(scenario_file), "--points", "3", "--chart", str(chart)]
    )
    assert result.exit_code == 0, result.output
    assert "facility kWh" in result.stdout and "chosen (cost)" in result.stdout
    assert chart.read_bytes().startswith(PNG_SIGNATURE)
    result = runner.invoke(app, ["pareto", str(scenario_file), "-n", "3", "-f", "json"])
    data = json.loads(result.stdout)
    costs = [p["cost_usd"] for p in data["points"]]
    energies = [p["facility_energy_kwh"] for p in data["points"]]
    assert costs == sorted(costs) and energies == sorted(energies, reverse=True)


@pytest.mark.slow  # 20 s: plans, reports and fronts of a bundled example, six ways
def test_a_saved_plans_front_over_its_kept_candidates_says_so(tmp_path: Path) -> None:
    """A plan saved with the default ``--candidates best`` re-solves its front over the
    candidates it keeps, which may miss the scenario's front (the 3-region disaggregated example
    of the user pass: min energy 137,702 kWh against 96,727); the report and ``pareto`` said
    nothing of it. Saved with ``--candidates all`` (or from the scenario) there is no note."""
    runner = CliRunner()
    scenario_file = Path("disagg-tight-sla")  # a bundled example: 29 of 102 candidates kept
    best, every = tmp_path / "best.json", tmp_path / "all.json"
    for out, kept in ((best, "best"), (every, "all")):
        args = ["plan", str(scenario_file), "-f", "json", "-o", str(out), "--candidates", kept]
        assert runner.invoke(app, args).exit_code == 0
    data = json.loads(best.read_text(encoding="utf-8"))
    assert data["candidate_counts"]["kept"] < data["candidate_counts"]["total"]

    def method(source: Path, command: str) -> str:
        args = [command, str(source), "-f", "json", *(["-n", "2"] if command == "pareto" else
                ["--pareto-points", "2"])]  # fmt: skip
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        return str((doc if command == "pareto" else doc["pareto"])["method"])

    for command in ("report", "pareto"):
        assert "--candidates all" in method(best, command)
        assert "--candidates all" not in method(every, command)
        assert "--candidates all" not in method(scenario_file, command)


def test_cli_report_bad_file(tmp_path: Path) -> None:
    from planner.cli.app import main

    with pytest.raises(SystemExit) as exc:
        main(["report", str(tmp_path / "missing.yaml")])
    assert exc.value.code == 1
