"""Estimated inference-energy disclosure of a plan (EU AI Act style): report data and Markdown.

:func:`build_report` turns a solved scenario (:class:`planner.pipeline.PlanRun`) into one JSON
dict: per model deployment the estimated energy for the horizon, energy per 1,000 output tokens
and per request, average power, CO2e and GPUs; fleet totals (horizon, month, year); and the
statements a reader needs to judge them: method (predictors, version, model-card metrics on
unseen GPUs / LLMs), system boundary, data provenance, assumptions, uncertainty bands,
out-of-domain warnings, date and wattgpu version. :mod:`planner.report.markdown` prints it;
:mod:`planner.report.html` renders the same dict as one self-contained HTML file. Every number is
an estimate from predictive models; nothing here is measured.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planner.analysis.forecast import (
    Forecast,
    forecast,
    grid_factor,
    per_output_tokens,
    per_request_wh,
)
from planner.analysis.pareto import ParetoFront
from planner.analysis.uncertainty import Bands, plan_bands
from planner.capacity import CAPACITY_HEADROOM
from planner.pipeline import PlanRun
from planner.report.markdown import NOT_EVALUATED, render_markdown
from predictors import __version__
from predictors.api import Predictor

TITLE = "Estimated inference energy and emissions disclosure"
ESTIMATE_NOTE = (
    "All figures in this report are estimates computed by wattgpu from predictive models "
    "trained on public measurements and from the stated assumptions; none was measured on the "
    "deployed fleet."
)
SOURCE_NAMES: dict[str, str] = {
    "mlenergy-v1": "ML.ENERGY leaderboard 2023 (ml-energy/benchmark, legacy data), Apache-2.0",
    "mlenergy-v2": "ML.ENERGY benchmark 2024 (ml-energy/benchmark, vLLM), Apache-2.0",
    "mlenergy-v3": "ML.ENERGY leaderboard v3 2025-26 (ml-energy/leaderboard, vLLM steady state)",
    "argonne": "Argonne LLM-Inference-Bench (argonne-lcf/LLM-Inference-Bench), BSD-3-Clause",
    "aiconfigurator": "NVIDIA AIConfigurator silicon sample (ai-dynamo/aiconfigurator), Apache-2.0",
    "amd-mi300x": "AMD MI300X sample (cmontemuino/amd-mi300x-ml-benchmarks), Apache-2.0",
}
EXCLUDED: tuple[str, ...] = (
    "host CPUs, host memory and storage of the servers",
    "networking",
    "embodied emissions (manufacturing, transport, end of life of the hardware)",
    "training and fine-tuning of the models",
    "cooling and power distribution other than through the PUE factor",
    "queueing and idle capacity outside the planned replicas",
)
METRIC_KEYS: tuple[str, ...] = (
    "mdape_pct",
    "pearson_r",
    "kendall_tau_gpu",
    "kendall_tau_llm",
    "coverage_90_pct",
    "rows",
)
SPLIT_NAMES: dict[str, str] = {
    "logo": "unseen_gpus",
    "lolo": "unseen_llms",
    "cv5": "cross_validation",
}


def card_metrics(card: dict[str, Any]) -> dict[str, Any]:
    """Model-card metrics of our method by split (unseen GPUs = leave-one-GPU-out, unseen LLMs =
    leave-one-LLM-out); ``status`` is "not evaluated" when the card holds none."""
    raw = card.get("metrics")
    records: list[dict[str, Any]] = []
    if isinstance(raw, list):
        records = [r for r in raw if isinstance(r, dict)]
    elif isinstance(raw, dict):
        for key in ("records", "summary"):
            if isinstance(raw.get(key), list):
                records = [r for r in raw[key] if isinstance(r, dict)]
    records = [r for r in records if r.get("method", "ours") == "ours" and "split" in r]
    out: dict[str, Any] = {
        "status": "evaluated" if records else NOT_EVALUATED,
        **{name: NOT_EVALUATED for name in SPLIT_NAMES.values()},
    }
    for r in records:
        name = SPLIT_NAMES.get(str(r["split"]), str(r["split"]))
        slot = out.get(name)
        if not isinstance(slot, dict):
            slot = {}
            out[name] = slot
        slot[str(r.get("target", "?"))] = {k: r.get(k) for k in METRIC_KEYS if k in r}
    if not records:
        out["note"] = (
            "the shipped model card has no evaluation metrics; run `wattgpu evaluate "
            "--metrics-to predictors/trained` and retrain to record them"
        )
    return out


def _models_section(run: PlanRun, fc: Forecast, bands: Bands | None) -> list[dict[str, Any]]:
    inputs = run.inputs
    out = []
    for mf in fc.models:
        demand = inputs.model(mf.name)
        allocs = [a for a in run.plan.allocations if a.candidate.name == mf.name]
        h = mf.horizon
        band = bands.models.get(mf.name) if bands else None
        out.append(
            {
                "name": mf.name,
                "model": mf.model,
                "deployments": [
                    {
                        "gpu": a.candidate.gpu,
                        "tp": a.candidate.tp,
                        "replicas": a.replicas,
                        "gpus": a.gpus,
                        "batch_size": a.candidate.batch_size,
                        "itl_s": a.candidate.itl_s_at_capacity,
                        "in_domain": a.candidate.in_domain,
                        "mean_requests_per_s": sum(
                            x * ph
                            for x, ph in zip(
                                a.requests_per_s_by_period, inputs.period_hours, strict=True
                            )
                        )
                        / inputs.hours,
                        "itl_s_at_served_load": a.itl_s_at_served_load,
                    }
                    for a in allocs
                ],
                "gpus": mf.gpus,
                "gpus_used": mf.gpu_count,
                "itl_sla_s": demand.itl_sla_s,
                "requests": mf.requests,
                "output_tokens": mf.output_tokens,
                "estimated_energy_kwh": h.energy_kwh,
                "estimated_facility_energy_kwh": h.facility_energy_kwh,
                "estimated_wh_per_1000_output_tokens": per_output_tokens(
                    h.energy_kwh, mf.output_tokens
                ),
                "estimated_facility_wh_per_1000_output_tokens": per_output_tokens(
                    h.facility_energy_kwh, mf.output_tokens
                ),
                "estimated_wh_per_request": per_request_wh(h.energy_kwh, mf.requests),
                "estimated_facility_wh_per_request": per_request_wh(
                    h.facility_energy_kwh, mf.requests
                ),
                "estimated_average_power_w": mf.mean_power_w,
                "estimated_co2e_kg": h.carbon_kg,
                "estimated_cost_usd": h.total_cost_usd,
                "in_domain": all(a.candidate.in_domain for a in allocs),
                "uncertainty": band.to_dict() if band else None,
            }
        )
    return out


def _warnings(run: PlanRun, card: dict[str, Any]) -> dict[str, Any]:
    used = [
        f"{a.candidate.name}: {a.candidate.model} on {a.candidate.gpu} TP{a.candidate.tp}"
        for a in run.plan.allocations
        if not a.candidate.in_domain
    ]
    considered = [c for c in run.inputs.candidates if c.feasible and not c.in_domain]
    lines = []
    if used:
        lines.append(
            f"{len(used)} planned deployment(s) lie outside the predictors' training domain "
            "(unseen precision, engine, GPU vendor/architecture or workload range): their "
            "estimates are extrapolations"
        )
    if considered:
        lines.append(
            f"{len(considered)} of {sum(c.feasible for c in run.inputs.candidates)} feasible "
            "candidate deployments were predicted outside the training domain"
        )
    if card_metrics(card)["status"] == NOT_EVALUATED:
        lines.append("the predictors' accuracy is not evaluated in the shipped model card")
    lines.extend(run.plan.solve.messages)
    return {
        "out_of_domain_allocations": used,
        "out_of_domain_candidates": [c.label for c in considered],
        "messages": lines,
    }


def _assumptions(run: PlanRun, fc: Forecast) -> dict[str, Any]:
    s, inputs = run.scenario, run.inputs
    entries = {e.name: e for e in s.models}
    return {
        "horizon_hours": inputs.hours,
        "periods": inputs.periods,
        "period_hours": inputs.period_hours[0] if inputs.period_hours else None,
        "pue": inputs.pue,
        "pue_source": s.pue_source or "set in the scenario file",
        "grid": fc.grid.to_dict(),
        "grid_text": fc.grid.describe(),
        "electricity_usd_per_kwh": inputs.electricity_usd_per_kwh,
        "carbon_usd_per_tonne": s.carbon_usd_per_tonne,
        "engine": s.engine,
        "robust": s.robust,
        "capacity_headroom": CAPACITY_HEADROOM,
        "objective": run.plan.to_json_dict()["assumptions"]["objective"],
        "objective_text": objective_text(run.plan.to_json_dict()["assumptions"]["objective"]),
        "power_cap_kw": inputs.power_cap_kw,
        "budget_usd": inputs.budget_usd,
        "loads": [
            {
                "name": m.name,
                "model": m.model,
                "precision": (entries[m.name].precision if m.name in entries else None)
                or s.precision,
                "mean_requests_per_s": sum(
                    x * h
                    for x, h in zip(m.requests_per_s_by_period, inputs.period_hours, strict=True)
                )
                / inputs.hours,
                "peak_requests_per_s": max(m.requests_per_s_by_period),
                "input_tokens": m.input_tokens,
                "output_tokens": m.output_tokens,
                "itl_sla_ms": m.itl_sla_s * 1000.0,
                "ttft_sla_ms": None if m.ttft_sla_s is None else m.ttft_sla_s * 1000.0,
                "min_replicas": m.min_replicas,
            }
            for m in inputs.models
        ],
    }


def objective_text(objective: dict[str, Any]) -> str:
    """'weighted (cost_usd 1, carbon_kg 0.1)' or 'cost'."""
    weights = objective.get("weights") or {}
    if not weights:
        return str(objective.get("minimize"))
    parts = ", ".join(f"{k} {v:g}" for k, v in weights.items() if v)
    return f"{objective.get('minimize')} ({parts})"


def _method(card: dict[str, Any]) -> dict[str, Any]:
    versions = card.get("library_versions") or {}
    selection = card.get("selection") or {}
    return {
        "predictors": card.get("name", "wattgpu predictors"),
        "predictors_version": versions.get("wattgpu", __version__),
        "library_versions": versions,
        "chosen_recipes": {k: v.get("chosen") for k, v in selection.items() if isinstance(v, dict)},
        "reference_source": card.get("reference_source"),
        "intervals": card.get("intervals"),
        "units": card.get("units"),
        "metrics": card_metrics(card),
        "description": (
            "GPU power per GPU and inter-token latency are predicted by gradient-boosted trees "
            "(XGBoost) on public GPU and model specifications plus roofline physics; a capacity "
            "model picks each deployment's operating batch under the latency SLA; an OR-Tools "
            "MILP chooses GPU types and replicas. Energy = (idle power per replica + energy per "
            "request × requests/s) × hours. Formulas: docs/method.md."
        ),
    }


def _provenance(card: dict[str, Any]) -> dict[str, Any]:
    td = card.get("training_data") or {}
    sources = list(td.get("sources") or [])
    return {
        "sources": [
            {
                "id": s,
                "description": SOURCE_NAMES.get(s, s),
                "rows": (td.get("rows_by_source") or {}).get(s),
            }
            for s in sources
        ],
        "rows": td.get("rows"),
        "sha256": td.get("sha256"),
        "note": "public measurements only; no measurement of this fleet was used",
    }


def build_report(
    run: PlanRun,
    *,
    fc: Forecast | None = None,
    bands: Bands | None = None,
    front: ParetoFront | None = None,
    scenario_file: str | None = None,
    accuracy_csv: Path | None = None,
    now: Callable[[], dt.datetime] | None = None,
) -> dict[str, Any]:
    """The report as JSON values (the single source of the md / html / json forms)."""
    plan, card = run.plan, run.predictor_card
    fc = fc or forecast(plan, grid_factor(run.scenario))
    totals = fc.horizon
    generated = (now or (lambda: dt.datetime.now(dt.UTC)))()
    gpus_total: dict[str, int] = {}
    for mf in fc.models:
        for gpu, count in mf.gpus.items():
            gpus_total[gpu] = gpus_total.get(gpu, 0) + count
    requests = sum(m.requests for m in fc.models)
    tokens = sum(m.output_tokens for m in fc.models)
    return {
        "title": TITLE,
        "estimated": True,
        "note": ESTIMATE_NOTE,
        "generated_at": generated.isoformat(timespec="seconds"),
        "wattgpu_version": __version__,
        "scenario": {
            "name": run.scenario.name,
            "description": run.scenario.description,
            "file": scenario_file,
        },
        "status": plan.status.value,
        "solve": {"seconds": plan.solve.seconds, "gap": plan.solve.gap},
        "headline": {
            "hours": fc.hours,
            "estimated_energy_kwh": totals.energy_kwh,
            "estimated_facility_energy_kwh": totals.facility_energy_kwh,
            "estimated_co2e_kg": totals.carbon_kg,
            "estimated_cost_usd": totals.total_cost_usd,
            "estimated_average_power_w": totals.energy_kwh * 1000.0 / fc.hours,
            "estimated_facility_energy_kwh_per_year": fc.per_year.facility_energy_kwh,
            "estimated_co2e_kg_per_year": fc.per_year.carbon_kg,
            "estimated_cost_usd_per_year": fc.per_year.total_cost_usd,
            "estimated_wh_per_1000_output_tokens": per_output_tokens(totals.energy_kwh, tokens),
            "estimated_facility_wh_per_1000_output_tokens": per_output_tokens(
                totals.facility_energy_kwh, tokens
            ),
            "requests": requests,
            "output_tokens": tokens,
            "gpus": dict(sorted(gpus_total.items())),
            "gpus_total": sum(gpus_total.values()),
        },
        "models": _models_section(run, fc, bands),
        "forecast": fc.to_json_dict(),
        "uncertainty": bands.to_json_dict() if bands else None,
        "system_boundary": {
            "energy": "electricity drawn by the inference GPUs (board power), idle and under load",
            "facility": f"GPU energy × PUE {fc.pue:g} (cooling, power distribution of the site)",
            "carbon": "operational (scope 2, location-based) CO2e = facility energy × grid factor",
            "excluded": list(EXCLUDED),
        },
        "method": _method(card),
        "data_provenance": _provenance(card),
        "assumptions": _assumptions(run, fc),
        "warnings": _warnings(run, card),
        "baselines": [
            {
                "name": b.name,
                "description": b.description,
                "feasible": b.feasible,
                "estimated_energy_kwh": b.totals.energy_kwh if b.totals else None,
                "estimated_cost_usd": b.totals.cost_usd if b.totals else None,
                "estimated_co2e_kg": b.totals.carbon_kg if b.totals else None,
            }
            for b in plan.baselines
        ],
        "savings": plan.savings(),
        "pareto": front.to_json_dict() if front else None,
        "accuracy_csv": str(accuracy_csv) if accuracy_csv else None,
        "plan": plan.to_json_dict(),
    }


def make_report(
    run: PlanRun,
    predictor: Predictor,
    *,
    pareto_points: int = 0,
    scenario_file: str | None = None,
    accuracy_csv: Path | None = None,
) -> tuple[dict[str, Any], ParetoFront | None]:
    """Forecast, uncertainty bands and (``pareto_points`` > 0) the front, then the report."""
    from planner.analysis.pareto import pareto_front

    fc = forecast(run.plan, grid_factor(run.scenario))
    bands = plan_bands(run.plan, run.scenario, predictor) if run.plan.has_solution else None
    front = None
    if pareto_points > 0 and run.plan.has_solution:
        front = pareto_front(run.inputs, pareto_points, run.plan)
    report = build_report(
        run,
        fc=fc,
        bands=bands,
        front=front,
        scenario_file=scenario_file,
        accuracy_csv=accuracy_csv,
    )
    return report, front


__all__ = ["NOT_EVALUATED", "build_report", "card_metrics", "make_report", "render_markdown"]
