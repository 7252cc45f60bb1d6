"""Fuzz round 23: ``wattgpu report`` with sweeps of another plan, disaggregated units, infeasible
exports and edited sweeps.

Each test below failed before its fix. A grid-only sweep (``--draws 0`` with ``sweep.grid``) of
another plan went into the report's sweep section without the ``warning:`` a sweep with draws
gets; a model entry of disaggregated units (which record no power interval) got a zero-width
P10–P90 in the disclosure whose ``range_source`` claimed the power predictor's 90 % bands, and
the fleet's range did not say it left that entry out; ``--format spdx|cyclonedx`` of an
infeasible plan said ``error: plan SCENARIO: ...`` naming the scenario, not the file; a saved
sweep whose robust candidate's ``all_met_probability`` exceeded its own per-model SLA
probability, whose tornado ``swing_usd`` was not ``high − low``, or whose grid point at an
axis's end had an edited ``optimal.cost_usd`` was reported as written. Each is now a
``warning:``, an honest ``no range:`` text or one ``error:`` line naming the file and the field.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from predictors.api import Predictor
from tests.bundled_runs import BundledRuns, cached_load
from tests.cli_runner import Result, one_error_line, run_cli

SCENARIO = "paper-llama8b-low-load"
GRID = "sweep.grid.load_growth=[1.0, 1.2]"
WARNING = "warning: --sweep: the sweep's base plan is not this plan"
Edit = Callable[[dict[str, Any]], None]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, module_cached_predictor: None) -> Path:
    """``plan.json`` of the scenario and ``sweep.json``, its sweep with 12 draws, the robust
    choice and a two-point grid, both freshly written."""
    where = tmp_path_factory.mktemp("round23_reports")
    planned = run_cli("plan", SCENARIO, "-f", "json", "-o", str(where / "plan.json"))
    assert planned.code == 0, planned.err
    swept = run_cli(
        "sweep",
        SCENARIO,
        "--draws",
        "12",
        "--choose",
        "robust",
        "--sla-probability",
        "0.5",
        "--set",
        GRID,
        "-f",
        "json",
        "-o",
        str(where / "sweep.json"),
    )
    assert swept.code == 0, swept.err
    return where


def _report(path: Path, tmp_path: Path, *args: str, fmt: str = "md") -> Result:
    out = tmp_path / f"r.{fmt}"
    return run_cli("report", str(path), "-f", fmt, "--pareto-points", "0", "-o", str(out), *args)


def _grid_only(folder: Path, name: str, *sets: str) -> Path:
    out = folder / name
    args = [a for s in (*sets, GRID) for a in ("--set", s)]
    result = run_cli("sweep", SCENARIO, "--draws", "0", *args, "-f", "json", "-o", str(out))
    assert result.code == 0, result.err
    return out


# --- 1. a grid-only sweep of another plan ------------------------------------------------------


@pytest.mark.slow
def test_a_grid_only_sweep_of_another_plan_is_a_warning(folder: Path, tmp_path: Path) -> None:
    other = _grid_only(folder, "grid-other.json", "models[0].load.requests_per_s=3")
    result = _report(folder / "plan.json", tmp_path, "--sweep", str(other))
    assert result.code == 0, result.err
    assert WARNING in result.err, result.err
    assert "grid" in next(line for line in result.err.splitlines() if WARNING in line)


def test_a_grid_only_sweep_of_this_plan_reports_quietly(folder: Path, tmp_path: Path) -> None:
    same = _grid_only(folder, "grid-same.json")
    result = _report(folder / "plan.json", tmp_path, "--sweep", str(same))
    assert result.code == 0, result.err
    assert "warning" not in result.err, result.err


# --- 2. disaggregated units without a power interval --------------------------------------------


_UNITS_ONLY: dict[str, str] = {}


def _units_only_plan_json(bundled: BundledRuns) -> str:
    """``wattgpu plan disagg-tight-sla`` with its tight entry on disaggregated units only (since
    the retrain of 2026-12-07 the bundled plan mixes an aggregated replica into it)."""
    if not _UNITS_ONLY:
        with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
            patch.setattr(Predictor, "load", cached_load(bundled._predictor))
            out = Path(folder) / "plan.json"
            set_units = ("--set", "models[0].deployment=disaggregated")
            result = run_cli("plan", "disagg-tight-sla", *set_units, "-f", "json", "-o", str(out))
            assert result.code == 0, result.err
            _UNITS_ONLY["json"] = out.read_text(encoding="utf-8")
    return _UNITS_ONLY["json"]


def _units_report(bundled: BundledRuns, tmp_path: Path, *, strip: bool) -> dict[str, Any]:
    """The JSON report of ``wattgpu plan disagg-tight-sla`` with its tight entry on units only;
    *strip*: of the plan with its units' power intervals removed, as a plan written before units
    recorded theirs."""
    data = json.loads(_units_only_plan_json(bundled))
    units = [c for c in data["candidates"] if c.get("deployment") == "disaggregated"]
    assert units and all(c["power_w_per_gpu_predicted"] is not None for c in units if c["feasible"])
    if strip:
        for c in units:
            c.update(
                power_w_per_gpu_predicted=None, power_w_per_gpu_lo=None, power_w_per_gpu_hi=None
            )
    plan = tmp_path / "dg.json"
    plan.write_text(json.dumps(data), encoding="utf-8")
    result = _report(plan, tmp_path, fmt="json")
    assert result.code == 0, result.err
    report: dict[str, Any] = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    md = _report(plan, tmp_path)
    assert md.code == 0, md.err
    report["md_row"] = next(
        x for x in (tmp_path / "r.md").read_text().splitlines() if "| rag-tight-itl |" in x
    )
    return report


@pytest.mark.slow  # one plan of disagg-tight-sla on units only (a few seconds)
def test_a_disaggregated_entry_has_its_pools_range(bundled: BundledRuns, tmp_path: Path) -> None:
    """Units record their pools' power interval: the entry made of them has a P10–P90 of its own
    and nothing is left out (before: a zero-width band, then no range)."""
    report = _units_report(bundled, tmp_path, strip=False)
    d = report["disclosure"]
    for name in ("rag-tight-itl", "rag-relaxed-itl"):
        field = {m["name"]: m["fields"] for m in d["models"]}[name]["energy_gpu_kwh"]
        assert field["p10"] < field["value"] < field["p90"], (name, field)
        assert "leaves out" not in field["range_source"], field
    assert "leaves out" not in d["range_method"]
    assert "none: no power interval" not in report["md_row"]


@pytest.mark.slow  # two reports of a plan written before units recorded intervals (~2 s)
def test_units_without_an_interval_have_no_range_and_say_so(
    bundled: BundledRuns, tmp_path: Path
) -> None:
    report = _units_report(bundled, tmp_path, strip=True)
    d = report["disclosure"]
    models = {m["name"]: m["fields"] for m in d["models"]}
    units = models["rag-tight-itl"]["energy_gpu_kwh"]
    assert units["p10"] is None and units["p90"] is None, units
    assert units["range_source"] == "no range: disaggregated units record no power interval"
    replicas = models["rag-relaxed-itl"]["energy_gpu_kwh"]  # aggregated: its band, as before
    assert replicas["p10"] < replicas["value"] < replicas["p90"], replicas
    assert "leaves out" not in replicas["range_source"]
    for text in (d["range_method"], d["fields"]["energy_gpu_kwh"]["range_source"]):
        assert "leaves out rag-tight-itl" in text and "no power interval" in text, text
    assert "none: no power interval" in report["md_row"], report["md_row"]


# --- 3. an infeasible plan has no disclosure to export -----------------------------------------


@pytest.mark.parametrize("fmt", ["spdx", "cyclonedx"])
def test_exporting_an_infeasible_plan_names_the_file(
    folder: Path, tmp_path: Path, fmt: str
) -> None:
    plan = folder / "infeasible.json"
    if not plan.exists():  # `plan` writes the infeasible plan, exit 1
        run_cli("plan", SCENARIO, "--set", "power_cap_kw=0.01", "-f", "json", "-o", str(plan))
    result = _report(plan, tmp_path, fmt=fmt)
    one_error_line(
        result,
        f"error: {plan}: status infeasible (power cap",
        f"no allocations to disclose as {fmt}",
    )


# --- 4. a sweep's tornado and robust choice against the rest of the file -----------------------


def _edited(folder: Path, tmp_path: Path, edit: Edit) -> Path:
    data = json.loads((folder / "sweep.json").read_text(encoding="utf-8"))
    edit(data)
    out = tmp_path / "edited-sweep.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def test_the_fresh_sweep_reports(folder: Path, tmp_path: Path) -> None:
    """The baseline every edit below starts from (a grid bar and a robust choice in it)."""
    data = json.loads((folder / "sweep.json").read_text(encoding="utf-8"))
    assert any(b["source"] == "grid" for b in data["summary"]["tornado"])
    assert data["robust"]["considered"]
    result = _report(folder / "plan.json", tmp_path, "--sweep", str(folder / "sweep.json"))
    assert result.code == 0, result.err
    assert "warning" not in result.err, result.err


def _joint_above_a_marginal(data: dict[str, Any]) -> None:
    c = data["robust"]["considered"][0]
    c["sla_probability"]["chat-8b"] = 0.25
    c["all_met_probability"] = 0.75


def _swing(data: dict[str, Any]) -> None:
    data["summary"]["tornado"][0]["swing_usd"] = 1.0


def _grid_cost(data: dict[str, Any]) -> None:
    data["grid"][-1]["optimal"]["cost_usd"] = 1.0  # the axis's last value (load_growth 1.2)


@pytest.mark.parametrize(
    ("edit", "parts"),
    [
        (
            _joint_above_a_marginal,
            ("robust.considered[0].all_met_probability: 0.75", "sla_probability.chat-8b 0.25"),
        ),
        (_swing, ("summary.tornado[0].swing_usd: 1,", "high_cost_usd − low_cost_usd")),
        (_grid_cost, (".high_cost_usd: ", "optimal.cost_usd of grid[1]", "give 1 ")),
    ],
    ids=["all-met", "swing", "grid-cost"],
)
def test_an_edited_sweep_is_refused(
    folder: Path, tmp_path: Path, edit: Edit, parts: tuple[str, ...]
) -> None:
    sweep = _edited(folder, tmp_path, edit)
    result = _report(folder / "plan.json", tmp_path, "--sweep", str(sweep))
    line = one_error_line(result, f"error: {sweep}: ", *parts, "edited or damaged")
    assert "summary.tornado[" in line or "robust." in line
