"""Failover (issue 23, item 3): capacity that survives any k lost replicas or nodes.

Checked without the solver's own failover code:

* every plan survives every way of losing k replicas (or k nodes, replicas packed into whole
  nodes per deployment as docs/method.md states): the replicas left carry every period's load,
  and re-routed over them (in proportion to capacity) each serves at most its capacity and
  meets the ITL SLA at the load it serves;
* the plan's objective equals a brute-force optimum over replica vectors (exact routing by the
  piecewise oracle of tests/test_routing_oracle.py, failover checked by enumerating the
  losses), on the decomposed, column-generation (exhaustive and restricted master) and
  monolithic MILP paths;
* the worst-loss formula against enumeration, on random vectors;
* k = 0 leaves every plan as it was.

The brute force's domain per deployment is ``0 <= n <= ceil(peak / u*) + k·r + 1`` (r replicas per
loss unit, ``u*`` the capacity or the curve's lower relief rate), the solver's modelling domain
(one deployment alone at that count survives its k worst losses, and more replicas of it never
draw less: docs/method.md §4) and one replica more, so a count above it that drew less would show.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from typing import Any

import pytest
from test_routing_oracle import (
    Option,
    best_combination,
    instance,
    oracle_watts,
    relief,
    undominated,
)

from planner.inputs import Candidate, Failover, PlanningInputs, surviving_capacity
from planner.result import Plan, PlanStatus, check_invariants, failover_capacity
from planner.solve import columns
from planner.solve.optimize import solve


def units_of(c: Candidate, n: int, failover: Failover, gpus_per_node: int) -> list[int]:
    """Replicas on each loss unit of *n* replicas of *c* (whole nodes of one deployment, the
    last partly filled; a replica at least a node wide is a unit of its own)."""
    per = 1 if failover.unit == "replicas" else max(1, gpus_per_node // c.gpus_per_replica)
    return [per] * (n // per) + ([n % per] if n % per else [])


def least_left(
    deployments: list[tuple[Candidate, int]], failover: Failover, gpus_per_node: int
) -> float:
    """Least capacity left over every way of losing k units (enumerated; every GPU type with
    *gpus_per_node* GPUs per node)."""
    units = [
        (c.max_requests_per_s_per_replica, size)
        for c, n in deployments
        for size in units_of(c, n, failover, gpus_per_node)
    ]
    total = sum(cap * size for cap, size in units)
    if len(units) <= failover.count:
        return 0.0
    return min(
        total - sum(cap * size for cap, size in lost)
        for lost in itertools.combinations(units, failover.count)
    )


def with_failover(
    inputs: PlanningInputs, failover: Failover | None, gpus_per_node: int = 4, tp2: bool = False
) -> PlanningInputs:
    """*inputs* with *failover* on every model; *tp2*: every second GPU's candidates use 2
    GPUs per replica (so nodes hold different replica counts)."""
    cands = tuple(
        dataclasses.replace(c, tp=2, gpus_per_replica=2) if tp2 and int(c.gpu[1:]) % 2 else c
        for c in inputs.candidates
    )
    return dataclasses.replace(
        inputs,
        models=tuple(dataclasses.replace(m, failover=failover) for m in inputs.models),
        candidates=cands,
        gpus_per_node={g: gpus_per_node for g in inputs.inventory},
    )


def itl_curved(inputs: PlanningInputs) -> PlanningInputs:
    """Candidates with an ITL curve rising to their ITL at capacity (within the SLA)."""
    cands = []
    for c in inputs.candidates:
        xs = c.curve[0]
        itl = tuple(0.005 + (c.itl_s_at_capacity - 0.005) * x / xs[-1] for x in xs)
        cands.append(
            dataclasses.replace(
                c,
                load_curve_requests_per_s=tuple(xs),
                power_curve_w_per_replica=tuple(c.curve[1]),
                itl_curve_s=itl,
            )
        )
    return dataclasses.replace(inputs, candidates=tuple(cands))


def assert_survives_every_loss(plan: Plan, inputs: PlanningInputs) -> None:
    """Every way of losing k units of every model entry leaves enough capacity, and the load
    re-routed over the replicas left (in proportion to capacity) meets the SLA."""
    for m in inputs.models:
        assert m.failover is not None
        mine = [a for a in plan.allocations if a.candidate.name == m.name]
        units = [
            (a, size)
            for a in mine
            for size in units_of(
                a.candidate, a.replicas, m.failover, inputs.node_gpus(a.candidate.gpu)
            )
        ]
        for lost in itertools.combinations(range(len(units)), min(m.failover.count, len(units))):
            left = {a.candidate.key: a.replicas for a in mine}
            for i in lost:
                a, size = units[i]
                left[a.candidate.key] -= size
            survivors = [(a.candidate, left[a.candidate.key]) for a in mine]
            capacity = sum(c.max_requests_per_s_per_replica * n for c, n in survivors)
            for load in m.requests_per_s_by_period:
                assert capacity >= load * (1 - 1e-9), (m.name, lost, capacity, load)
                for c, n in survivors:
                    if n == 0 or load == 0:
                        continue
                    rate = load * c.max_requests_per_s_per_replica / capacity
                    assert rate <= c.max_requests_per_s_per_replica * (1 + 1e-9)
                    assert c.itl_s_at(rate) <= m.itl_sla_s * (1 + 1e-9)


def _watts(c: Candidate, n: int) -> list[tuple[float, float, float, float]]:
    xs, ps = c.curve
    bx = [n * x for x in xs]
    bw = [n * (p - c.idle_power_w_per_replica) for p in ps]
    return [
        (bx[i], bx[i + 1], bw[i], (bw[i + 1] - bw[i]) / (bx[i + 1] - bx[i]))
        for i in range(len(bx) - 1)
        if bx[i + 1] > bx[i]
    ]


def brute_force(inputs: PlanningInputs) -> float | None:
    """Least objective over every replica vector combination that survives its losses
    (enumerated), with the piecewise routing oracle; None when none is feasible."""
    per_model: list[list[Option]] = []
    for m in inputs.models:
        assert m.failover is not None
        cands = [c for c in inputs.candidates if c.name == m.name and c.feasible]
        peak = max(m.requests_per_s_by_period)
        bounds = []
        for c in cands:
            per = (
                1
                if m.failover.unit == "replicas"
                else max(1, inputs.node_gpus(c.gpu) // c.gpus_per_replica)
            )
            need = math.ceil(peak / min(c.max_requests_per_s_per_replica, relief(c)))
            ub = max(need + m.failover.count * per if need else 0, m.min_replicas) + 1
            available = inputs.inventory.get(c.gpu)
            bounds.append(ub if available is None else min(ub, available // c.gpus_per_replica))
        options = []
        for ns in itertools.product(*(range(b + 1) for b in bounds)):
            chosen = [(c, n) for c, n in zip(cands, ns, strict=True) if n > 0]
            if sum(ns) < m.min_replicas:
                continue
            if least_left(chosen, m.failover, inputs.node_gpus("G0")) < peak * (1 - 1e-9):
                continue
            idle = sum(n * c.idle_power_w_per_replica for c, n in chosen)
            pieces = [_watts(c, n) for c, n in chosen]
            watts = [idle + oracle_watts(pieces, load) for load in m.requests_per_s_by_period]
            rent = sum(n * c.usd_per_hour_per_replica for c, n in chosen) * inputs.hours
            gpus: dict[str, int] = {}
            for c, n in chosen:
                gpus[c.gpu] = gpus.get(c.gpu, 0) + n * c.gpus_per_replica
            options.append((watts, rent, gpus))
        per_model.append(undominated(options))
    return best_combination(inputs, per_model)


FAILOVERS = (Failover("replicas", 1), Failover("replicas", 2), Failover("nodes", 1))


def _check(inputs: PlanningInputs) -> Plan:
    expected = brute_force(inputs)
    plan = solve(inputs, baselines=False)
    if expected is None:
        assert plan.status == PlanStatus.INFEASIBLE, plan.solve.messages
        return plan
    assert check_invariants(plan, inputs) == []
    assert plan.status == PlanStatus.OPTIMAL, plan.solve.messages
    assert plan.objective_breakdown["objective"] == pytest.approx(expected, rel=1e-6)
    assert_survives_every_loss(plan, inputs)
    return plan


@pytest.mark.parametrize(
    "seed", [*range(2), *(pytest.param(s, marks=pytest.mark.slow) for s in range(2, 8))]
)
@pytest.mark.parametrize("failover", FAILOVERS, ids=lambda f: f.text)
def test_failover_plan_is_the_brute_force_optimum(seed: int, failover: Failover) -> None:
    """Unlinked (exact decomposition), then under a binding power cap (column generation);
    seeds 4-7 (two more node sizes and TP mixes per kind) run with the slow tests."""
    rng = random.Random(7100 + seed)
    base = itl_curved(instance(rng, 2, 2 + seed % 2, periods=2))
    inputs = with_failover(base, failover, gpus_per_node=2 + 2 * (seed % 2), tp2=seed % 4 >= 2)
    plan = _check(inputs)
    assert plan.totals is not None
    capped = dataclasses.replace(inputs, power_cap_kw=plan.totals.peak_facility_power_kw * 0.98)
    _check(capped)


@pytest.mark.parametrize("seed", range(4))
def test_failover_restricted_master_matches_brute_force(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Column generation without the exhaustive master (pricing, master MILP, reduced-cost
    enumeration through the failover-aware search) under the tightest of a few caps below the
    free plan's peak that some plan meets, or else one GPU fewer of its most used type."""
    monkeypatch.setattr(columns, "EXHAUSTIVE_MAX_COLUMNS", 0)
    rng = random.Random(7300 + seed)
    failover = FAILOVERS[seed % len(FAILOVERS)]
    inputs = with_failover(itl_curved(instance(rng, 2, 2, periods=2)), failover)
    plan = solve(inputs, baselines=False)
    assert plan.totals is not None
    for factor in (0.97, 0.99, 0.999):
        capped = dataclasses.replace(
            inputs, power_cap_kw=plan.totals.peak_facility_power_kw * factor
        )
        if brute_force(capped) is not None:
            _check(capped)
            return
    used = plan.totals.gpus
    gpu = max(used, key=lambda g: used[g])
    _check(dataclasses.replace(inputs, inventory={**inputs.inventory, gpu: used[gpu] - 1}))


def _linear(inputs: PlanningInputs) -> PlanningInputs:
    """The same instance with linear candidates (idle + least slope): the full MILP's path."""
    cands = tuple(
        dataclasses.replace(
            c, load_curve_requests_per_s=(), power_curve_w_per_replica=(), itl_curve_s=()
        )
        for c in inputs.candidates
    )
    return dataclasses.replace(inputs, candidates=cands)


@pytest.mark.parametrize("seed", range(6))
def test_failover_milp_matches_brute_force(seed: int) -> None:
    """Linear candidates with a binding inventory: the monolithic MILP with the failover rows
    (threshold choice of planner.solve.failover)."""
    rng = random.Random(7500 + seed)
    failover = FAILOVERS[seed % len(FAILOVERS)]
    base = _linear(instance(rng, 2, 3, periods=2))
    inputs = with_failover(base, failover, gpus_per_node=2, tp2=seed % 2 == 1)
    free = solve(inputs, baselines=False)
    assert free.totals is not None
    used = free.totals.gpus
    gpu = max(used, key=lambda g: used[g])
    limited = dataclasses.replace(
        inputs, inventory={**inputs.inventory, gpu: max(0, used[gpu] - 1)}
    )
    plan = _check(limited)
    if plan.has_solution:
        assert "SCIP" in plan.solve.solver


def _random_vectors(rng: random.Random) -> tuple[list[Candidate], list[int], Failover, int]:
    inputs = instance(rng, 1, rng.choice((1, 2, 3)), periods=1)
    tp2 = rng.random() < 0.5
    cands = [
        dataclasses.replace(c, tp=2, gpus_per_replica=2) if tp2 and i % 2 else c
        for i, c in enumerate(inputs.candidates)
    ]
    n = [rng.randint(0, 6) for _ in cands]
    failover = Failover(rng.choice(("replicas", "nodes")), rng.randint(1, 3))
    return cands, n, failover, rng.choice((1, 2, 4, 8))


@pytest.mark.parametrize("seed", range(40))
def test_worst_loss_is_the_enumerated_worst_case(seed: int) -> None:
    """surviving_capacity (the k largest units lost) equals the least capacity left over every
    way of losing k units."""
    cands, n, failover, gpus_per_node = _random_vectors(random.Random(seed))
    per = [
        1 if failover.unit == "replicas" else max(1, gpus_per_node // c.gpus_per_replica)
        for c in cands
    ]
    got = surviving_capacity(
        [c.max_requests_per_s_per_replica for c in cands], per, failover.count, n
    )
    expected = least_left(list(zip(cands, n, strict=True)), failover, gpus_per_node)
    assert float(got[0]) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def _plan_keys(plan: Plan) -> Any:
    return [(a.candidate.key, a.replicas, a.requests_per_s_by_period) for a in plan.allocations]


@pytest.mark.parametrize("seed", range(3))
def test_zero_failover_changes_nothing(seed: int) -> None:
    """No failover and k = 0 plan identically (the k = 0 path is today's solver)."""
    rng = random.Random(7700 + seed)
    inputs = instance(rng, 2, 2, periods=2)
    plain = solve(inputs, baselines=False)
    again = solve(with_failover(inputs, None), baselines=False)
    assert _plan_keys(again) == _plan_keys(plain)
    assert again.objective_breakdown == plain.objective_breakdown
    assert failover_capacity(again, inputs.models[0].name) is None


def test_failover_infeasible_is_explained() -> None:
    """An inventory too small for the spare replicas: infeasible, with the failover named."""
    inputs = with_failover(_linear(instance(random.Random(11), 1, 1, periods=1)), None)
    plan = solve(inputs, baselines=False)
    assert plan.totals is not None
    limited = dataclasses.replace(
        with_failover(inputs, Failover("replicas", 1)),
        inventory={g: n for g, n in plan.totals.gpus.items()},
    )
    assert brute_force(limited) is None
    plan = solve(limited, baselines=False)
    assert plan.status == PlanStatus.INFEASIBLE
    assert any("failover" in m for m in plan.solve.messages), plan.solve.messages


# --- scenario, plan JSON and report --------------------------------------------------------------

PAPER = "paper-llama8b-low-load"


@pytest.mark.parametrize(
    ("override", "field", "expected"),
    [
        ("failover={replicas: -1}", "failover.replicas", "out of range"),
        ("failover={replicas: 1, nodes: 1}", "failover.nodes", "not both"),
        ("failover={replica: 1}", "failover.replica", "did you mean: replicas"),
        ("failover={replicas: 1.5}", "failover.replicas", "expected a whole number"),
        ("failover={replicas: '1'}", "failover.replicas", "expected a whole number"),
        ("failover={}", "failover", "give replicas: K or nodes: K"),
        ("models[0].failover={nodes: 17}", "models[0].failover.nodes", "out of range"),
    ],
)
def test_bad_failover_is_one_line_naming_the_field(
    override: str, field: str, expected: str
) -> None:
    from planner.scenario.bundled import find_scenario
    from planner.scenario.load import load_scenario
    from predictors.core.errors import WattgpuError

    path = find_scenario(PAPER)
    with pytest.raises(WattgpuError) as info:
        load_scenario(path, [override])
    lines = str(info.value).splitlines()
    assert len(lines) == 1, lines
    assert f": {field}: " in lines[0] and expected in lines[0], lines[0]


def _run(*overrides: str) -> Any:
    from planner.pipeline import plan_file

    return plan_file(PAPER, overrides, baselines=False)


def _plan(*overrides: str) -> Plan:
    plan: Plan = _run(*overrides).plan
    return plan


def _json(plan: Plan) -> dict[str, Any]:
    from planner.documents.plan import plan_json

    data = plan_json(plan)
    data["solve"].pop("seconds")
    return data


@pytest.mark.slow
def test_zero_failover_plan_json_is_unchanged() -> None:
    """k = 0 (scenario default or per entry) writes the same plan JSON as no failover."""
    plain = _json(_plan())
    assert _json(_plan("failover={replicas: 0}")) == plain
    assert _json(_plan("failover={replicas: 1}", "models[0].failover={nodes: 0}")) == plain
    assert all("failover" not in m for m in plain["models"])


@pytest.mark.parametrize("failover", ["{replicas: 1}", "{nodes: 1}"])
def test_failover_in_plan_json_and_report(failover: str, tmp_path: Any) -> None:
    """The plan JSON carries the entry's failover and its capacity after the worst losses at
    the end of the model record, the saved file checks (and a hand-edited capacity does not),
    and the plan table and the report show the failover table."""
    import json

    from planner.documents.plan import load_plan, plan_json
    from planner.report.plan_view import render_plan
    from predictors.core.errors import WattgpuError

    run = _run(f"failover={failover}")
    plan = run.plan
    assert plan.has_solution, plan.solve.messages
    assert_survives_every_loss(plan, plan.inputs)
    data = plan_json(plan)
    for m in data["models"]:
        # then the SLA percentile, the record's last key (added after them)
        assert list(m)[-3:] == ["failover", "failover_capacity_requests_per_s", "sla_percentile"]
        unit, count = failover.strip("{}").split(": ")
        assert m["failover"] == {unit: int(count)}
        assert m["failover_capacity_requests_per_s"] >= max(m["requests_per_s_by_period"])
    if "nodes" in failover:  # the catalog's node size, as the layouts use it
        from predictors.catalog import validity

        node = data["assumptions"]["gpus_per_node"]
        assert node["L4"] == validity.node_gpus(run.predictor.catalog.gpu("L4"))
    else:
        assert "gpus_per_node" not in data["assumptions"]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    load_plan(path)
    data["models"][0]["failover_capacity_requests_per_s"] *= 1.5
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(WattgpuError, match="failover_capacity_requests_per_s"):
        load_plan(path)
    table = render_plan(plan, "md")
    assert "## failover" in table and "left req/s" in table
    from planner.report.build import make_report
    from planner.report.render import render_report

    report = render_report(make_report(plan, run.predictor_card)[0], "md")
    assert "Failover capacity" in report and "repl. set by" in report
