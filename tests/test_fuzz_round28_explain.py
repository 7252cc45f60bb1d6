"""Fuzz round 28 (planner): an infeasibility explanation words a relaxation the solver did not
prove smallest as an upper bound on the need.

Before: a scenario whose elastic inventory re-solve ran out of its time share with a feasible,
unproven relaxation said "inventory: H100-SXM5-80GB needs 136 GPUs, has 8" (and 15 or 264 on
other runs) where 12 H100 give a plan; the numbers depend on the time left."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from planner.result import PlanStatus
from planner.solve import explain
from tests.test_optimize import cand, demand, make_inputs


def _unproven(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every elastic re-solve ends as a time-limited one does: a solution, not proven."""
    real = explain.run_solver

    def feasible_only(mm: Any, **kw: Any) -> Any:
        raw = real(mm, **kw)
        if raw.status == PlanStatus.OPTIMAL:
            return dataclasses.replace(raw, status=PlanStatus.FEASIBLE)
        return raw

    monkeypatch.setattr(explain, "run_solver", feasible_only)


def test_an_unproven_inventory_relaxation_is_an_upper_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inputs = make_inputs([demand((2.5,))], [cand("A", cap=1.0)], inventory={"A": 2})
    assert explain.explain_infeasible(inputs) == ["inventory: A needs 3 GPUs, has 2"]
    _unproven(monkeypatch)
    (line,) = explain.explain_infeasible(inputs)
    assert line.startswith("inventory: A needs at most 3 GPUs, has 2 (the least was not proven in ")
    assert line.endswith(" s)")


def test_unproven_min_replicas_is_a_lower_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = make_inputs([demand((1.0,), min_replicas=4)], [cand("A", cap=1.0)], inventory={"A": 2})
    proven = explain.explain_infeasible(inputs)
    assert any(m.startswith("min replicas: bot fits only 2 of 4 replicas") for m in proven)
    _unproven(monkeypatch)
    found = explain.explain_infeasible(inputs)
    assert any(
        m.startswith(
            "min replicas: bot fits at least 2 of 4 replicas within the other limits "
            "(the most was not proven in "
        )
        and m.endswith(" s)")
        for m in found
    ), found
    assert not any("fits only" in m or "needs 3 GPUs" in m for m in found), found
