"""The plan JSON contract (``wattgpu plan --format json``) as a typed document.

:func:`plan_document` turns a solved :class:`~planner.result.Plan` into a :class:`PlanDocument`
(its parts in :mod:`planner.documents.plan_parts`); everything after the plan (forecast,
uncertainty bands, report) is computed from this document and the model card alone, so a saved
plan JSON reports exactly like the run that wrote it. :func:`read_plan` reads, validates and
re-checks a saved file (:func:`load_plan`: the document alone); :func:`planning_inputs_of`
rebuilds the optimiser's inputs from it (for the Pareto front of a saved plan; no predictor).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from planner.documents.base import Document, dataclass_values, load_document
from planner.documents.flags import UncertaintyFlagsDocument
from planner.documents.kept import CandidateSelection, candidate_counts, kept_candidates
from planner.documents.plan_parts import (
    AllocationDocument,
    AssumptionsDocument,
    BaselineDocument,
    CandidateCountsDocument,
    CandidateDocument,
    FailoverDocument,
    ModelDocument,
    ObjectiveDocument,
    PredictorsDocument,
    SavingDocument,
    SolveDocument,
    Status,
    TotalsDocument,
)
from planner.documents.plan_savings import savings_of
from planner.documents.pools import candidate_fields
from planner.documents.records import candidate_of, model_of
from planner.documents.regions import RegionDocument, entry_site, region_documents, regions_of
from planner.documents.trusted import allocation_document, trusted_document
from planner.documents.verify import checked_plan_json
from planner.inputs import (
    Candidate,
    CandidateKey,
    ModelDemand,
    Objective,
    PlanningInputs,
    Provenance,
)
from planner.result import (
    Plan,
    failover_capacity,
)
from planner.scenario.disclosure import Disclosure
from predictors.core.document_kinds import PLAN
from predictors.core.safe_read import collector_paused

#: Scalars the plan's assumptions share with :class:`~planner.inputs.PlanningInputs`.
ECONOMICS: tuple[str, ...] = (
    "pue",
    "electricity_usd_per_kwh",
    "grid_g_co2_per_kwh",
    "carbon_usd_per_kg",
    "power_cap_kw",
    "budget_usd",
)
#: Fields the plan's assumptions share with :class:`~planner.inputs.Provenance`.
ASSUMED_PROVENANCE: tuple[str, ...] = (
    "engine",
    "robust",
    "pue_source",
    "grid_region",
    "grid_year",
    "grid_source",
    "capacity_headroom",
    "user_catalog",
    "catalog_sha256",
)
#: Solver settings the plan's ``solve`` shares with :class:`~planner.inputs.PlanningInputs`.
SOLVER_SETTINGS: tuple[str, ...] = ("time_limit_s", "relative_gap", "threads", "seed")


#: Where :meth:`PlanDocument.candidate` keeps its index (not a field).
_INDEX = "candidate_index"


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
    candidates_kept: Literal["best", "all"] = "all"
    """Which candidates ``candidates`` holds: ``best`` (the default of ``wattgpu plan``: the
    allocated ones, the best feasible alternatives per model and every excluded one) or ``all``
    (``--candidates all``)."""
    candidate_counts: CandidateCountsDocument | None = None
    """How many candidates the plan considered and kept (null in plans written before them)."""
    uncertainty_flags: UncertaintyFlagsDocument | None = None
    """Allocations flagged for uncertainty, with what ``robust: true`` deploys instead
    (:mod:`planner.documents.flags`; null in plans written before them)."""
    regions: list[RegionDocument] | None = Field(None, exclude_if=lambda v: v is None)
    """The scenario's regions with their totals (omitted in plans without regions; then
    ``assumptions`` and ``inventory`` hold the one site). With regions every allocation and
    candidate names its ``region``, and each region's PUE, prices and grid account for it."""

    @property
    def has_solution(self) -> bool:
        """True when the plan has allocations to report (optimal or feasible)."""
        return self.status in ("optimal", "feasible")

    def candidate(self, key: CandidateKey) -> CandidateDocument:
        """The candidate of an allocation *key* (name, GPU, TP, PP, DP, EP): the first of equal
        keys, from an index built on the first look-up and rebuilt when ``candidates`` is
        another list (a ``model_copy`` with new candidates never reads a stale index)."""
        held = self.__dict__.get(_INDEX)  # beside the fields, as a cached property is kept:
        if held is None or held[0] is not self.candidates:  # no part of equality or the JSON
            held = (self.candidates, {c.key: c for c in reversed(self.candidates)})
            self.__dict__[_INDEX] = held
        if (found := held[1].get(key)) is None:
            raise KeyError(key)
        return found

    def region(self, name: str | None) -> RegionDocument | None:
        """The region called *name* (None without regions, or for ``None``)."""
        return next((r for r in self.regions or () if r.name == name), None)

    def entry_site(self, name: str) -> tuple[float, float]:
        """(PUE, flat grid g CO2e/kWh) where model entry *name* runs: its region's in a plan
        with regions (an entry is placed in one region), else the assumptions'."""
        return entry_site(self.regions, self.allocations, name, self.assumptions)

    def model(self, name: str) -> ModelDocument:
        """The model entry called *name*."""
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(name)


PLAN_FIX = "give a file written by `wattgpu plan SCENARIO --format json`"


def read_plan(
    path: Path, *, trust: bool = False, warn: Callable[[str], None] | None = None
) -> tuple[PlanDocument, dict[str, Any]]:
    """Read and validate a saved plan JSON in pydantic's strict mode (one line naming file and
    field on a bad file; ``"replicas": true`` is no integer, lax mode read it as 1), then
    recompute it from its allocations and candidate curves (:func:`.verify.checked_plan_json`):
    a hand-edited or damaged figure is an error naming the field, or with *trust* a warning
    through *warn*. The document, and the JSON values (``to_json_dict``) that were checked; with
    *trust*, the figures rebuilt from the allocations (:mod:`.trusted`) in both."""
    warned: set[str] = set()

    def told(line: str) -> None:  # the fields the check named, so a total is warned once
        warned.add(line.removeprefix("warning: ").removeprefix(f"{path}: ").split(": ", 1)[0])
        (warn or (lambda _: None))(line)

    with collector_paused():
        doc = load_document(path, PlanDocument, "plan JSON", PLAN_FIX, strict=True, kind=PLAN)
        data = checked_plan_json(doc.to_json_dict(), str(path), trust=trust, warn=told)
    if not trust:
        return doc, data
    trusted = trusted_document(doc, planning_inputs_of(doc), str(path), warned, warn)
    return trusted, trusted.to_json_dict()


def load_plan(
    path: Path, *, trust: bool = False, warn: Callable[[str], None] | None = None
) -> PlanDocument:
    """The checked document of a saved plan JSON (:func:`read_plan`)."""
    return read_plan(path, trust=trust, warn=warn)[0]


# --- Plan -> document ---------------------------------------------------------------------------


def _candidate(c: Candidate, split: bool) -> CandidateDocument:
    return CandidateDocument(**{**candidate_fields(c, split), "region": c.region or None})


def _assumptions(inputs: PlanningInputs) -> AssumptionsDocument:
    objective = inputs.objective
    weighted = objective.minimize == "weighted"
    return AssumptionsDocument(
        hours=inputs.hours,
        periods=inputs.periods,
        period_hours=list(inputs.period_hours),
        **{k: getattr(inputs, k) for k in ECONOMICS},
        objective=ObjectiveDocument(
            minimize=objective.minimize,
            weights={k: float(v) for k, v in objective.weights.items()} if weighted else None,
        ),
        **{k: getattr(inputs.provenance, k) for k in ASSUMED_PROVENANCE},
        disclosure=(
            Disclosure.model_validate(dict(inputs.provenance.disclosure))
            if inputs.provenance.disclosure is not None
            else None
        ),
        grid_g_co2_per_kwh_by_period=(
            list(inputs.grid_g_co2_per_kwh_by_period)
            if inputs.grid_g_co2_per_kwh_by_period is not None
            else None
        ),
        price_basis_by_gpu=(
            dict(inputs.provenance.price_basis_by_gpu)
            if inputs.provenance.price_basis_by_gpu is not None
            else None
        ),
        gpus_per_node=(
            {g: inputs.node_gpus(g) for g in sorted(inputs.inventory)}
            if any(m.failover and m.failover.unit == "nodes" for m in inputs.models)
            else None
        ),
    )


def _model(plan: Plan, m: ModelDemand) -> ModelDocument:
    """The model entry's record; with failover, its kind and the capacity the plan keeps after
    the worst losses."""
    fo = m.failover
    return ModelDocument(
        **dataclass_values(m, skip={"failover"}),
        failover=None if fo is None else FailoverDocument(**{fo.unit: fo.count}),
        failover_capacity_requests_per_s=(
            failover_capacity(plan, m.name) if fo is not None and plan.has_solution else None
        ),
    )


def plan_document(
    plan: Plan,
    candidates: CandidateSelection = "best",
    flags: UncertaintyFlagsDocument | None = None,
) -> PlanDocument:
    """The typed JSON contract of *plan* (what ``wattgpu plan --format json`` writes), carrying
    the *candidates* selection (:mod:`planner.documents.kept`) and its uncertainty *flags*
    (:func:`planner.analysis.flags.uncertainty_flags`; None: not computed)."""
    inputs = plan.inputs
    p = inputs.provenance
    kept = kept_candidates(plan, candidates)
    split = any(c.disaggregated for c in inputs.candidates)  # plans without units: as before
    return PlanDocument(
        scenario=inputs.scenario,
        status=plan.status.value,
        solve=SolveDocument(
            **dataclass_values(plan.solve), **{k: getattr(inputs, k) for k in SOLVER_SETTINGS}
        ),
        assumptions=_assumptions(inputs),
        models=[_model(plan, m) for m in inputs.models],
        inventory=dict(inputs.inventory),
        candidates=[_candidate(c, split) for c in kept],
        allocations=[allocation_document(a, split) for a in plan.allocations],
        totals=(
            TotalsDocument(**dataclass_values(plan.totals), cost_usd=plan.totals.cost_usd)
            if plan.totals is not None
            else None
        ),
        objective_breakdown=dict(plan.objective_breakdown),
        baselines=[
            BaselineDocument(
                **dataclass_values(b, skip={"totals"}),
                energy_kwh=b.totals.energy_kwh if b.totals else None,
                cost_usd=b.totals.cost_usd if b.totals else None,
                carbon_kg=b.totals.carbon_kg if b.totals else None,
                gpus=dict(b.totals.gpus) if b.totals else None,
                facility_energy_kwh=b.totals.facility_energy_kwh if b.totals else None,
            )
            for b in plan.baselines
        ],
        savings=savings_of(plan),
        description=p.description,
        predictors=PredictorsDocument(
            name=p.predictors,
            version=p.predictors_version,
            training_data_sha256=p.training_data_sha256,
        ),
        candidates_kept=candidates,
        candidate_counts=CandidateCountsDocument(**dataclass_values(candidate_counts(plan, kept))),
        uncertainty_flags=flags,
        regions=region_documents(plan),
    )


def as_document(plan: Plan | PlanDocument) -> PlanDocument:
    """*plan* as its JSON document (a document is returned as it is)."""
    return plan if isinstance(plan, PlanDocument) else plan_document(plan)


def plan_json(
    plan: Plan,
    candidates: CandidateSelection = "best",
    flags: UncertaintyFlagsDocument | None = None,
) -> dict[str, Any]:
    """The stable JSON contract of *plan* as plain JSON values (:func:`plan_document`)."""
    return plan_document(plan, candidates, flags).to_json_dict()


# --- document -> optimiser inputs ----------------------------------------------------------------


def planning_inputs_of(doc: PlanDocument, *, time_limit_s: float | None = None) -> PlanningInputs:
    """The optimiser's inputs of a saved plan (candidates as predicted when it was planned).

    Solver settings are the plan's own (``solve``); *time_limit_s* overrides the time limit.
    """
    a = doc.assumptions
    settings = {k: getattr(doc.solve, k) for k in SOLVER_SETTINGS}
    settings["time_limit_s"] = time_limit_s or settings["time_limit_s"]
    return PlanningInputs(
        scenario=doc.scenario,
        models=tuple(model_of(m) for m in doc.models),
        candidates=tuple(candidate_of(c) for c in doc.candidates),
        inventory=dict(doc.inventory),
        period_hours=tuple(a.period_hours),
        **{k: getattr(a, k) for k in ECONOMICS},
        objective=Objective(minimize=a.objective.minimize, weights=a.objective.weights or {}),
        **{k: v for k, v in settings.items() if v is not None},
        provenance=Provenance(
            description=doc.description,
            **{k: getattr(a, k) for k in ASSUMED_PROVENANCE},
            predictors=doc.predictors.name,
            predictors_version=doc.predictors.version,
            training_data_sha256=doc.predictors.training_data_sha256,
            disclosure=a.disclosure.model_dump(mode="json") if a.disclosure else None,
            price_basis_by_gpu=a.price_basis_by_gpu,
        ),
        grid_g_co2_per_kwh_by_period=(
            tuple(a.grid_g_co2_per_kwh_by_period)
            if a.grid_g_co2_per_kwh_by_period is not None
            else None
        ),
        gpus_per_node=dict(a.gpus_per_node or {}),
        regions=regions_of(doc.regions),
    )
