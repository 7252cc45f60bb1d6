"""Estimated inference-energy disclosure of a plan (EU AI Act style): the report document.

:func:`build_report` turns a plan's JSON document (:class:`planner.documents.plan.PlanDocument`,
or a :class:`~planner.result.Plan`, converted) and the predictors' model card
(:class:`predictors.estimators.card.ModelCard`) into one
:class:`~planner.documents.report.ReportDocument`:
per model deployment the estimated energy for the horizon, energy per 1,000 output tokens and per
request, average power, CO2e and GPUs; fleet totals (horizon, month, year); and the statements a
reader needs to judge them: method (predictors, version, model-card metrics on unseen GPUs /
LLMs), system boundary, data provenance, assumptions, uncertainty bands, out-of-domain warnings,
date and wattgpu version. Nothing here needs the scenario or the predictors: a saved plan JSON
reports exactly like the run that wrote it. :mod:`planner.report.sections` lays the document out
as parts that :mod:`planner.report.markdown`, :mod:`planner.report.html` and
:mod:`planner.report.render` (text) print. Every number is an estimate from predictive models;
nothing here is measured.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from planner.analysis.flags import saved_plan_flags, with_sla_probability
from planner.analysis.forecast import forecast, per_output_tokens, per_request_wh
from planner.analysis.uncertainty import bands as plan_bands
from planner.disclosure.ranges import EnergyRanges
from planner.documents.forecast import ForecastDocument
from planner.documents.pareto import ParetoDocument
from planner.documents.plan import PlanDocument, as_document
from planner.documents.plan_parts import AllocationDocument
from planner.documents.pools import deployment_text
from planner.documents.report import (
    BaselineSummary,
    Deployment,
    Headline,
    ModelSection,
    ReportDocument,
    ScenarioRef,
    SolveSummary,
    SystemBoundary,
    Warnings,
)
from planner.documents.uncertainty import BandsDocument
from planner.inputs import PlanningInputs
from planner.report.blocks import NOT_EVALUATED
from planner.report.card_info import card_metrics, method_of, provenance_of
from planner.report.report_assumptions import assumptions_of, mean_requests_per_s
from planner.report.unit_ranges import disclosure_of
from planner.result import Plan
from predictors.catalog.store import Catalog, load_catalog
from predictors.core.errors import WattgpuError
from predictors.core.version import __version__
from predictors.estimators.card import ModelCard, card_of

SlaProbability = tuple[Mapping[str, float | None], int]
"""A sweep's probability per model entry that the plan meets its SLA, and its draws."""
TITLE = "Estimated inference energy and emissions disclosure"
ESTIMATE_NOTE = (
    "All figures in this report are estimates computed by wattgpu from predictive models "
    "trained on public measurements and from the stated assumptions; none was measured on the "
    "deployed fleet."
)
EXCLUDED: tuple[str, ...] = (
    "host CPUs, host memory and storage of the servers",
    "networking",
    "embodied emissions (manufacturing, transport, end of life of the hardware) from the totals "
    "above; the disclosure fields state the GPUs' embodied share separately (SCI M)",
    "training and fine-tuning of the models",
    "cooling and power distribution other than through the PUE factor",
    "queueing and idle capacity outside the planned replicas",
)


def _layout_degrees(a: AllocationDocument) -> dict[str, int]:
    """An aggregated replica's PP, DP and EP where they are not 1 (a unit's are in its pools)."""
    if a.pools:
        return {}
    degrees = {
        "pipeline_parallel": a.pipeline_parallel,
        "data_parallel": a.data_parallel,
        "expert_parallel": a.expert_parallel,
    }
    return {k: v for k, v in degrees.items() if v is not None and v > 1}


def _models_section(
    doc: PlanDocument, fc: ForecastDocument, bands: BandsDocument | None
) -> list[ModelSection]:
    hours = doc.assumptions.period_hours
    out = []
    for mf in fc.models:
        demand = doc.model(mf.name)
        allocs = [a for a in doc.allocations if a.name == mf.name]
        h = mf.horizon
        band = bands.models.get(mf.name) if bands else None
        out.append(
            ModelSection(
                name=mf.name,
                model=mf.model,
                deployments=[
                    Deployment(
                        gpu=a.gpu,
                        tp=a.tp,
                        replicas=a.replicas,
                        gpus=a.gpus,
                        batch_size=a.batch_size,
                        itl_s=a.itl_s,
                        in_domain=doc.candidate(a.key).in_domain,
                        mean_requests_per_s=mean_requests_per_s(a.requests_per_s_by_period, hours),
                        itl_s_at_served_load=a.itl_s_at_served_load,
                        region=a.region,
                        pools=a.pools,
                        **_layout_degrees(a),
                    )
                    for a in allocs
                ],
                gpus=mf.gpus,
                gpus_used=mf.gpu_count,
                itl_sla_s=demand.itl_sla_s,
                requests=mf.requests,
                output_tokens=mf.output_tokens,
                estimated_energy_kwh=h.energy_kwh,
                estimated_facility_energy_kwh=h.facility_energy_kwh,
                estimated_wh_per_1000_output_tokens=per_output_tokens(
                    h.energy_kwh, mf.output_tokens
                ),
                estimated_facility_wh_per_1000_output_tokens=per_output_tokens(
                    h.facility_energy_kwh, mf.output_tokens
                ),
                estimated_wh_per_request=per_request_wh(h.energy_kwh, mf.requests),
                estimated_facility_wh_per_request=per_request_wh(
                    h.facility_energy_kwh, mf.requests
                ),
                estimated_average_power_w=mf.mean_power_w,
                estimated_co2e_kg=h.carbon_kg,
                estimated_cost_usd=h.total_cost_usd,
                in_domain=all(doc.candidate(a.key).in_domain for a in allocs),
                uncertainty=band,
            )
        )
    return out


def _warnings(doc: PlanDocument, card: ModelCard) -> Warnings:
    used = [
        f"{a.name}: {a.model} on {deployment_text(a.gpu, a.layout, a.pools)}"
        for a in doc.allocations
        if not doc.candidate(a.key).in_domain
    ]
    considered = [c for c in doc.candidates if c.feasible and not c.in_domain]
    lines = []
    if used:
        lines.append(
            f"{len(used)} planned deployment(s) lie outside the predictors' training domain "
            "(unseen precision, engine, GPU vendor/architecture or workload range): their "
            "estimates are extrapolations"
        )
    counts = doc.candidate_counts
    outside = counts.feasible_out_of_domain if counts else len(considered)
    feasible = counts.feasible if counts else sum(c.feasible for c in doc.candidates)
    if outside:
        lines.append(
            f"{outside} of {feasible} feasible candidate deployments were predicted outside "
            "the training domain"
        )
    if card_metrics(card)["status"] == NOT_EVALUATED:
        lines.append("the predictors' accuracy is not evaluated in their model card")
    planned_with = doc.predictors.training_data_sha256
    described = card.training_data.sha256
    if planned_with and described and planned_with != described:
        lines.append(
            f"the plan was made with predictors trained on data {planned_with[:12]}…, but the "
            f"model card described here was trained on {described[:12]}…: method and accuracy "
            "may not be those of the plan's predictions (pass the plan's card with --model-card)"
        )
    lines.extend(doc.solve.messages)
    return Warnings(
        out_of_domain_allocations=used,
        out_of_domain_candidates=[f"{c.name},{c.gpu},{c.tp}" for c in considered],
        messages=lines,
    )


def _headline(fc: ForecastDocument) -> Headline:
    totals = fc.total.horizon
    gpus_total: dict[str, int] = {}
    for mf in fc.models:
        for gpu, count in mf.gpus.items():
            gpus_total[gpu] = gpus_total.get(gpu, 0) + count
    requests = sum(m.requests for m in fc.models)
    tokens = sum(m.output_tokens for m in fc.models)
    return Headline(
        hours=fc.hours,
        estimated_energy_kwh=totals.energy_kwh,
        estimated_facility_energy_kwh=totals.facility_energy_kwh,
        estimated_co2e_kg=totals.carbon_kg,
        estimated_cost_usd=totals.total_cost_usd,
        estimated_average_power_w=totals.energy_kwh * 1000.0 / fc.hours,
        estimated_facility_energy_kwh_per_year=fc.total.per_year.facility_energy_kwh,
        estimated_co2e_kg_per_year=fc.total.per_year.carbon_kg,
        estimated_cost_usd_per_year=fc.total.per_year.total_cost_usd,
        estimated_wh_per_1000_output_tokens=per_output_tokens(totals.energy_kwh, tokens),
        estimated_facility_wh_per_1000_output_tokens=per_output_tokens(
            totals.facility_energy_kwh, tokens
        ),
        requests=requests,
        output_tokens=tokens,
        gpus=dict(sorted(gpus_total.items())),
        gpus_total=sum(gpus_total.values()),
    )


def build_report(
    plan: Plan | PlanDocument,
    card: ModelCard | dict[str, Any],
    *,
    fc: ForecastDocument | None = None,
    bands: BandsDocument | None = None,
    front: ParetoDocument | None = None,
    scenario_file: str | None = None,
    accuracy_csv: Path | None = None,
    now: Callable[[], dt.datetime] | None = None,
    catalog: Catalog | None = None,
    ranges: EnergyRanges | None = None,
    sla_probability: SlaProbability | None = None,
) -> ReportDocument:
    """The report of *plan* described with *card* (the one source of the md / html / json forms).

    A pure function of the plan document, the model card and the catalog (embodied emissions,
    LLM configs; the bundled one when not given): no scenario, no predictor. *ranges* (a sweep's
    P10–P90) replaces the ranges derived from *bands*; *sla_probability* (a sweep's per-entry
    probabilities and its number of draws) goes into the uncertainty flags.
    """
    doc = as_document(plan)
    flags = saved_plan_flags(doc)
    if sla_probability is not None:
        flags = with_sla_probability(flags, *sla_probability)
    model_card = card_of(card)
    fc = fc or forecast(doc)
    disclosure = (
        disclosure_of(doc, fc, ranges, bands, catalog or load_catalog())
        if doc.has_solution
        else None
    )
    generated = (now or (lambda: dt.datetime.now(dt.UTC)))()
    return ReportDocument(
        title=TITLE,
        estimated=True,
        note=ESTIMATE_NOTE,
        generated_at=generated.isoformat(timespec="seconds"),
        wattgpu_version=__version__,
        scenario=ScenarioRef(name=doc.scenario, description=doc.description, file=scenario_file),
        status=doc.status,
        solve=SolveSummary(seconds=doc.solve.seconds, gap=doc.solve.gap),
        headline=_headline(fc),
        models=_models_section(doc, fc, bands),
        forecast=fc,
        uncertainty=bands,
        system_boundary=SystemBoundary(
            energy="electricity drawn by the inference GPUs (board power), idle and under load",
            facility=(
                "GPU energy × each region's PUE (cooling, power distribution of its sites)"
                if doc.regions
                else f"GPU energy × PUE {fc.pue:g} (cooling, power distribution of the site)"
            ),
            carbon="operational (scope 2, location-based) CO2e = facility energy × grid factor",
            excluded=list(EXCLUDED),
        ),
        method=method_of(model_card),
        data_provenance=provenance_of(model_card),
        assumptions=assumptions_of(doc, fc),
        warnings=_warnings(doc, model_card),
        baselines=[
            BaselineSummary(
                name=b.name,
                description=b.description,
                feasible=b.feasible,
                estimated_energy_kwh=b.energy_kwh,
                estimated_cost_usd=b.cost_usd,
                estimated_co2e_kg=b.carbon_kg,
                reason=b.reason,
            )
            for b in doc.baselines
        ],
        savings=doc.savings,
        pareto=front,
        accuracy_csv=str(accuracy_csv) if accuracy_csv else None,
        plan=doc,
        disclosure=disclosure,
        uncertainty_flags=flags,
    )


def make_report(
    plan: Plan | PlanDocument,
    card: ModelCard | dict[str, Any],
    *,
    pareto_points: int = 0,
    inputs: PlanningInputs | None = None,
    scenario_file: str | None = None,
    accuracy_csv: Path | None = None,
    time_limit_s: float | None = None,
    sla_probability: SlaProbability | None = None,
    catalog: Catalog | None = None,
) -> tuple[ReportDocument, ParetoDocument | None]:
    """Forecast, uncertainty bands and (``pareto_points`` > 0) the front, then the report
    (its disclosure against *catalog*: the scenario's, user overlay included; default the
    bundled catalogs plus ``$WATTGPU_USER_CATALOG``).

    The front re-solves the plan's own candidates under cost caps: *inputs* when given (a fresh
    plan), else the inputs rebuilt from the plan document (a saved plan; no predictor needed).
    """
    from planner.analysis.pareto import pareto_front
    from planner.documents.plan import planning_inputs_of

    doc = as_document(plan)
    model_card = card_of(card)
    fc = forecast(doc)
    try:
        bands = plan_bands(doc, model_card.interval_level()) if doc.has_solution else None
    except WattgpuError as exc:  # a saved plan's record: say which file
        where = f"{scenario_file}: " if scenario_file else ""
        raise WattgpuError(f"{where}{exc}") from None
    front = None
    if pareto_points > 0 and doc.has_solution:
        if inputs is None:
            inputs = planning_inputs_of(doc, time_limit_s=time_limit_s)
        front = pareto_front(inputs, pareto_points, doc)
    report = build_report(
        doc,
        model_card,
        fc=fc,
        bands=bands,
        front=front,
        scenario_file=scenario_file,
        accuracy_csv=accuracy_csv,
        sla_probability=sla_probability,
        catalog=catalog,
    )
    return report, front


__all__ = ["build_report", "make_report"]
