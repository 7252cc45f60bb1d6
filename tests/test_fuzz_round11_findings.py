"""Findings of the valid-scenario fuzzer, round 11: plans with regions.

* The disclosure's hourly emissions charged the top-level hourly grid profile to every region's
  energy (5,602 kg against the plan's carbon_kg 1,865), and its location-based emissions were the
  hourly carbon instead of each region's flat average.
* The sweep's peak facility power was the largest region's, not the fleet's (regions added per
  period, as the plan's totals).
* ``diff`` did not name an allocation's region: an entry moved between regions read as the same
  allocation added and removed.
* The disclosure's P10/P90 of the hourly emissions, and with regions of the facility energy and
  the location-based emissions, scaled the fleet's GPU-energy band instead of the band of the
  figure's own quantity (the report's uncertainty section), about 0.5 % apart; the report said
  the hourly profile was "used for the plan's carbon" though a region with its own grid keeps it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from statistics import NormalDist
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


def _report(folder: Path, plan: Path) -> dict[str, Any]:
    out = folder / "r.json"
    result = run_cli("report", str(plan), "-f", "json", "-o", str(out), "--pareto-points", "0")
    assert result.code == 0, result.err
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def _fields(report: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = report["disclosure"]["fields"]
    return fields


def test_disclosure_emissions_with_regions_are_each_region_s_own(
    tmp_path: Path, planned: tuple[Path, dict[str, Any]]
) -> None:
    path, plan = planned
    report = _report(tmp_path, path)
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


def test_disclosure_ranges_follow_the_band_of_each_figure_s_own_quantity(
    tmp_path: Path, planned: tuple[Path, dict[str, Any]]
) -> None:
    path, plan = planned
    report = _report(tmp_path, path)
    fields, bands = _fields(report), report["uncertainty"]
    k = NormalDist().inv_cdf(0.9) / NormalDist().inv_cdf(0.95)

    def scaled(band: dict[str, float]) -> tuple[float, float]:
        mid = band["median"]
        return mid - (mid - band["low"]) * k, mid + (band["high"] - mid) * k

    def check(field: str, p10: float, p90: float) -> None:
        got = fields[field]
        assert math.isclose(got["p10"], p10, rel_tol=1e-9), (field, got["p10"], p10)
        assert math.isclose(got["p90"], p90, rel_tol=1e-9), (field, got["p90"], p90)

    check("energy_gpu_kwh", *scaled(bands["total"]["energy_kwh"]))
    check("energy_facility_kwh", *scaled(bands["total"]["facility_energy_kwh"]))
    check("emissions_hourly_kg_co2e", *scaled(bands["total"]["carbon_kg"]))
    grid = {r["name"]: r["grid_g_co2_per_kwh"] for r in plan["regions"]}
    region = {a["name"]: a["region"] for a in plan["allocations"]}
    p10 = p90 = 0.0
    for name, figures in bands["models"].items():  # each entry on its region's flat grid
        low, high = scaled(figures["facility_energy_kwh"])
        p10 += low * grid[region[name]] / 1000
        p90 += high * grid[region[name]] / 1000
    check("emissions_location_kg_co2e", p10, p90)
    # regions at different PUEs and an hourly grid: the bands really differ from GPU energy's
    gpu = fields["energy_gpu_kwh"]
    assert not math.isclose(
        fields["emissions_hourly_kg_co2e"]["p10"] / fields["emissions_hourly_kg_co2e"]["value"],
        gpu["p10"] / gpu["value"],
        rel_tol=1e-4,
    )


@pytest.mark.slow
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


@pytest.mark.slow
def test_diff_names_the_region_of_a_moved_entry(
    tmp_path: Path, planned: tuple[Path, dict[str, Any]]
) -> None:
    before, _ = planned
    moved, after = plan_text(tmp_path, _scenario("de"))
    assert moved.code == 0, moved.err
    result = run_cli("diff", str(before), str(after))
    assert result.code == 0, result.err
    assert "+ legal in de on" in result.out and "- legal in fr on" in result.out, result.out


def test_the_report_says_which_regions_the_hourly_profile_is_the_carbon_of(
    tmp_path: Path, planned: tuple[Path, dict[str, Any]]
) -> None:
    path, _ = planned
    out = tmp_path / "r.md"
    result = run_cli("report", str(path), "-o", str(out), "--pareto-points", "0")
    assert result.code == 0, result.err
    (line,) = [x for x in out.read_text().splitlines() if "hourly profile" in x]
    assert line.endswith("used for the carbon of region de."), line  # fr has its own grid
