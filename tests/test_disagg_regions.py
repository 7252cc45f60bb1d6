"""Disaggregated units in a scenario with regions (issues 19 and 23 together).

A mixed unit (prefill on GPU type A, decode on B) takes GPUs of both types from the inventory of
the region it runs in (``Candidate.stock_use``: ``A@north``, ``B@north``). With A scarce in the
cheaper region, the plan must be the brute-force optimum over one placement per entry and the
replica vectors of that region's candidates within its inventory (both pools' types counted),
each region's energy at its PUE, with exact routing on the curves; the unit's GPUs never exceed
its region's A stock, and the saved plan verifies on read.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest

from planner.documents.plan import plan_document
from planner.documents.verify import plan_problems
from planner.inputs import ModelDemand, Objective, PlanningInputs, Region, fleet_inventory
from planner.result import check_invariants
from planner.solve.optimize import solve
from tests.test_disagg_plan import _aggregated, _unit
from tests.test_routing_oracle import deployment_pieces, oracle_watts

LOAD_REQUESTS_PER_S = 6.0


def _inputs(available_a_north: int) -> PlanningInputs:
    regions = (
        Region("north", 1.1, 0.1, 300.0, inventory={"A": available_a_north, "B": 12}),
        Region("south", 1.5, 0.1, 300.0, inventory={"A": None, "B": 12}),
    )
    base = (
        _unit("m", "A", "B", cap=4.0, idle=400.0, top=900.0),
        _aggregated("m", "B", cap=0.6, idle=100.0, top=400.0),
        _aggregated("m", "A", cap=0.7, idle=100.0, top=350.0),
    )
    cands = tuple(dataclasses.replace(c, region=r.name) for r in regions for c in base)
    return PlanningInputs(
        scenario="mixed-regions",
        models=(ModelDemand("m", "m", (LOAD_REQUESTS_PER_S,), 0.05),),
        candidates=cands,
        inventory=fleet_inventory(regions),
        period_hours=(100.0,),
        pue=1.2,
        electricity_usd_per_kwh=0.1,
        grid_g_co2_per_kwh=300.0,
        objective=Objective(minimize="energy"),
        regions=regions,
    )


def _brute_force(inputs: PlanningInputs) -> float:
    """Least facility kWh over one region and the replica vectors of its candidates."""
    best = math.inf
    for r in inputs.regions:
        cands = [c for c in inputs.candidates if c.region == r.name]
        for ns in itertools.product(*(range(12) for _ in cands)):
            cap = sum(n * c.max_requests_per_s_per_replica for n, c in zip(ns, cands, strict=True))
            used: dict[str, int] = {}
            for n, c in zip(ns, cands, strict=True):
                for g, k in c.gpu_use:
                    used[g] = used.get(g, 0) + n * k
            over = any(v is not None and used.get(g, 0) > v for g, v in r.inventory.items())
            if cap < LOAD_REQUESTS_PER_S - 1e-9 or over:
                continue
            pieces = [deployment_pieces(c, n) for n, c in zip(ns, cands, strict=True) if n]
            idle = sum(n * c.idle_power_w_per_replica for n, c in zip(ns, cands, strict=True))
            watts = idle + oracle_watts(pieces, LOAD_REQUESTS_PER_S)
            best = min(best, watts * inputs.hours * r.pue / 1000.0)
    return best


@pytest.mark.parametrize("available_a_north", [0, 2, 5, 9])
def test_units_count_both_pools_in_their_region(available_a_north: int) -> None:
    inputs = _inputs(available_a_north)
    expected = _brute_force(inputs)
    result = solve(inputs, baselines=False)
    assert result.solve.objective == pytest.approx(expected, rel=1e-6)
    assert check_invariants(result, inputs) == []
    a_north = sum(
        a.replicas * k
        for a in result.allocations
        if a.candidate.region == "north"
        for g, k in a.candidate.gpu_use
        if g == "A"
    )
    assert a_north <= available_a_north
    assert plan_problems(plan_document(result).to_json_dict()) == []


def test_a_unit_s_stock_keys_follow_its_region() -> None:
    unit = next(c for c in _inputs(2).candidates if c.pools and c.region == "north")
    assert unit.stock_use == (("A@north", 2), ("B@north", 2))
    assert dict(unit.gpu_use) == {"A": 2, "B": 2}
