"""Fuzz round 29 (recompute): can a plan JSON be recomputed from its own contents?

Each test below failed before its fix.

1. The plan JSON did not record the SLA percentile: a p99.9 plan's ``models`` records equalled
   the mean-SLA plan's, ``wattgpu diff`` listed no model change, and the report's ITL column put
   the mean ITL at served load beside the p99.9 ITL at capacity without saying which is which.
   Each model record now ends with ``sla_percentile`` (null: the mean).
2. ``totals.mean_power_w`` and each region's were not recomputed on read (energy × 1000 / hours).
3. A region's ``totals.peak_facility_power_kw`` was only compared with its cap, not recomputed.
4. ``solve.bound`` was not checked: ten times the objective passed under ``optimal``, gap 0.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planner.documents.plan import PlanDocument, planning_inputs_of
from planner.documents.verify import plan_problems
from planner.documents.verify_bound import bound_problems
from tests.cli_runner import one_error_line, run_cli

PAPER = "paper-llama8b-low-load"
P999 = "models[0].sla.percentile=99.9"
REGIONS = (
    "models[0].load.requests_per_s=4",
    "regions={a: {pue: 1.1, power_cap_kw: 1.0}, b: {region: NO, pue: 1.3, power_cap_kw: 1.0}}",
)


@pytest.fixture(scope="module")
def plans(
    module_cached_predictor: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Path]]:
    """The paper scenario planned as it is (mean SLA), at p99.9, and in two capped regions."""
    folder = tmp_path_factory.mktemp("round29_recompute")
    out: dict[str, Path] = {}
    for name, sets in (("mean", ()), ("p999", (P999,)), ("regions", REGIONS)):
        path = folder / f"{name}.json"
        args = [arg for s in sets for arg in ("--set", s)]
        result = run_cli("plan", PAPER, "-f", "json", "-o", str(path), *args)
        assert result.code == 0, result.err
        out[name] = path
    yield out


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _named(data: dict[str, Any], field: str) -> str:
    """The one problem of *data* that names *field*."""
    problems = plan_problems(data)
    lines = [p for p in problems if p.startswith(f"{field}: ")]
    assert len(lines) == 1, problems
    return lines[0]


# --- 1: the SLA percentile --------------------------------------------------------------------


def test_each_model_record_ends_with_its_sla_percentile(plans: dict[str, Path]) -> None:
    mean, p999 = _load(plans["mean"]), _load(plans["p999"])
    for data, want in ((mean, None), (p999, 99.9)):
        record = data["models"][0]
        assert list(record)[-1] == "sla_percentile", list(record)
        assert record["sla_percentile"] == want
        assert plan_problems(data) == []
    assert mean["models"] != p999["models"]


def test_a_saved_plan_carries_the_percentile_into_its_inputs(plans: dict[str, Path]) -> None:
    doc = PlanDocument.model_validate(_load(plans["p999"]))
    assert planning_inputs_of(doc).models[0].sla_percentile == 99.9


def test_diff_lists_the_percentile(plans: dict[str, Path], module_cached_predictor: None) -> None:
    result = run_cli("diff", str(plans["mean"]), str(plans["p999"]), "-f", "json")
    assert result.code == 0, result.err
    models = json.loads(result.out)["models"]
    change = [c for c in models if c["where"] == "models.chat-8b.sla_percentile"]
    assert change and change[0]["before"] is None and change[0]["after"] == 99.9, models


def test_a_plan_written_before_the_key_still_reads(
    plans: dict[str, Path], tmp_path: Path, module_cached_predictor: None
) -> None:
    data = _load(plans["mean"])
    for m in data["models"]:
        del m["sla_percentile"]
    assert plan_problems(data) == []
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = run_cli("report", str(path), "-f", "json", "--pareto-points", "0")
    assert result.code == 0, result.err
    assert PlanDocument.model_validate(data).models[0].sla_percentile is None


@pytest.mark.parametrize("pct", [100, 120, 10, -1, "99", True])
def test_a_percentile_no_scenario_can_give_is_named(plans: dict[str, Path], pct: Any) -> None:
    data = _load(plans["p999"])
    data["models"][0]["sla_percentile"] = pct
    line = _named(data, "models[0].sla_percentile")
    assert "impossible" in line and "null for the mean" in line


def test_the_report_says_which_itl_is_the_percentiles(
    plans: dict[str, Path], module_cached_predictor: None
) -> None:
    def itl_cells(path: Path) -> list[str]:
        result = run_cli("report", str(path), "-f", "md", "--pareto-points", "0")
        assert result.code == 0, result.err
        lines = result.out.splitlines()
        head = next(i for i, s in enumerate(lines) if "ITL ms at served load / at capacity" in s)
        columns = [c.strip() for c in lines[head].split("|")]
        at = columns.index("ITL ms at served load / at capacity (SLA)")
        rows = []
        for row in lines[head + 2 :]:
            if not row.startswith("|"):
                break
            rows.append(row.split("|")[at].strip())
        return rows

    (p999,) = itl_cells(plans["p999"])
    assert " mean / " in p999 and " p99.9 (100)" in p999, p999
    (mean,) = itl_cells(plans["mean"])
    assert "mean" not in mean and "p" not in mean and mean.endswith(" (100)"), mean


# --- 2 and 3: mean power and a region's peak ----------------------------------------------------


def test_the_fleet_mean_power_is_recomputed(plans: dict[str, Path]) -> None:
    data = _load(plans["mean"])
    data["totals"]["mean_power_w"] *= 2
    line = _named(data, "totals.mean_power_w")
    assert "but the allocations give" in line and "1000 / assumptions.hours" in line


@pytest.mark.parametrize("region", [0, 1])
def test_a_regions_mean_power_is_recomputed(plans: dict[str, Path], region: int) -> None:
    data = _load(plans["regions"])
    assert plan_problems(data) == []
    totals = data["regions"][region]["totals"]
    totals["mean_power_w"] = totals["mean_power_w"] * 2 + 1.0  # region b serves nothing: 0 W
    assert "its allocations give" in _named(data, f"regions[{region}].totals.mean_power_w")


@pytest.mark.parametrize("region", [0, 1])
def test_a_regions_peak_below_its_cap_is_recomputed(plans: dict[str, Path], region: int) -> None:
    data = _load(plans["regions"])
    r = data["regions"][region]
    assert r["totals"]["peak_facility_power_kw"] < 0.5 * r["power_cap_kw"]
    r["totals"]["peak_facility_power_kw"] = r["totals"]["peak_facility_power_kw"] * 2 + 0.1
    line = _named(data, f"regions[{region}].totals.peak_facility_power_kw")
    assert "recomputed" in line


def test_report_refuses_an_edited_region_peak(
    plans: dict[str, Path], tmp_path: Path, module_cached_predictor: None
) -> None:
    data = _load(plans["regions"])
    data["regions"][0]["totals"]["peak_facility_power_kw"] *= 2
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = run_cli("report", str(path), "-f", "json", "--pareto-points", "0")
    one_error_line(result, "regions[0].totals.peak_facility_power_kw: ", "recomputed")


# --- 4: the solve's bound ---------------------------------------------------------------------


def _solve(objective: Any, bound: Any, gap: Any) -> dict[str, Any]:
    return {"solve": {"objective": objective, "bound": bound, "gap": gap}}


def test_a_bound_above_the_objective_is_named(plans: dict[str, Path]) -> None:
    data = _load(plans["mean"])
    data["solve"]["bound"] = data["solve"]["objective"] * 10
    assert data["status"] == "optimal" and data["solve"]["gap"] == 0.0
    line = _named(data, "solve.bound")
    assert "is above solve.objective" in line


def test_a_gap_the_bound_does_not_give_is_named(plans: dict[str, Path]) -> None:
    data = _load(plans["mean"])
    data["status"] = "feasible"  # not optimal: the relative-gap check says nothing
    data["solve"]["bound"] = data["solve"]["objective"] * 0.5
    line = _named(data, "solve.gap")
    assert "give 0.5" in line


@pytest.mark.parametrize(
    ("objective", "bound", "gap"),
    [
        (100.0, 100.0, 0.0),
        (100.0, 90.0, 0.1),
        (100.0, 100.00005, 0.0),  # above within rounding: the solver's gap clamps to 0
        (0.0, 0.0, 0.0),  # nothing to serve
        (0.0, -2e-9, 2.0),  # objective 0: the solver divides by 1e-9
        (None, None, None),  # infeasible, time_limit
        (100.0, None, None),  # no bound known
        (100.0, None, 0.0),  # an infinite bound (JSON null) clamps the gap to 0
    ],
)
def test_what_the_solver_writes_passes(objective: Any, bound: Any, gap: Any) -> None:
    assert bound_problems(_solve(objective, bound, gap)) == []


@pytest.mark.parametrize(
    ("objective", "bound", "gap", "field"),
    [
        (100.0, 100.01, 0.0, "solve.bound"),
        (0.0, 1e-6, 0.0, "solve.bound"),
        (100.0, 90.0, 0.0, "solve.gap"),
        (100.0, 90.0, None, "solve.gap"),
        (0.0, -1.0, 0.0, "solve.gap"),
        (100.0, None, 0.1, "solve.gap"),
        (None, 90.0, 0.1, "solve.gap"),
        (10**400, 90.0, 0.1, "solve.gap"),  # beyond a float: no internal error
        (100.0, 90.0, "0.1", "solve.gap"),
    ],
)
def test_what_the_solver_never_writes_is_named(
    objective: Any, bound: Any, gap: Any, field: str
) -> None:
    (line,) = bound_problems(_solve(objective, bound, gap))
    assert line.startswith(f"{field}: "), line


def test_the_saved_plans_check_clean(plans: dict[str, Path]) -> None:
    for path in plans.values():
        data = _load(path)
        assert plan_problems(copy.deepcopy(data)) == [], path.name
