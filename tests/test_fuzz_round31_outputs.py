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
