"""Scenario -> PlanningInputs: enumerate candidate deployments, run the capacity model.

Tensor-parallel degrees: for every (model entry, GPU type) the scenario's ``tp_degrees`` are tried
in ascending order. Degrees below the smallest one whose weights fit are kept as excluded
candidates ("needs … GB"); from the smallest fitting degree on, degrees are added until one meets
the SLA, plus the next one (a wider replica can be more efficient at a tight SLA). Larger degrees
are not considered: more GPUs per replica only add idle power once the SLA is met.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from planner.capacity import CandidateSpec, evaluate_candidates
from planner.inputs import (
    MAX_REPLICAS_PER_CANDIDATE,
    Candidate,
    GpuInfo,
    ModelDemand,
    Objective,
    PlanningInputs,
)
from planner.scenario.model import ModelEntry, Scenario, periods, requests_per_s_by_period
from predictors.api import Predictor
from predictors.errors import WattgpuError


class FleetSizeError(WattgpuError):
    """A load no plan within the replica limit can carry (one line per model entry)."""


def _spec(
    scenario: Scenario, entry: ModelEntry, gpu: str, tp: int, predictor: Predictor
) -> CandidateSpec:
    offer = scenario.gpu_offers[gpu]
    price = offer.usd_per_hour
    if price is None:
        catalog_price = predictor.catalog.gpu(gpu).get("usd_per_hour")
        price = float(catalog_price) if catalog_price is not None else None
    excluded = ""
    if entry.allowed_gpus is not None and gpu not in entry.allowed_gpus:
        excluded = f"not in {entry.name}.allowed_gpus"
    elif gpu in entry.forbidden_gpus:
        excluded = f"in {entry.name}.forbidden_gpus"
    return CandidateSpec(
        name=entry.name,
        model=entry.model,
        gpu=gpu,
        tp=tp,
        engine=scenario.engine,
        precision=entry.precision or scenario.precision,
        input_tokens=entry.load.input_tokens,
        output_tokens=entry.load.output_tokens,
        itl_sla_s=entry.sla.itl_ms / 1000.0,
        ttft_sla_s=None if entry.sla.ttft_ms is None else entry.sla.ttft_ms / 1000.0,
        usd_per_hour_per_gpu=price,
        excluded_reason=excluded,
    )


def _memory_fail(c: Candidate) -> bool:
    return not c.feasible and c.reason.startswith("needs ")


def _final(c: Candidate) -> bool:
    """Excluded for a reason no wider replica can change (scenario rule or missing price)."""
    return not c.feasible and c.reason.startswith(("not in ", "in ", "no $/hour"))


def candidates(scenario: Scenario, predictor: Predictor) -> list[Candidate]:
    """Every candidate considered, in (model entry, GPU, TP) order."""
    pairs = [(e, g) for e in scenario.models for g in scenario.gpu_offers]
    chosen: dict[tuple[str, str], list[Candidate]] = {}
    pending = {(e.name, g): sorted(scenario.gpu_offers[g].tp_degrees) for e, g in pairs}
    entries = {e.name: e for e in scenario.models}
    done: set[tuple[str, str]] = set()
    while True:
        specs = []
        for key, degrees in pending.items():
            if key in done or not degrees:
                continue
            specs.append(_spec(scenario, entries[key[0]], key[1], degrees.pop(0), predictor))
        if not specs:
            break
        for cand in evaluate_candidates(specs, predictor, robust=scenario.robust):
            key = (cand.name, cand.gpu)
            got = chosen.setdefault(key, [])
            got.append(cand)
            fitting = [c for c in got if not _memory_fail(c)]
            first_ok = next((i for i, c in enumerate(fitting) if c.feasible), None)
            if _final(cand) or (first_ok is not None and len(fitting) > first_ok + 1):
                done.add(key)
    return [c for e, g in pairs for c in chosen.get((e.name, g), [])]


def _gpu_info(scenario: Scenario, predictor: Predictor) -> dict[str, GpuInfo]:
    info = {}
    for gpu, offer in scenario.gpu_offers.items():
        row = predictor.catalog.gpu(gpu)
        price = offer.usd_per_hour if offer.usd_per_hour is not None else row.get("usd_per_hour")
        info[gpu] = GpuInfo(
            gpu=gpu,
            tflops_per_w=float(row["fp16_tflops_dense"]) / float(row["tdp_w"]),
            usd_per_hour=float(price) if price is not None else 0.0,
        )
    return info


def demands(scenario: Scenario) -> tuple[list[ModelDemand], tuple[float, ...]]:
    """The load of every model entry per period and the hours of each period."""
    count, hours = periods(scenario)
    models = [
        ModelDemand(
            name=e.name,
            model=e.model,
            requests_per_s_by_period=tuple(requests_per_s_by_period(e, count)),
            itl_sla_s=e.sla.itl_ms / 1000.0,
            ttft_sla_s=None if e.sla.ttft_ms is None else e.sla.ttft_ms / 1000.0,
            min_replicas=e.min_replicas,
            input_tokens=e.load.input_tokens,
            output_tokens=e.load.output_tokens,
        )
        for e in scenario.models
    ]
    return models, tuple([hours] * count)


def check_fleet_size(models: Sequence[ModelDemand], cands: Sequence[Candidate]) -> None:
    """WattgpuError naming the entry when even its largest replica would be needed more than
    :data:`~planner.inputs.MAX_REPLICAS_PER_CANDIDATE` times to carry its peak load."""
    problems = []
    for i, m in enumerate(models):
        peak = max(m.requests_per_s_by_period, default=0.0)
        caps = [c for c in cands if c.name == m.name and c.feasible]
        if peak <= 0 or not caps:
            continue
        best = max(caps, key=lambda c: c.max_requests_per_s_per_replica)
        need = math.ceil(peak / best.max_requests_per_s_per_replica)
        if need > MAX_REPLICAS_PER_CANDIDATE:
            problems.append(
                f"models[{i}].load.requests_per_s: peak {peak:,.6g} req/s for {m.name} needs "
                f"{need:,} replicas even of its largest option ({best.gpu} TP{best.tp}), more "
                f"than the {MAX_REPLICAS_PER_CANDIDATE:,} a plan may use — split the load over "
                "several entries"
            )
    if problems:
        raise FleetSizeError("\n".join(problems))


def planning_inputs(
    scenario: Scenario,
    predictor: Predictor,
    *,
    time_limit_s: float | None = None,
    extra_candidates: Iterable[Candidate] = (),
) -> PlanningInputs:
    """Everything the optimiser needs for *scenario*."""
    models, period_hours = demands(scenario)
    weights = scenario.objective.weights
    objective = Objective(
        minimize=scenario.objective.minimize,
        weights={} if weights is None else weights.model_dump(),
    )
    cands = tuple([*candidates(scenario, predictor), *extra_candidates])
    check_fleet_size(models, cands)
    return PlanningInputs(
        scenario=scenario.name,
        models=tuple(models),
        candidates=cands,
        inventory={g: o.available for g, o in scenario.gpu_offers.items()},
        period_hours=period_hours,
        pue=scenario.pue_value,
        electricity_usd_per_kwh=scenario.electricity_usd_per_kwh,
        grid_g_co2_per_kwh=scenario.grid_value_g_co2_per_kwh,
        carbon_usd_per_kg=(
            None if scenario.carbon_usd_per_tonne is None else scenario.carbon_usd_per_tonne / 1000
        ),
        power_cap_kw=scenario.power_cap_kw,
        budget_usd=scenario.budget_usd,
        objective=objective,
        gpu_info=_gpu_info(scenario, predictor),
        time_limit_s=time_limit_s or scenario.time_limit_s,
    )
