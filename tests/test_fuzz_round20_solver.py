"""Fuzz round 20: what a plan under linking limits says about its own optimality.

Each test failed before its fix: a budget that only the least-cost plan was found to keep gave
that plan with no bound (``gap`` null, so nobody could tell how far from the best it was), and a
column-generation plan left 7.8 % above its bound at 4 s of a 60 s limit said nothing of why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import plan_text
from tests.test_fuzz_round19_solver import API_ENTRY, BATCH_ENTRY, HEAD

SCENARIO = HEAD + BATCH_ENTRY + API_ENTRY


@pytest.mark.slow
def test_the_least_cost_plan_within_a_budget_carries_a_valid_bound(tmp_path: Path) -> None:
    free, free_out = plan_text(tmp_path, SCENARIO, "--set", "objective.minimize=energy")
    assert free.code == 0, free.err
    unbudgeted = json.loads(free_out.read_text(encoding="utf-8"))
    # 5,880 $: just above the least-cost plan's 5,831 $, so only that plan is found to keep it
    # (5,840 $, 5,520 $ and 5,230 $ after earlier retrains; the retrain of 2026-12-06 evening
    # raised the least cost from 5,190 $)
    args = ("--set", "objective.minimize=energy", "--set", "budget_usd=5880")
    result, out = plan_text(tmp_path, SCENARIO, *args)
    assert result.code == 0, result.err
    plan = json.loads(out.read_text(encoding="utf-8"))
    solve = plan["solve"]
    assert plan["totals"]["cost_usd"] <= 5880 * (1 + 1e-9)
    assert solve["bound"] is not None and solve["gap"] is not None
    # the bound of the plans without the budget bounds every plan within it
    assert solve["bound"] <= unbudgeted["solve"]["objective"] * (1 + 1e-9)
    assert solve["bound"] <= solve["objective"]
    assert solve["gap"] == pytest.approx(
        (solve["objective"] - solve["bound"]) / solve["objective"], rel=1e-9
    )
    # on a quiet machine the least-cost pre-check gives this plan and says whose bound it is;
    # on a very busy one (a clean-clone CI run at load 7 on 2 cores) the time-limited search
    # found another plan within the budget, whose bound is checked above just the same
    if solve["solver"].endswith("the least-cost plan, within the budget"):
        assert any("bound of the plans without the budget" in m for m in solve["messages"])


@pytest.mark.slow
def test_a_column_generation_plan_above_its_gap_says_why(tmp_path: Path) -> None:
    args = ("--set", "objective.minimize=energy", "--set", "budget_usd=7000")
    result, out = plan_text(tmp_path, SCENARIO, *args)
    assert result.code == 0, result.err
    plan = json.loads(out.read_text(encoding="utf-8"))
    if plan["status"] == "optimal":
        pytest.fail(f"the case no longer leaves a gap: {plan['solve']}")
    assert plan["solve"]["gap"] > plan["solve"]["relative_gap"]
    assert any(m.startswith("not proven optimal") for m in plan["solve"]["messages"])


@pytest.mark.slow
def test_a_looser_budget_never_returns_a_plan_worse_than_the_least_cost_one(
    tmp_path: Path,
) -> None:
    """Fuzz round 23: at 5,950 $ column generation's own feasible plan drew 772.9 kWh, where the
    least-cost plan (5,831 $, kept by both budgets and returned at 5,880 $) draws 725.3 kWh."""
    objectives = []
    for budget in (5880, 5950):
        args = ("--set", "objective.minimize=energy", "--set", f"budget_usd={budget}")
        result, out = plan_text(tmp_path, SCENARIO, *args)
        assert result.code == 0, result.err
        plan = json.loads(out.read_text(encoding="utf-8"))
        assert plan["totals"]["cost_usd"] <= budget * (1 + 1e-9)
        assert plan["solve"]["bound"] <= plan["solve"]["objective"]
        objectives.append(plan["solve"]["objective"])
    assert objectives[1] <= objectives[0] * (1 + 1e-9), objectives
