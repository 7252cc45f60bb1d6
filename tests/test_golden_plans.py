"""The example scenarios: JSON contract of issue 5, invariants, and golden plans.

Every example scenario except the large generated one is planned once (module fixture) with the
trained predictors; its JSON form must carry every contract key with the right type, every
allocation must use a feasible candidate, and :func:`check_invariants` must find nothing. The
paper's and the enterprise scenario's whole plan JSON — candidates (every coefficient the optimiser
used), allocations, totals, baselines, assumptions — must match tests/golden/*.json within a
relative tolerance of 1e-6; only ``solve`` (wall-clock time, solver messages) is not compared.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from test_routing_oracle import deployment_pieces, oracle_watts

from planner.analysis.flags import uncertainty_flags
from planner.pipeline import PlanRun, plan_file
from planner.report.plan_view import render_plan
from planner.result import check_invariants
from predictors.api import Predictor
from tests.bundled_runs import BundledRuns

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = ("paper-llama8b-low-load", "enterprise-fleet", "eu-power-cap-carbon")
GOLDEN = ("paper-llama8b-low-load", "enterprise-fleet")
REL_TOL = 1e-6
STALE_HINT = (
    "the plan differs from tests/golden/{stem}.json. If the trained predictors (or the capacity "
    "model / solver) changed on purpose, regenerate with `python tools/update_golden.py` and "
    "review the diff."
)

NUM = (int, float)
OPT_NUM = (int, float, type(None))
OPT_INT = (int, type(None))
#: key -> allowed types of the JSON contract (issue 5, "Output").
TOP = {
    "scenario": str,
    "status": str,
    "solve": dict,
    "assumptions": dict,
    "models": list,
    "inventory": dict,
    "candidates": list,
    "allocations": list,
    "totals": dict,
    "baselines": list,
}
SOLVE = {"seconds": NUM, "gap": OPT_NUM}
ASSUMPTIONS = {
    "hours": NUM,
    "periods": int,
    "period_hours": list,
    "pue": NUM,
    "electricity_usd_per_kwh": NUM,
    "grid_g_co2_per_kwh": NUM,
    "power_cap_kw": OPT_NUM,
    "budget_usd": OPT_NUM,
    "objective": dict,
}
MODEL = {
    "name": str,
    "model": str,
    "requests_per_s_by_period": list,
    "itl_sla_s": NUM,
    "ttft_sla_s": OPT_NUM,
    "min_replicas": int,
}
CANDIDATE = {
    "name": str,
    "model": str,
    "gpu": str,
    "tp": int,
    "gpus_per_replica": int,
    "feasible": bool,
    "reason": str,
    "batch_size": int,
    "itl_s_at_capacity": OPT_NUM,
    "max_requests_per_s_per_replica": NUM,
    "idle_power_w_per_replica": NUM,
    "energy_j_per_request": NUM,
    "usd_per_hour_per_replica": NUM,
}
ALLOCATION = {
    "name": str,
    "model": str,
    "gpu": str,
    "tp": int,
    "replicas": int,
    "gpus": int,
    "requests_per_s_by_period": list,
    "batch_size": int,
    "itl_s": NUM,
    "power_w_per_gpu": NUM,
    "energy_kwh": NUM,
    "cost_usd": NUM,
    "carbon_kg": NUM,
}
TOTALS = {
    "energy_kwh": NUM,
    "facility_energy_kwh": NUM,
    "cost_usd": NUM,
    "energy_cost_usd": NUM,
    "gpu_cost_usd": NUM,
    "carbon_kg": NUM,
    "mean_power_w": NUM,
    "gpus": dict,
}
BASELINE = {"name": str, "feasible": bool, "energy_kwh": OPT_NUM, "cost_usd": OPT_NUM}
BASELINE |= {"carbon_kg": OPT_NUM}


@pytest.fixture(scope="module")
def runs(bundled: BundledRuns) -> dict[str, PlanRun]:
    """Every example scenario (except large-generated), planned once per session."""
    return {s: bundled[s] for s in SCENARIOS}


def _check_keys(where: str, obj: dict[str, Any], spec: dict[str, Any]) -> None:
    for key, types in spec.items():
        assert key in obj, f"{where}: missing key {key!r}"
        value = obj[key]
        assert isinstance(value, types), f"{where}.{key}: {type(value).__name__} not {types}"
        if types in (NUM, OPT_NUM) or int in (types if isinstance(types, tuple) else (types,)):
            assert not isinstance(value, bool), f"{where}.{key}: bool where a number is due"


@pytest.mark.parametrize("stem", SCENARIOS)
def test_json_contract(runs: dict[str, PlanRun], stem: str) -> None:
    text = render_plan(runs[stem].plan, "json")
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text)
    _check_keys("plan", data, TOP)
    assert data["scenario"] == runs[stem].scenario.name
    assert data["status"] in ("optimal", "feasible"), data["solve"].get("messages")
    if data["status"] == "feasible":
        assert data["solve"]["gap"] is not None and data["solve"]["gap"] <= 0.01
    _check_keys("solve", data["solve"], SOLVE)
    _check_keys("assumptions", data["assumptions"], ASSUMPTIONS)
    assert "minimize" in data["assumptions"]["objective"]
    periods = data["assumptions"]["periods"]
    assert len(data["assumptions"]["period_hours"]) == periods
    for i, m in enumerate(data["models"]):
        _check_keys(f"models[{i}]", m, MODEL)
        assert len(m["requests_per_s_by_period"]) == periods
    assert len({m["name"] for m in data["models"]}) == len(data["models"])
    for gpu, count in data["inventory"].items():
        assert isinstance(gpu, str) and isinstance(count, OPT_INT)
    for i, c in enumerate(data["candidates"]):
        _check_keys(f"candidates[{i}]", c, CANDIDATE)
        assert c["feasible"] or c["reason"], f"candidates[{i}]: excluded without a reason"
    assert data["allocations"], "a solved example scenario allocates something"
    for i, a in enumerate(data["allocations"]):
        _check_keys(f"allocations[{i}]", a, ALLOCATION)
        assert len(a["requests_per_s_by_period"]) == periods
        assert a["gpus"] == a["replicas"] * a["tp"]
    _check_keys("totals", data["totals"], TOTALS)
    assert sum(data["totals"]["gpus"].values()) == sum(a["gpus"] for a in data["allocations"])
    assert [b["name"] for b in data["baselines"]] == [
        "best-tflops-per-w",
        "h100",
        "cheapest-per-hour",
    ]
    for i, b in enumerate(data["baselines"]):
        _check_keys(f"baselines[{i}]", b, BASELINE)
        assert (b["energy_kwh"] is not None) == b["feasible"]


@pytest.mark.parametrize("stem", SCENARIOS)
def test_allocations_use_feasible_candidates(runs: dict[str, PlanRun], stem: str) -> None:
    run = runs[stem]
    feasible = {c.key for c in run.inputs.candidates if c.feasible}
    for a in run.plan.allocations:
        assert a.candidate.key in feasible, f"{a.candidate.label} is not a feasible candidate"
        assert a.replicas > 0
    assert check_invariants(run.plan, run.inputs) == []


def _diff(path: str, want: Any, got: Any, out: list[str]) -> None:
    """Differences between golden *want* and *got*, floats within REL_TOL."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            if key not in want or key not in got:
                out.append(f"{path}.{key}: only in {'golden' if key in want else 'plan'}")
            else:
                _diff(f"{path}.{key}", want[key], got[key], out)
    elif isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            out.append(f"{path}: {len(want)} entries in golden, {len(got)} in the plan")
        for i, (w, g) in enumerate(zip(want, got, strict=False)):
            _diff(f"{path}[{i}]", w, g, out)
    elif isinstance(want, float) or isinstance(got, float):
        ok = isinstance(want, NUM) and isinstance(got, NUM)
        if not ok or not math.isclose(want, got, rel_tol=REL_TOL, abs_tol=1e-9):
            out.append(f"{path}: golden {want!r}, plan {got!r}")
    elif want != got:
        out.append(f"{path}: golden {want!r}, plan {got!r}")


@pytest.mark.parametrize("stem", GOLDEN)
def test_golden_plan(runs: dict[str, PlanRun], stem: str) -> None:
    golden_path = REPO / "tests" / "golden" / f"{stem}.json"
    assert golden_path.exists(), f"{golden_path} missing — run `python tools/update_golden.py`"
    want = json.loads(golden_path.read_text(encoding="utf-8"))
    got = json.loads(render_plan(runs[stem].plan, "json", flags=uncertainty_flags(runs[stem])))
    got["solve"].pop("seconds")
    problems: list[str] = []
    for key in sorted((set(want) | set(got)) - {"solve"}):
        _diff(key, want.get(key), got.get(key), problems)
    assert not problems, STALE_HINT.format(stem=stem) + "\n" + "\n".join(problems[:20])


def test_diff_reports_relative_tolerance() -> None:
    out: list[str] = []
    _diff("x", {"a": 1.0, "b": [1, 2]}, {"a": 1.0 + 1e-9, "b": [1, 2]}, out)
    assert out == []
    _diff("x", {"a": 1.0}, {"a": 1.001}, out)
    assert out == ["x.a: golden 1.0, plan 1.001"]


@pytest.mark.parametrize("stem", SCENARIOS)
def test_power_at_served_load_meets_the_busy_share_bound(
    runs: dict[str, PlanRun], stem: str
) -> None:
    """Every allocation's mean power per GPU >= the hours-weighted mean over periods of
    idle + (1 - e^-b)(P1 - idle), b = per-replica req/s × output tokens × ITL at batch 1 and
    P1 = predicted batch-1 power (at most TDP): the least a GPU busy that share of the time draws.
    """
    run = runs[stem]
    plan, scenario = run.plan, run.scenario
    assert plan.allocations
    predictor = Predictor.load()
    entries = {e.name: e for e in scenario.models}
    rows = pl.DataFrame(
        [
            {
                "model": a.candidate.model,
                "gpu": a.candidate.gpu,
                "gpu_count": a.candidate.tp,
                "engine": scenario.engine,
                "precision": entries[a.candidate.name].precision or scenario.precision,
                "batch_size": 1,
                "input_tokens": entries[a.candidate.name].load.input_tokens,
                "output_tokens": entries[a.candidate.name].load.output_tokens,
            }
            for a in plan.allocations
        ]
    )
    pred = predictor.predict(rows)
    hours = plan.inputs.period_hours
    for a, p in zip(plan.allocations, pred.iter_rows(named=True), strict=True):
        gpu = predictor.catalog.gpu(a.candidate.gpu)
        idle, tdp = float(gpu["idle_power_w"]), float(gpu["tdp_w"])
        p1 = min(p["power_w_per_gpu"], tdp)
        out = entries[a.candidate.name].load.output_tokens
        bound = sum(
            h * (idle + (1 - math.exp(-(x / a.replicas) * out * p["itl_s"])) * (p1 - idle))
            for x, h in zip(a.requests_per_s_by_period, hours, strict=True)
        ) / sum(hours)
        assert a.power_w_per_gpu >= bound - 1e-9, (a.candidate.label, a.power_w_per_gpu, bound)


@pytest.mark.parametrize("stem", SCENARIOS)
def test_uncertainty_bands_are_physical(runs: dict[str, PlanRun], stem: str) -> None:
    """Every example plan: each allocation's clipped power interval lies in [idle, TDP] around
    the point prediction, and every band (per allocation, model and total) is ordered."""
    from planner.analysis.uncertainty import bands

    b = bands(runs[stem].plan, 0.9)
    assert len(b.allocations) == len(runs[stem].plan.allocations)
    for row in b.allocations:
        p = row.power_w_per_gpu
        assert row.idle_power_w_per_gpu <= p.low <= p.median <= p.high, row
        assert row.tdp_w is not None and p.high <= max(row.tdp_w, p.median), row
        assert row.energy_kwh.low <= row.energy_kwh.median <= row.energy_kwh.high, row
    for fb in [b.total, *b.models.values()]:
        for band in (fb.energy_kwh, fb.facility_energy_kwh, fb.cost_usd, fb.carbon_kg):
            assert band.low <= band.median <= band.high
    totals = runs[stem].plan.totals
    assert totals is not None
    assert b.total.energy_kwh.median == pytest.approx(totals.energy_kwh)


@pytest.mark.parametrize("stem", SCENARIOS)
@pytest.mark.parametrize("limit", ["budget_usd", "power_cap_kw"])
@pytest.mark.parametrize("factor", [0.995, 1.005])
def test_limit_just_past_the_optimum_gives_a_plan_or_a_proof(
    runs: dict[str, PlanRun], stem: str, limit: str, factor: float
) -> None:
    """Issue 23, edges of limits: a budget or cap 0.5 % past the optimum's cost or peak power,
    both ways, gives a plan within the limit (with a valid bound, gap <= 100 %) or a proven
    infeasibility with a message, never ``error``."""
    base = runs[stem].plan
    value = base.totals.cost_usd if limit == "budget_usd" else base.totals.peak_facility_power_kw
    run = plan_file(
        REPO / "scenarios" / f"{stem}.yaml",
        [f"{limit}={value * factor!r}"],
        predictor=runs[stem].predictor,
        baselines=False,
    )
    plan = run.plan
    assert plan.status.value in ("optimal", "feasible", "infeasible"), plan.solve.messages
    if plan.status.value == "infeasible":
        assert plan.solve.messages and not plan.allocations
        assert factor < 1.0, "a looser limit than the optimum's own cannot be infeasible"
        return
    assert check_invariants(plan, run.inputs) == []
    objective = plan.objective_breakdown["objective"]
    assert plan.solve.bound is not None and plan.solve.bound <= objective * (1 + 1e-9)
    assert plan.solve.gap is not None and 0.0 <= plan.solve.gap <= 1.0
    if factor > 1.0:  # the unconstrained optimum still fits: same objective
        assert objective == pytest.approx(base.objective_breakdown["objective"], rel=1e-6)


@pytest.mark.parametrize("stem", SCENARIOS)
def test_example_is_optimal_on_its_curves_with_exact_routing(
    runs: dict[str, PlanRun], stem: str
) -> None:
    """Issue 23, item 1: each example is proven optimal to 1e-6 against a valid bound, and every
    model's split across its deployments is, in every period, the least watts that the
    independent piece-by-piece oracle finds for those replicas."""
    plan = runs[stem].plan
    assert plan.status.value == "optimal"
    assert plan.solve.gap is not None and plan.solve.gap <= 1e-6
    by_model: dict[str, list[Any]] = {}
    for a in plan.allocations:
        by_model.setdefault(a.candidate.name, []).append(a)
    for m in runs[stem].inputs.models:
        allocs = by_model[m.name]
        pieces = [deployment_pieces(a.candidate, a.replicas) for a in allocs]
        for t, load in enumerate(m.requests_per_s_by_period):
            served = sum(a.requests_per_s_by_period[t] for a in allocs)
            assert served == pytest.approx(load, rel=1e-9)
            watts = sum(
                a.replicas
                * (
                    a.candidate.power_w_per_replica(a.requests_per_s_by_period[t] / a.replicas)
                    - a.candidate.idle_power_w_per_replica
                )
                for a in allocs
            )
            assert watts == pytest.approx(oracle_watts(pieces, load), rel=1e-6, abs=1e-6), (
                m.name,
                t,
            )
