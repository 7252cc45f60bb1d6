"""Fuzz round 27 (saved plans): an edited ``assumptions.grid_year``, and an engine or precision
no predictor knows.

Each test below failed before its fix. ``report`` accepted any ``grid_year`` (-5, 0, 10²⁰,
1800) although a scenario takes 1990–2100, and a year that was not the catalog's year of
``grid_region`` switched the grid-factor check off: 2023 -> 2022 with a tenth of the factor
(and of every ``carbon_kg``) was reported as "region US" at a made-up factor, although
``assumptions.catalog_sha256`` said the catalogs were those the plan was made with. The plan's
``assumptions.engine`` and ``models[].precision`` were any text (``vlm``, ``fp7``) and the
report repeated them as fact. Plans whose catalogs differ keep their leniency.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planner.documents.verify import plan_problems
from tests.bundled_runs import BundledRuns
from tests.cli_runner import one_error_line, run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

PAPER = "paper-llama8b-low-load"
FIX = "plan the scenario again"


def _data(bundled: BundledRuns) -> dict[str, Any]:
    """The bundled paper plan's JSON (made now: its ``catalog_sha256`` is the catalogs')."""
    data: dict[str, Any] = json.loads(bundled.plan_json(PAPER))
    return data


def _write(folder: Path, data: dict[str, Any]) -> Path:
    path = folder / "plan.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _scale_carbon(node: Any, factor: float) -> None:
    """Every ``carbon_kg`` figure of *node* times *factor* (in place)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "carbon_kg" and isinstance(value, float | int):
                node[key] = value * factor
            else:
                _scale_carbon(value, factor)
    elif isinstance(node, list):
        for value in node:
            _scale_carbon(value, factor)


def test_the_genuine_plan_checks_clean(bundled: BundledRuns) -> None:
    data = _data(bundled)
    assert data["assumptions"]["grid_region"] == "US"
    assert isinstance(data["assumptions"]["grid_year"], int)
    assert data["assumptions"]["engine"] == "vllm"
    assert plan_problems(data) == []


# --- F1: assumptions.grid_year ----------------------------------------------------------------


@pytest.mark.parametrize("year", [-5, 0, 1800, 10**20, 2101, True, "2023"])
def test_a_year_no_scenario_can_state_is_named(bundled: BundledRuns, year: Any) -> None:
    data = _data(bundled)
    data["assumptions"]["grid_year"] = year
    problems = [p for p in plan_problems(data) if p.startswith("assumptions.grid_year: ")]
    assert len(problems) == 1 and "1990–2100" in problems[0], plan_problems(data)


@pytest.mark.parametrize("year", [-5, 10**20])
def test_report_refuses_a_year_out_of_range_in_one_line(
    bundled: BundledRuns, tmp_path: Path, year: int
) -> None:
    data = _data(bundled)
    data["assumptions"]["grid_year"] = year
    plan = _write(tmp_path, data)
    one_error_line(run_cli("report", str(plan)), str(plan), "assumptions.grid_year", "1990", FIX)


def test_another_year_than_the_catalogs_no_longer_skips_the_factor_check(
    bundled: BundledRuns, tmp_path: Path
) -> None:
    data = _data(bundled)
    a = data["assumptions"]
    year, factor = a["grid_year"], a["grid_g_co2_per_kwh"]
    a["grid_year"] = year - 1
    a["grid_g_co2_per_kwh"] = factor * 0.1
    _scale_carbon(data, 0.1)
    plan = _write(tmp_path, data)
    line = one_error_line(run_cli("report", str(plan)), "assumptions.grid_year", str(year), FIX)
    assert f"{year - 1}, but catalogs/grid_carbon.csv states grid_region 'US'" in line
    assert "assumptions.catalog_sha256" in line
    trusted = run_cli("report", str(plan), "--trust", "-f", "text")
    assert trusted.code == 0, trusted.err
    assert "warning:" in trusted.err and "assumptions.grid_year" in trusted.err


def test_the_year_alone_edited_is_named(bundled: BundledRuns) -> None:
    data = _data(bundled)
    year = data["assumptions"]["grid_year"]
    data["assumptions"]["grid_year"] = year + 1
    problems = plan_problems(data)
    assert len(problems) == 1 and problems[0].startswith("assumptions.grid_year: "), problems


def test_catalogs_that_differ_keep_their_leniency(bundled: BundledRuns, tmp_path: Path) -> None:
    data = _data(bundled)
    data["assumptions"]["grid_year"] -= 1
    data["assumptions"]["catalog_sha256"] = "0" * 64
    assert plan_problems(data) == []
    plan = _write(tmp_path, data)
    result = run_cli("report", str(plan), "-f", "text")
    assert result.code == 0, result.err
    assert "error:" not in result.err


# --- F2: assumptions.engine and models[].precision --------------------------------------------


@pytest.mark.parametrize(
    ("value", "meant"), [("vlm", "vllm"), ("trtllm", "tensorrt-llm"), ("VLLM", "vllm")]
)
def test_an_unknown_engine_is_named_with_a_did_you_mean(
    bundled: BundledRuns, value: str, meant: str
) -> None:
    data = _data(bundled)
    data["assumptions"]["engine"] = value
    problems = plan_problems(data)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"assumptions.engine: unknown engine '{value}'")
    assert f"(did you mean: {meant}" in problems[0] and "use one of vllm," in problems[0]


def test_an_unknown_precision_is_named_with_a_did_you_mean(
    bundled: BundledRuns, tmp_path: Path
) -> None:
    data = _data(bundled)
    data["models"][0]["precision"] = "fp7"
    plan = _write(tmp_path, data)
    for command in ("report", "diff"):
        args = (str(plan),) if command == "report" else (str(plan), str(plan))
        one_error_line(
            run_cli(command, *args),
            "models[0].precision: unknown precision 'fp7' (did you mean: fp8",
            "use one of fp32,",
            FIX,
        )


def test_report_refuses_an_unknown_engine_and_trust_warns(
    bundled: BundledRuns, tmp_path: Path
) -> None:
    data = _data(bundled)
    data["assumptions"]["engine"] = "vlm"
    plan = _write(tmp_path, data)
    one_error_line(run_cli("report", str(plan)), "assumptions.engine", "did you mean: vllm", FIX)
    trusted = run_cli("report", str(plan), "--trust", "-f", "text")
    assert trusted.code == 0, trusted.err
    assert "warning:" in trusted.err and "assumptions.engine" in trusted.err


@pytest.mark.parametrize("value", [5, ""])
def test_an_engine_that_is_no_name_is_named(bundled: BundledRuns, value: Any) -> None:
    data = _data(bundled)
    data["assumptions"]["engine"] = value
    assert any(p.startswith("assumptions.engine: unknown engine") for p in plan_problems(data))


def test_plans_without_engine_or_precision_check_clean(bundled: BundledRuns) -> None:
    data = _data(bundled)
    data["assumptions"].pop("engine")
    for m in data["models"]:
        m.pop("precision", None)
    assert plan_problems(data) == []


def test_a_genuine_plan_of_another_region_reports(tmp_path: Path) -> None:
    out = tmp_path / "al.json"
    made = run_cli("plan", PAPER, "--set", "region=AL", "-f", "json", "-o", str(out))
    assert made.code == 0, made.err
    a = json.loads(out.read_text(encoding="utf-8"))["assumptions"]
    assert a["grid_region"] == "AL"
    result = run_cli("report", str(out), "-f", "text")
    assert result.code == 0, result.err
