"""The plan JSON contract (``wattgpu plan --format json``) as a typed document.

:func:`plan_document` turns a solved :class:`~planner.result.Plan` into a :class:`PlanDocument`;
everything after the plan (forecast, uncertainty bands, report) is computed from this document
and the model card alone, so a saved plan JSON reports exactly like the run that wrote it.
:func:`load_plan` reads and validates a saved file; :func:`planning_inputs_of` rebuilds the
optimiser's inputs from it (for the Pareto front of a saved plan; no predictor needed).
"""

from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import model_serializer

from planner.documents.base import Document, load_document
from planner.inputs import (
    Candidate,
    Exclusion,
    ModelDemand,
    Objective,
    ObjectiveKind,
    PlanningInputs,
    Provenance,
)

if TYPE_CHECKING:
    from planner.result import Allocation, Plan, Totals

Status = Literal["optimal", "feasible", "infeasible", "error"]


class SolveDocument(Document):
    """How the solve went."""

    seconds: float
    """Wall-clock solve time (s)."""
    gap: float | None
    """Relative optimality gap (None when unknown)."""
    bound: float | None
    """Best bound of the objective."""
    objective: float | None
    """Objective value reached (unit of the objective kind)."""
    solver: str
    """Which solver path produced the plan."""
    messages: list[str]
    """Why a plan is infeasible or approximate (empty when optimal)."""
    time_limit_s: float | None = None
    """Solver time limit per solve (s)."""
    relative_gap: float | None = None
    """Relative optimality gap the solver stops at."""
    threads: int | None = None
    """Solver threads."""
    seed: int | None = None
    """Solver random seed."""


class ObjectiveDocument(Document):
    """What was minimised; ``weights`` only for ``weighted``."""

    minimize: ObjectiveKind
    """energy (facility kWh), cost ($), carbon (kg CO2e) or weighted."""
    weights: dict[str, float] | None = None
    """Weights per unit (energy_kwh, cost_usd, carbon_kg); only for weighted."""

    def describe(self) -> str:
        """'weighted (cost_usd 1, carbon_kg 0.1)' or 'cost'."""
        if not self.weights:
            return str(self.minimize)
        parts = ", ".join(f"{k} {v:g}" for k, v in self.weights.items() if v)
        return f"{self.minimize} ({parts})"

    @model_serializer(mode="wrap")
    def _omit_absent_weights(self, handler: Any) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if out.get("weights") is None:
            out.pop("weights", None)
        return out


class AssumptionsDocument(Document):
    """Horizon, economics, limits and objective; then where the inputs came from."""

    hours: float
    """Length of the horizon (h)."""
    periods: int
    """Number of planning periods."""
    period_hours: list[float]
    """Hours of every period."""
    pue: float
    """Power usage effectiveness: facility energy = GPU energy × PUE."""
    electricity_usd_per_kwh: float
    grid_g_co2_per_kwh: float
    """Grid carbon intensity (g CO2e per facility kWh)."""
    carbon_usd_per_kg: float | None
    """Carbon price ($/kg CO2e; None: no price)."""
    power_cap_kw: float | None
    """Facility power cap in every period (kW)."""
    budget_usd: float | None
    """Cap on the total cost over the horizon ($)."""
    objective: ObjectiveDocument
    engine: str | None = None
    """Serving engine the candidates were predicted for."""
    robust: bool = False
    """True: operating points sized on the upper ITL bound."""
    pue_source: str | None = None
    """Where the PUE comes from (None: set in the scenario file)."""
    grid_region: str | None = None
    """Catalog grid region of the carbon factor (None: explicit figure)."""
    grid_year: int | None = None
    """Year of the grid carbon factor."""
    grid_source: str | None = None
    """Source of the grid carbon factor."""
    capacity_headroom: float | None = None
    """Fraction of the saturated request rate a replica is planned to carry."""


class ModelDocument(Document):
    """One model entry: load per period and SLA."""

    name: str
    model: str
    requests_per_s_by_period: list[float]
    """Mean arrival rate in every period (requests/s)."""
    itl_sla_s: float
    """Inter-token latency SLA (s)."""
    ttft_sla_s: float | None
    """Time-to-first-token SLA (s)."""
    min_replicas: int
    input_tokens: float
    output_tokens: float
    precision: str | None = None
    """Weight precision the candidates were predicted at."""


class CandidateDocument(Document):
    """One (model entry, GPU, TP) deployment with its operating point and coefficients."""

    name: str
    model: str
    gpu: str
    tp: int
    gpus_per_replica: int
    feasible: bool
    """False when excluded (memory, SLA, TTFT, scenario rule, price)."""
    reason: str
    """Why the candidate is excluded (or a note when feasible)."""
    batch_size: int
    """Operating concurrency (sequences) at capacity."""
    itl_s_at_capacity: float | None
    """Predicted ITL at the operating batch (s); null when it cannot run."""
    max_requests_per_s_per_replica: float
    """Planned capacity of one replica (requests/s, with headroom)."""
    idle_power_w_per_replica: float
    """Idle power of one replica (W)."""
    energy_j_per_request: float
    """Load-proportional energy per request above idle (J)."""
    usd_per_hour_per_replica: float
    """Price of one replica for one hour ($)."""
    power_w_per_gpu_at_capacity: float
    """Power per GPU at planned capacity (W)."""
    in_domain: bool
    """False when the prediction extrapolates outside the training domain."""
    itl_s_lo: float | None
    """Lower bound of the ITL interval at the operating batch (s)."""
    itl_s_hi: float | None
    """Upper bound of the ITL interval at the operating batch (s)."""
    power_w_per_gpu_predicted: float | None = None
    """Point prediction of power per GPU at the operating batch, saturated replica (W)."""
    power_w_per_gpu_lo: float | None = None
    """Lower bound of the power interval at the operating batch (W, unclipped)."""
    power_w_per_gpu_hi: float | None = None
    """Upper bound of the power interval at the operating batch (W, unclipped)."""
    idle_power_w_per_gpu: float | None = None
    """Catalog idle power of one GPU (W)."""
    tdp_w_per_gpu: float | None = None
    """Catalog board power limit (TDP) of one GPU (W)."""
    exclusion: Exclusion = Exclusion.NONE
    """Why an infeasible candidate is excluded, as a code: memory, itl_sla, ttft_sla, no_price,
    rule or prediction ('' when feasible); ``reason`` says it in words."""
    memory_needed_gb: float | None = None
    """Memory exclusions: the weights of one replica (GB; the KV cache comes on top)."""
    memory_usable_gb: float | None = None
    """Memory exclusions: memory of one replica left for weights and KV cache (GB)."""
    ttft_s: float | None = None
    """Prefill (TTFT) estimate (s), when computed."""
    load_curve_requests_per_s: list[float] = []
    """Knots of the replica's power curve: per-replica rates (req/s, ascending, first 0); empty
    for a linear candidate (idle + energy_j_per_request · rate up to capacity)."""
    power_curve_w_per_replica: list[float] = []
    """Mean GPU power of one replica at each knot (W), linear between knots: the curve the
    optimiser priced (docs/method.md §4 re-computes a plan from it)."""
    itl_curve_s: list[float] = []
    """Mean ITL at each knot (s): the ITL at the load a replica serves."""
    capacity_limit: str = ""
    """What sets the capacity: itl, ttft or memory ('' for hand-built candidates)."""

    @property
    def key(self) -> tuple[str, str, int]:
        """(model entry name, GPU, TP)."""
        return (self.name, self.gpu, self.tp)


class AllocationDocument(Document):
    """Replicas of one candidate, the load they serve and their accounting."""

    name: str
    model: str
    gpu: str
    tp: int
    replicas: int
    gpus: int
    requests_per_s_by_period: list[float]
    """Load served in every period (requests/s)."""
    batch_size: int
    itl_s: float | None
    """Predicted ITL at the operating batch (s)."""
    power_w_per_gpu: float
    """Time-weighted mean power per GPU (W)."""
    energy_kwh: float
    """GPU energy over the horizon (kWh)."""
    facility_energy_kwh: float
    """GPU energy × PUE (kWh)."""
    cost_usd: float
    """GPU rent + electricity + carbon price ($)."""
    gpu_cost_usd: float
    energy_cost_usd: float
    carbon_cost_usd: float
    carbon_kg: float
    """Operational CO2e (kg)."""
    power_w_by_period: list[float] | None = None
    """GPU power of all replicas in every period (W); energy = Σ power × hours."""
    itl_s_at_capacity: float | None = None
    """ITL at the replica's capacity, at the SLA percentile (s; the same as ``itl_s``)."""
    itl_s_at_served_load: float | None = None
    """Mean ITL at the load each replica serves in the busiest period (s)."""
    itl_s_at_served_load_by_period: list[float] | None = None
    """Mean ITL at the load each replica serves, per period (s)."""
    requests_per_s_per_replica_by_period: list[float] | None = None
    """Load per replica in every period (requests/s; spread evenly over the replicas)."""

    @property
    def key(self) -> tuple[str, str, int]:
        """(model entry name, GPU, TP)."""
        return (self.name, self.gpu, self.tp)


class TotalsDocument(Document):
    """Fleet totals over the horizon."""

    energy_kwh: float
    facility_energy_kwh: float
    cost_usd: float
    energy_cost_usd: float
    gpu_cost_usd: float
    carbon_cost_usd: float
    carbon_kg: float
    mean_power_w: float
    """Time-weighted mean GPU power of the fleet (W)."""
    peak_facility_power_kw: float
    """Highest facility power over the periods (kW)."""
    gpus: dict[str, int]
    """GPUs used by type."""


class BaselineDocument(Document):
    """A naive fleet planned by the same machinery."""

    name: str
    description: str
    feasible: bool
    status: str
    reason: str
    energy_kwh: float | None
    cost_usd: float | None
    carbon_kg: float | None
    gpus: dict[str, int] | None
    facility_energy_kwh: float | None = None


class SavingDocument(Document):
    """What the plan saves against one baseline (absolute and % of the baseline)."""

    baseline: str
    energy_kwh: float
    energy_pct: float | None
    cost_usd: float
    cost_pct: float | None
    carbon_kg: float
    carbon_pct: float | None


class PredictorsDocument(Document):
    """Which predictors produced the candidates (identifies the model card)."""

    name: str | None = None
    version: str | None = None
    training_data_sha256: str | None = None


class PlanDocument(Document):
    """The plan JSON (``wattgpu plan --format json``); keys in this order."""

    scenario: str
    status: Status
    solve: SolveDocument
    assumptions: AssumptionsDocument
    models: list[ModelDocument]
    inventory: dict[str, int | None]
    """GPU type -> available GPUs (null: unlimited)."""
    candidates: list[CandidateDocument]
    allocations: list[AllocationDocument]
    totals: TotalsDocument | None
    objective_breakdown: dict[str, float]
    """Terms of the objective value."""
    baselines: list[BaselineDocument]
    savings: list[SavingDocument]
    """What the plan saves against every feasible baseline."""
    description: str = ""
    """The scenario's description."""
    predictors: PredictorsDocument = PredictorsDocument()
    """Which predictors made the candidates."""

    @property
    def has_solution(self) -> bool:
        """True when the plan has allocations to report (optimal or feasible)."""
        return self.status in ("optimal", "feasible")

    def candidate(self, key: tuple[str, str, int]) -> CandidateDocument:
        """The candidate of an allocation *key* (name, GPU, TP)."""
        for c in self.candidates:
            if c.key == key:
                return c
        raise KeyError(key)

    def model(self, name: str) -> ModelDocument:
        """The model entry called *name*."""
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(name)


PLAN_FIX = "give a file written by `wattgpu plan SCENARIO --format json`"


def load_plan(path: Path) -> PlanDocument:
    """Read and validate a saved plan JSON (one line naming file and field on a bad file)."""
    return load_document(path, PlanDocument, "plan JSON", PLAN_FIX)


# --- Plan -> document ---------------------------------------------------------------------------


def _candidate(c: Candidate) -> CandidateDocument:
    return CandidateDocument(**{f.name: getattr(c, f.name) for f in fields(c)})


def _allocation(a: Allocation, power_w_by_period: list[float]) -> AllocationDocument:
    from planner.result import itl_s_at_served_load

    c = a.candidate
    return AllocationDocument(
        name=c.name,
        model=c.model,
        gpu=c.gpu,
        tp=c.tp,
        replicas=a.replicas,
        gpus=a.gpus,
        requests_per_s_by_period=list(a.requests_per_s_by_period),
        batch_size=c.batch_size,
        itl_s=c.itl_s_at_capacity,
        power_w_per_gpu=a.power_w_per_gpu,
        energy_kwh=a.energy_kwh,
        facility_energy_kwh=a.facility_energy_kwh,
        cost_usd=a.cost_usd,
        gpu_cost_usd=a.gpu_cost_usd,
        energy_cost_usd=a.energy_cost_usd,
        carbon_cost_usd=a.carbon_cost_usd,
        carbon_kg=a.carbon_kg,
        power_w_by_period=power_w_by_period,
        itl_s_at_capacity=c.itl_s_at_capacity,
        itl_s_at_served_load=a.itl_s_at_served_load,
        itl_s_at_served_load_by_period=itl_s_at_served_load(
            c, a.replicas, a.requests_per_s_by_period
        ),
        requests_per_s_per_replica_by_period=[
            x / a.replicas if a.replicas else 0.0 for x in a.requests_per_s_by_period
        ],
    )


def _totals(t: Totals) -> TotalsDocument:
    return TotalsDocument(
        energy_kwh=t.energy_kwh,
        facility_energy_kwh=t.facility_energy_kwh,
        cost_usd=t.cost_usd,
        energy_cost_usd=t.energy_cost_usd,
        gpu_cost_usd=t.gpu_cost_usd,
        carbon_cost_usd=t.carbon_cost_usd,
        carbon_kg=t.carbon_kg,
        mean_power_w=t.mean_power_w,
        peak_facility_power_kw=t.peak_facility_power_kw,
        gpus=dict(t.gpus),
    )


def _assumptions(inputs: PlanningInputs) -> AssumptionsDocument:
    p = inputs.provenance
    weighted = inputs.objective.minimize == "weighted"
    return AssumptionsDocument(
        hours=inputs.hours,
        periods=inputs.periods,
        period_hours=list(inputs.period_hours),
        pue=inputs.pue,
        electricity_usd_per_kwh=inputs.electricity_usd_per_kwh,
        grid_g_co2_per_kwh=inputs.grid_g_co2_per_kwh,
        carbon_usd_per_kg=inputs.carbon_usd_per_kg,
        power_cap_kw=inputs.power_cap_kw,
        budget_usd=inputs.budget_usd,
        objective=ObjectiveDocument(
            minimize=inputs.objective.minimize,
            weights={k: float(v) for k, v in inputs.objective.weights.items()}
            if weighted
            else None,
        ),
        engine=p.engine,
        robust=p.robust,
        pue_source=p.pue_source,
        grid_region=p.grid_region,
        grid_year=p.grid_year,
        grid_source=p.grid_source,
        capacity_headroom=p.capacity_headroom,
    )


def plan_document(plan: Plan) -> PlanDocument:
    """The typed JSON contract of *plan* (what ``wattgpu plan --format json`` writes)."""
    from planner.result import period_power_w

    inputs = plan.inputs
    p = inputs.provenance
    return PlanDocument(
        scenario=inputs.scenario,
        status=plan.status.value,
        solve=SolveDocument(
            seconds=plan.solve.seconds,
            gap=plan.solve.gap,
            bound=plan.solve.bound,
            objective=plan.solve.objective,
            solver=plan.solve.solver,
            messages=list(plan.solve.messages),
            time_limit_s=inputs.time_limit_s,
            relative_gap=inputs.relative_gap,
            threads=inputs.threads,
            seed=inputs.seed,
        ),
        assumptions=_assumptions(inputs),
        models=[
            ModelDocument(
                name=m.name,
                model=m.model,
                requests_per_s_by_period=list(m.requests_per_s_by_period),
                itl_sla_s=m.itl_sla_s,
                ttft_sla_s=m.ttft_sla_s,
                min_replicas=m.min_replicas,
                input_tokens=m.input_tokens,
                output_tokens=m.output_tokens,
                precision=m.precision,
            )
            for m in inputs.models
        ],
        inventory=dict(inputs.inventory),
        candidates=[_candidate(c) for c in inputs.candidates],
        allocations=[
            _allocation(a, period_power_w(a.candidate, a.replicas, a.requests_per_s_by_period))
            for a in plan.allocations
        ],
        totals=_totals(plan.totals) if plan.totals is not None else None,
        objective_breakdown=dict(plan.objective_breakdown),
        baselines=[
            BaselineDocument(
                name=b.name,
                description=b.description,
                feasible=b.feasible,
                status=b.status,
                reason=b.reason,
                energy_kwh=b.totals.energy_kwh if b.totals else None,
                cost_usd=b.totals.cost_usd if b.totals else None,
                carbon_kg=b.totals.carbon_kg if b.totals else None,
                gpus=dict(b.totals.gpus) if b.totals else None,
                facility_energy_kwh=b.totals.facility_energy_kwh if b.totals else None,
            )
            for b in plan.baselines
        ],
        savings=[SavingDocument(**s) for s in plan.savings()],
        description=p.description,
        predictors=PredictorsDocument(
            name=p.predictors,
            version=p.predictors_version,
            training_data_sha256=p.training_data_sha256,
        ),
    )


def plan_json(plan: Plan) -> dict[str, Any]:
    """The stable JSON contract of *plan* as plain JSON values (:func:`plan_document`)."""
    return plan_document(plan).to_json_dict()


# --- document -> optimiser inputs ----------------------------------------------------------------


def _candidate_of(c: CandidateDocument) -> Candidate:
    values = c.model_dump()
    if values["itl_s_at_capacity"] is None:  # JSON has no Infinity: an excluded candidate
        values["itl_s_at_capacity"] = math.inf
    for key in ("load_curve_requests_per_s", "power_curve_w_per_replica", "itl_curve_s"):
        values[key] = tuple(values[key])
    return Candidate(**values)


def planning_inputs_of(doc: PlanDocument, *, time_limit_s: float | None = None) -> PlanningInputs:
    """The optimiser's inputs of a saved plan (candidates as predicted when it was planned).

    Solver settings are the plan's own (``solve``); *time_limit_s* overrides the time limit.
    """
    a = doc.assumptions
    solver = doc.solve
    settings: dict[str, Any] = {
        "time_limit_s": time_limit_s or solver.time_limit_s,
        "relative_gap": solver.relative_gap,
        "threads": solver.threads,
        "seed": solver.seed,
    }
    return PlanningInputs(
        scenario=doc.scenario,
        models=tuple(
            ModelDemand(
                name=m.name,
                model=m.model,
                requests_per_s_by_period=tuple(m.requests_per_s_by_period),
                itl_sla_s=m.itl_sla_s,
                ttft_sla_s=m.ttft_sla_s,
                min_replicas=m.min_replicas,
                input_tokens=m.input_tokens,
                output_tokens=m.output_tokens,
                precision=m.precision,
            )
            for m in doc.models
        ),
        candidates=tuple(_candidate_of(c) for c in doc.candidates),
        inventory=dict(doc.inventory),
        period_hours=tuple(a.period_hours),
        pue=a.pue,
        electricity_usd_per_kwh=a.electricity_usd_per_kwh,
        grid_g_co2_per_kwh=a.grid_g_co2_per_kwh,
        carbon_usd_per_kg=a.carbon_usd_per_kg,
        power_cap_kw=a.power_cap_kw,
        budget_usd=a.budget_usd,
        objective=Objective(minimize=a.objective.minimize, weights=a.objective.weights or {}),
        **{k: v for k, v in settings.items() if v is not None},
        provenance=Provenance(
            description=doc.description,
            engine=a.engine,
            robust=a.robust,
            pue_source=a.pue_source,
            grid_region=a.grid_region,
            grid_year=a.grid_year,
            grid_source=a.grid_source,
            capacity_headroom=a.capacity_headroom,
            predictors=doc.predictors.name,
            predictors_version=doc.predictors.version,
            training_data_sha256=doc.predictors.training_data_sha256,
        ),
    )
