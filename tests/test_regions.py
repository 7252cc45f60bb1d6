"""Regions in the scenario, the plan and its documents (issue 23 item 4).

The solver's exactness with regions is checked against brute force in ``test_regions_oracle``;
this module checks the scenario section (one line per bad field, with did-you-mean), the plan of
a two-region scenario (each entry in one allowed region, each region's inventory and power cap,
its PUE, price and hourly grid in the accounting), the plan JSON (``region`` last, ``regions``
last, verify-on-read catching edits), that one region equal to the top-level fields plans the
same fleet as no region, and that a cap below what the entries need is proven infeasible.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planner.pipeline import PlanRun, plan_file
from planner.result import Plan, PlanStatus, check_invariants, period_power_w, region_totals
from planner.text import to_json
from predictors.core.errors import WattgpuError

FIXTURE = Path(__file__).parent / "fixtures" / "regions.yaml"


@pytest.fixture(scope="module")
def run() -> PlanRun:
    return plan_file(FIXTURE, baselines=False)


@pytest.mark.parametrize(
    ("override", "field", "expected"),
    [
        ("models[1].regions=[de, fx]", "models[1].regions[1]", "did you mean: fr?"),
        ("regions.fr.pu=1.3", "regions.fr.pu", "did you mean: pue"),
        ("power_cap_kw=3", "power_cap_kw", "give each region's power_cap_kw"),
        ("regions.fr.grid_profile_g_co2_per_kwh=[1, 2]", "regions.fr.grid_profile", "2 values"),
        ("regions.fr.gpus.A100-SXM4-80GB.available=3", "regions.fr.gpus.A100", "not listed"),
        ("regions.fr.region=FRR", "regions.fr.region", "did you mean: FR"),
        ("regions.de.grid_g_co2_per_kwh=100", "regions.fr.grid", "never"),
        ("regions.fr.grid_g_co2_per_kwh=100", "regions.fr.grid_g_co2_per_kwh", "give one"),
        ("models[0].regions=[]", "models[0].regions", "omit it"),
        ("regions={}", "regions", "no regions listed"),
        ('regions[" "]={}', "regions", "blank region name"),
        ("regions.fr.pue=0.5", "regions.fr.pue", ""),
        ("region=null", "region", "the plan's reference grid"),
    ],
)
def test_bad_region_input_is_one_line_naming_the_field(
    override: str, field: str, expected: str
) -> None:
    from planner.scenario.load import load_scenario

    if expected == "never":  # an explicit grid on a region without a catalog region is fine
        load_scenario(FIXTURE, [override])
        return
    with pytest.raises(WattgpuError) as info:
        load_scenario(FIXTURE, [override])
    lines = str(info.value).splitlines()
    assert len(lines) == 1, lines
    assert f": {field}" in lines[0] and expected in lines[0], lines[0]


def test_an_empty_region_name_is_named_at_load() -> None:
    """An empty region name was a "planning inputs" error without the file after validate
    said ok."""
    from planner.scenario.load import load_scenario

    blank = r'regions\.yaml --set regions=\{"": \{\}\}: regions: blank region name'
    with pytest.raises(WattgpuError, match=blank):
        load_scenario(FIXTURE, ['regions={"": {}}'])


def test_entries_without_regions_cannot_name_one() -> None:
    from planner.scenario.bundled import find_scenario
    from planner.scenario.load import load_scenario

    with pytest.raises(WattgpuError, match=r"models\[0\]\.regions: the scenario has no regions"):
        load_scenario(find_scenario("paper-llama8b-low-load"), ["models[0].regions=[eu]"])


def _site_accounting_holds(plan: Plan) -> None:
    """Every allocation's figures at its own region's PUE, price and grid (per period)."""
    inputs = plan.inputs
    for a in plan.allocations:
        r = inputs.site(a.candidate)
        watts = period_power_w(a.candidate, a.replicas, a.requests_per_s_by_period)
        grid = r.grid_by_period(inputs.periods)
        kwh = [w * h / 1000 for w, h in zip(watts, inputs.period_hours, strict=True)]
        assert a.facility_energy_kwh == pytest.approx(sum(kwh) * r.pue, rel=1e-12)
        assert a.energy_cost_usd == pytest.approx(
            a.facility_energy_kwh * r.electricity_usd_per_kwh, rel=1e-12
        )
        carbon = sum(e * r.pue * g / 1000 for e, g in zip(kwh, grid, strict=True))
        assert a.carbon_kg == pytest.approx(carbon, rel=1e-9)


def test_two_region_plan_places_each_entry_in_one_allowed_region(run: PlanRun) -> None:
    plan, inputs = run.plan, run.plan.inputs
    assert plan.status == PlanStatus.OPTIMAL, plan.solve.messages
    assert check_invariants(plan, inputs) == []
    allowed = {"hr-assistant": {"de"}, "legal-review": {"de", "fr"}, "search-rewrite": {"de", "fr"}}
    placed: dict[str, set[str]] = {}
    for a in plan.allocations:
        placed.setdefault(a.candidate.name, set()).add(a.candidate.region)
    assert set(placed) == set(allowed)
    for name, regions in placed.items():
        assert len(regions) == 1 and regions <= allowed[name], (name, regions)
    totals = region_totals(plan.allocations, inputs)
    fr = totals["fr"]
    assert fr.gpus.get("L4", 0) <= 4  # France's own inventory
    assert totals["de"].peak_facility_power_kw <= 2.5 * (1 + 1e-9)  # Germany's cap
    assert plan.totals is not None
    for key in ("energy_kwh", "facility_energy_kwh", "cost_usd", "carbon_kg"):
        assert getattr(plan.totals, key) == pytest.approx(
            sum(getattr(t, key) for t in totals.values()), rel=1e-12
        )
    _site_accounting_holds(plan)
    # France's GPU price: its H100 replicas cost 2.5 $/GPU-hour
    for a in plan.allocations:
        c = a.candidate
        if c.region == "fr" and c.gpu == "H100-SXM5-80GB":
            assert c.usd_per_hour_per_replica == pytest.approx(2.5 * c.gpus_per_replica)


def test_plan_json_carries_regions_and_verifies(run: PlanRun, tmp_path: Path) -> None:
    from planner.documents.plan import load_plan, plan_json

    data = plan_json(run.plan)
    assert list(data)[-1] == "regions"
    assert [r["name"] for r in data["regions"]] == ["de", "fr"]
    for record in (*data["allocations"], *data["candidates"]):
        assert list(record)[-1] == "region"
    path = tmp_path / "plan.json"
    path.write_text(to_json(data), encoding="utf-8")
    doc = load_plan(path)
    assert doc.regions is not None
    # a region's PUE edited: its allocations no longer recompute
    edited = json.loads(to_json(data))
    fr = next(r for r in edited["regions"] if r["name"] == "fr")
    fr["pue"] = 1.1
    path.write_text(to_json(edited), encoding="utf-8")
    with pytest.raises(WattgpuError, match=r"allocations\[\d\]\.facility_energy_kwh"):
        load_plan(path)
    edited = json.loads(to_json(data))
    edited["regions"][1]["totals"]["cost_usd"] *= 1.01
    path.write_text(to_json(edited), encoding="utf-8")
    with pytest.raises(WattgpuError, match=r"regions\[1\]\.totals\.cost_usd"):
        load_plan(path)
    edited = json.loads(to_json(data))
    edited["regions"][1]["inventory"]["L4"] = 0
    path.write_text(to_json(edited), encoding="utf-8")
    if any(a["gpu"] == "L4" and a["region"] == "fr" for a in data["allocations"]):
        with pytest.raises(WattgpuError, match="allocated in region fr"):
            load_plan(path)


def test_saved_plan_replans_to_the_same_objective(run: PlanRun) -> None:
    """The plan's inputs rebuilt from its JSON (regions included) solve to the same optimum."""
    from planner.documents.plan import plan_document, planning_inputs_of
    from planner.solve.optimize import solve

    doc = plan_document(run.plan, "all")
    again = solve(planning_inputs_of(doc), baselines=False)
    assert again.status == PlanStatus.OPTIMAL
    assert again.objective_breakdown["objective"] == pytest.approx(
        run.plan.objective_breakdown["objective"], rel=1e-9
    )


def test_tables_and_report_show_the_region(run: PlanRun) -> None:
    from planner.report.build import make_report
    from planner.report.plan_view import render_plan

    table = render_plan(run.plan, "md")
    assert "| region |" in table and "## regions" in table
    options = render_plan(run.plan, "md", candidates="best")
    alternatives = options.split("## best feasible alternatives")[1].split("## ")[0]
    assert "| region |" in alternatives and "| fr |" in alternatives
    report, _ = make_report(run.plan, run.predictor_card)
    deployments = [d.region for m in report.models for d in m.deployments]
    assert set(deployments) <= {"de", "fr"} and None not in deployments
    assert report.forecast.total.horizon.facility_energy_kwh == pytest.approx(
        run.plan.totals.facility_energy_kwh if run.plan.totals else 0.0, rel=1e-9
    )
    # the forecast's PUE is the regions' facility / GPU energy, between their PUEs
    horizon = report.forecast.total.horizon
    assert report.forecast.pue == pytest.approx(horizon.facility_energy_kwh / horizon.energy_kwh)
    used = {run.plan.inputs.site(a.candidate).pue for a in run.plan.allocations}
    assert min(used) - 1e-12 <= report.forecast.pue <= max(used) + 1e-12


def _objective(*overrides: str, name: str = "eu-power-cap-carbon") -> tuple[Plan, Any]:
    plan = plan_file(name, overrides, baselines=False).plan
    keys = sorted(
        (a.candidate.name, a.candidate.gpu, a.candidate.layout, a.replicas)
        for a in plan.allocations
    )
    return plan, keys


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_one_region_like_the_top_level_plans_the_same_fleet() -> None:
    """A scenario whose one region repeats the top-level fields (the cap moved into it) plans
    the same fleet at the same objective as the scenario without regions."""
    plain, fleet = _objective()
    one, fleet_one = _objective("power_cap_kw=null", "regions={site: {power_cap_kw: 3.9}}")
    assert plain.status == one.status == PlanStatus.OPTIMAL
    assert fleet_one == fleet
    assert one.objective_breakdown["objective"] == pytest.approx(
        plain.objective_breakdown["objective"], rel=1e-9
    )


@pytest.mark.slow
def test_caps_below_the_need_are_proven_infeasible() -> None:
    plan = plan_file(
        FIXTURE, ["regions.de.power_cap_kw=0.2", "regions.fr.power_cap_kw=0.2"], baselines=False
    ).plan
    assert plan.status == PlanStatus.INFEASIBLE
    text = " ".join(plan.solve.messages)
    assert "power cap" in text and "valid lower bound" in text, text
    assert plan.solve.seconds < 10


def test_plans_without_regions_name_none() -> None:
    from planner.documents.plan import plan_json

    data = plan_json(_objective(name="paper-llama8b-low-load")[0])
    assert "regions" not in data
    assert all("region" not in r for r in (*data["allocations"], *data["candidates"]))


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_sweep_takes_regions_and_refuses_a_site_axis_in_one_line(tmp_path: Path) -> None:
    """A sweep of a scenario with regions re-plans every draw over the regions; a grid axis of
    a figure each region sets for itself (electricity, grid, power cap, inventory) is refused."""
    from tests.cli_runner import run_cli

    out = tmp_path / "sweep.json"
    result = run_cli("sweep", str(FIXTURE), "--draws", "4", "-f", "json", "-o", str(out))
    assert result.code == 0, result.err
    assert json.loads(out.read_text(encoding="utf-8"))["summary"]["draws_with_plan"] == 4
    result = run_cli(
        "sweep", str(FIXTURE), "--draws", "4", "--set", "sweep.grid.power_cap_kw=[1, 2]"
    )
    assert result.code == 1
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "sweep.grid.power_cap_kw: the scenario has regions" in lines[0]


@pytest.mark.slow  # plans a pooled proof: 4.5 s
def test_too_few_gpus_over_regions_is_proven_by_pooling_them() -> None:
    """Regions with disaggregated units and too few L40S: column generation stopped after a
    fraction of a second without a plan and without a proof, and said "no plan found within the
    time limit of 60 s ... raise time_limit_s", which more time does not change. The pooled
    relaxation (every region's GPUs on one site, no caps, no budget) now proves it and names the
    GPU."""
    overrides = [
        "deployment=both",
        "gpus.H100-SXM5-80GB.available=null",
        "gpus.L40S.available=5",
        "models[1].allowed_gpus=[L40S]",
        "models[2].allowed_gpus=[L40S]",
    ]
    plan = plan_file(FIXTURE, overrides, baselines=False).plan
    assert plan.status == PlanStatus.INFEASIBLE, plan.solve.messages
    (message,) = plan.solve.messages
    assert message.startswith("no plan exists even with every region's GPUs pooled"), message
    assert "L40S needs 7 GPUs, has 5" in message, message
    assert plan.solve.seconds < 30
