"""The disclosure fields (report ``disclosure``) against a hand calculation from the plan JSON.

Every figure is recomputed here from the plan JSON dict and the catalog CSV files alone, with
units written out (W × h / 1000 = kWh, kWh × 3.6e6 = J, g / 1000 = kg, kg / 1000 = t), so that
a slip by 10³ in any unit fails. The property test varies the scenario's disclosure inputs
(lifetime, resource share, marginal and market intensity, WUE, host factor) over the same plan.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.analysis.forecast import forecast
from planner.analysis.uncertainty import bands as plan_bands
from planner.cli.app import app  # noqa: F401  (the CLI must import with the new formats)
from planner.disclosure.build import build_disclosure
from planner.disclosure.ranges import ranges_from_bands
from planner.documents.disclosure import DisclosureDocument
from planner.documents.plan import PlanDocument, as_document
from planner.pipeline import PlanRun, plan_file
from planner.report.build import make_report
from planner.report.markdown import render_markdown
from planner.scenario.disclosure import Disclosure
from predictors.api import Predictor
from predictors.catalog.store import load_catalog
from tests.bundled_runs import BundledRuns

REPO = Path(__file__).resolve().parent.parent
SCENARIO = """\
name: disclosure-test
horizon_hours: 720
region: DE
pue: 1.25
electricity_usd_per_kwh: 0.2
objective: {minimize: energy}
gpus:
  L4: {}
  A100-SXM4-80GB: {}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s_by_period: [2.0, 0.5], input_tokens: 512, output_tokens: 256}
    sla: {itl_ms: 60}
  - name: small
    model: meta-llama/Llama-3.2-1B-Instruct
    load: {requests_per_s_by_period: [4.0, 1.0], input_tokens: 256, output_tokens: 64}
    sla: {itl_ms: 40}
disclosure:
  persona: consumer
  reporting_start: "2026-03-01"
  lifetime_years: 4
  resource_share: 0.5
  host_overhead_factor: 1.3
  wue_l_per_kwh: 1.8
  wue_source: site meter 2025 (test)
  marginal_g_co2_per_kwh: 600
  marginal_source: test marginal figure
  market_g_co2_per_kwh: 120
  market_basis: contractual_instruments
  market_source: test PPA
  market_year: 2025
  renewable_share: 0.7
  grid_profile_g_co2_per_kwh: [500, 250]
  grid_profile_source: test profile
  training_energy_kwh: 12345
  training_source: model card (test)
"""
KWH_PER_WH = 1 / 1000.0
J_PER_KWH = 3.6e6
HOURS_PER_YEAR = 8760.0
REL = 1e-9


def _csv(name: str) -> dict[str, dict[str, str]]:
    with (REPO / "catalogs" / name).open(encoding="utf-8") as f:
        return {row["id"]: row for row in csv.DictReader(f)}


GPUS = _csv("gpus.csv")
LLMS = _csv("llms.csv")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> PlanRun:
    path = tmp_path_factory.mktemp("disclosure") / "s.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    r = plan_file(path, predictor=Predictor.load())
    assert r.plan.has_solution, r.plan.solve.messages
    return r


@pytest.fixture(scope="module")
def plan_json(run: PlanRun) -> dict[str, Any]:
    return as_document(run.plan).to_json_dict()


def _disclose(doc: PlanDocument) -> DisclosureDocument:
    bands = plan_bands(doc, 0.9)
    return build_disclosure(doc, forecast(doc), ranges_from_bands(bands), load_catalog())


def _close(a: Any, b: float) -> None:
    assert isinstance(a, float | int), a
    assert math.isclose(a, b, rel_tol=REL, abs_tol=1e-12), (a, b)


def hand(plan: dict[str, Any]) -> dict[str, float]:
    """Every fleet figure recomputed from the plan JSON dict and the catalog CSVs."""
    a = plan["assumptions"]
    d = a.get("disclosure") or {}
    hours = a["period_hours"]
    window_h = sum(hours)
    cand = {(c["name"], c["gpu"], c["tp"]): c for c in plan["candidates"]}
    models = {m["name"]: m for m in plan["models"]}
    gpu_kwh = idle_kwh = prefill_kwh = te_kg = 0.0
    per_period_kwh = [0.0] * len(hours)
    for al in plan["allocations"]:
        c = cand[(al["name"], al["gpu"], al["tp"])]
        wh = [p_w * h for p_w, h in zip(al["power_w_by_period"], hours, strict=True)]
        kwh = sum(wh) * KWH_PER_WH
        gpu_kwh += kwh
        per_period_kwh = [x + y * KWH_PER_WH for x, y in zip(per_period_kwh, wh, strict=True)]
        idle_kwh += min(al["replicas"] * c["idle_power_w_per_replica"] * window_h * KWH_PER_WH, kwh)
        out_tok = models[al["name"]]["output_tokens"]
        share = c["ttft_s"] / (c["ttft_s"] + out_tok * al["itl_s_at_served_load"])
        prefill_kwh += kwh * share
        tdp_w = float(GPUS[al["gpu"]]["tdp_w"])
        te_kg += al["gpus"] * round(318.0 * tdp_w / 400.0, 1)
    requests = tokens = flops = 0.0
    for m in plan["models"]:
        n = sum(x * h * 3600.0 for x, h in zip(m["requests_per_s_by_period"], hours, strict=True))
        requests += n
        tokens += n * m["output_tokens"]
        llm = LLMS[m["model"]]
        l_in, l_out = m["input_tokens"], m["output_tokens"]
        linear = 2.0 * float(llm["active_params_b"]) * 1e9 * (l_in + l_out)
        ctx = l_in * (l_in + 1) / 2 + l_out * l_in + l_out * (l_out + 1) / 2
        attn = 4.0 * int(llm["num_layers"]) * int(llm["num_attention_heads"]) * int(llm["head_dim"])
        flops += n * (linear + attn * ctx)
    pue = a["pue"]
    facility_kwh = gpu_kwh * pue
    grid_g = a["grid_g_co2_per_kwh"]
    lifetime = d.get("lifetime_years", 5.0)
    rs = d.get("resource_share", 1.0)
    ts = window_h / (lifetime * HOURS_PER_YEAR)
    m_kg = te_kg * ts * rs
    marginal = d.get("marginal_g_co2_per_kwh")
    sci_intensity = marginal if marginal is not None else grid_g
    o_kg = facility_kwh * sci_intensity / 1000.0
    out = {
        "reporting_window_hours": window_h,
        "energy_gpu_kwh": gpu_kwh,
        "energy_gpu_mwh": gpu_kwh / 1000.0,
        "energy_facility_kwh": facility_kwh,
        "energy_facility_mwh": facility_kwh / 1000.0,
        "energy_idle_kwh": idle_kwh,
        "energy_active_kwh": gpu_kwh - idle_kwh,
        "energy_prefill_j_per_output_token": prefill_kwh * J_PER_KWH / tokens,
        "energy_decode_j_per_output_token": (gpu_kwh - prefill_kwh) * J_PER_KWH / tokens,
        "energy_j_per_output_token": gpu_kwh * J_PER_KWH / tokens,
        "energy_wh_per_1000_output_tokens": gpu_kwh * 1000.0 / tokens * 1000.0,
        "energy_wh_per_request": gpu_kwh * 1000.0 / requests,
        "ai_energy_score_wh_per_1000_queries": gpu_kwh * 1000.0 / requests * 1000.0,
        "inference_flops": flops,
        "pue": pue,
        "grid_location_average_g_co2_per_kwh": grid_g,
        "emissions_location_kg_co2e": facility_kwh * grid_g / 1000.0,
        "emissions_location_t_co2e": facility_kwh * grid_g / 1e6,
        "embodied_lifetime_years": lifetime,
        "embodied_time_share": ts,
        "embodied_resource_share": rs,
        "embodied_total_kg_co2e": te_kg,
        "embodied_kg_co2e": m_kg,
        "sci_g_co2e_per_1m_output_tokens": (o_kg + m_kg) * 1000.0 / (tokens / 1e6),
    }
    if d.get("host_overhead_factor") is not None:
        out["energy_host_kwh"] = gpu_kwh * (d["host_overhead_factor"] - 1.0)
    if d.get("wue_l_per_kwh") is not None:
        out["wue_l_per_kwh"] = d["wue_l_per_kwh"]
        out["water_l"] = gpu_kwh * d["wue_l_per_kwh"]
    if d.get("renewable_share") is not None:
        out["renewable_share"] = d["renewable_share"]
    for key, field in (("marginal", "grid_location_marginal"), ("market", "grid_market")):
        g = d.get(f"{key}_g_co2_per_kwh")
        if g is not None:
            out[f"{field}_g_co2_per_kwh"] = g
            out[f"emissions_{key}_kg_co2e"] = facility_kwh * g / 1000.0
            out[f"emissions_{key}_t_co2e"] = facility_kwh * g / 1e6
    profile = a.get("grid_g_co2_per_kwh_by_period")
    if profile is not None:
        out["emissions_hourly_kg_co2e"] = sum(
            e * pue * g / 1000.0 for e, g in zip(per_period_kwh, profile, strict=True)
        )
    if d.get("training_energy_kwh") is not None:
        out["training_energy_kwh"] = d["training_energy_kwh"]
    return out


def test_every_figure_matches_the_hand_calculation(run: PlanRun, plan_json: dict[str, Any]) -> None:
    disc = _disclose(as_document(run.plan))
    expected = hand(plan_json)
    for key, want in expected.items():
        _close(disc.fields[key].value, want)
    # every field has a value or says why not; none is left silently empty
    for key, f in disc.fields.items():
        assert (f.value is None) == (f.not_applicable is not None), key
        assert f.value is None or f.label is not None, key
    assert set(expected) >= {k for k, f in disc.fields.items() if isinstance(f.value, float | int)}
    assert disc.persona == "consumer"
    assert disc.fields["reporting_window_start"].value == "2026-03-01T00:00:00+00:00"
    assert disc.fields["reporting_window_end"].value == "2026-03-31T00:00:00+00:00"  # + 720 h
    assert [h.g_co2_per_kwh for h in disc.hourly] == [500.0, 250.0]
    assert disc.fields["grid_market_g_co2_per_kwh"].label == "user-supplied"


def test_per_model_figures_and_ranges(run: PlanRun, plan_json: dict[str, Any]) -> None:
    disc = _disclose(as_document(run.plan))
    hours = plan_json["assumptions"]["period_hours"]
    for md in disc.models:
        mine = [al for al in plan_json["allocations"] if al["name"] == md.name]
        kwh = (
            sum(p * h for al in mine for p, h in zip(al["power_w_by_period"], hours, strict=True))
            / 1000.0
        )
        _close(md.fields["energy_gpu_kwh"].value, kwh)
        llm = LLMS[md.fields["model_id"].value]  # type: ignore[index]
        total_b = float(llm["total_params_b"])
        assert md.fields["total_params_b"].value == float(f"{total_b:.2g}")
    # P10 <= value <= P90, and P10-P90 = the 90 % band scaled by z(0.9)/z(0.95)
    band = plan_bands(as_document(run.plan), 0.9).total.energy_kwh
    k = 1.2815515655446004 / 1.6448536269514722
    f = disc.fields["energy_gpu_kwh"]
    assert f.p10 is not None and f.p90 is not None
    assert f.p10 <= f.value <= f.p90  # type: ignore[operator]
    _close(f.p10, band.median - (band.median - band.low) * k)
    _close(f.p90, band.median + (band.high - band.median) * k)
    assert disc.fields["inference_flops"].p10 is None  # a count, no predictor uncertainty
    # active = energy − fixed idle: its range is the energy's range minus idle
    idle = disc.fields["energy_idle_kwh"].value
    active = disc.fields["energy_active_kwh"]
    assert isinstance(idle, float)
    _close(active.p10, f.p10 - idle)
    _close(active.p90, f.p90 - idle)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lifetime=st.floats(0.5, 30),
    share=st.floats(0.01, 1.0),
    marginal=st.none() | st.floats(0, 2000),
    market=st.none() | st.floats(0, 2000),
    wue=st.none() | st.floats(0, 10),
    host=st.none() | st.floats(1, 3),
)
def test_hand_calculation_holds_for_any_disclosure_inputs(
    run: PlanRun,
    lifetime: float,
    share: float,
    marginal: float | None,
    market: float | None,
    wue: float | None,
    host: float | None,
) -> None:
    doc = as_document(run.plan)
    settings_ = Disclosure(
        lifetime_years=lifetime,
        resource_share=share,
        marginal_g_co2_per_kwh=marginal,
        marginal_source="x" if marginal is not None else None,
        market_g_co2_per_kwh=market,
        market_source="x" if market is not None else None,
        wue_l_per_kwh=wue,
        wue_source="x" if wue is not None else None,
        host_overhead_factor=host,
    )
    doc = doc.model_copy(
        update={"assumptions": doc.assumptions.model_copy(update={"disclosure": settings_})}
    )
    disc = _disclose(doc)
    expected = hand(doc.to_json_dict())
    for key, want in expected.items():
        _close(disc.fields[key].value, want)
    for key in ("emissions_marginal_kg_co2e", "emissions_market_kg_co2e", "water_l"):
        if key not in expected:
            assert disc.fields[key].not_applicable, key


def test_defaults_and_not_applicable_without_a_disclosure_section(run: PlanRun) -> None:
    doc = as_document(run.plan)
    doc = doc.model_copy(
        update={
            "assumptions": doc.assumptions.model_copy(
                update={"disclosure": None, "grid_g_co2_per_kwh_by_period": None}
            )
        }
    )
    assert "disclosure" not in doc.to_json_dict()["assumptions"]
    disc = _disclose(doc)
    assert disc.fields["embodied_lifetime_years"].value == 5.0
    assert disc.fields["training_energy_kwh"].not_applicable.startswith("not_in_scope")  # type: ignore[union-attr]
    for key in ("grid_market_g_co2_per_kwh", "emissions_hourly_kg_co2e", "reporting_window_start"):
        assert disc.fields[key].not_applicable, key
    assert disc.hourly == []
    boundary = {b.component: b.treatment for b in disc.boundary}
    assert boundary["host"] == "excluded" and boundary["gpu_board"] == "included"
    (facility,) = [b for b in disc.boundary if b.component == "facility"]
    assert facility.treatment == "approximated" and facility.factor == doc.assumptions.pue


def test_saved_plan_carries_the_disclosure_inputs(run: PlanRun, tmp_path: Path) -> None:
    from planner.documents.plan import load_plan
    from predictors.core.output import write_output

    path = tmp_path / "plan.json"
    write_output(path, as_document(run.plan).model_dump_json())
    saved = load_plan(path)
    assert saved.assumptions.disclosure == as_document(run.plan).assumptions.disclosure
    assert saved.assumptions.grid_g_co2_per_kwh_by_period == [500.0, 250.0]
    report, _ = make_report(saved, run.predictor_card)
    md = render_markdown(report)
    assert "Disclosure fields" in md and "sci_g_co2e_per_1m_output_tokens" in md
    assert "Emissions per period on the scenario's grid profile" in md


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("persona: consumer", "persona: consumr", "disclosure.persona: 'consumr' is not allowed"),
        ('"2026-03-01"', '"2026-13-01"', "disclosure.reporting_start: Value error, '2026-13-01'"),
        ("  market_source: test PPA\n", "", "disclosure.market_source: missing"),
        ("[500, 250]", "[500, 250, 1]", "3 values for 2 planning period(s)"),
        ("lifetime_years: 4", "lifetime_years: 0", "disclosure.lifetime_years"),
    ],
)
def test_bad_disclosure_input_is_one_line_error(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    from tests.cli_runner import run_cli

    assert old in SCENARIO
    path = tmp_path / "bad.yaml"
    path.write_text(SCENARIO.replace(old, new), encoding="utf-8")
    result = run_cli("validate", str(path))
    assert result.code == 1
    assert len(result.errors) == 1, result.err
    assert expected in result.errors[0] and str(path) in result.errors[0]
    assert "Traceback" not in result.err


def _golden_plan(stem: str) -> PlanDocument:
    data = json.loads((REPO / "tests" / "golden" / f"{stem}.json").read_text(encoding="utf-8"))
    data["solve"]["seconds"] = 0.0  # the golden files leave out the run-dependent time
    return PlanDocument.model_validate(data)


@pytest.fixture(scope="module")
def bundled_plans(bundled: BundledRuns) -> dict[str, PlanDocument]:
    plans = {stem: _golden_plan(stem) for stem in ("enterprise-fleet", "paper-llama8b-low-load")}
    run = bundled["eu-power-cap-carbon"]
    plans["eu-power-cap-carbon"] = as_document(run.plan)
    return plans


@pytest.mark.parametrize(
    "stem", ["enterprise-fleet", "paper-llama8b-low-load", "eu-power-cap-carbon"]
)
def test_every_field_of_every_bundled_example_in_json_md_and_html(
    bundled_plans: dict[str, PlanDocument], stem: str
) -> None:
    from planner.report.html import render_html
    from planner.text import to_json

    doc = bundled_plans[stem]
    report, _ = make_report(doc, Predictor.load().card)
    assert report.disclosure is not None
    data = json.loads(to_json(report.to_json_dict()))["disclosure"]
    md, html = render_markdown(report), render_html(report, [])
    for key, f in data["fields"].items():
        assert (f["value"] is None) != (f["not_applicable"] is None), (stem, key)
        assert key in md and key in html, (stem, key)
        if f["not_applicable"]:
            assert f"not applicable: {f['not_applicable']}"[:60] in md, (stem, key)
    for m in data["models"]:
        for key, f in m["fields"].items():
            assert (f["value"] is None) != (f["not_applicable"] is None), (stem, m["name"], key)
    assert set(data["price_basis"]) == set(doc.inventory)
    for gpu in {a.gpu for a in doc.allocations}:
        assert gpu in md
    if stem == "eu-power-cap-carbon":  # the example's disclosure section is carried through
        assert data["fields"]["reporting_window_start"]["value"] == "2026-01-01T00:00:00+00:00"
        assert data["fields"]["energy_host_kwh"]["label"] == "modelled"
