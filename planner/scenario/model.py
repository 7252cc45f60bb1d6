"""The scenario: what a user asks the planner to solve, as strict, frozen pydantic models.

A scenario file (YAML) lists the models to serve (load, latency SLA), the GPU types that may be
used (inventory, price, tensor-parallel degrees), the economics and environment (horizon,
electricity price, PUE, grid carbon intensity, carbon price, power cap, budget) and the objective.
Reading a file, applying ``--set`` overrides, checking names against the catalogs and turning
problems into one-line messages is :mod:`planner.scenario.load`'s job; this module only holds the
models, their cross-field rules and small helpers the capacity stage needs (:func:`periods`,
:func:`requests_per_s_by_period`). ``docs/scenarios.md`` is generated from the field docstrings
below by :func:`planner.scenario.doc.field_reference`.

Every model is ``extra="forbid"`` (unknown keys are errors), ``strict=True`` (``"5"`` is not a
number, ``true`` is not an integer), rejects ``.inf`` and ``.nan``, and is frozen; every number has
a finite upper bound (the ``MAX_*`` constants) so that no product overflows downstream.
Cross-field rules raise a ``rule`` error whose context carries ``problems``: ``(sub-path,
message)`` pairs, so that a loader can report every problem of a rule on its own line.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from planner.inputs import DEFAULT_OBJECTIVE, ObjectiveKind
from predictors.core.errors import WattgpuError
from predictors.core.vocab import Engine, Precision, canonical_engine

PriceBasis = Literal["median", "min"]
#: Catalog column (catalogs/gpus.csv) read for each ``price_basis``.
PRICE_BASIS_COLUMN: dict[str, str] = {"median": "usd_per_hour", "min": "usd_per_hour_min"}

#: Hours in a day: a ``daily_profile`` has this many values.
HOURS_PER_DAY = 24
#: Tensor-parallel degrees a GPU offer allows when the scenario does not say.
DEFAULT_TP_DEGREES = (1, 2, 4, 8)
#: Tensor-parallel degrees the planner knows how to model.
SUPPORTED_TP_DEGREES = (1, 2, 4, 8, 16)

#: Upper bounds of the numeric fields: far above any real fleet, low enough that every product
#: the capacity model and the solver form stays finite and well scaled.
MAX_REQUESTS_PER_S = 1e6
MAX_CONTEXT_TOKENS = 10_000_000
MAX_PROFILE_MULTIPLIER = 1e3
MAX_PERIODS = 8784
MAX_LATENCY_MS = 3.6e6
#: Most ``min_replicas`` per entry: the exact per-model replica search grows with it (3 entries at
#: 8000 req/s over every catalog GPU: 30 s at 16, over 200 s at 32, on 2 cores).
MAX_REPLICAS = 16
MAX_GPUS = 1_000_000
MAX_USD_PER_GPU_HOUR = 1e4
MAX_HORIZON_HOURS = 1e6
MAX_USD_PER_KWH = 100.0
MAX_PUE = 10.0
MAX_GRID_G_CO2_PER_KWH = 5_000.0
MAX_CARBON_USD_PER_TONNE = 1e5
MAX_POWER_CAP_KW = 1e8
MAX_BUDGET_USD = 1e15
MAX_TIME_LIMIT_S = 86_400.0
MAX_WEIGHT = 1e6
MAX_MODELS = 10_000

NonNegativeFloat = Annotated[float, Field(ge=0, le=MAX_PROFILE_MULTIPLIER)]
RequestRate = Annotated[float, Field(ge=0, le=MAX_REQUESTS_PER_S)]


def _rule_error(problems: list[tuple[str, str]]) -> PydanticCustomError:
    """One pydantic error carrying every broken rule as (sub-path, 'what — how to fix')."""
    message = "; ".join(f"{path}: {msg}" if path else msg for path, msg in problems)
    return PydanticCustomError("rule", "{message}", {"message": message, "problems": problems})


class _Strict(BaseModel):
    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
        allow_inf_nan=False,
    )


class ObjectiveWeights(_Strict):
    """Weights of the weighted objective: weight × quantity, summed (unitless per unit)."""

    energy_kwh: float = Field(0.0, ge=0, le=MAX_WEIGHT)
    """Weight per kWh of facility energy (GPU energy × PUE)."""
    cost_usd: float = Field(0.0, ge=0, le=MAX_WEIGHT)
    """Weight per US dollar of total cost (GPU-hours + electricity + carbon price, if set)."""
    carbon_kg: float = Field(0.0, ge=0, le=MAX_WEIGHT)
    """Weight per kg CO2e of operational emissions (facility energy × grid intensity)."""

    @model_validator(mode="after")
    def _some_weight(self) -> ObjectiveWeights:
        if self.energy_kwh == 0 and self.cost_usd == 0 and self.carbon_kg == 0:
            raise _rule_error(
                [
                    (
                        "",
                        "all weights are 0 — give at least one of energy_kwh, cost_usd, "
                        "carbon_kg > 0",
                    )
                ]
            )
        return self


class Objective(_Strict):
    """What the planner minimises."""

    minimize: ObjectiveKind = DEFAULT_OBJECTIVE
    """One of energy (facility kWh), cost (USD), carbon (kg CO2e) or weighted (a weighted sum)."""
    weights: ObjectiveWeights | None = None
    """Weights of the weighted sum; required with ``minimize: weighted`` and only allowed there."""

    @model_validator(mode="after")
    def _weights_match(self) -> Objective:
        if self.minimize == "weighted" and self.weights is None:
            raise _rule_error(
                [("weights", "minimize: weighted needs weights — add e.g. {cost_usd: 1.0}")]
            )
        if self.minimize != "weighted" and self.weights is not None:
            raise _rule_error(
                [
                    (
                        "weights",
                        f"weights are only used with minimize: weighted, not {self.minimize} — "
                        "remove weights or set minimize: weighted",
                    )
                ]
            )
        return self


class GpuOffer(_Strict):
    """One GPU type the planner may use."""

    available: int | None = Field(None, ge=0, le=MAX_GPUS)
    """How many GPUs of this type exist (counting every GPU of a tensor-parallel replica); null or
    omitted = unlimited."""
    usd_per_hour: float | None = Field(None, ge=0, le=MAX_USD_PER_GPU_HOUR)
    """Price per GPU-hour in USD; omitted = the catalog's ``usd_per_hour`` (filled in by the
    loader)."""
    tp_degrees: list[int] = Field(default_factory=lambda: list(DEFAULT_TP_DEGREES))
    """Tensor-parallel degrees (GPUs per replica) the planner may use on this type."""

    @field_validator("tp_degrees")
    @classmethod
    def _tp_ok(cls, degrees: list[int]) -> list[int]:
        if not degrees:
            raise _rule_error([("", "empty — give at least one degree, e.g. [1]")])
        bad = [d for d in degrees if d not in SUPPORTED_TP_DEGREES]
        if bad:
            raise _rule_error(
                [
                    (
                        "",
                        f"unsupported degree(s) {bad} — "
                        f"use values from {list(SUPPORTED_TP_DEGREES)}",
                    )
                ]
            )
        if len(set(degrees)) != len(degrees):
            raise _rule_error([("", "repeated degree — list each degree once")])
        return degrees


class Load(_Strict):
    """The traffic one model entry must serve."""

    requests_per_s: float | None = Field(None, ge=0, le=MAX_REQUESTS_PER_S)
    """Reference request rate (requests/s); with ``daily_profile`` the rate in hour h is
    ``requests_per_s × daily_profile[h]``. Give this or ``requests_per_s_by_period``."""
    input_tokens: float = Field(gt=0, le=MAX_CONTEXT_TOKENS)
    """Mean prompt length in tokens (prompt + generated must fit the model's context window)."""
    output_tokens: float = Field(gt=0, le=MAX_CONTEXT_TOKENS)
    """Mean generated length in tokens."""
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
            raise _rule_error(
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
            raise _rule_error([("", "empty — give at least one rate")])
        return rates

    @model_validator(mode="after")
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
            raise _rule_error(problems)
        return self


class Sla(_Strict):
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


class ModelEntry(_Strict):
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
    precision: Precision | None = None
    """Weight precision for this model; omitted = the scenario's ``precision``."""
    allowed_gpus: list[str] | None = None
    """Only these GPU types may serve this model; omitted = every available type."""
    forbidden_gpus: list[str] = Field(default_factory=list)
    """GPU types that must not serve this model."""
    min_replicas: int = Field(0, ge=0, le=MAX_REPLICAS)
    """Minimum number of replicas in total over GPU types (for availability); 0 = only what the
    load needs (a model with load > 0 always gets at least one)."""

    @model_validator(mode="after")
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
            raise _rule_error(problems)
        return self


class Scenario(_Strict):
    """A planning problem: models to serve, GPUs to use, economics, environment, objective."""

    name: str = Field(min_length=1, max_length=200)
    """Short name of the scenario (appears in plans and reports)."""
    description: str = Field("", max_length=10_000)
    """Free text: what this scenario is about."""
    horizon_hours: float = Field(8760.0, gt=0, le=MAX_HORIZON_HOURS)
    """Planning horizon in hours (default 8760 = one year); energy, cost and carbon are totals
    over it."""
    region: str | None = None
    """Grid region id or alias from catalogs/grid_carbon.csv (e.g. DE, FR, US, aws:eu-central-1);
    its carbon intensity is used. Give this or ``grid_g_co2_per_kwh``."""
    grid_g_co2_per_kwh: float | None = Field(None, ge=0, le=MAX_GRID_G_CO2_PER_KWH)
    """Explicit grid carbon intensity in g CO2e per kWh (instead of ``region``). After loading it
    is always set (from the region's catalog row when a region was given)."""
    grid_source: str | None = None
    """Where the explicit grid figure comes from (free text, shown in reports)."""
    grid_year: int | None = Field(None, ge=1990, le=2100)
    """Year the explicit grid figure refers to."""
    pue: float | None = Field(None, ge=1, le=MAX_PUE)
    """Power usage effectiveness (facility energy / IT energy); omitted = the catalog's
    ``on-premise`` value from catalogs/pue.csv (filled in by the loader)."""
    pue_source: str | None = None
    """Where the PUE comes from (free text; set by the loader when the catalog value is used)."""
    electricity_usd_per_kwh: float = Field(ge=0, le=MAX_USD_PER_KWH)
    """Electricity price in USD per kWh of facility energy."""
    carbon_usd_per_tonne: float | None = Field(None, ge=0, le=MAX_CARBON_USD_PER_TONNE)
    """Carbon price in USD per tonne CO2e; when set, cost includes carbon_kg / 1000 × this."""
    power_cap_kw: float | None = Field(None, gt=0, le=MAX_POWER_CAP_KW)
    """Facility power cap in kW (GPU power × PUE), enforced in every period; omitted = none."""
    budget_usd: float | None = Field(None, gt=0, le=MAX_BUDGET_USD)
    """Cap on total cost over the horizon in USD; omitted = none."""
    objective: Objective = Field(default_factory=Objective)
    """What to minimise (default: energy)."""
    robust: bool = False
    """Plan against the upper bound of the predicted ITL interval instead of the point
    prediction."""
    time_limit_s: float = Field(60.0, gt=0, le=MAX_TIME_LIMIT_S)
    """Solver time limit in seconds; the plan reports the gap reached."""
    engine: Engine = "vllm"
    """Serving engine the predictions assume: vllm, tensorrt-llm, sglang, deepspeed-mii,
    hf-transformers or llama.cpp (aliases such as trtllm are accepted)."""
    precision: Precision = "bf16"
    """Default weight precision for every model (override per model with ``precision``)."""
    user_catalog: str | None = None
    """Directory of a user catalog overlay (gpus.csv / llms.csv), relative to the scenario file;
    omitted = $WATTGPU_USER_CATALOG if set."""
    gpus: dict[str, GpuOffer] | None = None
    """GPU types that may be used, keyed by catalog id or alias. Types not listed are not
    available. Omitted entirely = every catalog GPU with a catalog price, unlimited count (the
    loader fills the mapping in)."""
    models: list[ModelEntry] = Field(min_length=1, max_length=MAX_MODELS)
    """The model entries to plan (at least one)."""
    price_basis: PriceBasis = "median"
    """Which catalog price a GPU type without ``usd_per_hour`` gets: ``median`` (default) = the
    median on-demand $/GPU-hour across the providers that offer it (catalog ``usd_per_hour``);
    ``min`` = the cheapest provider's (catalog ``usd_per_hour_min``). See catalogs/README.md."""

    @field_validator("engine", mode="before")
    @classmethod
    def _engine_alias(cls, value: object) -> object:
        """Accept the engine's other spellings (``trtllm``, ``TensorRT-LLM``)."""
        if isinstance(value, str):
            return canonical_engine(value) or value
        return value

    @model_validator(mode="after")
    def _cross_field(self) -> Scenario:
        problems = _grid_problems(self) + _model_problems(self)
        if self.gpus is not None and not self.gpus:
            problems.append(("gpus", "no GPU types listed — list at least one, or omit gpus"))
        if problems:
            raise _rule_error(problems)
        return self

    # --- accessors for a loaded (resolved) scenario -------------------------------------------

    @property
    def pue_value(self) -> float:
        """The PUE (set after loading)."""
        if self.pue is None:
            raise WattgpuError(
                f"scenario {self.name}: pue not resolved — load it with load_scenario"
            )
        return self.pue

    @property
    def grid_value_g_co2_per_kwh(self) -> float:
        """The grid carbon intensity in g CO2e/kWh (set after loading)."""
        if self.grid_g_co2_per_kwh is None:
            raise WattgpuError(
                f"scenario {self.name}: grid intensity not resolved — load it with load_scenario"
            )
        return self.grid_g_co2_per_kwh

    @property
    def gpu_offers(self) -> dict[str, GpuOffer]:
        """The available GPU types by catalog id (set after loading)."""
        if self.gpus is None:
            raise WattgpuError(
                f"scenario {self.name}: gpus not resolved — load it with load_scenario"
            )
        return self.gpus


def _grid_problems(s: Scenario) -> list[tuple[str, str]]:
    if s.region is not None and s.grid_g_co2_per_kwh is not None:
        return [
            (
                "grid_g_co2_per_kwh",
                f"given together with region {s.region} — give region or grid_g_co2_per_kwh, "
                "not both",
            )
        ]
    if s.region is None and s.grid_g_co2_per_kwh is None:
        return [("region", "missing — give region (e.g. US, DE) or grid_g_co2_per_kwh")]
    problems = []
    for field in ("grid_source", "grid_year"):
        if s.region is not None and getattr(s, field) is not None:
            problems.append(
                (field, "only applies to an explicit grid_g_co2_per_kwh — remove it with region")
            )
    return problems


def _model_problems(s: Scenario) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(s.models):
        if entry.name in seen:
            problems.append(
                (
                    f"models[{i}].name",
                    f"'{entry.name}' already used by models[{seen[entry.name]}] — "
                    "give every entry a unique name",
                )
            )
        seen.setdefault(entry.name, i)
        if s.gpus is not None:
            for j, gpu in enumerate(entry.allowed_gpus or ()):
                if gpu not in s.gpus:
                    problems.append(
                        (
                            f"models[{i}].allowed_gpus[{j}]",
                            f"{gpu} is not listed under gpus — add it to gpus or remove it here",
                        )
                    )
    lengths = {
        len(e.load.requests_per_s_by_period)
        for e in s.models
        if e.load.requests_per_s_by_period is not None
    }
    if any(e.load.daily_profile is not None for e in s.models):
        lengths.add(HOURS_PER_DAY)
    if len(lengths) > 1:
        problems.append(
            (
                "models",
                f"models use different numbers of periods {sorted(lengths)} — give every "
                "requests_per_s_by_period the same length (24 when any model has a daily_profile)",
            )
        )
    return problems


# --- helpers for the capacity stage -------------------------------------------------------------


def periods(scenario: Scenario) -> tuple[int, float]:
    """Number of planning periods and hours per period.

    24 periods (one per hour of the day, each standing for ``horizon_hours / 24`` hours) when any
    model has a daily profile; ``len(requests_per_s_by_period)`` when per-period loads are given;
    otherwise one period covering the horizon.
    """
    count = 1
    for entry in scenario.models:
        if entry.load.daily_profile is not None:
            count = HOURS_PER_DAY
        elif entry.load.requests_per_s_by_period is not None:
            count = len(entry.load.requests_per_s_by_period)
    return count, scenario.horizon_hours / count


def requests_per_s_by_period(entry: ModelEntry, period_count: int) -> list[float]:
    """The request rate of *entry* in each of *period_count* periods (requests/s)."""
    load = entry.load
    if load.requests_per_s_by_period is not None:
        if len(load.requests_per_s_by_period) != period_count:
            raise WattgpuError(
                f"model {entry.name}: {len(load.requests_per_s_by_period)} per-period rates for "
                f"{period_count} periods — give {period_count} values"
            )
        return list(load.requests_per_s_by_period)
    assert load.requests_per_s is not None  # guaranteed by Load._one_rate
    if load.daily_profile is not None:
        return [load.requests_per_s * m for m in load.daily_profile]
    return [load.requests_per_s] * period_count
