"""The sections of a scenario as strict, frozen pydantic models: the objective, a GPU offer and
a model entry with its load and latency SLA.

:class:`StrictModel` is the base of every scenario model (see :mod:`planner.scenario.model` for
what it forbids); :func:`rule_error` is the one error a cross-field rule raises. The
:class:`~planner.scenario.model.Scenario` that holds these sections is in
:mod:`planner.scenario.model`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from planner.inputs import DEFAULT_OBJECTIVE, ObjectiveKind
from planner.scenario.limits import (
    DEFAULT_TP_DEGREES,
    HOURS_PER_DAY,
    MAX_CONTEXT_TOKENS,
    MAX_FAILOVER,
    MAX_GPUS,
    MAX_LATENCY_MS,
    MAX_LAYOUT_DEGREE,
    MAX_LAYOUTS,
    MAX_PERIODS,
    MAX_PROFILE_MULTIPLIER,
    MAX_REPLICAS,
    MAX_REQUESTS_PER_S,
    MAX_USD_PER_GPU_HOUR,
    MAX_WEIGHT,
)
from planner.scenario.rules import section_rule
from planner.scenario.text import check_name
from predictors.core.vocab import Precision, canonical_precision

NonNegativeFloat = Annotated[float, Field(ge=0, le=MAX_PROFILE_MULTIPLIER)]
RequestRate = Annotated[float, Field(ge=0, le=MAX_REQUESTS_PER_S)]


def rule_error(problems: list[tuple[str, str]]) -> PydanticCustomError:
    """One pydantic error carrying every broken rule as (sub-path, 'what — how to fix')."""
    message = "; ".join(f"{path}: {msg}" if path else msg for path, msg in problems)
    return PydanticCustomError("rule", "{message}", {"message": message, "problems": problems})


def _precision_spelling(value: object) -> object:
    """A precision in its other spellings (``bfloat16``, ``FP8``) as its canonical name, as
    ``predict`` reads it; anything else as given (the field's own check then names it)."""
    if isinstance(value, str):
        return canonical_precision(value) or value
    return value


#: A weight precision that also takes the spellings ``predict`` takes.
SpeltPrecision = Annotated[Precision, BeforeValidator(_precision_spelling)]


class StrictModel(BaseModel):
    """Base of every scenario model: strict types, no unknown keys, no inf/nan, frozen."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
        allow_inf_nan=False,
    )


class ObjectiveWeights(StrictModel):
    """Weights of the weighted objective: weight × quantity, summed (unitless per unit)."""

    energy_kwh: float = Field(0.0, ge=0, le=MAX_WEIGHT)
    """Weight per kWh of facility energy (GPU energy × PUE)."""
    cost_usd: float = Field(0.0, ge=0, le=MAX_WEIGHT)
    """Weight per US dollar of total cost (GPU-hours + electricity + carbon price, if set)."""
    carbon_kg: float = Field(0.0, ge=0, le=MAX_WEIGHT)
    """Weight per kg CO2e of operational emissions (facility energy × grid intensity)."""

    @section_rule
    def _some_weight(self) -> ObjectiveWeights:
        if self.energy_kwh == 0 and self.cost_usd == 0 and self.carbon_kg == 0:
            raise rule_error(
                [
                    (
                        "",
                        "all weights are 0 — give at least one of energy_kwh, cost_usd, "
                        "carbon_kg > 0",
                    )
                ]
            )
        return self


class Objective(StrictModel):
    """What the planner minimises."""

    minimize: ObjectiveKind = DEFAULT_OBJECTIVE
    """One of energy (facility kWh), cost (USD), carbon (kg CO2e) or weighted (a weighted sum)."""
    weights: ObjectiveWeights | None = None
    """Weights of the weighted sum; required with ``minimize: weighted`` and only allowed there."""

    @section_rule
    def _weights_match(self) -> Objective:
        if self.minimize == "weighted" and self.weights is None:
            raise rule_error(
                [("weights", "minimize: weighted needs weights — add e.g. {cost_usd: 1.0}")]
            )
        if self.minimize != "weighted" and self.weights is not None:
            raise rule_error(
                [
                    (
                        "weights",
                        f"weights are only used with minimize: weighted, not {self.minimize} — "
                        "remove weights or set minimize: weighted",
                    )
                ]
            )
        return self


class LayoutOption(StrictModel):
    """One parallel layout of a replica, gpu_count = TP × pipeline_parallel × data_parallel.

    Omitted degrees take the engines' usual layout (docs/contracts.md, "Parallel layout")."""

    gpu_count: int = Field(ge=1, le=MAX_LAYOUT_DEGREE)
    """GPUs of one replica."""
    pipeline_parallel: int | None = Field(None, ge=1, le=MAX_LAYOUT_DEGREE)
    """Pipeline stages; omitted = the usual (1 inside an NVLink domain, else one per domain)."""
    data_parallel: int | None = Field(None, ge=1, le=MAX_LAYOUT_DEGREE)
    """Attention data-parallel ranks; omitted = 1."""
    expert_parallel: int | None = Field(None, ge=1, le=MAX_LAYOUT_DEGREE)
    """Expert-parallel degree of MoE layers; omitted = TP × DP (at most the experts), 1 dense."""


class GpuOffer(StrictModel):
    """One GPU type the planner may use."""

    available: int | None = Field(None, ge=0, le=MAX_GPUS)
    """How many GPUs of this type exist (counting every GPU of a tensor-parallel replica); null or
    omitted = unlimited."""
    usd_per_hour: float | None = Field(None, ge=0, le=MAX_USD_PER_GPU_HOUR)
    """Price per GPU-hour in USD; omitted = the catalog's ``usd_per_hour`` (filled in by the
    loader)."""
    tp_degrees: list[int] = Field(default_factory=lambda: list(DEFAULT_TP_DEGREES))
    """Tensor-parallel degrees (GPUs per replica) the planner may use on this type; one the
    model's heads do not allow is left out for that model (a degree other than a power of two
    must suit a model entry that may use the type, and the list must leave each such entry a
    degree); with an engine that splits the layers (llama.cpp, hf-transformers) each is the GPU
    count of a layer split, TP 1 × PP degree."""
    purchase_price_usd: float | None = Field(default=None, gt=0, le=1e7)
    """Purchase price of one GPU (USD) for the TCO price; omitted = the catalog's
    ``list_price_usd``."""
    price_basis: str | None = None
    """Which basis ``usd_per_hour`` comes from (set by the loader, refused in a file; shown in
    reports)."""
    layouts: list[LayoutOption] | None = Field(None, max_length=MAX_LAYOUTS)
    """Multi-node / rack-scale layouts the planner may use besides ``tp_degrees``; omitted = the
    smallest rack-scale and multi-node layouts (docs/method.md, "Layouts in the planner")."""

    @field_validator("tp_degrees")
    @classmethod
    def _tp_ok(cls, degrees: list[int]) -> list[int]:
        if not degrees:
            raise rule_error([("", "empty — give at least one degree, e.g. [1]")])
        bad = [d for d in degrees if not 1 <= d <= MAX_LAYOUT_DEGREE]
        if bad:
            raise rule_error(
                [
                    (
                        "",
                        f"unsupported degree(s) {bad} — use tensor-parallel degrees from 1 to "
                        f"{MAX_LAYOUT_DEGREE} that divide the model's attention heads; state "
                        "pipeline, data or expert parallelism under layouts (gpu_count with "
                        "pipeline_parallel, data_parallel, expert_parallel)",
                    )
                ]
            )
        if len(set(degrees)) != len(degrees):
            raise rule_error([("", "repeated degree — list each degree once")])
        return degrees

    @field_validator("layouts")
    @classmethod
    def _layouts_once(cls, layouts: list[LayoutOption] | None) -> list[LayoutOption] | None:
        """A literal repeat; two entries written differently that resolve to the same layout
        are found against the catalog (:mod:`planner.scenario.layout_checks`)."""
        seen: dict[tuple[int | None, ...], int] = {}
        for i, layout in enumerate(layouts or ()):
            key = (
                layout.gpu_count,
                layout.pipeline_parallel,
                layout.data_parallel,
                layout.expert_parallel,
            )
            if key in seen:
                raise rule_error([(f"[{i}]", f"the same layout as [{seen[key]}] — list it once")])
            seen[key] = i
        return layouts


class Load(StrictModel):
    """The traffic one model entry must serve."""

    requests_per_s: float | None = Field(None, ge=0, le=MAX_REQUESTS_PER_S)
    """Reference request rate (requests/s); with ``daily_profile`` the rate in hour h is
    ``requests_per_s × daily_profile[h]``. Give this or ``requests_per_s_by_period``."""
    input_tokens: float = Field(gt=0, le=MAX_CONTEXT_TOKENS)
    """Mean prompt length in tokens (prompt + generated must fit the model's context window)."""
    output_tokens: float = Field(ge=1, le=MAX_CONTEXT_TOKENS)
    """Mean generated length in tokens (a request decodes at least one)."""
    daily_profile: list[NonNegativeFloat] | None = None
    """24 multipliers of ``requests_per_s``, one per hour of the day (hour 0 = 00:00–01:00), each
    from 0 to 1000."""
    requests_per_s_by_period: list[RequestRate] | None = Field(None, max_length=MAX_PERIODS)
    """Explicit request rate per planning period (requests/s); the horizon is split into
    ``len(list)`` equal periods (at most 8784, each rate 0 to 1e6). Instead of ``requests_per_s``
    and ``daily_profile``."""

    @field_validator("daily_profile")
    @classmethod
    def _profile_length(cls, profile: list[float] | None) -> list[float] | None:
        if profile is not None and len(profile) != HOURS_PER_DAY:
            raise rule_error(
                [
                    (
                        "",
                        f"has {len(profile)} values — give exactly {HOURS_PER_DAY}, "
                        "one per hour of the day",
                    )
                ]
            )
        return profile

    @field_validator("requests_per_s_by_period")
    @classmethod
    def _periods_given(cls, rates: list[float] | None) -> list[float] | None:
        if rates is not None and not rates:
            raise rule_error([("", "empty — give at least one rate")])
        return rates

    @section_rule
    def _one_rate(self) -> Load:
        problems: list[tuple[str, str]] = []
        if self.daily_profile is not None and self.requests_per_s_by_period is not None:
            problems.append(
                (
                    "requests_per_s_by_period",
                    "given together with daily_profile — give daily_profile (with "
                    "requests_per_s) or requests_per_s_by_period, not both",
                )
            )
        elif self.requests_per_s is None and self.requests_per_s_by_period is None:
            problems.append(
                ("requests_per_s", "missing — give requests_per_s or requests_per_s_by_period")
            )
        elif self.requests_per_s is not None and self.requests_per_s_by_period is not None:
            problems.append(
                (
                    "requests_per_s_by_period",
                    "given together with requests_per_s — keep one of the two",
                )
            )
        if problems:
            raise rule_error(problems)
        return self


class Sla(StrictModel):
    """The latency a model entry must meet."""

    itl_ms: float = Field(gt=0, le=MAX_LATENCY_MS)
    """Inter-token latency limit in milliseconds (time between generated tokens)."""
    ttft_ms: float | None = Field(None, gt=0, le=MAX_LATENCY_MS)
    """Time-to-first-token limit in milliseconds; omitted = no TTFT limit."""
    percentile: float | None = Field(None, ge=50, lt=100)
    """Latency percentile the limits refer to (e.g. 90); omitted = the mean. The serving model
    (docs/method.md) gives the ITL at that percentile of the load a replica serves (Poisson
    arrivals): capacity is the largest rate whose percentile ITL (on the upper 90 % interval
    curve with ``robust: true``) and TTFT meet the limits."""

    @property
    def itl_s(self) -> float:
        """The ITL limit in seconds."""
        return self.itl_ms / 1000.0

    @property
    def ttft_s(self) -> float | None:
        """The TTFT limit in seconds (None: no TTFT limit)."""
        return None if self.ttft_ms is None else self.ttft_ms / 1000.0


class Failover(StrictModel):
    """Spare capacity: the load must still be carried, within the SLA, with any ``replicas``
    replicas or any ``nodes`` nodes of the model entry down (give one of the two). Nodes: each
    deployment fills whole nodes of its GPU type (the catalog's ``node_gpus``), nodes not
    shared; a lost node takes out every replica on it. The spare replicas are powered and paid
    for."""

    replicas: int | None = Field(None, ge=0, le=MAX_FAILOVER)
    """Replicas that may be down at once (N+k); 0 = no failover."""
    nodes: int | None = Field(None, ge=0, le=MAX_FAILOVER)
    """Nodes that may be down at once; 0 = no failover."""

    @section_rule
    def _one_kind(self) -> Failover:
        if self.replicas is not None and self.nodes is not None:
            raise rule_error(
                [("nodes", "given together with replicas — give replicas or nodes, not both")]
            )
        if self.replicas is None and self.nodes is None:
            raise rule_error(
                [("", "empty — give replicas: K or nodes: K (K = how many may be down at once)")]
            )
        return self

    @property
    def unit(self) -> str:
        """``replicas`` or ``nodes``."""
        return "replicas" if self.replicas is not None else "nodes"

    @property
    def count(self) -> int:
        """How many units may be down at once (0 = no failover)."""
        return self.replicas if self.replicas is not None else (self.nodes or 0)


#: The deployments a model entry may be planned with (docs/scenarios.md, "Deployment").
DeploymentChoice = Literal["aggregated", "disaggregated", "both"]


class ModelEntry(StrictModel):
    """One model deployment to plan: a catalog model, its load and its SLA."""

    name: str = Field(min_length=1, max_length=200)
    """Unique name of this entry (the key of the plan's rows); one catalog model may appear under
    several names with different loads or SLAs."""
    model: str = Field(min_length=1, max_length=500)
    """Catalog LLM id or alias (e.g. meta-llama/Llama-3.1-8B-Instruct), or a user-catalog model;
    the loader replaces aliases with the catalog id."""
    load: Load
    """Traffic to serve."""
    sla: Sla
    """Latency limits."""
    precision: SpeltPrecision | None = None
    """Weight precision for this model; omitted = the scenario's ``precision`` (aliases such as
    bfloat16 are accepted)."""
    allowed_gpus: list[str] | None = None
    """Only these GPU types may serve this model; omitted = every available type."""
    forbidden_gpus: list[str] = Field(default_factory=list)
    """GPU types that must not serve this model."""
    min_replicas: int = Field(0, ge=0, le=MAX_REPLICAS)
    """Minimum number of replicas in total over GPU types (for availability); 0 = only what the
    load needs (a model with load > 0 always gets at least one)."""
    failover: Failover | None = None
    """Spare capacity for lost replicas or nodes, e.g. ``{replicas: 1}`` (N+1) or ``{nodes: 1}``;
    omitted = the scenario's ``failover``; ``{replicas: 0}`` = none for this entry."""
    regions: list[str] | None = None
    """Names of the scenario's ``regions`` this entry may be placed in; omitted = every region.
    The entry is placed in one of them (all its replicas)."""
    deployment: DeploymentChoice | None = None
    """Which deployments to consider: ``aggregated`` replicas, ``disaggregated`` units
    (prefill and decode pools) or ``both``; omitted = the scenario's ``deployment``."""

    @field_validator("name")
    @classmethod
    def _one_line(cls, value: str) -> str:
        """The entry's name keys the plan's rows: no control, invisible or non-ASCII space
        character in it (:func:`~planner.scenario.text.name_problem`)."""
        return check_name(value)

    @section_rule
    def _gpu_lists(self) -> ModelEntry:
        problems: list[tuple[str, str]] = []
        both = sorted(set(self.allowed_gpus or ()) & set(self.forbidden_gpus))
        if both:
            problems.append(
                (
                    "forbidden_gpus",
                    f"{', '.join(both)} also in allowed_gpus — remove it from one of the lists",
                )
            )
        if self.allowed_gpus is not None and not self.allowed_gpus:
            problems.append(("allowed_gpus", "empty — omit allowed_gpus to allow every GPU type"))
        for field in ("allowed_gpus", "forbidden_gpus"):
            values = getattr(self, field) or []
            if len(set(values)) != len(values):
                problems.append((field, "repeated GPU type — list each type once"))
        if problems:
            raise rule_error(problems)
        return self
