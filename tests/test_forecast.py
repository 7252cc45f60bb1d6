"""Forecast arithmetic, uncertainty bands, the Pareto front and plan diffs on hand-made inputs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.analysis.diff import diff_files, diff_plans, load_plan_json
from planner.analysis.forecast import HOURS_PER_MONTH, HOURS_PER_YEAR, forecast
from planner.analysis.pareto import nondominated, pareto_front
from planner.analysis.uncertainty import bands
from planner.cli.app import app
from planner.documents.forecast import GridDocument
from planner.documents.pareto import ParetoPointDocument
from planner.documents.plan import load_plan, plan_document, plan_json
from planner.inputs import Candidate, ModelDemand, Objective, PlanningInputs
from planner.result import Plan
from planner.solve.optimize import solve
from predictors.core.errors import WattgpuError

HOURS = (10.0, 14.0)


def cand(
    name: str,
    gpu: str,
    *,
    cap: float = 2.0,
    idle_w: float = 100.0,
    e_j: float = 50.0,
    usd_h: float = 1.0,
    tp: int = 1,
) -> Candidate:
    return Candidate(
        name=name,
        model="meta-llama/Llama-3.1-8B-Instruct",
        gpu=gpu,
        tp=tp,
        gpus_per_replica=tp,
        feasible=True,
        reason="",
        batch_size=8,
        itl_s_at_capacity=0.02,
        max_requests_per_s_per_replica=cap,
        idle_power_w_per_replica=idle_w,
        energy_j_per_request=e_j,
        usd_per_hour_per_replica=usd_h,
        power_w_per_gpu_at_capacity=idle_w + e_j * cap,
    )


def one_model_inputs(**overrides: object) -> PlanningInputs:
    base = PlanningInputs(
        scenario="hand",
        models=(
            ModelDemand(
                "chat",
                "meta-llama/Llama-3.1-8B-Instruct",
                (3.0, 1.0),
                0.05,
                input_tokens=500,
                output_tokens=200,
            ),
        ),
        candidates=(cand("chat", "L4"),),
        inventory={"L4": None},
        period_hours=HOURS,
        pue=1.5,
        electricity_usd_per_kwh=0.2,
        grid_g_co2_per_kwh=400.0,
        carbon_usd_per_kg=0.05,
        objective=Objective(minimize="cost"),
    )
    return replace(base, **overrides)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def plan() -> Plan:
    p = solve(one_model_inputs(), baselines=False)
    assert p.has_solution
    return p


def test_forecast_hand_arithmetic(plan: Plan) -> None:
    # 2 replicas (peak 3 req/s, 2 req/s each); power 2·100 W + 50 J × x
    (a,) = plan.allocations
    assert a.replicas == 2
    grid = GridDocument(g_co2_per_kwh=400.0, region="DE", year=2023, source="catalog")
    fc = forecast(plan, grid)
    p1, p2 = fc.total.by_period
    assert p1.energy_kwh == pytest.approx((200 + 150) * 10 / 1000)  # 3.5 kWh
    assert p2.energy_kwh == pytest.approx((200 + 50) * 14 / 1000)  # 3.5 kWh
    h = fc.total.horizon
    assert h.energy_kwh == pytest.approx(7.0)
    assert h.facility_energy_kwh == pytest.approx(10.5)
    assert h.electricity_cost_usd == pytest.approx(2.1)
    assert h.carbon_kg == pytest.approx(4.2)
    assert h.carbon_cost_usd == pytest.approx(0.21)
    assert h.gpu_cost_usd == pytest.approx(2 * 1.0 * 24)
    assert h.total_cost_usd == pytest.approx(48 + 2.1 + 0.21)
    # the forecast agrees with the plan's own accounting
    assert plan.totals is not None
    assert h.energy_kwh == pytest.approx(plan.totals.energy_kwh)
    assert h.total_cost_usd == pytest.approx(plan.totals.cost_usd)
    assert h.carbon_kg == pytest.approx(plan.totals.carbon_kg)
    # month / year scaling of a 24 h horizon
    assert fc.total.per_month.energy_kwh == pytest.approx(7.0 * HOURS_PER_MONTH / 24)
    assert fc.total.per_year.carbon_kg == pytest.approx(4.2 * HOURS_PER_YEAR / 24)
    (m,) = fc.models
    assert m.requests == pytest.approx((3 * 10 + 1 * 14) * 3600)
    assert m.output_tokens == pytest.approx(m.requests * 200)
    assert m.mean_power_w == pytest.approx(7000 / 24)
    assert m.gpus == {"L4": 2}
    data = fc.to_json_dict()
    assert data["grid"] == {
        "g_co2_per_kwh": 400.0,
        "region": "DE",
        "year": 2023,
        "source": "catalog",
    }
    assert data["total"]["horizon"]["total_cost_usd"] == pytest.approx(h.total_cost_usd)
    assert len(data["models"][0]["by_period"]) == 2
    assert "2023" in fc.grid.describe() and "DE" in fc.grid.describe()


def test_forecast_per_model_sums_to_total() -> None:
    inputs = one_model_inputs(
        models=(
            ModelDemand(
                "a", "meta-llama/Llama-3.1-8B-Instruct", (3.0, 1.0), 0.05, output_tokens=100
            ),
            ModelDemand(
                "b", "meta-llama/Llama-3.1-8B-Instruct", (0.5, 4.0), 0.05, output_tokens=100
            ),
        ),
        candidates=(cand("a", "L4"), cand("b", "L4", cap=3.0, e_j=20.0)),
    )
    p = solve(inputs, baselines=False)
    fc = forecast(p)
    total = sum(m.horizon.energy_kwh for m in fc.models)
    assert total == pytest.approx(fc.total.horizon.energy_kwh)
    assert fc.model("b").gpus == {"L4": 2}
    assert p.totals is not None
    assert fc.total.horizon.facility_energy_kwh == pytest.approx(p.totals.facility_energy_kwh)


def plan_with_interval(lo: float, mid: float, hi: float, tdp: float = 300.0) -> Plan:
    """The hand plan with the power interval its candidate recorded (idle 100 W per GPU)."""
    c = replace(
        cand("chat", "L4"),
        power_w_per_gpu_predicted=mid,
        power_w_per_gpu_lo=lo,
        power_w_per_gpu_hi=hi,
        idle_power_w_per_gpu=100.0,
        tdp_w_per_gpu=tdp,
    )
    p = solve(one_model_inputs(candidates=(c,)), baselines=False)
    assert p.has_solution
    return p


# e(P) = (P - idle) / saturated req/s, saturated = cap / 0.9 = 2.222 req/s
MID_W = 100 + 50 * 2 / 0.9  # the point power that gives the plan's 50 J/request


def test_bands_hand_arithmetic_and_order() -> None:
    plan = plan_with_interval(120.0, MID_W, 400.0)
    b = bands(plan, level=0.9)
    e = b.total.energy_kwh
    assert e.median == pytest.approx(7.0)
    e_hi = (300 - 100) * 0.45  # clipped to TDP 300 W -> 90 J/request
    assert e.high == pytest.approx(((200 + e_hi * 3) * 10 + (200 + e_hi) * 14) / 1000)
    e_lo = (120 - 100) * 0.45
    assert e.low == pytest.approx(((200 + e_lo * 3) * 10 + (200 + e_lo) * 14) / 1000)
    for band in (
        b.total.energy_kwh,
        b.total.facility_energy_kwh,
        b.total.cost_usd,
        b.total.carbon_kg,
    ):
        assert band.low <= band.median <= band.high
    assert b.total.cost_usd.high - b.total.cost_usd.median == pytest.approx(
        (e.high - e.median) * 1.5 * (0.2 + 0.4 * 0.05)
    )
    assert b.models["chat"].carbon_kg == b.total.carbon_kg
    (row,) = b.allocations
    assert row.energy_j_per_request.high == pytest.approx(e_hi)
    assert row.power_w_per_gpu.high == 300.0 and row.power_w_per_gpu_unclipped.high == 400.0
    assert "interval" in b.method and b.to_json_dict()["interval_level"] == 0.9


def test_bands_from_saved_plan_json_equal_bands_from_plan(tmp_path: Path) -> None:
    plan = plan_with_interval(120.0, MID_W, 400.0)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan_json(plan)))
    assert bands(load_plan(path), 0.9) == bands(plan, 0.9)


def test_bands_scale_recorded_power_above_idle() -> None:
    # any load model: the band scales the plan's recorded per-period power above idle
    doc = plan_document(plan_with_interval(120.0, MID_W, 400.0))
    (a,) = doc.allocations
    odd = doc.model_copy(
        update={"allocations": [a.model_copy(update={"power_w_by_period": [260.0, 210.0]})]}
    )
    f_hi = (300 - 100) / (MID_W - 100)  # 1.8
    e = bands(odd).total.energy_kwh
    assert e.median == pytest.approx((260 * 10 + 210 * 14) / 1000)
    assert e.high == pytest.approx(((200 + 60 * f_hi) * 10 + (200 + 10 * f_hi) * 14) / 1000)


def test_bands_keep_order_when_bounds_are_odd() -> None:
    # a bound beyond the point on the wrong side never inverts the band
    b = bands(plan_with_interval(500.0, 150.0, 90.0, tdp=120.0))
    for band in (b.total.energy_kwh, b.total.cost_usd, b.total.carbon_kg):
        assert band.low <= band.median <= band.high


def test_bands_need_the_recorded_interval(plan: Plan) -> None:
    with pytest.raises(WattgpuError, match="no power interval"):
        bands(plan)


def tradeoff_inputs() -> PlanningInputs:
    # cheap and hungry, dear and frugal, and one between: mixing replicas gives a front
    return one_model_inputs(
        models=(ModelDemand("chat", "meta-llama/Llama-3.1-8B-Instruct", (7.0, 5.0), 0.05),),
        candidates=(
            cand("chat", "L4", cap=2.0, idle_w=300.0, e_j=200.0, usd_h=1.0),
            cand("chat", "H100", cap=2.0, idle_w=60.0, e_j=40.0, usd_h=3.0),
            cand("chat", "A100", cap=2.0, idle_w=150.0, e_j=90.0, usd_h=1.8),
        ),
        inventory={"L4": None, "H100": 2, "A100": 2},
        electricity_usd_per_kwh=0.1,
        carbon_usd_per_kg=None,
    )


def test_pareto_front_monotone_and_ends() -> None:
    inputs = tradeoff_inputs()
    chosen = solve(inputs)
    front = pareto_front(inputs, points=6, chosen=chosen)
    pts = front.points
    assert len(pts) >= 3
    for a, b in zip(pts, pts[1:], strict=False):
        assert b.cost_usd > a.cost_usd
        assert b.facility_energy_kwh <= a.facility_energy_kwh
    min_cost = solve(replace(inputs, objective=Objective(minimize="cost")), baselines=False).totals
    min_energy = solve(
        replace(inputs, objective=Objective(minimize="energy")), baselines=False
    ).totals
    assert min_cost is not None and min_energy is not None
    assert pts[0].cost_usd == pytest.approx(min_cost.cost_usd, rel=1e-6)
    assert pts[-1].facility_energy_kwh == pytest.approx(min_energy.facility_energy_kwh, rel=1e-6)
    for p in pts:
        if p.epsilon_usd is not None:
            assert p.cost_usd <= p.epsilon_usd * (1 + 1e-6)
    assert front.chosen is not None
    assert front.chosen.cost_usd == pytest.approx(min_cost.cost_usd, rel=1e-6)
    data = front.to_json_dict()
    assert data["method"].startswith("ε-constraint") and len(data["points"]) == len(pts)
    assert [b["label"] for b in data["baselines"]] == [
        f"baseline: {b.name}" for b in chosen.baselines if b.totals is not None
    ]


def test_nondominated_drops_dominated_and_ties() -> None:
    def pt(label: str, cost: float, kwh: float) -> ParetoPointDocument:
        return ParetoPointDocument(
            label=label,
            epsilon_usd=None,
            status="optimal",
            facility_energy_kwh=kwh,
            energy_kwh=kwh,
            cost_usd=cost,
            carbon_kg=0.0,
            gpus={},
        )

    kept = nondominated([pt("a", 10, 5), pt("b", 12, 6), pt("c", 11, 4), pt("d", 11, 4)])
    assert [p.label for p in kept] == ["a", "c"]


def test_pareto_of_infeasible_inputs_says_why() -> None:
    inputs = replace(tradeoff_inputs(), inventory={"L4": 0, "H100": 0, "A100": 0})
    front = pareto_front(inputs, points=3)
    assert front.points == [] and "infeasible" in front.messages[0]


def test_a_front_over_fewer_candidates_than_the_plan_had_says_so() -> None:
    """A saved plan keeping only its best candidates re-solves its front over those: the front
    may miss lower-energy or cheaper plans, and the method now says so."""
    inputs = tradeoff_inputs()
    doc = plan_document(solve(inputs))
    assert doc.candidate_counts is not None and doc.candidate_counts.total == 3
    fewer = inputs.with_candidates(inputs.candidates[1:])
    assert "--candidates all" in pareto_front(fewer, points=2, chosen=doc).method
    assert "--candidates all" not in pareto_front(inputs, points=2, chosen=doc).method


def test_diff_plans(tmp_path: Path) -> None:
    a = plan_json(solve(tradeoff_inputs()))
    b_inputs = replace(
        tradeoff_inputs(),
        models=(ModelDemand("chat", "meta-llama/Llama-3.1-8B-Instruct", (9.0, 5.0), 0.05),),
    )
    b = plan_json(solve(b_inputs))
    d = diff_plans(a, b)
    assert not d.identical
    assert any(c.where.startswith("models.chat.requests_per_s_by_period") for c in d.models)
    energy = next(c for c in d.totals if c.where == "totals.energy_kwh")
    assert energy.delta == pytest.approx(b["totals"]["energy_kwh"] - a["totals"]["energy_kwh"])
    assert energy.pct is not None
    assert d.added or d.removed or d.allocations
    assert diff_plans(a, a).identical and diff_plans(a, a).lines()[-1] == "no differences"
    # status change is reported
    infeasible = dict(b, status="infeasible", allocations=[], totals=None)
    d2 = diff_plans(a, infeasible)
    assert any(c.where == "status" for c in d2.scenario)
    assert len(d2.removed) == len(a["allocations"])
    # CLI on files
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    assert diff_files(pa, pb).to_json_dict()["identical"] is False
    result = CliRunner().invoke(app, ["diff", str(pa), str(pb)])
    assert result.exit_code == 0, result.output
    assert "totals.energy_kwh" in result.output
    result = CliRunner().invoke(app, ["diff", str(pa), str(pb), "--format", "json"])
    assert json.loads(result.output)["totals"]


def test_diff_names_the_inventory_and_region_changes() -> None:
    """docs/reports.md's what-if (``--set gpus.X.available=0``, then diff) showed the fleet
    change but not its cause: the plan's ``inventory`` (and each region's settings) were not
    compared."""
    a = plan_json(solve(tradeoff_inputs()))
    b = plan_json(solve(replace(tradeoff_inputs(), inventory={"L4": None, "H100": 0, "A100": 2})))
    d = diff_plans(a, b)
    (change,) = [c for c in d.assumptions if c.where.startswith("inventory.")]
    assert (change.where, change.before, change.after) == ("inventory.H100", 2, 0)
    assert "inventory.H100: 2 -> 0" in "\n".join(d.lines())
    region = {"name": "eu", "pue": 1.2, "power_cap_kw": None, "inventory": {"H100": 2},
              "totals": {"energy_kwh": 1.0}}  # fmt: skip
    a_r = dict(a, regions=[region])
    b_r = dict(a, regions=[dict(region, pue=1.4, inventory={"H100": 4}, totals={})])
    wheres = [c.where for c in diff_plans(a_r, b_r).assumptions]
    assert wheres == ["regions.eu.inventory", "regions.eu.pue"], wheres
    assert diff_plans(a_r, a_r).identical


def test_diff_bad_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(WattgpuError, match="not valid JSON"):
        load_plan_json(bad)
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"scenario": "x"}))
    with pytest.raises(WattgpuError, match="partial.json: not a valid plan JSON: status: Field"):
        load_plan_json(partial)
    with pytest.raises(WattgpuError, match="no such file"):
        load_plan_json(tmp_path / "absent.json")
