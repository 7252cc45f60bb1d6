"""A candidate deployment (model entry × GPU type × parallel layout) and its power and ITL curves.

The power of one replica serving ``x`` requests/s is its power curve (:attr:`Candidate.curve`:
the serving model's mean power at the curve's knots, linear between them, docs/method.md §3); a
hand-built candidate without a curve has the linear one
``idle_power_w_per_replica + energy_j_per_request * x``. :class:`Exclusion` codes why an
infeasible candidate is excluded; :func:`ms_text` writes the milliseconds of its reasons.
"""

from __future__ import annotations

import math
import operator
from array import array
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from planner.inputs.pools import (
    Deployment,
    Pool,
    gpu_use,
    layout_text,
    pool_from_record,
    pools_text,
)
from planner.inputs.validation import fail, negative_problem


def _interp(x: float, xs: Sequence[float], ys: Sequence[float]) -> float:
    """Linear interpolation of the knots (xs ascending), held constant beyond the ends."""
    if x <= xs[0]:
        return ys[0]
    i = bisect_left(xs, x)  # the first knot at or above x (as a scan from the left finds)
    if i >= len(xs) or x != x:  # beyond the last knot, or NaN
        return ys[-1]
    t = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
    return ys[i - 1] + t * (ys[i] - ys[i - 1])


def least_slope_w(rates: Sequence[float], powers: Sequence[float]) -> float:
    """``energy_j_per_request`` of a power curve (*powers* W at *rates* req/s, idle first): the
    least watts above idle per req/s over the knots after the first, at least 0 (0 for a curve
    of one knot); the slope of the least-slope line the MILP prices energy on."""
    idle = float(powers[0])
    slopes = [(float(p) - idle) / float(x) for x, p in zip(rates[1:], powers[1:], strict=True)]
    return max(0.0, min(slopes)) if slopes else 0.0


def ms_text(seconds: float) -> str:
    """Milliseconds for reasons: whole from 10 ms on, three significant digits below (an SLA
    of 0.1 ms prints as 0.1, never as 0)."""
    ms = 1000.0 * seconds
    return f"{ms:,.0f}" if abs(ms) >= 10 or not math.isfinite(ms) else f"{ms:.3g}"


def ms_over(value_s: float, limit_s: float) -> tuple[str, str]:
    """:func:`ms_text` of a value above its limit and of the limit, both with as many more
    digits as it takes for the value to read above the limit (``30.1 > 30``, never
    ``30 > 30`` or ``12.7 > 13``)."""

    def reads(text: str) -> float:
        return float(text.replace(",", ""))

    value, limit = ms_text(value_s), ms_text(limit_s)
    if not (math.isfinite(value_s) and math.isfinite(limit_s)) or reads(value) > reads(limit):
        return value, limit
    for digits in range(1, 9):
        shown = [f"{1000.0 * x:,.{digits}f}".rstrip("0").rstrip(".") for x in (value_s, limit_s)]
        if reads(shown[0]) > reads(shown[1]):
            return shown[0], shown[1]
    return value, limit


#: Joins a GPU type and a region into the key of that region's inventory of the type.
STOCK_SEPARATOR = "@"
#: (model entry name, GPU, TP, PP, DP, EP, region): a candidate's identity (region ``""``
#: without regions).
CandidateKey = tuple[str, str, int, int, int, int, str]


def record_key(record: Mapping[str, Any]) -> CandidateKey:
    """The :data:`CandidateKey` of a plan JSON candidate or allocation record (plans written
    before layouts have no layout keys: pure tensor parallelism, degrees 1; plans without
    regions no ``region``: ``""``)."""

    def degree(key: str) -> int:
        return int(record.get(key) or 1)

    pools = record.get("pools") if record.get("deployment") == "disaggregated" else None
    return (
        str(record.get("name")),
        pools_text([pool_from_record(p) for p in pools]) if pools else str(record.get("gpu")),
        int(record.get("tp") or 0),
        degree("pipeline_parallel"),
        degree("data_parallel"),
        degree("expert_parallel"),
        str(record.get("region") or ""),
    )


class Exclusion(StrEnum):
    """Why a candidate is infeasible, as a code (:attr:`Candidate.reason` says it in words)."""

    NONE = ""
    MEMORY = "memory"
    """The weights (plus the runtime reserve) do not fit in the replica's GPU memory."""
    ITL_SLA = "itl_sla"
    """No concurrency meets the ITL SLA (:attr:`Candidate.itl_s_at_capacity` is the best ITL)."""
    TTFT_SLA = "ttft_sla"
    """The TTFT at the lightest load (a lone prompt plus one step) misses the TTFT SLA
    (:attr:`Candidate.ttft_s`)."""
    NO_PRICE = "no_price"
    """The GPU has no $/hour in the scenario or the catalog."""
    RULE = "rule"
    """Excluded by the model entry's ``allowed_gpus`` / ``forbidden_gpus``."""
    PREDICTION = "prediction"
    """The predictors cannot predict this deployment (see the reason)."""


CURVE_FIELDS = ("load_curve_requests_per_s", "power_curve_w_per_replica", "itl_curve_s")
"""The :class:`Candidate` curves, held as packed doubles (``array('d')``): 8 bytes a knot, where
a tuple of floats takes 32 (the 45,000 candidates of a 500-entry scenario hold 3.5 M knots).
They compare equal to another curve only as a curve (``array``), never to a tuple."""


def packed(values: Sequence[float]) -> array[float]:
    """*values* as a packed curve (:data:`CURVE_FIELDS`); an ``array('d')`` is kept as it is."""
    if type(values) is array and values.typecode == "d":
        return values
    return array("d", values)


@dataclass(frozen=True, slots=True)
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
    load_curve_requests_per_s: Sequence[float] = ()
    """Knots of the replica's power curve: per-replica rates (req/s, ascending, first 0)."""
    power_curve_w_per_replica: Sequence[float] = ()
    """Mean GPU power of one replica at each knot (W; first = idle). Linear between knots.
    Empty: the linear model idle + energy_j_per_request · rate (hand-built candidates)."""
    itl_curve_s: Sequence[float] = ()
    """Mean ITL at each knot (s): the ITL at the load a replica serves."""
    capacity_limit: str = ""
    """What sets the capacity: 'itl', 'ttft', 'memory' (KV cache or engine batch limit) or
    'throughput' (the batch where throughput stops rising) ('' for hand-built candidates)."""
    pipeline_parallel: int = 1
    """Pipeline stages of one replica (``tp`` is its tensor-parallel degree)."""
    data_parallel: int = 1
    """Attention data-parallel ranks of one replica."""
    expert_parallel: int = 1
    """Expert-parallel degree of the MoE layers (1 for dense models)."""
    nodes: int = 1
    """Nodes (servers, or GB200/GB300 compute trays) one replica spans; 1 inside one node."""
    region: str = ""
    """Region the replicas run in (:mod:`planner.inputs.regions`); ``""`` without regions."""
    deployment: Deployment = "aggregated"
    """``aggregated`` (one engine per replica) or ``disaggregated`` (a unit of :attr:`pools`;
    ``gpu`` and the layout degrees are then its decode pool's)."""
    pools: tuple[Pool, ...] = ()
    """A disaggregated unit's prefill and decode pools (empty for aggregated replicas)."""
    ttft_curve_s: Sequence[float] = ()
    """A disaggregated unit's mean TTFT at each knot (s: the prefill queue's wait, the lone
    prompt's TTFT and the KV transfer), for the sweep's TTFT draws; empty for an aggregated
    replica, whose TTFT at a knot is ``ttft_s`` − ``itl_curve_s[0]`` + ``itl_curve_s`` (the
    prefill and one step). Not written to the plan JSON."""

    @property
    def disaggregated(self) -> bool:
        """True for a disaggregated unit (:attr:`pools`)."""
        return self.deployment == "disaggregated"

    @property
    def gpu_use(self) -> tuple[tuple[str, int], ...]:
        """(GPU type, GPUs of inventory) one replica takes, per type: its own for an aggregated
        replica, both pools' for a disaggregated unit (:func:`planner.inputs.pools.gpu_use`)."""
        return gpu_use(self.pools) if self.pools else ((self.gpu, self.gpus_per_replica),)

    @property
    def stock_use(self) -> tuple[tuple[str, int], ...]:
        """(inventory key, GPUs) one replica takes: :attr:`gpu_use` keyed as its site's inventory
        is, ``gpu@region`` in a region (:func:`planner.inputs.regions.stock_key`)."""
        if not self.region:
            return self.gpu_use
        return tuple((f"{g}{STOCK_SEPARATOR}{self.region}", k) for g, k in self.gpu_use)

    @property
    def curve(self) -> tuple[Sequence[float], Sequence[float]]:
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
    def key(self) -> CandidateKey:
        """(model entry name, GPU, TP, PP, DP, EP, region): unique within a
        :class:`PlanningInputs`."""
        return (
            self.name,
            pools_text(self.pools) if self.pools else self.gpu,
            self.tp,
            self.pipeline_parallel,
            self.data_parallel,
            self.expert_parallel,
            self.region,
        )

    @property
    def layout(self) -> str:
        """The replica's layout, compactly (:func:`layout_text`): ``8`` for pure TP 8, ``8×PP2``;
        a disaggregated unit's pools (``1× H100 TP4 → 2× H200 TP8``)."""
        return pools_text(self.pools) if self.pools else layout_text(*self.key[2:6])

    @property
    def option_text(self) -> str:
        """``H100 TP8`` for an aggregated replica, ``[3× B200 TP2 → 2× H100 TP8]`` for a unit."""
        return f"[{pools_text(self.pools)}]" if self.pools else f"{self.gpu} TP{self.layout}"

    @property
    def label(self) -> str:
        """``name,gpu,tp`` (plus ``×PP…`` etc. for other layouts) as used in constraint names."""
        shape = layout_text(
            self.tp, self.pipeline_parallel, self.data_parallel, self.expert_parallel
        )
        where = f"@{self.region}" if self.region else ""
        if self.pools:
            return f"{self.name},{pools_text(self.pools).replace(' ', '')}{where}"
        return f"{self.name},{self.gpu},{shape.replace(' ', '')}{where}"

    def __hash__(self) -> int:
        """Hash of the identity only (equal candidates share it; the packed curves are not
        hashable): used where candidates are de-duplicated."""
        return hash((self.key, self.deployment, self.pools, self.gpus_per_replica))

    def __post_init__(self) -> None:
        for name in CURVE_FIELDS:  # packed doubles, whatever sequence was given
            object.__setattr__(self, name, packed(getattr(self, name)))
        problem = self._problem()
        if problem:  # the label only on failure: candidates are built by the ten thousand
            raise fail(f"candidate {self.label}", problem)

    def _problem(self) -> str:
        """What is wrong with this candidate ('' when nothing)."""
        if min(self.tp, self.gpus_per_replica, self.pipeline_parallel, self.data_parallel) < 1:
            return "tp, gpus_per_replica and the layout degrees must be >= 1"
        if self.expert_parallel < 1 or self.nodes < 1:
            return "expert_parallel and nodes must be >= 1"
        if self.gpus_per_replica < self.tp * self.pipeline_parallel * self.data_parallel:
            return "gpus_per_replica must hold tp × pipeline_parallel × data_parallel"
        if self.batch_size < 0:
            return f"batch_size must be >= 0, got {self.batch_size}"
        rate, idle = self.max_requests_per_s_per_replica, self.idle_power_w_per_replica
        energy, usd = self.energy_j_per_request, self.usd_per_hour_per_replica
        at_cap = self.power_w_per_gpu_at_capacity
        try:  # the usual case in one test: every number finite and >= 0 (NaN fails it too)
            fine = (
                0.0 <= rate < math.inf
                and 0.0 <= idle < math.inf
                and 0.0 <= energy < math.inf
                and 0.0 <= usd < math.inf
                and 0.0 <= at_cap < math.inf
            )
        except TypeError:  # None (skipped by the check) or not a number: the check decides
            fine = False
        negative = (
            ""
            if fine
            else negative_problem(
                max_requests_per_s_per_replica=rate,
                idle_power_w_per_replica=idle,
                energy_j_per_request=energy,
                usd_per_hour_per_replica=usd,
                power_w_per_gpu_at_capacity=at_cap,
            )
        )
        if negative:
            return negative
        if self.feasible and self.max_requests_per_s_per_replica <= 0:
            return "a feasible candidate needs max_requests_per_s_per_replica > 0"
        if self.feasible and not math.isfinite(self.itl_s_at_capacity):
            return "a feasible candidate needs a finite itl_s_at_capacity"
        xs, ps = self.load_curve_requests_per_s, self.power_curve_w_per_replica
        if len(xs) != len(ps) or (self.itl_curve_s and len(self.itl_curve_s) != len(xs)):
            return "power/ITL curve knots must have the same length as the rates"
        if xs and (xs[0] != 0.0 or not all(map(operator.lt, xs, xs[1:]))):
            return "curve rates must start at 0 and ascend strictly"
        if ps and not all(map(operator.le, ps, ps[1:])):
            return "power curve must not decrease with load"
        if self.disaggregated != bool(self.pools):
            return "a disaggregated candidate has pools, an aggregated one none"
        if self.pools and (
            tuple(p.role for p in self.pools) != ("prefill", "decode")
            or self.gpus_per_replica != sum(p.gpus for p in self.pools)
            or self.gpu != self.pools[-1].gpu
        ):
            return (
                "a disaggregated unit has a prefill then a decode pool, holds their GPUs and "
                "runs on the decode pool's GPU type"
            )
        return ""
