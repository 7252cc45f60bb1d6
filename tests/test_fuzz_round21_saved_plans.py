"""Fuzz round 21: saved plans whose edits the plan check let through (planner.documents.verify).

Each edit below was accepted before its fix, and ``report``, ``pareto`` and ``diff`` then
described another plan than the one solved: a model entry's ``model`` (the report showed Qwen
32B on the L4 that serves Llama 8B), ``assumptions.objective`` (the report said "minimise cost"
of a plan solved for energy) and the objective breakdown's figures, allocations under
``status: time_limit`` (a status of no plan, reported as a full plan), and an SLA that the
plan's feasible candidates break (a TTFT SLA of 10 ms on a candidate of 392 ms). Each is now one
line naming the file and the field, exit 1; every plan ``wattgpu plan`` writes still checks
clean (the slow tests: the bundled scenarios, a robust plan, an infeasible plan, a plan with
every candidate kept).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import one_error_line, run_cli

from planner.documents.verify import plan_problems

GOLDEN = Path(__file__).parent / "golden"
QWEN = "Qwen/Qwen2.5-32B-Instruct"

Edit = Callable[[dict[str, Any]], None]


def _plan(name: str = "paper-llama8b-low-load") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    return data


def _problems(edit: Edit, name: str = "paper-llama8b-low-load") -> list[str]:
    data = copy.deepcopy(_plan(name))
    edit(data)
    return plan_problems(data)


def _saved(tmp_path: Path, edit: Edit | None = None, name: str = "plan.json") -> Path:
    data = _plan()
    data["solve"]["seconds"] = 0.1  # goldens leave out the wall-clock time
    if edit is not None:
        edit(data)
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _set(path: str, value: Any) -> Edit:
    """An edit setting the JSON field at *path* (dotted, ``[i]`` indices) to *value*."""

    def edit(data: dict[str, Any]) -> None:
        keys: list[Any] = []
        for part in path.replace("]", "").split("."):
            head, *indices = part.split("[")
            keys += [head, *map(int, indices)]
        node: Any = data
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value

    return edit


def test_the_golden_plans_check_clean() -> None:
    """The baseline the edits below start from."""
    assert plan_problems(_plan()) == []
    assert plan_problems(_plan("enterprise-fleet")) == []


# --- 1. a model entry's model ------------------------------------------------------------------


def test_a_model_entrys_model_is_that_of_its_candidates() -> None:
    problems = _problems(_set("models[0].model", QWEN))
    assert problems and problems[0].startswith(f"models[0].model: '{QWEN}'"), problems
    assert "meta-llama/Llama-3.1-8B-Instruct" in problems[0]


def test_one_candidate_of_another_model_is_named_itself() -> None:
    problems = _problems(_set("candidates[3].model", QWEN))
    assert any(p.startswith(f"candidates[3].model: '{QWEN}'") for p in problems), problems
    assert not any(p.startswith("models[0].model") for p in problems), problems


def test_an_edited_model_entry_is_refused_by_report_pareto_and_diff(tmp_path: Path) -> None:
    good = _saved(tmp_path, name="good.json")
    bad = _saved(tmp_path, _set("models[0].model", QWEN))
    out = tmp_path / "r.md"
    for args in (
        ("report", str(bad), "--format", "md", "-o", str(out)),
        ("report", str(bad), "--format", "md", "-o", str(out), "--trust"),
        ("pareto", str(bad)),
        ("diff", str(good), str(bad)),
    ):
        line = one_error_line(run_cli(*args), str(bad), "models[0].model", QWEN)
        assert "Traceback" not in line
    assert not out.exists()


# --- 2. the objective --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "objective", "solved_for"),
    [
        ("paper-llama8b-low-load", {"minimize": "cost"}, "energy"),
        ("paper-llama8b-low-load", {"minimize": "carbon"}, "energy"),
        ("enterprise-fleet", {"minimize": "energy"}, None),
        ("enterprise-fleet", {"minimize": "weighted", "weights": {"carbon_kg": 1.0}}, None),
    ],
    ids=["energy-to-cost", "energy-to-carbon", "weighted-to-energy", "other-weights"],
)
def test_an_edited_objective_is_refused(
    name: str, objective: dict[str, Any], solved_for: str | None
) -> None:
    problems = _problems(_set("assumptions.objective", objective), name)
    assert problems, "the edited objective went unnoticed"
    if solved_for is not None:  # the weights are another kind's: the objective is the edit
        assert problems[0].startswith("assumptions.objective: minimise"), problems
        assert f"solved for {solved_for}" in problems[0]
    else:  # weights no kind gives: each weight that differs is named
        assert all("assumptions.objective" in p for p in problems), problems
        assert any(p.startswith("objective_breakdown.") for p in problems), problems


def test_report_and_pareto_refuse_a_plan_relabelled_to_cost(tmp_path: Path) -> None:
    bad = _saved(tmp_path, _set("assumptions.objective", {"minimize": "cost"}))
    out = tmp_path / "r.md"
    for args in (("report", str(bad), "--format", "md", "-o", str(out)), ("pareto", str(bad))):
        one_error_line(run_cli(*args), str(bad), "assumptions.objective", "solved for energy")
    assert not out.exists()


@pytest.mark.parametrize(
    "field",
    [
        "objective",
        "facility_energy_kwh",
        "gpu_cost_usd",
        "usd_per_facility_kwh_weight",
        "gpu_rent_weight",
    ],
)
@pytest.mark.parametrize("name", ["paper-llama8b-low-load", "enterprise-fleet"])
def test_an_edited_objective_breakdown_figure_is_named(name: str, field: str) -> None:
    stored = _plan(name)["objective_breakdown"][field]
    value = 1.0 if stored != 1.0 else 0.5
    problems = _problems(_set(f"objective_breakdown.{field}", value), name)
    assert any(p.startswith(f"objective_breakdown.{field}: {value!r}") for p in problems), problems


def test_an_emptied_objective_breakdown_is_named() -> None:
    problems = _problems(_set("objective_breakdown", {}))
    assert problems == ["objective_breakdown: empty, but the plan has allocations"]


# --- 3. the status -----------------------------------------------------------------------------


def test_a_time_limited_plan_has_no_allocation(tmp_path: Path) -> None:
    problems = _problems(_set("status", "time_limit"))
    assert any(p.startswith("status: 'time_limit' but the plan has 1 allocation") for p in problems)
    bad = _saved(tmp_path, _set("status", "time_limit"))
    result = run_cli("report", str(bad), "--format", "md", "-o", str(tmp_path / "r.md"))
    one_error_line(result, str(bad), "status: 'time_limit'")


def test_a_feasible_plan_keeps_its_allocations() -> None:
    """``feasible`` (a plan found, not proven optimal) is a status of a plan."""
    assert _problems(_set("status", "feasible")) == []


# --- 4. the SLAs -------------------------------------------------------------------------------


def test_a_ttft_sla_the_allocated_candidate_breaks_is_refused(tmp_path: Path) -> None:
    problems = _problems(_set("models[0].ttft_sla_s", 0.01))
    assert problems and problems[0].startswith("models[0].ttft_sla_s: 0.01 s"), problems
    ttft_s = _plan()["candidates"][0]["ttft_s"]
    assert "candidates[0]" in problems[0] and f"{ttft_s:.6g} s" in problems[0]
    bad = _saved(tmp_path, _set("models[0].ttft_sla_s", 0.01))
    result = run_cli("report", str(bad), "--format", "md", "-o", str(tmp_path / "r.md"))
    one_error_line(result, str(bad), "models[0].ttft_sla_s")


def test_an_itl_sla_the_allocated_candidate_breaks_is_refused_with_its_flag_adjusted() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["models"][0]["itl_sla_s"] = 0.05
        flag = data["uncertainty_flags"]["flags"][0]
        flag["itl_sla_s"] = 0.05
        flag["reasons"][0] = flag["reasons"][0].replace("SLA 100 ms", "SLA 50 ms")

    problems = _problems(edit)
    itl_s = _plan()["candidates"][0]["itl_s_at_capacity"]
    assert problems == [
        "models[0].itl_sla_s: 0.05 s, but its feasible candidate candidates[0] (L4 TP 1) has an "
        f"ITL of {itl_s:.6g} s at capacity (a feasible candidate meets its entry's SLA)"
    ]


def test_an_sla_only_unallocated_feasible_candidates_break_is_refused() -> None:
    """Feasible means meeting the entry's SLA: every feasible candidate, not only the one the
    plan allocates (doc-summarizer runs on an H100 at 65 ms; its other candidates reach
    100 ms)."""
    data = _plan("enterprise-fleet")
    i = next(i for i, m in enumerate(data["models"]) if m["name"] == "doc-summarizer")
    (alloc,) = [a for a in data["allocations"] if a["name"] == "doc-summarizer"]
    sla = alloc["itl_s_at_capacity"] * 1.01
    problems = _problems(_set(f"models[{i}].itl_sla_s", sla), "enterprise-fleet")
    assert any(p.startswith(f"models[{i}].itl_sla_s: {sla!r} s") for p in problems), problems


def test_a_plan_marked_robust_is_checked_on_its_upper_itl_bounds() -> None:
    """A robust plan's candidates meet the SLA at the upper 90 % bound (``itl_s_hi``): the L4 of
    the paper plan (184 ms at the bound, SLA 100 ms) is no candidate of a robust plan."""
    problems = _problems(_set("assumptions.robust", True))
    assert any(
        p.startswith("models[0].itl_sla_s: 0.1 s") and "upper 90 % ITL bound" in p for p in problems
    ), problems


def test_a_looser_sla_still_checks() -> None:
    """Raising an SLA breaks no feasible candidate (the flags then name their own field)."""
    assert _problems(_set("models[0].ttft_sla_s", 5.0)) == []


# --- every plan wattgpu writes still checks clean ----------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("paper-llama8b-low-load",),
        ("enterprise-fleet",),
        ("eu-power-cap-carbon",),
        ("disagg-tight-sla",),
        ("paper-llama8b-low-load", "--set", "robust=true"),
        ("enterprise-fleet", "--set", "robust=true"),
        ("enterprise-fleet", "--candidates", "all"),
        ("eu-power-cap-carbon", "--set", "power_cap_kw=1"),
        (str(Path(__file__).parent / "fixtures" / "regions.yaml"),),
    ],
    ids=["paper", "enterprise", "eu", "disagg", "robust", "robust-fleet", "all", "infeasible",
         "regions"],
)  # fmt: skip
@pytest.mark.usefixtures("cached_predictor")
def test_every_plan_written_is_reported(tmp_path: Path, args: tuple[str, ...]) -> None:
    saved = tmp_path / "plan.json"
    planned = run_cli("plan", *args, "-f", "json", "-o", str(saved))
    assert planned.code in (0, 1), planned.err  # 1: the infeasible plan, written all the same
    assert plan_problems(json.loads(saved.read_text(encoding="utf-8"))) == []
    report = run_cli("report", str(saved), "-f", "md", "-o", str(tmp_path / "r.md"))
    assert report.code == 0, report.err
