"""Fuzz round 20g: saved plans given to pareto, diff and report.

Each test failed before its fix: a saved plan's Pareto front lost its minimum-energy end (the
plan file kept an H100 chosen on a linear power estimate over the L4 TP 8 that uses 17 % less
energy on its curves); an infeasible plan written by ``wattgpu plan`` was refused by diff,
report and pareto as "edited or damaged"; ``report --sweep`` attached the SLA probabilities of
the sweep of another version of the scenario (same name and fleet, another load) without a
word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import plan_text, run_cli

#: Slow: every test runs compare, plan, pareto or sweep end to end (about 0.3-1.4 s each); the
#: default run keeps the faster checks of the same code (tests/test_cli_plan.py, test_flags.py).
pytestmark = [pytest.mark.usefixtures("cached_predictor"), pytest.mark.slow]

M3 = """name: m3
horizon_hours: 720
grid_g_co2_per_kwh: 369
pue: 1.3
electricity_usd_per_kwh: 0.12
objective: {minimize: cost}
engine: vllm
precision: bf16
gpus: {L4: {}, A30: {}, H100-SXM5-80GB: {}}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s: 6, input_tokens: 1024, output_tokens: 256}
    sla: {itl_ms: 60}
"""


def _ends(*args: str) -> tuple[float, float]:
    result = run_cli("pareto", *args, "-f", "json")
    assert result.code == 0, result.err
    points = json.loads(result.out)["points"]
    return min(p["cost_usd"] for p in points), min(p["facility_energy_kwh"] for p in points)


def test_a_saved_plans_front_keeps_its_ends_when_each_is_one_option(tmp_path: Path) -> None:
    result, saved = plan_text(tmp_path, M3)
    assert result.code == 0, result.err
    scenario = tmp_path / "scenario.yaml"
    assert _ends(str(saved)) == pytest.approx(_ends(str(scenario)), rel=1e-9)


def test_an_infeasible_plan_is_diffed_and_reported(tmp_path: Path) -> None:
    ok = tmp_path / "a.json"
    bad = tmp_path / "b.json"
    assert run_cli("plan", "paper-llama8b-low-load", "-f", "json", "-o", str(ok)).code == 0
    args = ("--set", "budget_usd=100", "-f", "json", "-o", str(bad))
    assert run_cli("plan", "paper-llama8b-low-load", *args).code == 1
    diff = run_cli("diff", str(ok), str(bad))
    assert diff.code == 0, diff.err
    assert "status: optimal -> infeasible" in diff.out
    report = run_cli("report", str(bad), "-f", "md", "-o", str(tmp_path / "b.md"))
    assert report.code == 0, report.err


def test_a_sweep_of_another_version_of_the_scenario_is_refused(tmp_path: Path) -> None:
    sweep = tmp_path / "s.json"
    args = ("--draws", "3", "-f", "json", "-o", str(sweep))
    assert run_cli("sweep", "paper-llama8b-low-load", *args).code == 0
    other = tmp_path / "p.json"
    load = ("--set", "models[0].load.requests_per_s=0.1", "-f", "json", "-o", str(other))
    assert run_cli("plan", "paper-llama8b-low-load", *load).code == 0
    out = tmp_path / "r.md"
    result = run_cli("report", str(other), "--sweep", str(sweep), "-o", str(out))
    assert result.code == 0, result.err
    assert "the sweep's base plan is not this plan" in result.err
    flags = out.read_text(encoding="utf-8").split("## Uncertainty flags", 1)[1].split("\n## ")[0]
    assert "P(SLA met)" not in flags
    same = tmp_path / "q.json"
    assert run_cli("plan", "paper-llama8b-low-load", "-f", "json", "-o", str(same)).code == 0
    fine = run_cli("report", str(same), "--sweep", str(sweep), "-o", str(tmp_path / "q.md"))
    assert fine.code == 0, fine.err
