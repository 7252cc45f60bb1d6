"""Fuzz round 22c: what ``plan -f md`` and ``report`` print.

Each test failed before its fix: the Markdown plan's totals row escaped its own bold markers
(``| \\*\\*total\\*\\* |``, shown as literal asterisks); a report number just under a power of
ten rounded up into scientific notation (999.6 kWh printed as ``1e+03``); the text report's
disclosure table put each "not applicable" reason in the right-aligned value column, pushing
every number about 130 columns right."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.report.blocks import num
from tests.cli_runner import run_cli


@pytest.mark.slow
def test_the_markdown_totals_row_is_bold_not_escaped() -> None:
    result = run_cli("plan", "paper-llama8b-low-load", "-f", "md")
    assert result.code == 0, result.err
    total = next(line for line in result.out.splitlines() if "total" in line)
    assert total.startswith("| **total** |") and "\\*" not in total


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [(999.6138702128383, 3, "1,000"), (99.97, 2, "100"), (9.9996, 4, "10"), (851.2, 3, "851")],
)
def test_a_number_that_rounds_up_to_a_power_of_ten_is_written_whole(
    value: float, digits: int, text: str
) -> None:
    assert num(value, digits) == text


@pytest.mark.slow
def test_the_text_disclosure_keeps_its_value_column_narrow(tmp_path: Path) -> None:
    plan, report = tmp_path / "p.json", tmp_path / "r.txt"
    assert run_cli("plan", "paper-llama8b-low-load", "-f", "json", "-o", str(plan)).code == 0
    result = run_cli("report", str(plan), "-f", "text", "--pareto-points", "0", "-o", str(report))
    assert result.code == 0, result.err
    lines = report.read_text(encoding="utf-8").splitlines()
    start = next(line for line in lines if line.startswith("reporting_window_start"))
    hours = next(line for line in lines if line.startswith("reporting_window_hours"))
    assert "not applicable: no reporting_start given" in start
    assert hours.index("8,760") < 60  # was at column 150
