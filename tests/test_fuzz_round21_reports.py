"""Fuzz round 21b: what ``report`` and ``diff`` print.

Each test failed before its fix: the md, html and text reports left out the TTFT SLA and the
minimum replicas the JSON report carries; a report of a plan with no fleet printed 0 kWh, 0 $
and every entry on 0 GPUs as if the load were served for nothing; ``diff`` printed large
changes in scientific notation (``+1.499e+05``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.analysis.diff import Change
from tests.cli_runner import run_cli


@pytest.mark.slow
def test_every_report_format_gives_the_ttft_sla_and_the_minimum_replicas(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    assert run_cli("plan", "enterprise-fleet", "-f", "json", "-o", str(plan)).code == 0
    for fmt in ("md", "text", "html"):
        out = tmp_path / f"report.{fmt}"
        result = run_cli("report", str(plan), "-f", fmt, "--pareto-points", "0", "-o", str(out))
        assert result.code == 0, result.err
        text = out.read_text(encoding="utf-8")
        assert "TTFT SLA ms" in text and "min replicas" in text, fmt
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    # support-bot: ITL 50 ms, TTFT 1 s, two replicas at least; doc-summarizer: no TTFT SLA
    assert "| support-bot | bf16 | 2.16 | 4 | 768 | 256 | 50 | 1,000 | 2 |" in md
    assert "| doc-summarizer | bf16 | 0.541 | 1 | 4,096 | 384 | 100 | — | 0 |" in md


@pytest.mark.slow
def test_a_report_of_a_plan_with_no_fleet_gives_no_zero_estimates(tmp_path: Path) -> None:
    plan = tmp_path / "infeasible.json"
    planned = run_cli(
        "plan", "eu-power-cap-carbon", "--set", "power_cap_kw=1", "-f", "json", "-o", str(plan)
    )
    assert planned.code == 1 and plan.is_file()
    for fmt in ("md", "text", "html"):
        out = tmp_path / f"report.{fmt}"
        result = run_cli("report", str(plan), "-f", fmt, "--pareto-points", "0", "-o", str(out))
        assert result.code == 0, result.err
        text = out.read_text(encoding="utf-8")
        assert "No fleet was planned (status infeasible)" in text, fmt
        assert "GPU energy (kWh)" not in text and "GPUs: none (0 in total)" not in text, fmt
        assert "Per model deployment" not in text, fmt
        assert "power cap: the load needs at least" in text, fmt  # the reason stays


def test_diff_prints_large_numbers_in_whole_units_never_in_scientific_notation() -> None:
    assert Change("totals.cost_usd", 314_456.2, 464_386.4).line() == (
        "totals.cost_usd: 314,456 -> 464,386 (+149,930, +47.7 %)"
    )
    assert Change("totals.cost_usd", 898_350.0, 1_214_120.0).line() == (
        "totals.cost_usd: 898,350 -> 1,214,120 (+315,770, +35.1 %)"
    )
    assert Change("x", [1.5e7, 2.0], [1.5e7, 3.0]).line() == (
        "x: [15,000,000, 2] -> [15,000,000, 3]"
    )
    assert Change("itl_s", 0.0123456789, 0.0234).line() == (
        "itl_s: 0.0123457 -> 0.0234 (+0.01105, +89.5 %)"
    )
    for line in (Change("a", 1e12, -3e12).line(), Change("b", 7, 9_000_000).line()):
        assert "e+" not in line, line
