"""The report JSON (``wattgpu report --format json``) as a typed document.

Markdown, HTML and text are rendered from this document (:mod:`planner.report.sections`);
``plan`` embeds the whole plan document the report was computed from.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from planner.documents.base import Document
from planner.documents.disclosure import DisclosureDocument
from planner.documents.flags import UncertaintyFlagsDocument
from planner.documents.forecast import ForecastDocument, GridDocument
from planner.documents.pareto import ParetoDocument
from planner.documents.plan import PlanDocument
from planner.documents.plan_parts import ObjectiveDocument, SavingDocument
from planner.documents.pools import PoolDocument, absent
from planner.documents.uncertainty import BandsDocument, FigureBandsDocument
from planner.inputs.pools import layout_text


class ScenarioRef(Document):
    """The scenario the plan came from."""

    name: str
    description: str
    file: str | None
    """The scenario or plan file the report was made from."""


class SolveSummary(Document):
    """Solve time and gap."""

    seconds: float
    gap: float | None


class Headline(Document):
    """Fleet totals over the horizon and per year."""

    hours: float
    estimated_energy_kwh: float
    estimated_facility_energy_kwh: float
    estimated_co2e_kg: float
    estimated_cost_usd: float
    estimated_average_power_w: float
    estimated_facility_energy_kwh_per_year: float
    estimated_co2e_kg_per_year: float
    estimated_cost_usd_per_year: float
    estimated_wh_per_1000_output_tokens: float | None
    estimated_facility_wh_per_1000_output_tokens: float | None
    requests: float
    output_tokens: float
    gpus: dict[str, int]
    gpus_total: int


class Deployment(Document):
    """One allocation of a model entry."""

    gpu: str
    tp: int
    replicas: int
    gpus: int
    batch_size: int
    itl_s: float | None
    in_domain: bool
    mean_requests_per_s: float
    itl_s_at_served_load: float | None = None
    """Mean ITL at the load each replica serves in the busiest period (s); ``itl_s`` is the
    ITL at capacity."""
    region: str | None = Field(None, exclude_if=lambda v: v is None)
    """Region the replicas run in (omitted in plans without regions)."""
    pools: list[PoolDocument] | None = Field(None, exclude_if=absent)
    """A disaggregated unit's pools (each of one unit; omitted for aggregated replicas)."""
    pipeline_parallel: int | None = Field(None, exclude_if=absent)
    """Pipeline stages of one replica (omitted for pure tensor parallelism and for units)."""
    data_parallel: int | None = Field(None, exclude_if=absent)
    """Attention data-parallel ranks of one replica (omitted when 1 and for units)."""
    expert_parallel: int | None = Field(None, exclude_if=absent)
    """Expert-parallel degree of the MoE layers (omitted when 1 and for units)."""

    @property
    def layout(self) -> str:
        """One replica's layout as in the plan's tables (``8``, ``8×PP2``, ``1×DP8 EP8``)."""
        return layout_text(
            self.tp, self.pipeline_parallel or 1, self.data_parallel or 1, self.expert_parallel or 1
        )


class ModelSection(Document):
    """One model entry: its deployments and estimated energy, intensity, CO2e and cost."""

    name: str
    model: str
    deployments: list[Deployment]
    gpus: dict[str, int]
    gpus_used: int
    itl_sla_s: float
    requests: float
    output_tokens: float
    estimated_energy_kwh: float
    estimated_facility_energy_kwh: float
    estimated_wh_per_1000_output_tokens: float | None
    estimated_facility_wh_per_1000_output_tokens: float | None
    estimated_wh_per_request: float | None
    estimated_facility_wh_per_request: float | None
    estimated_average_power_w: float
    estimated_co2e_kg: float
    estimated_cost_usd: float
    in_domain: bool
    uncertainty: FigureBandsDocument | None


class SystemBoundary(Document):
    """What the energy and carbon figures include and exclude."""

    energy: str
    facility: str
    carbon: str
    excluded: list[str]


class Method(Document):
    """The predictors and their held-out accuracy, from the model card."""

    predictors: str
    predictors_version: str
    library_versions: dict[str, str]
    chosen_recipes: dict[str, str | None]
    reference_source: str | None
    intervals: str | None
    units: dict[str, str]
    metrics: dict[str, Any]
    """``status`` and per split (unseen_gpus, unseen_llms, cross_validation) per target."""
    description: str


class Source(Document):
    """One public measurement source of the training data."""

    id: str
    description: str
    rows: int | None


class DataProvenance(Document):
    """The training data of the predictors."""

    sources: list[Source]
    rows: dict[str, int] | int | None
    sha256: str | None
    note: str


class Load(Document):
    """The assumed load and SLA of one model entry."""

    name: str
    model: str
    precision: str | None
    mean_requests_per_s: float
    peak_requests_per_s: float
    input_tokens: float
    output_tokens: float
    itl_sla_ms: float
    ttft_sla_ms: float | None
    min_replicas: int


class RegionAssumptions(Document):
    """One region of a plan with regions: the figures its model entries were accounted at."""

    name: str
    pue: float
    electricity_usd_per_kwh: float
    grid_g_co2_per_kwh: float
    """Grid carbon intensity (g CO2e per facility kWh; flat: the region's carbon without a
    profile)."""
    grid_g_co2_per_kwh_by_period: list[float] | None
    """The region's hourly grid profile, one value per period (null when flat)."""
    grid_region: str | None
    """Catalog grid region of the carbon factor (null: an explicit figure)."""
    power_cap_kw: float | None
    """Facility power cap of the region in every period (kW; null: none)."""


class Assumptions(Document):
    """Horizon, PUE, grid factor, prices, objective, engine, limits and loads. In a plan with
    regions that uses energy, ``pue``, ``grid`` and ``electricity_usd_per_kwh`` are the fleet's
    effective figures (``effective_site_figures``; each region's own under ``regions``)."""

    horizon_hours: float
    periods: int
    period_hours: float | None
    pue: float
    pue_source: str
    grid: GridDocument
    grid_text: str
    electricity_usd_per_kwh: float
    carbon_usd_per_tonne: float | None
    engine: str | None
    robust: bool
    capacity_headroom: float | None
    objective: ObjectiveDocument
    objective_text: str
    power_cap_kw: float | None
    """The scenario's facility power cap in every period (kW; null: none, or with regions each
    region's under ``regions``)."""
    budget_usd: float | None
    """Cap on the total cost over the horizon ($; null: none)."""
    loads: list[Load]
    effective_site_figures: bool = False
    """True when ``pue``, ``grid`` and ``electricity_usd_per_kwh`` are the fleet's effective
    figures (a plan with regions that uses energy): facility over GPU energy, carbon over
    facility energy and electricity cost over facility energy, so that facility kWh × grid and
    × price give the report's carbon and electricity cost; false: the scenario's own figures
    (with regions but no energy planned: its top-level figures, each region's under
    ``regions``)."""
    regions: list[RegionAssumptions] | None = Field(None, exclude_if=absent)
    """Each region's PUE, electricity price, grid and power cap (omitted without regions)."""


class Warnings(Document):
    """Out-of-domain deployments and other messages a reader must see."""

    out_of_domain_allocations: list[str]
    out_of_domain_candidates: list[str]
    """Feasible candidates outside the training domain, of those the plan JSON carries
    (``candidate_counts`` in the plan gives how many there were in all)."""
    messages: list[str]


class BaselineSummary(Document):
    """A naive fleet's estimated totals."""

    name: str
    description: str
    feasible: bool
    estimated_energy_kwh: float | None
    estimated_cost_usd: float | None
    estimated_co2e_kg: float | None
    reason: str = ""
    """Why the naive fleet has no plan ('' when feasible), as the plan JSON says it."""


class ReportDocument(Document):
    """Estimated inference-energy and emissions disclosure of one plan."""

    title: str
    estimated: Literal[True]
    note: str
    generated_at: str
    wattgpu_version: str
    scenario: ScenarioRef
    status: str
    solve: SolveSummary
    headline: Headline
    models: list[ModelSection]
    forecast: ForecastDocument
    uncertainty: BandsDocument | None
    system_boundary: SystemBoundary
    method: Method
    data_provenance: DataProvenance
    assumptions: Assumptions
    warnings: Warnings
    baselines: list[BaselineSummary]
    savings: list[SavingDocument]
    pareto: ParetoDocument | None
    accuracy_csv: str | None
    plan: PlanDocument
    disclosure: DisclosureDocument | None = None
    """The disclosure fields (EU AI Act, SCI, GHG Protocol, AI Energy Score); None when the plan
    has no allocations."""
    uncertainty_flags: UncertaintyFlagsDocument | None = None
    """The plan's uncertainty flags (its ``uncertainty_flags``, or the rule applied to a plan
    written before them), with a sweep's SLA probabilities when ``--sweep`` is given."""

    @property
    def has_solution(self) -> bool:
        """True when the plan has allocations to report (optimal or feasible)."""
        return self.status in ("optimal", "feasible")

    @property
    def total_bands(self) -> FigureBandsDocument | None:
        """The fleet's uncertainty bands (None when the plan has none)."""
        return self.uncertainty.total if self.uncertainty else None
