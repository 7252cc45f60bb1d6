"""Regions against brute force (issue 23 item 4): small two-region fleets whose regions differ in
PUE, electricity price, grid (one with an hourly profile), GPU price, inventory and power cap,
solved by the planner and by an exhaustive re-solve with exact routing that shares no code with
the solver (the routing oracle of ``test_routing_oracle``). The planner places each model entry
in one of its allowed regions (all its replicas there; docs/method.md "Regions"), and the
oracle enumerates exactly that: a region per entry, then every replica vector there. Plans must
match the oracle's objective to 1e-6 relative, and proven infeasibility must agree.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from typing import Any

import numpy as np
import pytest
from test_routing_oracle import deployment_pieces, instance, oracle_watts

from planner.inputs import Objective, PlanningInputs, Region, fleet_inventory
from planner.result import PlanStatus, check_invariants, region_totals
from planner.solve.optimize import solve


def regional(
    rng: random.Random,
    n_models: int,
    n_cands: int,
    periods: int,
    *,
    caps_kw: tuple[float | None, float | None] = (None, None),
    inventory: dict[str, int | None] | None = None,
    budget_usd: float | None = None,
    only: dict[str, str] | None = None,
) -> PlanningInputs:
    """A random oracle instance with every candidate in regions ``a`` and ``b`` (``b`` with a
    random PUE and electricity price, an hourly grid profile, and its GPUs a random factor dearer
    or cheaper); *inventory* limits region ``a``; *only* pins entries to one region."""
    base = instance(rng, n_models, n_cands, periods)
    rent = {g: rng.uniform(0.6, 1.6) for g in base.inventory}
    profile = tuple(rng.uniform(50.0, 600.0) for _ in range(periods))
    stock_a: dict[str, int | None] = {**dict.fromkeys(base.inventory), **(inventory or {})}
    regions = (
        Region("a", 1.1, 0.12, 350.0, None, caps_kw[0], stock_a),
        Region(
            "b",
            rng.uniform(1.0, 1.4),
            rng.uniform(0.05, 0.25),
            120.0,
            profile,
            caps_kw[1],
            dict.fromkeys(base.inventory),
        ),
    )
    cands = []
    for c in base.candidates:
        for r in regions:
            if only and c.name in only and only[c.name] != r.name:
                continue
            factor = rent[c.gpu] if r.name == "b" else 1.0
            cands.append(
                dataclasses.replace(
                    c, region=r.name, usd_per_hour_per_replica=c.usd_per_hour_per_replica * factor
                )
            )
    return dataclasses.replace(
        base,
        candidates=tuple(cands),
        inventory=fleet_inventory(regions),
        regions=regions,
        budget_usd=budget_usd,
        carbon_usd_per_kg=0.08,
    )


Option = tuple[str, list[float], float, dict[str, int]]
"""An entry's placement: region, GPU watts per period, rent over the horizon, GPUs by type."""


def options_of(inputs: PlanningInputs, name: str) -> list[Option]:
    m = inputs.model(name)
    peak = max(m.requests_per_s_by_period)
    out: list[Option] = []
    for r in inputs.regions:
        cands = [c for c in inputs.candidates if c.name == name and c.region == r.name]
        if not cands:
            continue
        bounds = []
        for c in cands:
            ub = max(math.ceil(peak / c.max_requests_per_s_per_replica), m.min_replicas)
            available = r.inventory.get(c.gpu)
            bounds.append(ub if available is None else min(ub, available))
        for ns in itertools.product(*(range(b + 1) for b in bounds)):
            cap = sum(n * c.max_requests_per_s_per_replica for n, c in zip(ns, cands, strict=True))
            if cap < peak - 1e-9 or sum(ns) < m.min_replicas:
                continue
            pieces = [deployment_pieces(c, n) for n, c in zip(ns, cands, strict=True) if n > 0]
            idle = sum(n * c.idle_power_w_per_replica for n, c in zip(ns, cands, strict=True))
            watts = [idle + oracle_watts(pieces, load) for load in m.requests_per_s_by_period]
            rent = sum(n * c.usd_per_hour_per_replica for n, c in zip(ns, cands, strict=True))
            gpus = {c.gpu: n for n, c in zip(ns, cands, strict=True) if n}
            out.append((r.name, watts, rent * inputs.hours, gpus))
    return out


def oracle(inputs: PlanningInputs) -> float | None:
    """Least objective over one placement per entry within every region's inventory and power
    cap and the budget, each region's energy at its PUE, price and grid."""
    sites = {r.name: r for r in inputs.regions}
    hours = np.asarray(inputs.period_hours)
    w = inputs.objective.weight
    kind = inputs.objective.minimize
    carbon_price = inputs.carbon_usd_per_kg or 0.0
    best: float | None = None
    for combo in itertools.product(*(options_of(inputs, m.name) for m in inputs.models)):
        ok = True
        kwh = carbon = cost = 0.0
        for r in inputs.regions:
            mine = [o for o in combo if o[0] == r.name]
            used: dict[str, int] = {}
            for o in mine:
                for g, v in o[3].items():
                    used[g] = used.get(g, 0) + v
            if any(
                r.inventory.get(g) is not None and v > (r.inventory[g] or 0)
                for g, v in used.items()
            ):
                ok = False
                break
            power = np.sum([o[1] for o in mine], axis=0) if mine else np.zeros(hours.size)
            facility_kw = power * r.pue / 1000
            if r.power_cap_kw is not None and facility_kw.max() > r.power_cap_kw * (1 + 1e-9):
                ok = False
                break
            grid = np.asarray(sites[r.name].grid_by_period(inputs.periods))
            site_kwh = float(facility_kw @ hours)
            site_kg = float((facility_kw * hours) @ grid) / 1000
            kwh += site_kwh
            carbon += site_kg
            cost += sum(o[2] for o in mine) + site_kwh * r.electricity_usd_per_kwh
            cost += site_kg * carbon_price
        if not ok:
            continue
        if inputs.budget_usd is not None and cost > inputs.budget_usd * (1 + 1e-9):
            continue
        value = {
            "energy": kwh,
            "cost": cost,
            "weighted": w("energy_kwh") * kwh + w("cost_usd") * cost + w("carbon_kg") * carbon,
        }[kind]
        best = value if best is None else min(best, value)
    return best


def _check(inputs: PlanningInputs) -> Any:
    expected = oracle(inputs)
    plan = solve(inputs, baselines=False)
    if expected is None:
        assert plan.status == PlanStatus.INFEASIBLE, plan.solve.messages
        return plan
    assert check_invariants(plan, inputs) == []
    assert plan.status == PlanStatus.OPTIMAL, plan.solve.messages
    assert plan.objective_breakdown["objective"] == pytest.approx(expected, rel=1e-6)
    return plan


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
@pytest.mark.parametrize("seed", range(8))
def test_two_regions_match_the_oracle(seed: int) -> None:
    """Free placement, then each region's power cap below what the optimum draws there (the
    entries must move or re-size), then a budget just above the oracle's cheapest plan."""
    n_models, n_cands, periods = 2 + seed % 2, 2, 2 + (seed // 2) % 2
    plan = _check(regional(random.Random(70 + seed), n_models, n_cands, periods))
    peaks = {
        name: max(t.peak_facility_power_kw, 0.05)
        for name, t in region_totals(plan.allocations, plan.inputs).items()
    }
    capped = regional(
        random.Random(70 + seed), n_models, n_cands, periods, caps_kw=(peaks["a"] * 0.9, None)
    )
    _check(capped)
    both = regional(
        random.Random(70 + seed),
        n_models,
        n_cands,
        periods,
        caps_kw=(peaks["a"] * 0.9, peaks["b"] * 0.9),
    )
    _check(both)


@pytest.mark.parametrize("seed", range(6))
def test_regional_inventory_pins_and_budget_match_the_oracle(seed: int) -> None:
    """Region ``a``'s inventory of one GPU type short, one entry pinned to region ``b``, and a
    budget 0.5 % above and below the cheapest plan (the oracle says which is feasible)."""
    rng = random.Random(400 + seed)
    kwargs: dict[str, Any] = {"inventory": {"G0": 1}, "only": {"m0": "b"}}
    _check(regional(rng, 2, 2, 2, **kwargs))
    cheapest = regional(random.Random(400 + seed), 2, 2, 2, **kwargs)
    cheapest = dataclasses.replace(cheapest, objective=Objective("cost"))
    least = oracle(cheapest)
    assert least is not None
    for factor in (1.005, 0.995):
        budgeted = dataclasses.replace(
            regional(random.Random(400 + seed), 2, 2, 2, **kwargs), budget_usd=least * factor
        )
        _check(budgeted)
