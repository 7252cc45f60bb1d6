"""A search that found no plan for its objective on a linked instance gets the plan another
objective's search finds, priced on its own (planner.solve.rescue; fuzz round 23: a 7.72 kW cap
ended ``time_limit`` for energy while the least-cost plan met every limit).

The searches' failure cannot be forced on a small instance (they are exact there), so the tests
hand :func:`rescued` the failed outcome itself, as :func:`planner.solve.optimize.solve` does, and
check what it builds from the real solver's plans.
"""

from __future__ import annotations

import dataclasses
import random
import time

import pytest
from test_routing_oracle import instance

from planner.inputs import Objective, PlanningInputs
from planner.result import Plan, PlanStatus, SolveInfo, check_invariants
from planner.solve.optimize import solve
from planner.solve.rescue import rescued

FAILED = "no plan found, and none proven impossible (the search stopped)"


def _failed(inputs: PlanningInputs) -> Plan:
    return Plan(
        inputs, PlanStatus.TIME_LIMIT, SolveInfo(0.1, None, None, None, "colgen", (FAILED,))
    )


def _inner(inputs: PlanningInputs) -> Plan:
    return solve(inputs, baselines=False, widen=False)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.slow
def test_a_failed_search_gets_the_least_cost_plan_priced_on_its_objective(seed: int) -> None:
    rng = random.Random(4200 + seed)
    base = instance(rng, 2, 3, periods=2)
    free = solve(dataclasses.replace(base, objective=Objective("energy")), baselines=False)
    cap_kw = free.totals.peak_facility_power_kw * 1.05
    inputs = dataclasses.replace(base, objective=Objective("energy"), power_cap_kw=cap_kw)
    best = solve(inputs, baselines=False)
    assert best.status == PlanStatus.OPTIMAL
    plan = rescued(inputs, _failed(inputs), time.perf_counter(), _inner)
    assert plan.status == PlanStatus.FEASIBLE
    assert check_invariants(plan, inputs) == []
    assert "least-cost plan, which meets every limit, priced for energy" in plan.solve.messages[0]
    cost_plan = _inner(dataclasses.replace(inputs, objective=Objective("cost")))
    assert [(a.candidate.key, a.replicas) for a in plan.allocations] == [
        (a.candidate.key, a.replicas) for a in cost_plan.allocations
    ]
    # priced on energy: its objective is its facility kWh, never below the energy optimum
    assert plan.solve.objective == pytest.approx(plan.totals.facility_energy_kwh, rel=1e-9)
    assert plan.solve.objective >= best.solve.objective * (1 - 1e-9)
    assert plan.totals.peak_facility_power_kw <= cap_kw * (1 + 1e-9)


def test_an_unlinked_or_found_plan_is_left_as_it_is() -> None:
    inputs = instance(random.Random(4300), 2, 2, periods=2)
    failed = _failed(inputs)
    assert rescued(inputs, failed, time.perf_counter(), _inner) is failed  # nothing links
    capped = dataclasses.replace(inputs, power_cap_kw=1e6)
    found = solve(capped, baselines=False)
    assert rescued(capped, found, time.perf_counter(), _inner) is found
