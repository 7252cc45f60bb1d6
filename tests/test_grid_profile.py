"""The hourly grid profile in the optimiser's inputs (``grid_g_co2_per_kwh_by_period``).

A hand-built case where the hourly factors change the carbon-optimal fleet: one model that is
busy in a clean period and idle in a dirty one, on two candidates with the same capacity —
``frugal`` (100 W idle, 100 J per request) and ``hungry-idle`` (300 W idle, 20 J per request).
Per period of h hours at 10 req/s then 0 req/s:

* flat factor: energy frugal = (100 + 1000 + 100) W·h = 1200 h, hungry-idle = (300 + 200 + 300)
  W·h = 800 h, so ``hungry-idle`` has the least carbon;
* profile 100 / 1000 g per kWh: frugal = 1100 × 100 + 100 × 1000 = 210,000 h, hungry-idle =
  500 × 100 + 300 × 1000 = 350,000 h (g·W·h/kWh), so ``frugal`` has the least carbon.

The solver weighs each period's facility kWh by that period's intensity, so on the profile it
picks ``frugal``. The other tests check the hourly objective against brute force on every solver
path, that a constant profile equal to the flat factor plans exactly the flat plan, and that a
saved hourly plan re-verifies, forecasts and reports the same carbon.
"""

from __future__ import annotations

import math
import random
import re
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.analysis.forecast import forecast
from planner.documents.plan import as_document, load_plan, plan_json
from planner.documents.verify import plan_problems
from planner.inputs import Candidate, ModelDemand, Objective, PlanningInputs
from planner.pipeline import plan_file
from planner.report.build import make_report
from planner.report.markdown import render_markdown
from planner.result import PlanStatus, check_invariants, period_power_w
from planner.solve import optimize
from planner.solve.optimize import solve
from predictors.api import Predictor
from predictors.core.errors import WattgpuError
from predictors.core.output import write_output
from tests.test_optimize import brute_force, random_instance


def _candidate(gpu: str, idle_w: float, j_per_request: float) -> Candidate:
    return Candidate(
        name="chat",
        model="org/chat",
        gpu=gpu,
        tp=1,
        gpus_per_replica=1,
        feasible=True,
        reason="",
        batch_size=8,
        itl_s_at_capacity=0.02,
        max_requests_per_s_per_replica=20.0,
        idle_power_w_per_replica=idle_w,
        energy_j_per_request=j_per_request,
        usd_per_hour_per_replica=1.0,
        power_w_per_gpu_at_capacity=idle_w + j_per_request * 20.0,
    )


def inputs(profile: tuple[float, ...] | None) -> PlanningInputs:
    return PlanningInputs(
        scenario="grid-profile",
        models=(ModelDemand("chat", "org/chat", (10.0, 0.0), itl_sla_s=0.05),),
        candidates=(_candidate("frugal", 100.0, 100.0), _candidate("hungry-idle", 300.0, 20.0)),
        inventory={"frugal": None, "hungry-idle": None},
        period_hours=(12.0, 12.0),
        grid_g_co2_per_kwh=550.0,
        objective=Objective("carbon"),
        grid_g_co2_per_kwh_by_period=profile,
    )


def chosen(plan_inputs: PlanningInputs) -> set[str]:
    plan = solve(plan_inputs, baselines=False)
    assert plan.has_solution
    return {a.candidate.gpu for a in plan.allocations if a.replicas}


def test_flat_factor_picks_the_low_energy_fleet() -> None:
    assert chosen(inputs(None)) == {"hungry-idle"}


def test_on_the_hourly_factors_the_other_fleet_emits_less() -> None:
    """The premise of the test below, from each one-candidate plan's own period powers."""
    profile = (100.0, 1000.0)
    base = inputs(profile)
    hourly_kg = {}
    for c in base.candidates:
        plan = solve(base.with_candidates([c]), baselines=False)
        (a,) = [a for a in plan.allocations if a.replicas]
        watts = period_power_w(c, a.replicas, a.requests_per_s_by_period)
        hourly_kg[c.gpu] = sum(
            w * h / 1000.0 * g / 1000.0
            for w, h, g in zip(watts, base.period_hours, profile, strict=True)
        )
    assert hourly_kg["frugal"] == pytest.approx(1100 * 12 / 1e6 * 100 + 100 * 12 / 1e6 * 1000)
    assert hourly_kg["frugal"] < hourly_kg["hungry-idle"]


def test_hourly_profile_changes_the_carbon_optimal_fleet() -> None:
    assert chosen(inputs((100.0, 1000.0))) == {"frugal"}


def test_profile_length_is_checked() -> None:
    with pytest.raises(WattgpuError, match="3 values for 2 periods"):
        replace(inputs(None), grid_g_co2_per_kwh_by_period=(1.0, 2.0, 3.0))


# --- every solver path against brute force on hourly factors ----------------------------------

PROFILE_VALUES = (0.0, 40.0, 300.0, 900.0)
"""Grid intensities drawn per period (g/kWh): far apart, so the hours decide."""
CARBON_OBJECTIVES = (
    Objective("carbon"),
    Objective("cost"),
    Objective("weighted", {"energy_kwh": 0.3, "cost_usd": 1.0, "carbon_kg": 0.05}),
)


def hourly_instance(seed: int, *, curved: bool = False) -> PlanningInputs:
    """A tiny instance of tests/test_optimize.py with a random grid profile and an objective
    that carbon enters (carbon, cost with a carbon price, weighted)."""
    rng = random.Random(seed)
    base = random_instance(rng, n_models=2, n_cands=2, periods=3, curved=curved)
    return replace(
        base,
        objective=CARBON_OBJECTIVES[seed % len(CARBON_OBJECTIVES)],
        carbon_usd_per_kg=0.1,
        grid_g_co2_per_kwh_by_period=tuple(rng.choice(PROFILE_VALUES) for _ in range(3)),
    )


def _unlinked(inputs: PlanningInputs) -> PlanningInputs:
    return replace(
        inputs, inventory={g: None for g in inputs.inventory}, power_cap_kw=None, budget_usd=None
    )


@pytest.mark.parametrize(
    "seed", [*range(4), *(pytest.param(s, marks=pytest.mark.slow) for s in range(4, 12))]
)
@pytest.mark.parametrize("path", ["default", "decomposed", "column-generation"])
def test_hourly_optimum_equals_brute_force(
    seed: int, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The full MILP (small linked instances), the per-model decomposition (unlinked) and column
    generation (forced) each find the brute-force optimum on the hourly factors."""
    inputs = hourly_instance(seed)
    if path == "decomposed":
        inputs = _unlinked(inputs)
    if path == "column-generation":
        monkeypatch.setattr(optimize, "MONOLITHIC_MAX_MODELS", 0)
    expected = brute_force(inputs)
    plan = solve(inputs, baselines=False)
    assert check_invariants(plan, inputs) == []
    if expected is None:
        assert plan.status == PlanStatus.INFEASIBLE
        return
    assert plan.status == PlanStatus.OPTIMAL, plan.solve.messages
    assert plan.objective_breakdown["objective"] == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_brute_force_sees_the_profile() -> None:
    """The premise of the test above: on these seeds the hourly optimum is not the flat one."""
    differs = 0
    for seed in range(12):
        hourly = hourly_instance(seed)
        flat = replace(hourly, grid_g_co2_per_kwh_by_period=None)
        a, b = brute_force(hourly), brute_force(flat)
        differs += a is not None and b is not None and not math.isclose(a, b, rel_tol=1e-6)
    assert differs >= 6


# --- a constant profile is the flat factor ---------------------------------------------------


def _json_without(plan_inputs: PlanningInputs, *drop: str) -> dict[str, Any]:
    data = plan_json(solve(plan_inputs, baselines=False))
    data["solve"].pop("seconds")
    for key in drop:
        data["assumptions"].pop(key, None)
    return data


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), curved=st.booleans(), linked=st.booleans())
def test_constant_profile_at_the_annual_factor_plans_the_flat_plan(
    seed: int, curved: bool, linked: bool
) -> None:
    inputs = hourly_instance(seed, curved=curved)
    inputs = inputs if linked else _unlinked(inputs)
    flat = replace(inputs, grid_g_co2_per_kwh_by_period=None)
    constant = replace(
        inputs, grid_g_co2_per_kwh_by_period=(inputs.grid_g_co2_per_kwh,) * inputs.periods
    )
    key = "grid_g_co2_per_kwh_by_period"
    assert _json_without(constant, key) == _json_without(flat, key)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), g=st.sampled_from((0.0, 55.5, 1200.0)))
def test_constant_profile_plans_as_that_flat_factor(seed: int, g: float) -> None:
    """A constant profile that differs from the annual factor is that factor in every hour."""
    inputs = hourly_instance(seed)
    constant = replace(inputs, grid_g_co2_per_kwh_by_period=(g,) * inputs.periods)
    flat = replace(inputs, grid_g_co2_per_kwh=g, grid_g_co2_per_kwh_by_period=None)
    keys = ("grid_g_co2_per_kwh_by_period", "grid_g_co2_per_kwh")
    assert _json_without(constant, *keys) == _json_without(flat, *keys)


# --- the saved hourly plan: objective, verification, forecast --------------------------------


def test_hourly_plan_accounts_verifies_and_forecasts_the_hourly_carbon() -> None:
    profile = (100.0, 1000.0)
    plan = solve(inputs(profile), baselines=False)
    assert plan.totals is not None
    (a,) = [a for a in plan.allocations if a.replicas]
    watts = period_power_w(a.candidate, a.replicas, a.requests_per_s_by_period)
    kg = sum(w * 12.0 / 1000.0 * g / 1000.0 for w, g in zip(watts, profile, strict=True))
    assert plan.totals.carbon_kg == pytest.approx(kg, rel=1e-12)
    breakdown = plan.objective_breakdown
    assert breakdown["carbon_kg_weight"] == 1.0 and breakdown["usd_per_facility_kwh_weight"] == 0.0
    assert breakdown["objective"] == pytest.approx(kg, rel=1e-12)
    data = plan_json(plan)
    assert data["assumptions"]["grid_g_co2_per_kwh_by_period"] == list(profile)
    assert plan_problems(data) == []
    fc = forecast(plan)
    assert fc.total.horizon.carbon_kg == pytest.approx(kg, rel=1e-12)
    assert [p.carbon_kg for p in fc.total.by_period] == pytest.approx(
        [w * 12.0 / 1e6 * g for w, g in zip(watts, profile, strict=True)], rel=1e-12
    )


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda a: a["grid_g_co2_per_kwh_by_period"].__setitem__(1, 900.0), "carbon_kg"),
        (lambda a: a.pop("grid_g_co2_per_kwh_by_period"), "carbon_kg"),
        (
            lambda a: a["grid_g_co2_per_kwh_by_period"].append(5.0),
            "assumptions.grid_g_co2_per_kwh_by_period: 3 values for 2 periods",
        ),
    ],
)
def test_an_edited_grid_profile_fails_the_plan_check(edit: Any, field: str) -> None:
    data = plan_json(solve(inputs((100.0, 1000.0)), baselines=False))
    edit(data["assumptions"])
    problems = plan_problems(data)
    assert any(field in p for p in problems), problems


# --- the docs/scenarios.md example on a bundled scenario ---------------------------------------

REPO = Path(__file__).resolve().parent.parent


def docs_profile_example() -> dict[str, Any]:
    """The YAML block of docs/scenarios.md that sets a grid profile."""
    text = (REPO / "docs" / "scenarios.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^( *)```yaml\n(.*?)^\1```", text, flags=re.MULTILINE | re.DOTALL)
    (block,) = [textwrap.dedent(b) for _, b in blocks if "grid_profile_g_co2_per_kwh:" in b]
    data: dict[str, Any] = yaml.safe_load(block)
    return data


@pytest.mark.slow  # about 1 s: the default run stays under 2 minutes
def test_docs_example_plans_the_bundled_scenario_on_the_hours(tmp_path: Path) -> None:
    example = docs_profile_example()
    scenario = yaml.safe_load((REPO / "scenarios" / "eu-power-cap-carbon.yaml").read_text())
    scenario["objective"] = example["objective"]
    scenario["disclosure"].update(example["disclosure"])
    path = tmp_path / "hourly.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False), encoding="utf-8")
    run = plan_file(path, predictor=Predictor.load())
    assert run.plan.has_solution, run.plan.solve.messages
    profile = example["disclosure"]["grid_profile_g_co2_per_kwh"]
    data = plan_json(run.plan)
    a = data["assumptions"]
    assert a["grid_g_co2_per_kwh_by_period"] == profile and len(profile) == a["periods"] == 24
    hours, pue = a["period_hours"], a["pue"]
    kg = sum(
        p * h / 1000.0 * pue * g / 1000.0
        for al in data["allocations"]
        for p, h, g in zip(al["power_w_by_period"], hours, profile, strict=True)
    )
    assert data["totals"]["carbon_kg"] == pytest.approx(kg, rel=1e-9)
    assert data["solve"]["objective"] == pytest.approx(kg, rel=1e-9)
    saved = tmp_path / "plan.json"
    write_output(saved, as_document(run.plan).model_dump_json())
    doc = load_plan(saved)  # re-verified on read: the hourly carbon recomputes
    report, _ = make_report(doc, run.predictor_card)
    assert report.disclosure is not None
    hourly = report.disclosure.fields["emissions_hourly_kg_co2e"].value
    assert hourly == pytest.approx(kg, rel=1e-9)
    assert len(report.disclosure.hourly) == 24
    assert "hourly profile 276–446 gCO2e/kWh over 24 periods" in render_markdown(report)
