"""Fuzz round 31 (outputs): numbers the user gave keep their digits in the text, Markdown and
HTML forms (JSON, SPDX and CycloneDX were exact already).

A 12.25 h horizon read "over 12.2 h" and a PUE of 1.125 "pue 1.12 ratio user-supplied" in the
disclosure table, beside "PUE 1.125" on the same page; the plan table's horizon and limits
rounded the same way. Computed figures keep their rounding.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_runner import run_cli

SETS = ("--set", "pue=1.125", "--set", "horizon_hours=12.25", "--set", "power_cap_kw=2.59219")


def test_user_inputs_keep_their_digits_in_plan_and_report(tmp_path: Path) -> None:
    table = run_cli("plan", "paper-llama8b-low-load", *SETS)
    assert table.code == 0, table.err
    assert "12.25 h in 1 period of 12.25 h" in table.out
    assert "power cap 2.59219 kW" in table.out
    plan = tmp_path / "plan.json"
    assert run_cli("plan", "paper-llama8b-low-load", *SETS, "-f", "json", "-o", str(plan)).code == 0
    md = run_cli("report", str(plan), "-f", "md", "--pareto-points", "0")
    assert md.code == 0, md.err
    assert "| quantity | over 12.25 h |" in md.out
    assert "| reporting_window_hours | 12.25 | h | user-supplied |" in md.out
    assert "| pue | 1.125 | ratio | user-supplied |" in md.out
    assert "12.2 h" not in md.out and "| 1.12 |" not in md.out


def test_the_report_says_what_each_baseline_is_and_why_it_has_no_plan(tmp_path: Path) -> None:
    """The bundled default scenario's three naive fleets are infeasible: the report showed
    "no, no, no" where the plan JSON says why (fuzz round 31)."""
    plan = tmp_path / "plan.json"
    assert run_cli("plan", "-f", "json", "-o", str(plan)).code == 0
    report = tmp_path / "report.json"
    done = run_cli("report", str(plan), "-f", "json", "-o", str(report), "--pareto-points", "0")
    assert done.code == 0, done.err
    baselines = json.loads(report.read_text(encoding="utf-8"))["baselines"]
    assert list(baselines[0])[-1] == "reason"  # the new key comes last
    h100 = next(b for b in baselines if b["name"] == "h100")
    assert not h100["feasible"] and h100["reason"].startswith("inventory: H100-SXM5-80GB needs")
    md = run_cli("report", str(plan), "-f", "md", "--pareto-points", "0")
    assert f"h100: every model on H100-SXM5-80GB — no plan: {h100['reason']}" in md.out.replace(
        "\\_", "_"
    )


def test_sla_probability_without_choose_robust_is_refused() -> None:
    """Only ``--choose robust`` reads ``--sla-probability``; without it the option was ignored
    and the sweep exited 0 (fuzz round 31). A malformed command line: exit 2, before any work."""
    result = run_cli("sweep", "paper-llama8b-low-load", "--draws", "2", "--sla-probability", "0.9")
    assert result.code == 2
    assert "--sla-probability" in result.err and "only --choose robust reads it" in result.err


HOURLY_UNUSED = """name: hourly-unused
region: DE
electricity_usd_per_kwh: 0.2
regions:
  de: {}
  fr:
    region: FR
    grid_profile_g_co2_per_kwh: [60, 50, 40, 50, 60, 70, 80, 90, 80, 70, 60, 50,
                                 40, 50, 60, 70, 80, 90, 80, 70, 60, 50, 40, 50]
gpus: {L4: {}}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    regions: [de]
    load:
      requests_per_s: 1
      input_tokens: 512
      output_tokens: 128
      daily_profile: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1, 1, 1, 1, 1, 1,
                      1, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5]
    sla: {itl_ms: 100}
"""


def test_an_hourly_grid_no_deployment_uses_does_not_label_the_carbon_hourly(
    tmp_path: Path,
) -> None:
    """Every deployment is in de (flat grid); fr, unused, has an hourly profile. The per-model
    CO2e column said "hourly grid" while the forecast said the grid was not hourly."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(HOURLY_UNUSED, encoding="utf-8")
    plan = tmp_path / "plan.json"
    assert run_cli("plan", str(scenario), "-f", "json", "-o", str(plan)).code == 0
    md = run_cli("report", str(plan), "-f", "md", "--pareto-points", "0")
    assert md.code == 0, md.err
    assert "| CO2e kg (location-based) |" in md.out and "(hourly grid)" not in md.out


def test_a_grid_only_sweep_states_its_own_method(tmp_path: Path) -> None:
    """``--draws 0`` printed the Monte-Carlo method ("per draw the ITL, power and TTFT curves
    are rescaled") though nothing was drawn (fuzz round 31)."""
    out = tmp_path / "sweep.json"
    result = run_cli(
        "sweep", "paper-llama8b-low-load", "--draws", "0",
        "--set", "sweep.grid.budget_usd=[195000, 250000]",
        "--set", "sweep.grid.load_growth={start: 1.0, stop: 2.0, steps: 2}",
        "-f", "json", "-o", str(out),
    )  # fmt: skip
    assert result.code == 0, result.err
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["method"].startswith("What-if grid without uncertainty draws")
    assert "Monte-Carlo" not in doc["method"]


def test_a_missing_json_and_a_bad_accuracy_csv_say_what_to_give(tmp_path: Path) -> None:
    """``report nonexist.json`` pointed at the bundled scenarios, and a bad --accuracy CSV's
    error did not name the option (fuzz round 31)."""
    missing = run_cli("report", "nonexist.json")
    assert missing.code == 1
    assert "nonexist.json: no such file — give a scenario file, or (report, pareto) a saved " in (
        missing.err
    )
    csv = tmp_path / "acc.csv"
    csv.write_text("a,b\n1,2\n", encoding="utf-8")
    bad = run_cli("report", "paper-llama8b-low-load", "-f", "html", "--accuracy", str(csv))
    assert bad.code == 1 and bad.err.startswith(f"error: --accuracy: {csv}: missing columns")


ZERO = """name: zero-load
region: US
electricity_usd_per_kwh: 0.12
gpus: {L4: {available: 8}}
models:
  - name: none
    model: meta-llama/Llama-3.2-3B-Instruct
    load: {requests_per_s: 0, input_tokens: 512, output_tokens: 128}
    sla: {itl_ms: 100}
  - name: busy
    model: meta-llama/Llama-3.2-3B-Instruct
    load: {requests_per_s: 1, input_tokens: 512, output_tokens: 128}
    sla: {itl_ms: 100}
"""


def test_an_entry_with_nothing_deployed_is_not_said_to_be_in_domain(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(ZERO, encoding="utf-8")
    md = run_cli("report", str(scenario), "-f", "md", "--pareto-points", "0")
    assert md.code == 0, md.err
    lines = md.out.splitlines()
    start = next(i for i, line in enumerate(lines) if "| in domain |" in line)
    header = lines[start].split(" | ")
    table = [line.split(" | ") for line in lines[start + 2 :] if line.startswith("|")][:2]
    cells = {row[0]: row[header.index("in domain")] for row in table}
    # L4 (Ada) is outside the power training domain: the deployed entry says so, yes or NO
    assert cells["| none"] == "—" and cells["| busy"] in ("yes", "NO"), cells


TWO_SITES = """name: two-sites
region: DE
electricity_usd_per_kwh: 0.2
regions:
  de: {}
  fr: {region: FR, gpus: {L4: {usd_per_hour: 0.3}}}
gpus: {L4: {}}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s: 1, input_tokens: 512, output_tokens: 128}
    sla: {itl_ms: 100}
"""


def test_the_power_chart_legend_names_each_candidate_s_region(tmp_path: Path) -> None:
    """A plan with regions listed each GPU and TP twice in one legend, one per region, with no
    region named (fuzz round 31)."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(TWO_SITES, encoding="utf-8")
    html = run_cli("report", str(scenario), "-f", "html", "--pareto-points", "0")
    assert html.code == 0, html.err
    assert "L4 TP1 in de" in html.out and "L4 TP1 in fr" in html.out
