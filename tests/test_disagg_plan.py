"""Disaggregated prefill/decode units as planner candidates (issue 19, planner side).

On real predictions (the bundled ``disagg-tight-sla`` scenario): the plan chooses a
disaggregated deployment exactly when that needs less energy than every aggregated option, and
an aggregated one when that is cheaper, checked against the objectives of the aggregated-only
and the disaggregated-only plans and against a brute force over replica vectors with exact
routing (:mod:`tests.test_routing_oracle`); both outcomes occur in the scenario. Then the unit's
invariants (pools add up to the unit), the inventory of mixed-type units in every solver path,
the plan JSON (keys, verify-on-read), the default that keeps existing plans as they were, and
``compare --deployment``.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from planner.build import planning_inputs
from planner.documents.plan import plan_document
from planner.documents.verify import plan_problems
from planner.inputs import Candidate, ModelDemand, Objective, PlanningInputs, Pool
from planner.paths import scenarios_dir
from planner.result import Plan, check_invariants
from planner.scenario.load import load_scenario, scenario_from_dict
from planner.solve.optimize import solve
from predictors.api import Predictor
from predictors.catalog import validity
from predictors.core.errors import WattgpuError
from tests.cli_runner import run_cli
from tests.test_routing_oracle import deployment_pieces, oracle_watts

SCENARIO = scenarios_dir() / "disagg-tight-sla.yaml"
PAPER = scenarios_dir() / "paper-llama8b-low-load.yaml"


@pytest.fixture(scope="module")
def inputs(predictor: Predictor) -> PlanningInputs:
    return planning_inputs(load_scenario(SCENARIO), predictor)


@pytest.fixture(scope="module")
def plan(inputs: PlanningInputs) -> Plan:
    return solve(inputs)


def _objective(inputs: PlanningInputs, cands: list[Candidate]) -> float | None:
    result = solve(inputs.with_candidates(cands), baselines=False)
    return result.solve.objective if result.has_solution else None


def _entry(inputs: PlanningInputs, name: str) -> PlanningInputs:
    """The inputs of one model entry alone (nothing links the entries of the scenario)."""
    return replace(
        inputs, models=(inputs.model(name),), candidates=tuple(inputs.candidates_of(name))
    )


def test_plan_takes_the_deployment_that_needs_less_energy(
    inputs: PlanningInputs, plan: Plan
) -> None:
    outcomes = {}
    for m in inputs.models:
        one = _entry(inputs, m.name)
        feasible = [c for c in one.candidates if c.feasible]
        agg = _objective(one, [c for c in feasible if not c.disaggregated])
        units = _objective(one, [c for c in feasible if c.disaggregated])
        both = _objective(one, feasible)
        assert agg is not None and units is not None and both is not None
        assert both <= min(agg, units) * (1 + 1e-9)
        used = {a.candidate.deployment for a in plan.allocations if a.candidate.name == m.name}
        # a plan with only aggregated replicas needs at least `agg`, with only units `units`
        if units < agg * (1 - 1e-6):
            assert "disaggregated" in used, (m.name, agg, units)
            outcomes[m.name] = "disaggregated"
        elif agg < units * (1 - 1e-6):
            assert "aggregated" in used, (m.name, agg, units)
            outcomes[m.name] = "aggregated"
    # both outcomes: tight ITL gets units; relaxed ITL at 2 req/s gets aggregated replicas
    assert set(outcomes.values()) == {"aggregated", "disaggregated"}, outcomes


def _alone(inputs: PlanningInputs, c: Candidate, m: ModelDemand) -> float:
    """Facility kWh of *m*'s peak served by the fewest replicas of *c* alone (evenly split)."""
    n = math.ceil(max(m.requests_per_s_by_period) / c.max_requests_per_s_per_replica)
    x = max(m.requests_per_s_by_period)
    return n * c.power_w_per_replica(x / n) * inputs.hours * inputs.pue / 1000.0


def _brute_force(
    inputs: PlanningInputs, cands: list[Candidate], m: ModelDemand
) -> tuple[float, tuple[int, ...]]:
    """Least facility kWh over every replica vector (0 .. ceil(peak / cap) each) with exact
    routing of the single period's load, and the vector."""
    (load,) = m.requests_per_s_by_period
    bounds = [math.ceil(load / c.max_requests_per_s_per_replica) for c in cands]
    best: tuple[float, tuple[int, ...]] = (math.inf, ())
    for ns in itertools.product(*(range(b + 1) for b in bounds)):
        cap = sum(n * c.max_requests_per_s_per_replica for n, c in zip(ns, cands, strict=True))
        if cap < load - 1e-9 or not any(ns):
            continue
        pieces = [deployment_pieces(c, n) for n, c in zip(ns, cands, strict=True) if n]
        idle = sum(n * c.idle_power_w_per_replica for n, c in zip(ns, cands, strict=True))
        kwh = (idle + oracle_watts(pieces, load)) * inputs.hours * inputs.pue / 1000.0
        best = min(best, (kwh, ns))
    return best


def test_choice_between_best_options_matches_brute_force(inputs: PlanningInputs) -> None:
    """Per entry, its best aggregated and best disaggregated option (each serving the load
    alone): the solver's plan on the two is the brute-force optimum, deployment included."""
    for m in inputs.models:
        one = _entry(inputs, m.name)
        pair = [
            min(
                (c for c in one.candidates if c.feasible and c.disaggregated == kind),
                key=lambda c: _alone(one, c, m),
            )
            for kind in (False, True)
        ]
        kwh, ns = _brute_force(one, pair, m)
        result = solve(one.with_candidates(pair), baselines=False)
        assert result.solve.objective == pytest.approx(kwh, rel=1e-6)
        used = {a.candidate.deployment for a in result.allocations if a.replicas}
        assert used == {c.deployment for n, c in zip(ns, pair, strict=True) if n}, m.name


def test_units_add_up_to_their_pools(inputs: PlanningInputs, predictor: Predictor) -> None:
    units = [c for c in inputs.candidates if c.disaggregated]
    assert units and any(c.feasible for c in units)
    for c in units:
        prefill, decode = c.pools
        assert (prefill.role, decode.role) == ("prefill", "decode")
        assert c.gpu == decode.gpu and c.tp == decode.tp
        assert c.gpus_per_replica == prefill.gpus + decode.gpus == sum(n for _, n in c.gpu_use)
        node = {g: validity.node_gpus(predictor.catalog.gpu(g)) for g, _ in c.gpu_use}
        fewest = sum(math.ceil(n / node[g]) for g, n in c.gpu_use)  # nodes of each type, packed
        assert fewest <= c.nodes <= prefill.workers * prefill.gpus + decode.workers * decode.gpus
        if not c.feasible:
            continue
        assert c.max_requests_per_s_per_replica > 0
        assert c.idle_power_w_per_replica == pytest.approx(
            prefill.idle_power_w + decode.idle_power_w
        )
        for k, total in enumerate(c.power_curve_w_per_replica):
            assert total == pytest.approx(prefill.power_curve_w[k] + decode.power_curve_w[k])
        for p in c.pools:  # each pool within [idle, TDP] of its GPUs at every knot
            row = predictor.catalog.gpu(p.gpu)
            assert p.idle_power_w == pytest.approx(float(row["idle_power_w"]) * p.gpus)
            assert all(
                p.idle_power_w - 1e-6 <= w <= float(row["tdp_w"]) * p.gpus + 1e-6
                for w in p.power_curve_w
            )
            assert list(p.power_curve_w) == sorted(p.power_curve_w)


def test_units_record_a_power_interval_around_their_point(inputs: PlanningInputs) -> None:
    """A feasible unit records its pools' power interval per held GPU, as an aggregated replica
    does: idle <= lo <= point <= hi <= TDP, a band of non-zero width, its point the unit's
    power at capacity."""
    units = [c for c in inputs.candidates if c.pools and c.feasible]
    assert units
    for c in units:
        lo, point, hi = c.power_w_per_gpu_lo, c.power_w_per_gpu_predicted, c.power_w_per_gpu_hi
        assert lo is not None and point is not None and hi is not None, c.name
        assert c.idle_power_w_per_gpu is not None and c.tdp_w_per_gpu is not None
        assert c.idle_power_w_per_gpu - 1e-9 <= lo <= point <= hi <= c.tdp_w_per_gpu + 1e-9
        assert hi > lo
        assert point == pytest.approx(c.power_w_per_gpu_at_capacity, rel=1e-12)


def test_default_selection_keeps_the_best_of_each_deployment(
    plan: Plan, monkeypatch: pytest.MonkeyPatch
) -> None:
    import planner.documents.kept as kept

    monkeypatch.setattr(kept, "BEST_ALTERNATIVES", 1)
    allocated = {a.candidate.key for a in plan.allocations}
    chosen = kept.kept_candidates(plan)
    for m in plan.inputs.models:
        mine = [c for c in chosen if c.name == m.name and c.feasible and c.key not in allocated]
        assert {c.deployment for c in mine} == {"aggregated", "disaggregated"}, m.name
        assert len(mine) <= 4  # and the best alone at minimum cost and at minimum energy


def test_plan_json_carries_the_pools_and_verifies(plan: Plan) -> None:
    data = plan_document(plan).to_json_dict()
    assert plan_problems(data) == []
    units = [a for a in data["allocations"] if a.get("deployment") == "disaggregated"]
    assert units and all(list(a)[-2:] == ["deployment", "pools"] for a in units)
    assert all(
        list(a)[-1] == "deployment" and a["deployment"] == "aggregated"
        for a in data["allocations"]
        if a not in units
    )
    a = units[0]
    for key in ("power_w_by_period", "pools"):
        assert key in a
    assert sum(p["power_w_by_period"][0] for p in a["pools"]) == pytest.approx(
        a["power_w_by_period"][0]
    )
    assert data["totals"]["gpus"] == {
        g: sum(
            x["replicas"] * p["gpus"] if x.get("pools") else x["gpus"]
            for x in data["allocations"]
            for p in (x.get("pools") or [{"gpu": x["gpu"]}])
            if p["gpu"] == g
        )
        for g in data["totals"]["gpus"]
    }
    i = data["allocations"].index(a)

    def tampered(edit: Any) -> list[str]:
        bad = copy.deepcopy(data)
        edit(bad)
        return plan_problems(bad)

    def pool_power(d: dict[str, Any]) -> None:
        d["allocations"][i]["pools"][0]["power_w_by_period"][0] *= 1.5

    def pool_gpus(d: dict[str, Any]) -> None:
        d["allocations"][i]["pools"][1]["gpus"] += 1

    def unit_curve(d: dict[str, Any]) -> None:
        (j,) = [k for k, c in enumerate(d["candidates"]) if c.get("pools") and c["feasible"]][:1]
        d["candidates"][j]["pools"][1]["power_curve_w"][-1] += 50.0

    assert any(f"allocations[{i}].pools[0].power_w_by_period" in p for p in tampered(pool_power))
    assert any(f"allocations[{i}].pools" in p for p in tampered(pool_gpus))
    assert any("not the sum of its pools' power_curve_w" in p for p in tampered(unit_curve))

    # the pool's idle and at-capacity power were once carried into reports unchecked
    for key in ("idle_power_w", "power_w_at_capacity"):

        def pool_figure(d: dict[str, Any], key: str = key) -> None:
            d["allocations"][i]["pools"][1][key] = 1.0

        assert any(
            p.startswith(f"allocations[{i}].pools[1].{key}: 1.0") for p in tampered(pool_figure)
        )


@pytest.mark.slow  # plans every bundled scenario twice: 3.2 s
def test_default_is_aggregated_and_keeps_plans(predictor: Predictor) -> None:
    base = load_scenario(PAPER)
    assert base.deployment == "aggregated"
    before = planning_inputs(base, predictor)
    assert not any(c.disaggregated for c in before.candidates)
    text = json.dumps(plan_document(solve(before)).to_json_dict())
    assert '"deployment"' not in text and '"pools"' not in text
    both = planning_inputs(base.model_copy(update={"deployment": "both"}), predictor)
    assert [c for c in both.candidates if not c.disaggregated] == list(before.candidates)
    assert any(c.disaggregated for c in both.candidates)
    only = planning_inputs(base.model_copy(update={"deployment": "disaggregated"}), predictor)
    assert only.candidates and all(c.disaggregated for c in only.candidates)


def test_bad_deployment_is_one_line_with_did_you_mean(predictor: Predictor) -> None:
    data = {
        "name": "x",
        "region": "US",
        "electricity_usd_per_kwh": 0.1,
        "deployment": "disagregated",
        "gpus": {"H100-SXM5-80GB": {}},
        "models": [
            {
                "name": "m",
                "model": "meta-llama/Llama-3.1-8B-Instruct",
                "load": {"requests_per_s": 1, "input_tokens": 100, "output_tokens": 100},
                "sla": {"itl_ms": 50},
            }
        ],
    }
    with pytest.raises(WattgpuError) as info:
        scenario_from_dict(data, "s.yaml", predictor.catalog)
    (line,) = str(info.value).splitlines()
    assert line.startswith("s.yaml: deployment: ") and "disaggregated" in line and " — " in line


# --- hand-built units: inventory of both pools' GPU types --------------------------------------


def _unit(name: str, prefill: str, decode: str, cap: float, idle: float, top: float) -> Candidate:
    pools = (
        Pool(
            "prefill",
            prefill,
            1,
            2,
            power_curve_w=(idle / 2, top / 2),
            idle_power_w=idle / 2,
            power_w_at_capacity=top / 2,
        ),  # fmt: skip
        Pool(
            "decode",
            decode,
            2,
            1,
            power_curve_w=(idle / 2, top / 2),
            idle_power_w=idle / 2,
            power_w_at_capacity=top / 2,
        ),  # fmt: skip
    )
    return Candidate(
        name=name,
        model="m",
        gpu=decode,
        tp=1,
        gpus_per_replica=4,
        feasible=True,
        reason="",
        batch_size=8,
        itl_s_at_capacity=0.01,
        max_requests_per_s_per_replica=cap,
        idle_power_w_per_replica=idle,
        energy_j_per_request=(top - idle) / cap,
        usd_per_hour_per_replica=4.0,
        power_w_per_gpu_at_capacity=top / 4,
        load_curve_requests_per_s=(0.0, cap),
        power_curve_w_per_replica=(idle, top),
        deployment="disaggregated",
        pools=pools,
    )


def _aggregated(name: str, gpu: str, cap: float, idle: float, top: float) -> Candidate:
    return Candidate(
        name=name,
        model="m",
        gpu=gpu,
        tp=1,
        gpus_per_replica=1,
        feasible=True,
        reason="",
        batch_size=8,
        itl_s_at_capacity=0.01,
        max_requests_per_s_per_replica=cap,
        idle_power_w_per_replica=idle,
        energy_j_per_request=(top - idle) / cap,
        usd_per_hour_per_replica=1.0,
        power_w_per_gpu_at_capacity=top,
        load_curve_requests_per_s=(0.0, cap),
        power_curve_w_per_replica=(idle, top),
    )


def _gpu_brute_force(inputs: PlanningInputs) -> float:
    """Least kWh of one model over replica vectors within the inventory (GPUs per type of
    each candidate's gpu_use), exact routing."""
    (m,) = inputs.models
    (load,) = m.requests_per_s_by_period
    cands = list(inputs.candidates)
    best = math.inf
    for ns in itertools.product(*(range(12) for _ in cands)):
        cap = sum(n * c.max_requests_per_s_per_replica for n, c in zip(ns, cands, strict=True))
        used: dict[str, int] = {}
        for n, c in zip(ns, cands, strict=True):
            for g, k in c.gpu_use:
                used[g] = used.get(g, 0) + n * k
        over = any(
            used.get(g, 0) > (v if v is not None else math.inf) for g, v in inputs.inventory.items()
        )
        if cap < load - 1e-9 or over:
            continue
        pieces = [deployment_pieces(c, n) for n, c in zip(ns, cands, strict=True) if n]
        idle = sum(n * c.idle_power_w_per_replica for n, c in zip(ns, cands, strict=True))
        best = min(best, (idle + oracle_watts(pieces, load)) * inputs.hours * inputs.pue / 1000)
    return best


@pytest.mark.parametrize("available_a", [0, 2, 5, 9])
def test_inventory_counts_both_pools(available_a: int) -> None:
    """A mixed unit (A prefill, B decode) is the cheapest option; A is scarce: the solver
    (unlinked, and linked by a power cap) counts the unit's A GPUs, and the plan is the
    brute-force optimum."""
    cands = (
        _unit("m", "A", "B", cap=4.0, idle=400.0, top=900.0),
        _aggregated("m", "B", cap=0.6, idle=100.0, top=400.0),
        _aggregated("m", "A", cap=0.7, idle=100.0, top=350.0),
    )
    inputs = PlanningInputs(
        scenario="mixed",
        models=(ModelDemand("m", "m", (6.0,), 0.05),),
        candidates=cands,
        inventory={"A": available_a, "B": 12},
        period_hours=(100.0,),
        pue=1.2,
        electricity_usd_per_kwh=0.1,
        grid_g_co2_per_kwh=300.0,
        objective=Objective(minimize="energy"),
    )
    expected = _gpu_brute_force(inputs)
    for linked in (None, 10_000.0):  # unlinked search, then column generation under a cap
        capped = replace(inputs, power_cap_kw=linked)
        result = solve(capped, baselines=False)
        if math.isinf(expected):
            assert not result.has_solution
            continue
        assert result.solve.objective == pytest.approx(expected, rel=1e-6)
        assert check_invariants(result, capped) == []
        a_used = sum(
            a.replicas * k for a in result.allocations for g, k in a.candidate.gpu_use if g == "A"
        )
        assert a_used <= available_a
        assert result.totals is not None and result.totals.gpus.get("A", 0) == a_used


# --- compare --deployment ----------------------------------------------------------------------


COMPARE = dict(
    model="meta-llama/Llama-3.1-8B-Instruct",
    requests_per_s=20.0,
    itl_ms=4.5,
    ttft_ms=400.0,
    input_tokens=8000.0,
    output_tokens=500.0,
    gpus=("H100-SXM5-80GB",),
)


@pytest.mark.slow  # 1.3-2 s: the default run stays under 2 minutes
def test_compare_deployment_rows(predictor: Predictor) -> None:
    from planner.analysis.compare import CompareRequest, compare, compare_csv_columns

    default = compare(CompareRequest(**COMPARE), predictor)  # type: ignore[arg-type]
    data = default.to_json_dict()
    assert "deployment" not in data["request"]
    assert all("deployment_kind" not in r for r in data["rows"])
    assert "deployment_kind" not in compare_csv_columns(default)
    both = compare(CompareRequest(**COMPARE, deployment="both"), predictor)  # type: ignore[arg-type]
    kinds = [r.deployment_kind for r in both.rows]
    # a "mixed" row appears only where the best fleet holds replicas and units (2026-12-07 on)
    assert sorted(set(kinds) - {"mixed"}) == ["aggregated", "disaggregated"]
    assert kinds.count("aggregated") == kinds.count("disaggregated") == 1
    (agg,) = [r for r in both.rows if r.deployment_kind == "aggregated"]
    assert agg.energy_kwh == pytest.approx(default.rows[0].energy_kwh, rel=1e-9)
    assert both.rows[0].energy_kwh <= both.rows[1].energy_kwh  # ranked by energy
    units = compare(CompareRequest(**COMPARE, deployment="disaggregated"), predictor)  # type: ignore[arg-type]
    assert [r.deployment_kind for r in units.rows] == ["disaggregated"]
    assert units.rows[0].deployment.endswith("]") and "P " in units.rows[0].deployment


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_unserved_reasons_name_both_deployments(predictor: Predictor) -> None:
    from planner.solve.explain import unserved_reasons

    scenario = load_scenario(SCENARIO)
    entry = scenario.models[0].model_copy(
        update={"sla": scenario.models[0].sla.model_copy(update={"itl_ms": 1.0})}
    )
    tight = scenario.model_copy(update={"models": [entry]})
    inputs = planning_inputs(tight, predictor)
    assert not any(c.feasible for c in inputs.candidates)
    reasons = unserved_reasons(inputs.models[0], list(inputs.candidates))
    assert any(r.startswith("misses the ITL SLA") for r in reasons)
    assert any(r.startswith("disaggregated: misses the ITL SLA") for r in reasons)


def test_report_shows_the_pools(plan: Plan, predictor: Predictor) -> None:
    from planner.report.build import build_report
    from planner.report.markdown import render_markdown

    report = build_report(plan_document(plan), predictor.card)
    text = render_markdown(report)
    assert "→" in text and re.search(r"\[\d+× H100-SXM5-80GB TP\d+ → \d+× H100", text)
    # the disclosure's idle/active table tells a unit's rows apart by their pools
    units = [a for a in plan.allocations if a.candidate.pools]
    assert units
    layouts = [r.layout for r in report.disclosure.idle_active]
    assert all(a.candidate.layout in layouts for a in units), layouts
    assert all(f"| {a.candidate.layout} |" in text for a in units)


@pytest.mark.slow  # a plan, a report and a schema check in fresh CLI runs (~2 s)
@pytest.mark.usefixtures("cached_predictor")
def test_saved_plan_with_flagged_units_verifies(tmp_path: Path) -> None:
    """``wattgpu plan --format json`` flags units by their pools (an aggregated TP 8 replica
    and a unit whose decode workers are TP 8 on the same GPU are two flags), and the file
    re-checks and reports."""
    out = tmp_path / "plan.json"
    assert run_cli("plan", "disagg-tight-sla", "--format", "json", "-o", str(out)).code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert plan_problems(data) == []
    flags = data["uncertainty_flags"]["flags"]
    assert any("→" in f["gpu"] for f in flags)
    assert len({(f["name"], f["gpu"], f["tp"]) for f in flags}) == len(flags)
    report = run_cli("report", str(out), "--format", "md", "-o", str(tmp_path / "r.md"))
    assert report.code == 0, report.err
