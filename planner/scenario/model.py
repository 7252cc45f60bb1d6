"""The scenario: what a user asks the planner to solve, as strict, frozen pydantic models.

A scenario file (YAML) lists the models to serve (load, latency SLA), the GPU types that may be
used (inventory, price, tensor-parallel degrees), the economics and environment (horizon,
electricity price, PUE, grid carbon intensity, carbon price, power cap, budget) and the objective.
Reading a file, applying ``--set`` overrides, checking names against the catalogs and turning
problems into one-line messages is :mod:`planner.scenario.load`'s job; this module holds the
top-level :class:`Scenario` and its cross-field rules. Its sections (objective, GPU offers, model
entries with load and SLA) are :mod:`planner.scenario.sections`, the bounds
:mod:`planner.scenario.limits`, the planning periods :mod:`planner.scenario.periods`.
``docs/scenarios.md`` is generated from the field docstrings by
:func:`planner.scenario.doc.field_reference`.

Every model is ``extra="forbid"`` (unknown keys are errors), ``strict=True`` (``"5"`` is not a
number, ``true`` is not an integer), rejects ``.inf`` and ``.nan``, and is frozen; every number has
a finite upper bound (the ``MAX_*`` constants of :mod:`planner.scenario.limits`) so that no
product overflows downstream. Cross-field rules raise a ``rule`` error whose context carries
``problems``: ``(sub-path, message)`` pairs, so that a loader can report every problem of a rule
on its own line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import Field, PrivateAttr, field_validator

from planner.scenario.disclosure import Disclosure, window_problem
from planner.scenario.limits import (
    HOURS_PER_DAY,
    MAX_BUDGET_USD,
    MAX_CARBON_USD_PER_TONNE,
    MAX_GRID_G_CO2_PER_KWH,
    MAX_HORIZON_HOURS,
    MAX_MODELS,
    MAX_POWER_CAP_KW,
    MAX_PUE,
    MAX_TIME_LIMIT_S,
    MAX_USD_PER_KWH,
    MIN_HORIZON_HOURS,
)
from planner.scenario.regions import RegionSpec, region_problems
from planner.scenario.rules import section_rule
from planner.scenario.sections import (
    DeploymentChoice,
    Failover,
    GpuOffer,
    ModelEntry,
    Objective,
    SpeltPrecision,
    StrictModel,
    rule_error,
)
from planner.scenario.serving import needs_serving, unserved_problems
from planner.scenario.sweep_block import SweepBlock
from planner.scenario.tco import RENTAL_COLUMN, Tco
from planner.scenario.text import check_keys, check_text, repeated_name
from predictors.core.errors import WattgpuError
from predictors.core.vocab import DISAGG_ENGINES, Engine, canonical_engine

PriceBasis = Literal["median", "min", "tco"]
#: Catalog column (catalogs/gpus.csv) read for each rental ``price_basis``.
PRICE_BASIS_COLUMN: dict[str, str] = RENTAL_COLUMN


class Scenario(StrictModel):
    """A planning problem: models to serve, GPUs to use, economics, environment, objective."""

    _gpu_notes: tuple[str, ...] = PrivateAttr(default=())
    """Set by :func:`planner.scenario.load.scenario_from_dict` (no field, not in the schema)."""

    @property
    def gpu_notes(self) -> tuple[str, ...]:
        """The note of each bare GPU family name the file gave (``H100``): which variant it was
        taken for, as ``predict`` says (:func:`planner.scenario.names.gpu_name_notes`)."""
        return self._gpu_notes

    _origin: tuple[Callable[[str], str], tuple[str, ...]] | None = PrivateAttr(default=None)
    """Set by :func:`planner.scenario.load.scenario_from_dict`: where each field was set, and
    the entry names it was read with."""

    def field_origin(self) -> Callable[[str], str] | None:
        """Where each field path was set (the file, an overlay or ``FILE --set PATH=VALUE``,
        :func:`planner.scenario.origin.origin_of`), for a problem found after loading; None
        when unknown or when the model entries changed since (their indices would differ)."""
        if self._origin is None or self._origin[1] != tuple(e.name for e in self.models):
            return None
        return self._origin[0]

    name: str = Field(min_length=1, max_length=200)
    """Short name of the scenario (appears in plans and reports)."""
    description: str = Field("", max_length=10_000)
    """Free text: what this scenario is about."""
    horizon_hours: float = Field(8760.0, ge=MIN_HORIZON_HOURS, le=MAX_HORIZON_HOURS)
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
    """Where the PUE comes from (free text, with ``pue``; set by the loader when the catalog
    value is used)."""
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
    """Solver time limit in seconds; the plan reports the gap reached. The exact pricing search
    stops at the limit with a valid bound; a step under way (one replica vector's routing, up to
    about 0.2 s on long power curves) ends before the solver stops."""
    engine: Engine = "vllm"
    """Serving engine the predictions assume: vllm, tensorrt-llm, sglang, deepspeed-mii,
    hf-transformers or llama.cpp (aliases such as trtllm are accepted). Only GPUs and layouts it
    runs are planned (docs/contracts.md, "Engine capabilities")."""
    precision: SpeltPrecision | None = None
    """Default weight precision for every model (override per model with ``precision``);
    omitted = each model's checkpoint precision (its catalog ``default_dtype``, FP32 served as
    FP16, or what a quantised checkpoint's name implies), as ``wattgpu predict`` uses (aliases
    such as bfloat16 are accepted)."""
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
    """Which price a GPU type without ``usd_per_hour`` gets: ``median`` (default) = the
    median on-demand $/GPU-hour across the providers that offer it (catalog ``usd_per_hour``);
    ``min`` = the cheapest provider's (catalog ``usd_per_hour_min``); ``tco`` = total cost of
    ownership (purchase price, amortisation and hosting, see ``tco``). A GPU without a rental
    price is costed on TCO under every basis. See catalogs/README.md."""
    tco: Tco | None = None
    """Total-cost-of-ownership settings (amortisation years, hosting per kW·month and per
    GPU·month) for ``price_basis: tco`` and for GPUs without a rental price; omitted = 5 years,
    no hosting cost (stated in the report)."""
    disclosure: Disclosure | None = None
    """Optional inputs of the report's disclosure fields (persona, reporting window, embodied
    lifetime, marginal and market-based carbon, grid profile, water, training energy); see
    ``Disclosure``. Omitted: every field it feeds is stated as not applicable or defaulted."""
    sweep: SweepBlock | None = None
    """What ``wattgpu sweep`` varies (grids, uncertainty draws; docs/sweep.md). ``wattgpu plan``
    ignores it."""
    deployment: DeploymentChoice = "aggregated"
    """Deployments of every model entry that sets no ``deployment`` of its own: ``aggregated``
    (default: one engine per replica), ``disaggregated`` (units of prefill and decode pools) or
    ``both`` (the planner picks)."""
    failover: Failover | None = None
    """Spare capacity of every model entry that sets no ``failover`` of its own, e.g.
    ``{replicas: 1}`` (N+1 per model) or ``{nodes: 1}``; omitted = none."""
    regions: dict[str, RegionSpec] | None = None
    """Sites model entries may be placed in, keyed by a name of your choice (e.g. ``eu``,
    ``us-east``), each with its own grid, PUE, electricity price, power cap and GPU inventory
    (see ``RegionSpec``); omitted = one site made of the top-level fields."""

    @field_validator("engine", mode="before")
    @classmethod
    def _engine_alias(cls, value: object) -> object:
        """Accept the engine's other spellings (``trtllm``, ``TensorRT-LLM``)."""
        if isinstance(value, str):
            return canonical_engine(value) or value
        return value

    @field_validator("name", "grid_source", "pue_source")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        """No control character or bidirectional override (they reach every output)."""
        return check_text(value)

    @field_validator("description")
    @classmethod
    def _free_text(cls, value: str) -> str:
        """Line breaks and tabs allowed, no other control character."""
        return check_text(value, multiline=True) or value

    @field_validator("regions")
    @classmethod
    def _region_keys(cls, value: dict[str, RegionSpec] | None) -> dict[str, RegionSpec] | None:
        """Region names reach the plan's rows: no control character in them."""
        problem = check_keys(value or {})
        if problem is not None:
            raise problem
        return value

    @section_rule
    def _cross_field(self) -> Scenario:
        problems = cross_field_problems(self)
        if problems:
            raise rule_error(problems)
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


def cross_field_problems(s: Scenario) -> list[tuple[str, str]]:
    """The rules that tie the scenario's sections together, one (field path, message) each:
    checked on every scenario whose fields hold values of their type and range, even when a
    section's own rule is broken (:mod:`planner.scenario.rules`)."""
    problems = _grid_problems(s) + _model_problems(s) + _profile_problems(s)
    problems += _window_problems(s)
    problems += region_problems(s.regions, s.models, s.gpus, s.power_cap_kw, _period_count(s))
    problems += unserved_problems(s.regions, s.models, s.gpus)
    if s.gpus is not None and not s.gpus:
        problems.append(("gpus", "no GPU types listed — list at least one, or omit gpus"))
    return problems + _disaggregation_problems(s)


def _disaggregation_problems(s: Scenario) -> list[tuple[str, str]]:
    """Disaggregated units asked of an engine that does not serve prefill and decode apart."""
    if s.engine in DISAGG_ENGINES:
        return []
    fix = (
        f"engine {s.engine} serves no disaggregated prefill/decode ({', '.join(DISAGG_ENGINES)} "
        "do) — set engine to one of them, or deployment: aggregated"
    )
    out = [("deployment", fix)] if s.deployment != "aggregated" else []
    for i, m in enumerate(s.models):
        if m.deployment not in (None, "aggregated"):
            out.append((f"models[{i}].deployment", fix))
    return out


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
        also = (
            " (the top-level grid is the plan's reference grid and that of every region that "
            "states none, even when every region states its own)"
            if s.regions
            else ""
        )
        return [("region", f"missing — give region (e.g. US, DE) or grid_g_co2_per_kwh{also}")]
    problems = []
    for field in ("grid_source", "grid_year"):
        if s.region is not None and getattr(s, field) is not None:
            problems.append(
                (field, "only applies to an explicit grid_g_co2_per_kwh — remove it with region")
            )
    return problems


def _period_count(s: Scenario) -> int:
    """Planning periods (as :func:`planner.scenario.periods.periods` counts them)."""
    count = 1
    for entry in s.models:
        if entry.load.daily_profile is not None:
            return HOURS_PER_DAY
        if entry.load.requests_per_s_by_period is not None:
            count = len(entry.load.requests_per_s_by_period)
    return count


def _profile_problems(s: Scenario) -> list[tuple[str, str]]:
    profile = s.disclosure.grid_profile_g_co2_per_kwh if s.disclosure else None
    periods = _period_count(s)
    if profile is None or len(profile) == periods:
        return []
    return [
        (
            "disclosure.grid_profile_g_co2_per_kwh",
            f"{len(profile)} values for {periods} planning period(s) — give one value per "
            "period (24 when a model has a daily_profile)",
        )
    ]


def _window_problems(s: Scenario) -> list[tuple[str, str]]:
    """A reporting window whose end (``reporting_start`` + ``horizon_hours``) no date can state:
    the report would fail on it."""
    start = s.disclosure.reporting_start if s.disclosure else None
    problem = None if start is None else window_problem(start, s.horizon_hours)
    return [] if problem is None else [("disclosure.reporting_start", problem)]


def _model_problems(s: Scenario) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    seen: dict[str, tuple[int, str]] = {}
    for i, entry in enumerate(s.models):
        if not entry.name.strip():
            problems.append((f"models[{i}].name", "blank — give the entry a name, e.g. chat"))
        repeated = repeated_name(seen, i, entry.name)  # equal once NFC-normalised
        if repeated is not None:
            problems.append((f"models[{i}].name", repeated))
        if s.gpus is not None:
            for j, gpu in enumerate(entry.allowed_gpus or ()):
                if gpu not in s.gpus:
                    problems.append(
                        (
                            f"models[{i}].allowed_gpus[{j}]",
                            f"{gpu} is not listed under gpus — add it to gpus or remove it here",
                        )
                    )
            # an entry with no load and no minimum needs nothing: the plan leaves it out
            if needs_serving(entry) and s.gpus and set(s.gpus) <= set(entry.forbidden_gpus):
                problems.append(
                    (
                        f"models[{i}].forbidden_gpus",
                        "forbids every GPU type listed under gpus, so nothing can serve the "
                        "entry — remove one from forbidden_gpus or add a GPU type to gpus",
                    )
                )
    # each entry's own count: one that gives both (its load's rule names it) is not counted twice
    lengths = {n for e in s.models if (n := _own_periods(e)) is not None}
    if len(lengths) > 1:
        problems.append(
            (
                "models",
                f"models use different numbers of periods {sorted(lengths)} — give every "
                "requests_per_s_by_period the same length (24 when any model has a daily_profile)",
            )
        )
    return problems


def _own_periods(entry: ModelEntry) -> int | None:
    """The periods *entry*'s load gives: 24 with a ``daily_profile``, else the length of its
    ``requests_per_s_by_period`` (None: one rate for every period)."""
    if entry.load.daily_profile is not None:
        return HOURS_PER_DAY
    rates = entry.load.requests_per_s_by_period
    return None if rates is None else len(rates)
