"""The parts of the plan JSON contract (:class:`planner.documents.plan.PlanDocument`): solve,
assumptions, model entries, candidates, allocations, totals, baselines, savings, predictors."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from planner.documents.base import Document, enum_from_json
from planner.documents.pools import KeyedRecord, PoolDocument
from planner.inputs import Exclusion, ObjectiveKind
from planner.scenario.disclosure import Disclosure

Status = Literal["optimal", "feasible", "infeasible", "error", "time_limit"]


def _absent(value: Any) -> bool:
    """Keys added after a contract was first published are left out when they do not apply,
    so that older files and plans that do not use them stay as they were."""
    return value is None


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
    weights: dict[str, float] | None = Field(None, exclude_if=_absent)
    """Weights per unit (energy_kwh, cost_usd, carbon_kg); only for weighted (omitted
    otherwise)."""

    def describe(self) -> str:
        """'weighted (cost_usd 1, carbon_kg 0.1)' or 'cost'."""
        if not self.weights:
            return str(self.minimize)
        parts = ", ".join(f"{k} {v:g}" for k, v in self.weights.items() if v)
        return f"{self.minimize} ({parts})"


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
    disclosure: Disclosure | None = Field(None, exclude_if=_absent)
    """The scenario's ``disclosure`` section (omitted when the scenario has none)."""
    grid_g_co2_per_kwh_by_period: list[float] | None = Field(None, exclude_if=_absent)
    """Grid intensity per period (the scenario's grid profile; omitted when flat)."""
    price_basis_by_gpu: dict[str, str] | None = Field(None, exclude_if=_absent)
    """GPU type -> the basis of its price (rental, TCO, or the scenario's own)."""
    gpus_per_node: dict[str, int] | None = Field(None, exclude_if=_absent)
    """GPU type -> GPUs per node, the size of a node lost under node failover (omitted when no
    model entry has node failover)."""
    user_catalog: str | None = Field(None, exclude_if=_absent)
    """The user catalog directory overlaid on the bundled catalogs (omitted when none): a
    saved plan's report reads its GPUs and LLMs there."""
    catalog_sha256: str | None = Field(None, exclude_if=_absent)
    """Fingerprint of the catalog files the plan was made against (omitted when unknown)."""


class FailoverDocument(Document):
    """How many replicas (N+k) or nodes may be down at once; one of the two is set."""

    replicas: int | None = Field(None, ge=1, exclude_if=_absent)
    """Replicas that may be down at once (N+k)."""
    nodes: int | None = Field(None, ge=1, exclude_if=_absent)
    """Nodes that may be down at once (each deployment fills whole nodes, not shared)."""

    @model_validator(mode="after")
    def _one_unit(self) -> FailoverDocument:
        if (self.replicas is None) == (self.nodes is None):
            raise ValueError("give one of replicas or nodes")
        return self

    @property
    def unit(self) -> Literal["replicas", "nodes"]:
        """Which units may be lost."""
        return "replicas" if self.replicas is not None else "nodes"

    @property
    def count(self) -> int:
        """How many units may be lost at once."""
        return self.replicas if self.replicas is not None else (self.nodes or 0)


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
    failover: FailoverDocument | None = Field(None, exclude_if=_absent)
    """Spare capacity for lost replicas or nodes (omitted when the entry has none)."""
    failover_capacity_requests_per_s: float | None = Field(None, exclude_if=_absent)
    """Capacity the plan keeps for this entry after its worst failover losses (req/s; the same
    in every period, as replicas are fixed over the horizon; at least the peak load). Omitted
    without failover or without a plan."""
    sla_percentile: float | None = None
    """Latency percentile ``itl_sla_s`` and ``ttft_sla_s`` refer to, and so each candidate's
    ``itl_s_at_capacity`` (null: the mean; plans written before the key read as the mean)."""


class CandidateDocument(KeyedRecord):
    """One (model entry, GPU, layout) deployment with its operating point and coefficients."""

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
    exclusion: Annotated[Exclusion, enum_from_json(Exclusion)] = Exclusion.NONE
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
    """What sets the capacity: itl, ttft, memory (the KV cache or the engine's batch limit) or
    throughput (the batch where the throughput stops rising: more sequences in flight serve fewer
    requests) ('' for hand-built candidates)."""
    tensor_parallel: int | None = None
    """Tensor-parallel degree of one replica (the same as ``tp``; null in plans written before
    layouts)."""
    pipeline_parallel: int | None = None
    """Pipeline stages of one replica (null in plans written before layouts: 1)."""
    data_parallel: int | None = None
    """Attention data-parallel ranks of one replica (null in older plans: 1)."""
    expert_parallel: int | None = None
    """Expert-parallel degree of the MoE layers, 1 for dense models (null in older plans: 1)."""
    nodes: int | None = None
    """Nodes (servers, or GB200/GB300 compute trays) one replica spans (1 inside one node;
    null in older plans)."""

    region: str | None = Field(None, exclude_if=_absent)
    """Region the candidate runs in (omitted in plans without regions)."""
    deployment: Literal["aggregated", "disaggregated"] | None = Field(None, exclude_if=_absent)
    """``aggregated`` (one engine per replica) or ``disaggregated`` (a unit of prefill and
    decode ``pools``; ``gpu`` and the layout are then its decode pool's); omitted in plans
    without disaggregated candidates (aggregated)."""
    pools: list[PoolDocument] | None = Field(None, exclude_if=_absent)
    """A disaggregated unit's prefill and decode pools (:mod:`planner.documents.pools`)."""


class AllocationDocument(KeyedRecord):
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
    tensor_parallel: int | None = None
    """Tensor-parallel degree of one replica (the same as ``tp``; null in plans written before
    layouts)."""
    pipeline_parallel: int | None = None
    """Pipeline stages of one replica (null in plans written before layouts: 1)."""
    data_parallel: int | None = None
    """Attention data-parallel ranks of one replica (null in older plans: 1)."""
    expert_parallel: int | None = None
    """Expert-parallel degree of the MoE layers, 1 for dense models (null in older plans: 1)."""
    nodes: int | None = None
    """Nodes (servers, or GB200/GB300 compute trays) one replica spans (1 inside one node;
    null in older plans)."""

    region: str | None = Field(None, exclude_if=_absent)
    """Region the replicas run in (omitted in plans without regions)."""
    deployment: Literal["aggregated", "disaggregated"] | None = Field(None, exclude_if=_absent)
    """``aggregated`` (one engine per replica) or ``disaggregated`` (a unit of prefill and
    decode ``pools``; ``gpu`` and the layout are then its decode pool's); omitted in plans
    without disaggregated candidates (aggregated)."""
    pools: list[PoolDocument] | None = Field(None, exclude_if=_absent)
    """A disaggregated unit's prefill and decode pools (:mod:`planner.documents.pools`)."""


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


class CandidateCountsDocument(Document):
    """How many candidates the plan considered, and how many the JSON carries (``candidates``)."""

    total: int
    """Every candidate deployment the plan considered."""
    feasible: int
    """Of them, feasible ones."""
    feasible_out_of_domain: int
    """Feasible ones predicted outside the predictors' training domain."""
    kept: int
    """Candidates in this JSON's ``candidates`` list."""
