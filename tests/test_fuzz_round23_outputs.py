"""Round-23 findings on the plan views.

Before: a plan whose model entries all have no load and no ``min_replicas`` printed no
allocations section at all (beside planned entries such an entry has its "no load" row), and
the regions tables labelled CO2e ``CO2 kg`` where every other table says ``CO2e kg``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_runner import run_cli

ZERO = ("--set", "models[0].load.requests_per_s=0", "--set", "models[0].min_replicas=0")


@pytest.mark.parametrize("fmt", ["table", "md"])
def test_a_plan_of_entries_without_load_still_lists_them(fmt: str) -> None:
    result = run_cli("plan", "paper-llama8b-low-load", *ZERO, "-f", fmt)
    assert result.code == 0, result.err
    allocations = result.out.split("allocations", 1)[1]
    assert "chat-8b" in allocations.split("savings vs baselines", 1)[0]
    assert "GPUs: none" in " ".join(allocations.split())


@pytest.mark.slow  # plans a three-region scenario: 2 s
def test_the_plan_regions_table_labels_co2e(tmp_path: Path) -> None:
    from tests.test_fuzz_round16_reports import REGIONS

    scenario = tmp_path / "regions.yaml"
    scenario.write_text(REGIONS, encoding="utf-8")
    result = run_cli("plan", str(scenario), "-f", "md")
    assert result.code == 0, result.err
    regions = result.out.split("## regions", 1)[1].split("\n## ", 1)[0]
    assert "| region | PUE |" in regions and "| cost $ | CO2e kg |" in regions
    assert "CO2 kg" not in result.out
