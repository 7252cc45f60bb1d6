"""Fuzz round 18a: what the docs promise, held to the code.

Each test failed before its fix: ``validate`` said ok to a ``sweep:`` block that ``sweep``
refuses (draws or grid points above the limits, a grid name that is not a model entry or GPU of
the scenario); ``report --trust`` of a plan whose allocation and total were both edited warned
about the allocation only and kept the edited total in the JSON report's copy of the plan
(docs/cli.md, "Saved plans are checked"); ``predict`` had no ``-o``/``-f`` (docs/cli.md,
"Output files": ``--output``/``-o`` of every command) and an unknown ``--format`` exited 1, not
2 with the usage (docs/cli.md, "Exit codes")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bundled_runs import BundledRuns
from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def saved_plan(tmp_path_factory: pytest.TempPathFactory, bundled: BundledRuns) -> Path:
    out = tmp_path_factory.mktemp("plan") / "plan.json"
    out.write_text(bundled.plan_json("paper-llama8b-low-load"), encoding="utf-8")
    return out


def test_validate_names_every_problem_of_the_sweep_block(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    text = (ROOT / "scenarios" / "paper-llama8b-low-load.yaml").read_text(encoding="utf-8")
    block = "sweep:\n  draws: 100001\n  grid:\n    gpu_available: {L5: [0, 1]}\n"
    block += "    model_load: {nosuch: [1, 2]}\n"
    scenario.write_text(text + block, encoding="utf-8")
    result = run_cli("validate", str(scenario))
    assert result.code == 1, result.out
    lines = result.err.strip().splitlines()
    assert len(lines) == 3, result.err
    assert any("sweep.draws: 100,001 draws is above the limit" in line for line in lines)
    assert any("sweep.grid.model_load.nosuch: no model entry named 'nosuch'" in x for x in lines)
    assert any("sweep.grid.gpu_available.L5: GPU 'L5'" in line and "L4" in line for line in lines)
    assert all(line.startswith(f"error: {scenario}: sweep.") for line in lines)
    good = "sweep:\n  draws: 10\n  grid:\n    gpu_available: {L4: [0, 1]}\n"
    scenario.write_text(text + good, encoding="utf-8")
    fixed = run_cli("validate", str(scenario))
    assert fixed.code == 0 and ": ok (" in fixed.out, fixed.err


def test_validate_names_a_grid_too_large(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    text = (ROOT / "scenarios" / "paper-llama8b-low-load.yaml").read_text(encoding="utf-8")
    axis = "{start: 0.1, stop: 10, steps: 101}"
    block = f"sweep:\n  grid:\n    load_growth: {axis}\n    electricity_usd_per_kwh: {axis}\n"
    scenario.write_text(text + block, encoding="utf-8")
    result = run_cli("validate", str(scenario))
    assert result.code == 1 and "sweep.grid: " in result.err, result.err
    assert "grid points is above the limit" in result.err


def test_trust_warns_about_every_edited_field_and_reports_recomputed_totals(
    tmp_path: Path, saved_plan: Path
) -> None:
    plan = json.loads(saved_plan.read_text(encoding="utf-8"))
    true_kwh = plan["totals"]["energy_kwh"]
    plan["totals"]["energy_kwh"] = true_kwh * 1.1
    plan["allocations"][0]["itl_s"] *= 2
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(plan), encoding="utf-8")
    out = tmp_path / "report.json"
    result = run_cli("report", str(edited), "-f", "json", "-o", str(out), "--trust",
                     "--pareto-points", "0")  # fmt: skip
    assert result.code == 0, result.err
    warnings = [line for line in result.err.splitlines() if line.startswith("warning:")]
    assert any("allocations[0].itl_s" in w for w in warnings), result.err
    assert sum("totals.energy_kwh" in w for w in warnings) == 1, result.err
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["plan"]["totals"]["energy_kwh"] == pytest.approx(true_kwh, rel=1e-9)
    assert report["plan"]["allocations"][0]["itl_s"] == pytest.approx(
        plan["allocations"][0]["itl_s"] / 2, rel=1e-9
    )


def test_trust_of_an_unedited_plan_warns_about_nothing(tmp_path: Path, saved_plan: Path) -> None:
    out = tmp_path / "report.json"
    result = run_cli("report", str(saved_plan), "-f", "json", "-o", str(out), "--trust",
                     "--pareto-points", "0")  # fmt: skip
    assert result.code == 0 and "warning:" not in result.err, result.err


@pytest.mark.slow
def test_predict_takes_short_options_and_refuses_an_unknown_format(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("model,gpu\nmeta-llama/Llama-3.1-8B-Instruct,A30\n", encoding="utf-8")
    out = tmp_path / "p.csv"
    result = run_cli("predict", "--input", str(rows), "-o", str(out))
    assert result.code == 0 and out.read_text(encoding="utf-8").startswith("model,gpu,"), result
    single = ("predict", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "A30")
    shown = run_cli(*single, "-f", "json")
    assert shown.code == 0 and json.loads(shown.out)["gpu"] == "A30", shown.err
    bad = run_cli(*single, "--format", "xml")
    assert bad.code == 2 and "Invalid value for '--format'" in bad.err, bad.err
    assert "unknown 'xml'; use one of table, json" in bad.err
