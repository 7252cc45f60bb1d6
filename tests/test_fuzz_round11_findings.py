"""Findings of the valid-scenario fuzzer, round 11: plans with regions.

* The disclosure's hourly emissions charged the top-level hourly grid profile to every region's
  energy (5,602 kg against the plan's carbon_kg 1,865), and its location-based emissions were the
  hourly carbon instead of each region's flat average.
* The sweep's peak facility power was the largest region's, not the fleet's (regions added per
  period, as the plan's totals).
* ``diff`` did not name an allocation's region: an entry moved between regions read as the same
  allocation added and removed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import plan_text, run_cli

REGIONS = """\
name: regions-hourly
region: DE
pue: 1.25
electricity_usd_per_kwh: 0.20
objective: {minimize: cost}
disclosure:
  grid_profile_g_co2_per_kwh: [416, 411, 406, 401, 401, 406, 416, 406, 376, 336, 301, 281,
                               276, 281, 306, 341, 381, 426, 446, 441, 431, 426, 421, 416]
  grid_profile_source: illustrative
gpus:
  L40S: {}
  H100-SXM5-80GB: {}
regions:
  de: {}
  fr: {region: FR, pue: 1.4}
models:
  - name: hr
    model: meta-llama/Llama-3.1-8B-Instruct
    regions: [de]
    load:
      requests_per_s: 2.0
      input_tokens: 1024
      output_tokens: 256
      daily_profile: &p [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    sla: {itl_ms: 60}
  - name: legal
    model: Qwen/Qwen2.5-32B-Instruct
    regions: [{legal}]
    load: {requests_per_s: 0.5, input_tokens: 6000, output_tokens: 512, daily_profile: *p}
    sla: {itl_ms: 80}
"""


def _scenario(legal: str = "fr") -> str:
    return REGIONS.replace("{legal}", legal)


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("regions")
    result, out = plan_text(folder, _scenario())
    assert result.code == 0, result.err
    return out, json.loads(out.read_text())


def _fields(report: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = report["disclosure"]["fields"]
    return fields


def test_disclosure_emissions_with_regions_are_each_region_s_own(
    tmp_path: Path, planned: tuple[Path, dict[str, Any]]
) -> None:
    path, plan = planned
    out = tmp_path / "r.json"
    result = run_cli("report", str(path), "-f", "json", "-o", str(out), "--pareto-points", "0")
    assert result.code == 0, result.err
    report = json.loads(out.read_text())
    fields = _fields(report)
    assert math.isclose(
        fields["emissions_hourly_kg_co2e"]["value"], plan["totals"]["carbon_kg"], rel_tol=1e-9
    )
    flat = sum(
        r["totals"]["facility_energy_kwh"] * r["grid_g_co2_per_kwh"] / 1000 for r in plan["regions"]
    )
    assert math.isclose(fields["emissions_location_kg_co2e"]["value"], flat, rel_tol=1e-9)
    rows = report["disclosure"]["hourly"]
    assert math.isclose(
        sum(r["emissions_kg_co2e"] for r in rows), plan["totals"]["carbon_kg"], rel_tol=1e-9
    )


def test_sweep_peak_power_with_regions_is_the_fleet_s(
    tmp_path: Path, planned: tuple[Path, dict[str, Any]]
) -> None:
    _, plan = planned
    path = tmp_path / "s.yaml"
    path.write_text(_scenario())
    out = tmp_path / "sweep.json"
    result = run_cli("sweep", str(path), "--draws", "2", "-f", "json", "-o", str(out))
    assert result.code == 0, result.err
    base = json.loads(out.read_text())["base_outcome"]
    peak = plan["totals"]["peak_facility_power_kw"]
    assert math.isclose(base["peak_facility_power_kw"], peak, rel_tol=1e-6), (base, peak)
    assert peak > max(r["totals"]["peak_facility_power_kw"] for r in plan["regions"])


def test_diff_names_the_region_of_a_moved_entry(
    tmp_path: Path, planned: tuple[Path, dict[str, Any]]
) -> None:
    before, _ = planned
    moved, after = plan_text(tmp_path, _scenario("de"))
    assert moved.code == 0, moved.err
    result = run_cli("diff", str(before), str(after))
    assert result.code == 0, result.err
    assert "+ legal in de on" in result.out and "- legal in fr on" in result.out, result.out
