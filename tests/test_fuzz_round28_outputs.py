"""Fuzz round 28 (outputs): a regions plan's header economics, a profile plan's forecast grid
and the docs' ITL bound of the bundled paper example.

Each test below failed before its fix. ``wattgpu plan`` of a plan with regions printed the
top-level defaults as its economics (``PUE 1.25, electricity 0.2 $/kWh, grid 381 gCO2e/kWh``)
above a facility energy at the regions' own PUEs, where report and forecast state the fleet's
effective figures; the forecast of a single-site plan with an hourly grid profile gave its flat
factor, whose product with the facility kWh is not its carbon, and nothing in it said the carbon
came from a profile; docs/sweep.md gave the paper example's ITL upper bound as 188 ms where the
plan prints 189 ms.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.text import num
from tests.cli_runner import run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

REPO = Path(__file__).resolve().parent.parent
REGIONS = REPO / "tests" / "fixtures" / "regions.yaml"
EU = REPO / "scenarios" / "eu-power-cap-carbon.yaml"
#: The hourly grid profile the fuzzer gave eu-power-cap-carbon (DE-like, gCO2e/kWh).
PROFILE = [416, 411, 406, 401, 401, 406, 416, 406, 376, 336, 301, 281]
PROFILE += [276, 281, 306, 341, 381, 426, 446, 441, 431, 426, 421, 416]


def _json(*args: str) -> dict[str, Any]:
    result = run_cli(*args, "--format", "json")
    assert result.code == 0, result.err
    data: dict[str, Any] = json.loads(result.out)
    return data


def _economics(text: str) -> str:
    """The header's economics line of a table or Markdown plan (a wrapped table line joined)."""
    found = re.search(r"economics\**:?\s+(.*?)\n(?!\s{5,}\S)", text, re.S)
    assert found is not None, text
    return " ".join(found.group(1).split())


# --- #3: a regions plan's header states the fleet's effective economics ----------------------


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_a_regions_plan_header_states_the_effective_figures_of_report_and_forecast() -> None:
    fc = _json("report", str(REGIONS))["forecast"]
    assert fc["effective_site_figures"] is True
    want = (
        f"per region (effective fleet PUE {fc['pue']:.3g}, electricity "
        f"{fc['electricity_usd_per_kwh']:.3g} $/kWh, grid {fc['grid']['g_co2_per_kwh']:.3g} "
        "gCO2e/kWh), carbon price 90.0 $/t"
    )
    for fmt in ("table", "md"):
        result = run_cli("plan", str(REGIONS), "--format", fmt, "--wide")
        assert result.code == 0, result.err
        line = _economics(result.out)
        assert line == want, (fmt, line)
        assert "PUE 1.25" not in line and "0.2 $/kWh" not in line  # not the defaults
    # the effective PUE is the one the facility energy note implies
    plan = _json("plan", str(REGIONS))
    t = plan["totals"]
    assert math.isclose(t["facility_energy_kwh"] / t["energy_kwh"], fc["pue"], rel_tol=1e-9)


@pytest.mark.slow
def test_a_regions_plan_without_energy_calls_its_header_figures_defaults() -> None:
    result = run_cli("plan", str(REGIONS), "--set", "budget_usd=1", "--format", "md")
    assert "- **status**: infeasible" in result.out, result.err
    want = "per region (defaults PUE 1.25, electricity 0.2 $/kWh, grid 381 gCO2e/kWh)"
    assert _economics(result.out).startswith(want)


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_a_single_site_plan_header_is_unchanged() -> None:
    result = run_cli("plan", str(EU), "--format", "md")
    assert result.code == 0, result.err
    assert "- **economics**: PUE 1.25, electricity 0.2 $/kWh, grid 381 gCO2e/kWh, " in result.out
    assert "per region" not in result.out


# --- #4: a profile plan's forecast says so and reproduces its carbon -------------------------


@pytest.fixture(scope="module")
def hourly(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scenario = yaml.safe_load(EU.read_text(encoding="utf-8"))
    scenario["name"] = "eu-hourly"
    disclosure = scenario.setdefault("disclosure", {})
    disclosure["grid_profile_g_co2_per_kwh"] = PROFILE
    disclosure["grid_profile_source"] = "test"
    path = tmp_path_factory.mktemp("hourly") / "hourly.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False), encoding="utf-8")
    return path


def _reconciles(fc: dict[str, Any]) -> None:
    factor = fc["carbon_g_co2_per_kwh"]
    for key in ("horizon", "per_month", "per_year"):
        f = fc["total"][key]
        assert math.isclose(f["facility_energy_kwh"] * factor / 1000, f["carbon_kg"], rel_tol=1e-9)


@pytest.mark.slow  # plans two scenarios (2 s)
def test_a_profile_plans_forecast_flags_the_profile_and_reproduces_its_carbon(
    hourly: Path,
) -> None:
    fc = _json("report", str(hourly))["forecast"]
    assert list(fc)[-2:] == ["hourly_grid", "carbon_g_co2_per_kwh"]  # appended keys
    assert fc["hourly_grid"] is True and fc["effective_site_figures"] is False
    _reconciles(fc)
    horizon = fc["total"]["horizon"]
    flat = horizon["facility_energy_kwh"] * fc["grid"]["g_co2_per_kwh"] / 1000
    assert not math.isclose(flat, horizon["carbon_kg"], rel_tol=1e-3)  # the flat factor doesn't
    assert min(PROFILE) < fc["carbon_g_co2_per_kwh"] < max(PROFILE)
    # per period the carbon is the profile's value of that period
    for f, g in zip(fc["total"]["by_period"], PROFILE, strict=True):
        assert math.isclose(f["carbon_kg"], f["facility_energy_kwh"] * g / 1000, rel_tol=1e-9)


@pytest.mark.slow  # plans two scenarios (3 s)
def test_a_flat_plans_forecast_factor_is_its_grid_and_a_regions_one_its_effective_grid() -> None:
    for scenario in (str(EU), str(REGIONS)):
        fc = _json("report", scenario)["forecast"]
        assert fc["hourly_grid"] is (scenario == str(REGIONS))  # fr's grid is hourly
        assert math.isclose(fc["carbon_g_co2_per_kwh"], fc["grid"]["g_co2_per_kwh"], rel_tol=1e-9)
        _reconciles(fc)


# --- #5: the docs' ITL bound of the paper example is the plan's ------------------------------


def test_the_docs_itl_bound_of_the_paper_example_is_what_the_plan_prints() -> None:
    (flag,) = _json("plan", "paper-llama8b-low-load")["uncertainty_flags"]["flags"]
    printed = f"{num(1000 * flag['itl_s_hi_at_capacity'])} ms"
    docs = (REPO / "docs" / "sweep.md").read_text(encoding="utf-8")
    said = re.search(
        r"`paper-llama8b-low-load` plans an L4: flagged, ITL upper bound\s+(\S+ ms)", docs
    )
    assert said is not None, "docs/sweep.md no longer states the paper example's ITL bound"
    assert said.group(1) == printed
