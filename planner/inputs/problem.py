"""Plain, frozen inputs of the fleet optimiser (no YAML, no predictors, no solver).

:mod:`planner.scenario.model` and :mod:`planner.capacity` turn a scenario file into a
:class:`PlanningInputs`; solver tests build one by hand. Every number carries its unit in
its name. The power of one replica of a candidate serving ``x`` requests/s is its power curve
(:attr:`Candidate.curve`: the serving model's mean power at the curve's knots, linear between
them, docs/method.md §3); a hand-built candidate without a curve has the linear one

    power_w = idle_power_w_per_replica + energy_j_per_request * x,   0 <= x <= capacity

(J/request × request/s = W).
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, get_args

from predictors.core.errors import WattgpuError

#: Most replicas of one candidate (model entry × GPU type × TP degree) a plan may use: keeps the
#: exact per-model dynamic programme and the MILP bounded in time and memory at extreme loads.
MAX_REPLICAS_PER_CANDIDATE = 256

ObjectiveKind = Literal["energy", "cost", "carbon", "weighted"]
#: What a plan may minimise (the scenario schema and the optimiser share this list).
OBJECTIVE_KINDS: tuple[str, ...] = get_args(ObjectiveKind)
#: The objective when a scenario or a caller does not say.
DEFAULT_OBJECTIVE: ObjectiveKind = "energy"
WEIGHT_KEYS: tuple[str, ...] = ("energy_kwh", "cost_usd", "carbon_kg")


def _fail(where: str, message: str) -> WattgpuError:
    return WattgpuError(f"planning inputs: {where}: {message}")


def _non_negative(where: str, **values: float | None) -> None:
    for key, value in values.items():
        if value is None:
            continue
        if not math.isfinite(value) or value < 0:
            raise _fail(where, f"{key} must be a finite number >= 0, got {value!r}")


@dataclass(frozen=True)
class ModelDemand:
    """One scenario model entry: its load per period and its latency SLA."""

    name: str
    """Unique key of the scenario entry (the same model may appear twice under two names)."""
    model: str
    """Catalog LLM id."""
    requests_per_s_by_period: tuple[float, ...]
    """Mean arrival rate in every period (requests/s)."""
    itl_sla_s: float
    """Inter-token latency SLA (s)."""
    ttft_sla_s: float | None = None
    """Time-to-first-token SLA (s), already applied by the capacity model; reported only."""
    min_replicas: int = 0
    """Minimum number of replicas of this model over all deployments (availability)."""
    input_tokens: float = 0.0
    """Mean prompt length (tokens); reported only."""
    output_tokens: float = 0.0
    """Mean completion length (tokens); reported only."""
    precision: str | None = None
    """Weight precision the candidates were predicted at (provenance; reported only)."""

    def __post_init__(self) -> None:
        where = f"model {self.name!r}"
        if not self.name:
            raise _fail("models", "every model needs a non-empty name")
        if not self.requests_per_s_by_period:
            raise _fail(where, "requests_per_s_by_period is empty; give one value per period")
        for value in self.requests_per_s_by_period:
            _non_negative(where, requests_per_s=value)
        _non_negative(where, input_tokens=self.input_tokens, output_tokens=self.output_tokens)
        _non_negative(where, ttft_sla_s=self.ttft_sla_s)
        if not math.isfinite(self.itl_sla_s) or self.itl_sla_s <= 0:
            raise _fail(where, f"itl_sla_s must be > 0, got {self.itl_sla_s!r}")
        if self.min_replicas < 0:
            raise _fail(where, f"min_replicas must be >= 0, got {self.min_replicas}")


def _interp(x: float, xs: tuple[float, ...], ys: tuple[float, ...]) -> float:
    """Linear interpolation of the knots (xs ascending), held constant beyond the ends."""
    if x <= xs[0]:
        return ys[0]
    for i in range(1, len(xs)):
        if x <= xs[i]:
            t = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
            return ys[i - 1] + t * (ys[i] - ys[i - 1])
    return ys[-1]


def ms_text(seconds: float) -> str:
    """Milliseconds for reasons: whole from 10 ms on, three significant digits below (an SLA
    of 0.1 ms prints as 0.1, never as 0)."""
    ms = 1000.0 * seconds
    return f"{ms:,.0f}" if abs(ms) >= 10 or not math.isfinite(ms) else f"{ms:.3g}"


class Exclusion(StrEnum):
    """Why a candidate is infeasible, as a code (:attr:`Candidate.reason` says it in words)."""

    NONE = ""
    MEMORY = "memory"
    """The weights (plus the runtime reserve) do not fit in the replica's GPU memory."""
    ITL_SLA = "itl_sla"
    """No concurrency meets the ITL SLA (:attr:`Candidate.itl_s_at_capacity` is the best ITL)."""
    TTFT_SLA = "ttft_sla"
    """The prefill estimate misses the TTFT SLA (:attr:`Candidate.ttft_s`)."""
    NO_PRICE = "no_price"
    """The GPU has no $/hour in the scenario or the catalog."""
    RULE = "rule"
    """Excluded by the model entry's ``allowed_gpus`` / ``forbidden_gpus``."""
    PREDICTION = "prediction"
    """The predictors cannot predict this deployment (see the reason)."""


@dataclass(frozen=True)
class Candidate:
    """One (model entry, GPU type, TP degree) deployment with its linear coefficients."""

    name: str
    """The :attr:`ModelDemand.name` this candidate serves."""
    model: str
    gpu: str
    tp: int
    gpus_per_replica: int
    feasible: bool
    reason: str
    """Why the candidate is excluded ('' or a short note when feasible)."""
    batch_size: int
    """Operating concurrency (sequences) at capacity."""
    itl_s_at_capacity: float
    """Predicted ITL at the operating concurrency (s); the best ITL when infeasible."""
    max_requests_per_s_per_replica: float
    idle_power_w_per_replica: float
    energy_j_per_request: float
    """Load-proportional energy per request (J) above idle."""
    usd_per_hour_per_replica: float
    power_w_per_gpu_at_capacity: float
    in_domain: bool = True
    itl_s_lo: float | None = None
    itl_s_hi: float | None = None
    power_w_per_gpu_predicted: float | None = None
    """Point prediction of power per GPU at the operating batch, saturated replica (W)."""
    power_w_per_gpu_lo: float | None = None
    """Lower bound of the power predictor's interval at the operating batch (W, unclipped)."""
    power_w_per_gpu_hi: float | None = None
    """Upper bound of the power predictor's interval at the operating batch (W, unclipped)."""
    idle_power_w_per_gpu: float | None = None
    """Catalog idle power of one GPU (W)."""
    tdp_w_per_gpu: float | None = None
    """Catalog board power limit (TDP) of one GPU (W)."""
    exclusion: Exclusion = Exclusion.NONE
    """Why an infeasible candidate is excluded (a code; NONE when feasible)."""
    memory_needed_gb: float | None = None
    """Memory exclusions: the weights of one replica (GB; the KV cache comes on top)."""
    memory_usable_gb: float | None = None
    """Memory exclusions: memory of one replica left for weights and KV cache after the
    runtime reserve (GB)."""
    ttft_s: float | None = None
    """Prefill (TTFT) estimate (s), when computed."""
    load_curve_requests_per_s: tuple[float, ...] = ()
    """Knots of the replica's power curve: per-replica rates (req/s, ascending, first 0)."""
    power_curve_w_per_replica: tuple[float, ...] = ()
    """Mean GPU power of one replica at each knot (W; first = idle). Linear between knots.
    Empty: the linear model idle + energy_j_per_request · rate (hand-built candidates)."""
    itl_curve_s: tuple[float, ...] = ()
    """Mean ITL at each knot (s): the ITL at the load a replica serves."""
    capacity_limit: str = ""
    """What sets the capacity: 'itl', 'ttft' or 'memory' ('' for hand-built candidates)."""

    @property
    def curve(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(rates, replica power W) knots of the power curve, linear between them."""
        if self.power_curve_w_per_replica:
            return self.load_curve_requests_per_s, self.power_curve_w_per_replica
        cap = self.max_requests_per_s_per_replica
        idle = self.idle_power_w_per_replica
        return (0.0, cap), (idle, idle + self.energy_j_per_request * cap)

    def power_w_per_replica(self, rate: float) -> float:
        """Mean GPU power (W) of one replica serving *rate* req/s (0 <= rate <= capacity)."""
        xs, ps = self.curve
        return _interp(rate, xs, ps)

    def itl_s_at(self, rate: float) -> float:
        """Mean ITL (s) of a replica serving *rate* req/s (the ITL at capacity without a curve)."""
        if not self.itl_curve_s:
            return self.itl_s_at_capacity
        return _interp(rate, self.load_curve_requests_per_s, self.itl_curve_s)

    @property
    def key(self) -> tuple[str, str, int]:
        """(model entry name, GPU, TP): unique within a :class:`PlanningInputs`."""
        return (self.name, self.gpu, self.tp)

    @property
    def label(self) -> str:
        """``name,gpu,tp`` as used in constraint names."""
        return f"{self.name},{self.gpu},{self.tp}"

    def __post_init__(self) -> None:
        where = f"candidate {self.label}"
        if self.tp < 1 or self.gpus_per_replica < 1:
            raise _fail(where, "tp and gpus_per_replica must be >= 1")
        if self.batch_size < 0:
            raise _fail(where, f"batch_size must be >= 0, got {self.batch_size}")
        _non_negative(
            where,
            max_requests_per_s_per_replica=self.max_requests_per_s_per_replica,
            idle_power_w_per_replica=self.idle_power_w_per_replica,
            energy_j_per_request=self.energy_j_per_request,
            usd_per_hour_per_replica=self.usd_per_hour_per_replica,
            power_w_per_gpu_at_capacity=self.power_w_per_gpu_at_capacity,
        )
        if self.feasible and self.max_requests_per_s_per_replica <= 0:
            raise _fail(where, "a feasible candidate needs max_requests_per_s_per_replica > 0")
        if self.feasible and not math.isfinite(self.itl_s_at_capacity):
            raise _fail(where, "a feasible candidate needs a finite itl_s_at_capacity")
        xs, ps = self.load_curve_requests_per_s, self.power_curve_w_per_replica
        if len(xs) != len(ps) or (self.itl_curve_s and len(self.itl_curve_s) != len(xs)):
            raise _fail(where, "power/ITL curve knots must have the same length as the rates")
        if xs and (xs[0] != 0.0 or not all(map(operator.lt, xs, xs[1:]))):
            raise _fail(where, "curve rates must start at 0 and ascend strictly")
        if ps and not all(map(operator.le, ps, ps[1:])):
            raise _fail(where, "power curve must not decrease with load")


@dataclass(frozen=True)
class GpuInfo:
    """Catalog facts the baselines need about one GPU type."""

    gpu: str
    tflops_per_w: float
    """Dense FP16 TFLOPS per TDP watt (higher is more efficient on paper)."""
    usd_per_hour: float
    """Price of one GPU for one hour ($)."""

    def __post_init__(self) -> None:
        _non_negative(f"gpu_info {self.gpu!r}", tflops_per_w=self.tflops_per_w)
        _non_negative(f"gpu_info {self.gpu!r}", usd_per_hour=self.usd_per_hour)


@dataclass(frozen=True)
class Objective:
    """What to minimise. ``weights`` apply only to ``minimize='weighted'``.

    Weighted objective = energy_kwh·(facility kWh) + cost_usd·($) + carbon_kg·(kg CO2e): the
    weight keys name the unit they multiply, so a weight is a price in a common currency
    (e.g. carbon_kg = 0.05 means 50 $/t). No hidden, instance-dependent normalisation.
    """

    minimize: ObjectiveKind = DEFAULT_OBJECTIVE
    weights: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.minimize not in OBJECTIVE_KINDS:
            raise _fail("objective", f"minimize must be one of {', '.join(OBJECTIVE_KINDS)}")
        unknown = sorted(set(self.weights) - set(WEIGHT_KEYS))
        if unknown:
            raise _fail("objective", f"unknown weight(s) {unknown}; use {', '.join(WEIGHT_KEYS)}")
        for key, value in self.weights.items():
            _non_negative("objective.weights", **{key: value})
        if self.minimize == "weighted" and not any(v > 0 for v in self.weights.values()):
            raise _fail("objective", "weighted objective needs at least one weight > 0")

    def weight(self, key: str) -> float:
        """The weight of *key* (0 when not given)."""
        return float(self.weights.get(key, 0.0))


@dataclass(frozen=True)
class Provenance:
    """Where the inputs came from: reported with the plan, never used by the optimiser."""

    description: str = ""
    """The scenario's description."""
    engine: str | None = None
    """Serving engine the candidates were predicted for."""
    robust: bool = False
    """True when operating points were sized on the upper ITL bound."""
    pue_source: str | None = None
    """Where the PUE comes from (None: set in the scenario file)."""
    grid_region: str | None = None
    """Catalog grid region of the carbon factor (None: explicit figure)."""
    grid_year: int | None = None
    grid_source: str | None = None
    capacity_headroom: float | None = None
    """Fraction of the saturated request rate a replica is planned to carry."""
    predictors: str | None = None
    """Name of the predictors (model card ``name``)."""
    predictors_version: str | None = None
    """wattgpu version that trained the predictors (model card ``library_versions``)."""
    training_data_sha256: str | None = None
    """Hash of the predictors' training data (identifies the model card)."""


@dataclass(frozen=True)
class PlanningInputs:
    """Everything the optimiser needs; validated on construction."""

    scenario: str
    models: tuple[ModelDemand, ...]
    candidates: tuple[Candidate, ...]
    inventory: Mapping[str, int | None]
    """GPU type -> available GPUs (None = unlimited). Types not listed are not available."""
    period_hours: tuple[float, ...]
    pue: float = 1.0
    electricity_usd_per_kwh: float = 0.0
    grid_g_co2_per_kwh: float = 0.0
    carbon_usd_per_kg: float | None = None
    power_cap_kw: float | None = None
    """Facility power cap (GPU power × PUE) in every period (kW)."""
    budget_usd: float | None = None
    """Cap on the total cost over the horizon ($, GPU rent + electricity + carbon price)."""
    objective: Objective = field(default_factory=Objective)
    gpu_info: Mapping[str, GpuInfo] = field(default_factory=dict)
    time_limit_s: float = 60.0
    threads: int = 1
    seed: int = 0
    relative_gap: float = 1e-4
    provenance: Provenance = field(default_factory=Provenance)

    def __post_init__(self) -> None:
        self._check_periods_and_models()
        self._check_candidates()
        self._check_numbers()

    def _check_periods_and_models(self) -> None:
        if not self.period_hours:
            raise _fail("period_hours", "give at least one period")
        for hours in self.period_hours:
            if not math.isfinite(hours) or hours <= 0:
                raise _fail("period_hours", f"every period needs hours > 0, got {hours!r}")
        periods = len(self.period_hours)
        names = [m.name for m in self.models]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise _fail("models", f"duplicate model name(s) {duplicates}; names must be unique")
        for m in self.models:
            if len(m.requests_per_s_by_period) != periods:
                raise _fail(
                    f"model {m.name!r}",
                    f"{len(m.requests_per_s_by_period)} load values for {periods} periods",
                )

    def _check_candidates(self) -> None:
        known = {m.name for m in self.models}
        seen: set[tuple[str, str, int]] = set()
        for c in self.candidates:
            if c.name not in known:
                raise _fail(f"candidate {c.label}", f"no model named {c.name!r}")
            if c.key in seen:
                raise _fail(f"candidate {c.label}", "duplicate (name, gpu, tp)")
            seen.add(c.key)
            if c.gpu not in self.inventory:
                raise _fail(f"candidate {c.label}", f"GPU {c.gpu!r} is not in the inventory")

    def _check_numbers(self) -> None:
        for gpu, count in self.inventory.items():
            if count is not None and count < 0:
                raise _fail(f"inventory {gpu!r}", f"available must be >= 0, got {count}")
        if not math.isfinite(self.pue) or self.pue < 1.0:
            raise _fail("pue", f"must be >= 1, got {self.pue!r}")
        _non_negative(
            "economics",
            electricity_usd_per_kwh=self.electricity_usd_per_kwh,
            grid_g_co2_per_kwh=self.grid_g_co2_per_kwh,
            carbon_usd_per_kg=self.carbon_usd_per_kg,
            power_cap_kw=self.power_cap_kw,
            budget_usd=self.budget_usd,
            relative_gap=self.relative_gap,
        )
        if not self.time_limit_s > 0:
            raise _fail("time_limit_s", f"must be > 0, got {self.time_limit_s!r}")
        if self.threads < 1:
            raise _fail("threads", f"must be >= 1, got {self.threads}")

    @property
    def periods(self) -> int:
        """Number of periods."""
        return len(self.period_hours)

    @property
    def hours(self) -> float:
        """Length of the horizon (h)."""
        return float(sum(self.period_hours))

    def feasible_candidates(self) -> list[Candidate]:
        """Candidates the optimiser may use (the capacity model found them feasible)."""
        return [c for c in self.candidates if c.feasible]

    def candidates_of(self, name: str) -> list[Candidate]:
        """All candidates of model entry *name*, in input order."""
        return list(self._by_name.get(name, ()))

    @functools.cached_property
    def _by_name(self) -> dict[str, list[Candidate]]:
        out: dict[str, list[Candidate]] = {}
        for c in self.candidates:
            out.setdefault(c.name, []).append(c)
        return out

    def model(self, name: str) -> ModelDemand:
        """The model entry called *name*."""
        for m in self.models:
            if m.name == name:
                return m
        raise _fail("models", f"no model named {name!r}")

    def with_candidates(self, candidates: Iterable[Candidate]) -> PlanningInputs:
        """A copy restricted to *candidates* (used by the baselines)."""
        from dataclasses import replace

        return replace(self, candidates=tuple(candidates))
