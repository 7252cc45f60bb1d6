"""Plan accounting, JSON contract (issue 5) and the invariant checker."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from planner.documents.plan import plan_json
from planner.inputs import Objective
from planner.result import Plan, PlanStatus, check_invariants, make_allocation, make_totals
from planner.solve.optimize import solve
from tests.test_optimize import cand, demand, make_inputs

CONTRACT = {
    "top": {"scenario", "status", "solve", "assumptions", "models", "inventory", "candidates",
            "allocations", "totals", "baselines"},
    "solve": {"seconds", "gap"},
    "assumptions": {"hours", "periods", "period_hours", "pue", "electricity_usd_per_kwh",
                    "grid_g_co2_per_kwh", "power_cap_kw", "budget_usd", "objective"},
    "models": {"name", "model", "requests_per_s_by_period", "itl_sla_s", "ttft_sla_s",
               "min_replicas"},
    "candidates": {"name", "model", "gpu", "tp", "gpus_per_replica", "feasible", "reason",
                   "batch_size", "itl_s_at_capacity", "max_requests_per_s_per_replica",
                   "idle_power_w_per_replica", "energy_j_per_request",
                   "usd_per_hour_per_replica"},
    "allocations": {"name", "model", "gpu", "tp", "replicas", "gpus", "requests_per_s_by_period",
                    "batch_size", "itl_s", "power_w_per_gpu", "energy_kwh", "cost_usd",
                    "carbon_kg"},
    "totals": {"energy_kwh", "facility_energy_kwh", "cost_usd", "energy_cost_usd",
               "gpu_cost_usd", "carbon_kg", "mean_power_w", "gpus"},
    "baselines": {"name", "feasible", "energy_kwh", "cost_usd", "carbon_kg"},
}  # fmt: skip


def _plan() -> Plan:
    inputs = make_inputs(
        [demand((1.0, 3.0))],
        [cand("A", cap=2.0, idle_w=100.0, j_per_req=200.0, usd_h=2.0, tp=2)],
        period_hours=(10.0, 30.0),
        pue=1.5,
        electricity_usd_per_kwh=0.2,
        grid_g_co2_per_kwh=400.0,
        carbon_usd_per_kg=0.1,
        objective=Objective("weighted", {"cost_usd": 1.0, "carbon_kg": 0.05}),
    )
    return solve(inputs)


def test_json_contract_keys_present_and_serialisable() -> None:
    data = json.loads(json.dumps(plan_json(_plan())))
    assert CONTRACT["top"] <= set(data)
    assert data["status"] == "optimal"
    for section in ("solve", "assumptions", "totals"):
        assert CONTRACT[section] <= set(data[section]), section
    for section in ("models", "candidates", "allocations", "baselines"):
        assert data[section], section
        for row in data[section]:
            assert CONTRACT[section] <= set(row), section
    assert data["assumptions"]["objective"] == {
        "minimize": "weighted",
        "weights": {"cost_usd": 1.0, "carbon_kg": 0.05},
    }
    assert data["inventory"] == {"A": None}
    assert data["totals"]["gpus"] == {"A": 4}


def test_accounting_units() -> None:
    plan = _plan()
    (a,) = plan.allocations
    assert a.replicas == 2 and a.gpus == 4
    # power: 2 × 100 W idle + 200 J/request × x req/s; 10 h at 1 req/s, 30 h at 3 req/s
    gpu_kwh = ((200 + 200 * 1.0) * 10 + (200 + 200 * 3.0) * 30) / 1000
    assert a.energy_kwh == pytest.approx(gpu_kwh)
    assert a.facility_energy_kwh == pytest.approx(1.5 * gpu_kwh)
    assert a.carbon_kg == pytest.approx(1.5 * gpu_kwh * 0.4)
    assert a.gpu_cost_usd == pytest.approx(2 * 2.0 * 40)
    assert a.cost_usd == pytest.approx(160 + 1.5 * gpu_kwh * 0.2 + 1.5 * gpu_kwh * 0.4 * 0.1)
    assert a.power_w_per_gpu == pytest.approx(gpu_kwh * 1000 / 40 / 4)
    assert plan.totals is not None
    assert plan.totals.mean_power_w == pytest.approx(gpu_kwh * 1000 / 40)
    assert plan.totals.peak_facility_power_kw == pytest.approx(0.8 * 1.5)


def test_check_invariants_reports_each_violation() -> None:
    plan = _plan()
    inputs = plan.inputs
    (a,) = plan.allocations
    short = make_allocation(a.candidate, 1, (1.0, 2.5), inputs)  # 2.5 > 1 × 2 req/s, 0.5 unserved
    bad = replace(plan, allocations=(short,), totals=make_totals((short,), inputs))
    problems = check_invariants(bad, inputs)
    assert any(p.startswith("capacity[bot,A,2,1]") for p in problems)
    assert any(p.startswith("load_served[bot,1]") for p in problems)
    tight = replace(inputs, inventory={"A": 2}, power_cap_kw=0.1, budget_usd=1.0)
    problems = check_invariants(plan, tight)
    assert "inventory[A]: uses 4 GPUs, has 2" in problems
    assert any(p.startswith("power_cap[0]") for p in problems)
    assert any(p.startswith("budget:") for p in problems)
    slow = replace(a.candidate, itl_s_at_capacity=0.2)
    slow_inputs = replace(inputs, candidates=(slow,))
    slow_alloc = make_allocation(slow, 2, a.requests_per_s_by_period, slow_inputs)
    problems = check_invariants(replace(plan, allocations=(slow_alloc,)), slow_inputs)
    assert any(p.startswith("SLA bot,A,2") for p in problems)


def test_infeasible_plan_json_has_null_totals_and_messages() -> None:
    inputs = make_inputs([demand((5.0,))], [cand("A", cap=1.0)], inventory={"A": 2})
    data = plan_json(solve(inputs))
    assert data["status"] == PlanStatus.INFEASIBLE.value
    assert data["allocations"] == [] and data["totals"] is None and data["baselines"] == []
    assert data["solve"]["messages"] == ["inventory: A needs 5 GPUs, has 2"]
