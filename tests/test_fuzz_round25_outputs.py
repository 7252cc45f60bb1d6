"""Fuzz round 25 (outputs): the sweep's grid tornado, the report's assumptions, over-long integers
in saved files and the plan diff's schema.

Each test below failed before its fix. A grid bar of the sweep's tornado averaged each end of an
axis over whichever grid points had a plan, so an infeasible point at one end put the other
axes' effect into the bar (a budget that changes no plan showed the cost of a higher load
growth), and the report's check of the bar repeated the same mean; the report's Assumptions
stated neither the power cap nor the budget in md, text or html, and for a plan with regions
its JSON assumptions and the forecast header stated the scenario's top-level PUE, grid and
price, from which facility kWh × grid did not give the reported carbon; a saved plan or sweep
holding a 5,000-digit integer was refused with Python's own message (cut mid-word, advising
``sys.set_int_max_str_digits()``) naming no field; ``wattgpu diff -f json`` had no schema.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from planner.documents import schema_text
from tests.bundled_runs import BundledRuns
from tests.cli_runner import Result, one_error_line, plan_text, run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

REPO = Path(__file__).resolve().parent.parent
CAPPED = "eu-power-cap-carbon"  # 3.9 kW facility power cap, 250,000 $ budget
GRID = ("sweep.grid.load_growth=[1.0,1.2]", "sweep.grid.budget_usd=[200000,300000]")
BUDGET_BAR = "grid budget_usd 200000 → 300000"
LOAD_BAR = "grid load_growth 1 → 1.2"


def _saved(bundled: BundledRuns, folder: Path, name: str = CAPPED) -> Path:
    path = folder / f"plan-{name}.json"
    path.write_text(bundled.plan_json(name), encoding="utf-8")
    return path


def _report(plan: Path, *args: str) -> Result:
    return run_cli("report", str(plan), "--pareto-points", "0", *args)


# --- F1: a grid bar compares the points matched at both ends --------------------------------


@pytest.fixture(scope="module")
def swept(
    tmp_path_factory: pytest.TempPathFactory, module_cached_predictor: None, bundled: BundledRuns
) -> Path:
    """``plan.json`` of the capped scenario and ``sweep.json``: 8 draws (a summary, no draw
    bars) and a 2 × 2 grid whose point (load growth 1.2, budget 200,000 $) has no plan."""
    where = tmp_path_factory.mktemp("round25_sweep")
    (where / "plan.json").write_text(bundled.plan_json(CAPPED), encoding="utf-8")
    args = ("--draws", "8", "--seed", "1", "--workers", "1", "-f", "json")
    grid = [x for g in GRID for x in ("--set", g)]
    result = run_cli("sweep", CAPPED, *args, *grid, "-o", str(where / "sweep.json"))
    assert result.code == 0, result.err
    return where


def _sweep(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "sweep.json").read_text(encoding="utf-8"))
    return data


def _bars(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["factor"]: b for b in data["summary"]["tornado"] if b["source"] == "grid"}


def _cost(data: dict[str, Any], load_growth: float, budget: float) -> float | None:
    for r in data["grid"]:
        if r["point"] == {"load_growth": load_growth, "budget_usd": budget}:
            return None if r["optimal"] is None else float(r["optimal"]["cost_usd"])
    raise AssertionError((load_growth, budget))


@pytest.mark.slow
def test_a_grid_bar_compares_the_points_matched_at_both_ends(swept: Path) -> None:
    data = _sweep(swept)
    assert _cost(data, 1.2, 200000.0) is None  # infeasible: the budget is too small for it
    same = _cost(data, 1.0, 300000.0)
    assert same is not None and _cost(data, 1.0, 200000.0) == pytest.approx(same)
    bars = _bars(data)
    budget = bars[BUDGET_BAR]
    # only load growth 1.0 has a plan at both budgets: the budget changes nothing there
    assert budget["low_cost_usd"] == pytest.approx(same)
    assert budget["high_cost_usd"] == pytest.approx(same)
    assert budget["swing_usd"] == pytest.approx(0.0, abs=1e-6)
    assert budget["points_left_out"] == 2  # both points of load growth 1.2
    load = bars[LOAD_BAR]  # only budget 300,000 $ has a plan at both load growths
    assert load["low_cost_usd"] == pytest.approx(same)
    assert load["high_cost_usd"] == pytest.approx(_cost(data, 1.2, 300000.0))
    assert load["points_left_out"] == 2
    draw_bars = [b for b in data["summary"]["tornado"] if b["source"] == "draws"]
    assert all("points_left_out" not in b for b in draw_bars)


@pytest.mark.slow
def test_the_report_says_which_grid_points_a_bar_left_out(swept: Path) -> None:
    result = _report(swept / "plan.json", "--sweep", str(swept / "sweep.json"), "-f", "md")
    assert result.code == 0, result.err
    assert f"| {BUDGET_BAR} (2 grid points at the ends left out: no matched plan) |" in result.out
    assert "over the grid points matched at both ends" in result.out


def _edited(folder: Path, tmp_path: Path, data: dict[str, Any]) -> Path:
    out = tmp_path / "edited-sweep.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def _old_bar(data: dict[str, Any]) -> int:
    """The budget bar as it was computed before the pairing (each end over every point with a
    plan); its index."""
    i = next(k for k, b in enumerate(data["summary"]["tornado"]) if b["factor"] == BUDGET_BAR)
    bar = data["summary"]["tornado"][i]
    plans = [c for c in (_cost(data, g, 300000.0) for g in (1.0, 1.2)) if c is not None]
    bar["high_cost_usd"] = sum(plans) / len(plans)
    bar["swing_usd"] = bar["high_cost_usd"] - bar["low_cost_usd"]
    return i


@pytest.mark.slow
def test_the_report_refuses_a_bar_over_unmatched_points(swept: Path, tmp_path: Path) -> None:
    """The old bar with a count contradicts the grid records: the check recomputes the matched
    means, not the writer's figure."""
    data = _sweep(swept)
    i = _old_bar(data)
    sweep = _edited(swept, tmp_path, data)
    result = _report(swept / "plan.json", "--sweep", str(sweep), "-f", "md")
    one_error_line(
        result,
        f"error: {sweep}: summary.tornado[{i}].high_cost_usd: ",
        "optimal.cost_usd of grid[1] (the grid points at the axis's last value matched",
        "edited or damaged",
    )


@pytest.mark.slow
def test_a_sweep_written_before_the_pairing_is_asked_again_not_called_edited(
    swept: Path, tmp_path: Path
) -> None:
    """A grid bar without ``points_left_out`` whose axis leaves points out was written by an
    earlier wattgpu (fuzz round 25 review): the error says so and asks for the sweep again, and
    does not call the file edited or damaged."""
    data = _sweep(swept)
    i = _old_bar(data)
    data["summary"]["tornado"][i].pop("points_left_out")
    sweep = _edited(swept, tmp_path, data)
    result = _report(swept / "plan.json", "--sweep", str(sweep), "-f", "md")
    one_error_line(
        result,
        f"error: {sweep}: summary.tornado[{i}]: written by an earlier wattgpu: grid bar",
        "(2 left out); run the sweep again",
        "make the sweep JSON again with this version",
        never=("edited or damaged",),
    )


@pytest.mark.slow
def test_the_report_checks_the_points_left_out(swept: Path, tmp_path: Path) -> None:
    data = _sweep(swept)
    i = next(k for k, b in enumerate(data["summary"]["tornado"]) if b["factor"] == BUDGET_BAR)
    data["summary"]["tornado"][i]["points_left_out"] = 0
    sweep = _edited(swept, tmp_path, data)
    result = _report(swept / "plan.json", "--sweep", str(sweep), "-f", "md")
    one_error_line(result, f"summary.tornado[{i}].points_left_out: 0, but 2 of the grid points")


# --- F3: the limits in every format; a region plan's effective figures ----------------------


@pytest.mark.parametrize("fmt", ["md", "text", "html"])
def test_every_format_states_the_limits(bundled: BundledRuns, tmp_path: Path, fmt: str) -> None:
    """The JSON's ``power_cap_kw`` and ``budget_usd`` (3.9 kW, 250,000 $), in words."""
    result = _report(_saved(bundled, tmp_path), "-f", fmt)
    assert result.code == 0, result.err
    text = re.sub(r"\s+", " ", result.out)  # text wraps its lines
    assert "Limits: facility power cap 3.9 kW in every period" in text
    assert "budget 250,000 $ (total cost over the horizon)" in text


def test_a_plan_without_limits_says_so(bundled: BundledRuns, tmp_path: Path) -> None:
    result = _report(_saved(bundled, tmp_path, "paper-llama8b-low-load"), "-f", "md")
    assert result.code == 0, result.err
    assert "* Limits: no facility power cap; no budget." in result.out


REGIONS = """\
name: round25-regions
horizon_hours: 720
region: DE
pue: 1.25
electricity_usd_per_kwh: 0.20
carbon_usd_per_tonne: 50
budget_usd: 100000
objective: {minimize: cost}
regions:
  de: {power_cap_kw: 5}
  fr:
    region: FR
    pue: 1.4
    electricity_usd_per_kwh: 0.15
    grid_profile_g_co2_per_kwh: [60, 60, 60, 60, 60, 60, 50, 50, 40, 40, 30, 30,
                                 30, 30, 40, 40, 50, 60, 70, 70, 70, 60, 60, 60]
gpus:
  L4: {available: 8}
  H100-SXM5-80GB: {available: 8}
models:
  - name: hr
    model: meta-llama/Llama-3.1-8B-Instruct
    regions: [de]
    load:
      requests_per_s: 2.0
      input_tokens: 1024
      output_tokens: 256
      daily_profile: [0.2, 0.2, 0.2, 0.2, 0.2, 0.3, 0.5, 0.8, 1, 1, 1, 1,
                      1, 1, 1, 1, 1, 0.8, 0.5, 0.3, 0.2, 0.2, 0.2, 0.2]
    sla: {itl_ms: 60}
  - name: chat-fr
    model: meta-llama/Llama-3.1-8B-Instruct
    regions: [fr]
    load: {requests_per_s: 3.0, input_tokens: 768, output_tokens: 256}
    sla: {itl_ms: 50}
"""


@pytest.fixture(scope="module")
def regions(tmp_path_factory: pytest.TempPathFactory, module_cached_predictor: None) -> Path:
    """The saved plan of two regions (de: the scenario's PUE, price and grid, a 5 kW cap; fr:
    its own PUE, price and an hourly grid), an entry placed in each."""
    where = tmp_path_factory.mktemp("round25_regions")
    result, plan = plan_text(where, REGIONS)
    assert result.code == 0, result.err
    return plan


def _rederives(site: dict[str, Any], grid: float, horizon: dict[str, Any]) -> None:
    """Facility kWh × the stated grid and × the stated price give the carbon and the cost."""
    facility = horizon["facility_energy_kwh"]
    assert facility * grid / 1000.0 == pytest.approx(horizon["carbon_kg"], rel=1e-9)
    price = site["electricity_usd_per_kwh"]
    assert facility * price == pytest.approx(horizon["electricity_cost_usd"], rel=1e-9)
    assert horizon["energy_kwh"] * site["pue"] == pytest.approx(facility, rel=1e-9)


def test_a_region_plan_states_the_figures_it_used(regions: Path) -> None:
    result = _report(regions, "-f", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    a, fc = report["assumptions"], report["forecast"]
    horizon = fc["total"]["horizon"]
    assert a["effective_site_figures"] is True and fc["effective_site_figures"] is True
    _rederives(fc, fc["grid"]["g_co2_per_kwh"], horizon)
    _rederives(a, a["grid"]["g_co2_per_kwh"], horizon)
    assert a["pue"] == fc["pue"] and a["grid"] == fc["grid"]
    assert a["electricity_usd_per_kwh"] == fc["electricity_usd_per_kwh"]
    assert "effective" in a["pue_source"] and "effective" in a["grid_text"]
    assert 0.15 < a["electricity_usd_per_kwh"] < 0.2  # between the regions' prices
    by_name = {r["name"]: r for r in a["regions"]}
    assert (by_name["de"]["pue"], by_name["de"]["power_cap_kw"]) == (1.25, 5.0)
    fr = by_name["fr"]
    assert (fr["pue"], fr["electricity_usd_per_kwh"], fr["power_cap_kw"]) == (1.4, 0.15, None)
    assert fr["grid_region"] == "FR" and len(fr["grid_g_co2_per_kwh_by_period"]) == 24
    assert a["budget_usd"] == 100000.0


def test_a_region_report_states_the_same_effective_figures(regions: Path) -> None:
    report = json.loads(_report(regions, "-f", "json").out)
    a = report["assumptions"]
    md = _report(regions, "-f", "md")
    assert md.code == 0, md.err
    assert (
        f"the fleet's effective figures: PUE {a['pue']:.3g} (facility over GPU energy), grid "
        f"{a['grid']['g_co2_per_kwh']:.3g} gCO2e/kWh (carbon over facility energy), electricity "
        f"{a['electricity_usd_per_kwh']:.3g} $/kWh"
    ) in md.out
    assert "Limits: facility power cap per region, in every period: de 5 kW, fr none" in md.out
    assert "| region | PUE | $/kWh | gCO2e/kWh | cap kW |" in md.out


# --- F4: an over-long integer names its field -----------------------------------------------


def _long(text: str, key: str) -> str:
    edited, n = re.subn(rf'"{key}": \d+', f'"{key}": {"7" * 5000}', text, count=1)
    assert n == 1, key
    return edited


def _one_line(result: Result, path: Path, field: str) -> None:
    one_error_line(
        result,
        f"error: {path}: unusable number in JSON ({field}: a number of 5,000 digits is beyond "
        "range)",
        never=("set_int_max_str_digits", "Exceeds the limit"),
    )


def test_an_over_long_integer_in_a_plan_names_its_field(
    bundled: BundledRuns, tmp_path: Path
) -> None:
    plan = tmp_path / "big-int.json"
    plan.write_text(_long(bundled.plan_json(CAPPED), "replicas"), encoding="utf-8")
    _one_line(_report(plan, "-f", "md"), plan, "allocations[0].replicas")
    good = _saved(bundled, tmp_path)
    _one_line(run_cli("diff", str(good), str(plan)), plan, "allocations[0].replicas")


@pytest.mark.slow
def test_an_over_long_integer_in_a_sweep_names_its_field(swept: Path, tmp_path: Path) -> None:
    text = (swept / "sweep.json").read_text(encoding="utf-8")
    sweep = tmp_path / "big-int-sweep.json"
    sweep.write_text(_long(text, "draws"), encoding="utf-8")
    _one_line(_report(swept / "plan.json", "--sweep", str(sweep)), sweep, "draws")


# --- F5: the plan diff's JSON has a schema ---------------------------------------------------


def test_the_diff_json_has_a_committed_schema_it_meets(
    bundled: BundledRuns, tmp_path: Path
) -> None:
    printed = run_cli("schema", "diff")
    assert printed.code == 0, printed.err
    committed = REPO / "docs" / "schemas" / "diff.schema.json"
    assert printed.out == schema_text("diff") == committed.read_text(encoding="utf-8")
    validator = Draft202012Validator(json.loads(printed.out))
    a, b = _saved(bundled, tmp_path), _saved(bundled, tmp_path, "paper-llama8b-low-load")
    for one, other in ((a, b), (a, a)):
        result = run_cli("diff", str(one), str(other), "-f", "json")
        assert result.code == 0, result.err
        data = json.loads(result.out)
        assert [e.message for e in validator.iter_errors(data)] == []
    assert data["identical"] is True
