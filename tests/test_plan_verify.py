"""A plan JSON is recomputed before it is trusted (planner.analysis.verify).

Untouched plans check clean; every hand edit of the hostile-input round 3 is caught and named:
a tampered total, a negative energy, replicas beyond the inventory, a status that contradicts
the allocations, an edited model name or GPU, a per-period power that is not the curve's.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from planner.analysis.verify import plan_problems

GOLDEN = Path(__file__).parent / "golden"
PLANS = sorted(GOLDEN.glob("*.json"))


def _plan(name: str = "enterprise-fleet") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.stem)
def test_an_untouched_plan_checks_clean(path: Path) -> None:
    assert plan_problems(json.loads(path.read_text(encoding="utf-8"))) == []


def _scale_total(d: dict[str, Any]) -> None:
    d["totals"]["energy_kwh"] *= 10


def _negative_energy(d: dict[str, Any]) -> None:
    d["allocations"][0]["energy_kwh"] = -5.0


def _thousand_replicas(d: dict[str, Any]) -> None:
    d["allocations"][0]["replicas"] = 1000


def _infeasible_with_allocations(d: dict[str, Any]) -> None:
    d["status"] = "infeasible"


def _renamed_model(d: dict[str, Any]) -> None:
    d["allocations"][0]["model"] = "acme/not-this-model"


def _moved_gpu(d: dict[str, Any]) -> None:
    d["allocations"][0]["gpu"] = "B300"  # not among the scenario's GPUs


def _period_power(d: dict[str, Any]) -> None:
    d["allocations"][1]["power_w_by_period"][3] *= 1.01


def _objective(d: dict[str, Any]) -> None:
    d["solve"]["objective"] *= 0.5


def _peak(d: dict[str, Any]) -> None:
    d["totals"]["peak_facility_power_kw"] = 0.1


EDITS: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (_scale_total, "totals.energy_kwh"),
    (_negative_energy, "allocations[0].energy_kwh"),
    (_thousand_replicas, "inventory has"),
    (_infeasible_with_allocations, "status"),
    (_renamed_model, "allocations[0].model"),
    (_moved_gpu, "not a feasible candidate"),
    (_period_power, "allocations[1].power_w_by_period[3]"),
    (_objective, "solve.objective"),
    (_peak, "totals.peak_facility_power_kw"),
]


@pytest.mark.parametrize(("edit", "named"), EDITS, ids=[e.__name__.strip("_") for e, _ in EDITS])
def test_every_hand_edit_is_caught_and_named(
    edit: Callable[[dict[str, Any]], None], named: str
) -> None:
    data = copy.deepcopy(_plan())
    edit(data)
    problems = plan_problems(data)
    assert problems, "the edit went unnoticed"
    assert any(named in line for line in problems), problems


def test_a_relative_slip_below_the_tolerance_is_accepted() -> None:
    data = _plan()
    data["totals"]["energy_kwh"] *= 1 + 1e-9
    assert plan_problems(data) == []
