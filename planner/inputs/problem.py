"""The whole planning problem the optimiser solves: :class:`PlanningInputs`.

It holds the model demands, the candidates, the GPU inventory, the periods, the economics and
environment, the objective and the solver settings, and checks on construction that they fit
together; :class:`GpuInfo` and :class:`Provenance` carry what the baselines and the report need.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.inputs.candidate import Candidate, CandidateKey
from planner.inputs.demand import ModelDemand
from planner.inputs.failover import DEFAULT_GPUS_PER_NODE, unit_replicas
from planner.inputs.grid import grid_by_period
from planner.inputs.objective import Objective
from planner.inputs.regions import Region, check_regions, regional_stock, stock_key
from planner.inputs.validation import fail, non_negative

#: Most replicas of one candidate (model entry × GPU type × TP degree) a plan may use: keeps the
#: exact per-model search and the MILP bounded in time and memory at extreme loads.
MAX_REPLICAS_PER_CANDIDATE = 256


@dataclass(frozen=True)
class GpuInfo:
    """Catalog facts the baselines need about one GPU type."""

    gpu: str
    tflops_per_w: float
    """Dense FP16 TFLOPS per TDP watt (higher is more efficient on paper)."""
    usd_per_hour: float
    """Price of one GPU for one hour ($)."""

    def __post_init__(self) -> None:
        non_negative(f"gpu_info {self.gpu!r}", tflops_per_w=self.tflops_per_w)
        non_negative(f"gpu_info {self.gpu!r}", usd_per_hour=self.usd_per_hour)


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
    disclosure: Mapping[str, Any] | None = field(default=None, hash=False)
    """The scenario's ``disclosure`` section as JSON values (None: not given)."""
    price_basis_by_gpu: Mapping[str, str] | None = field(default=None, hash=False)
    """GPU type -> which basis its price comes from (rental, TCO or the scenario's own)."""
    user_catalog: str | None = None
    """The user catalog directory the plan's catalog overlaid (absolute; None: none)."""
    catalog_sha256: str | None = None
    """Fingerprint of the catalogs the plan was made against (bundled and user files)."""


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
    grid_g_co2_per_kwh_by_period: tuple[float, ...] | None = None
    """Grid intensity per period (g CO2e per facility kWh; the scenario's grid profile); None =
    the flat ``grid_g_co2_per_kwh`` in every period. Carbon in the objective and the accounting
    uses it (:mod:`planner.inputs.grid`)."""
    gpus_per_node: Mapping[str, int] = field(default_factory=dict)
    """GPU type -> GPUs per node (the catalog's ``node_gpus``), for node failover (types not
    listed: :data:`~planner.inputs.failover.DEFAULT_GPUS_PER_NODE`)."""
    regions: tuple[Region, ...] = ()
    """The sites a model may be placed in (:mod:`planner.inputs.regions`), each with its PUE,
    prices, grid, power cap and inventory; empty = one site made of the fields above. With
    regions the top-level ``inventory`` is the fleet's (summed over regions, informative only),
    and ``power_cap_kw`` must be None (every region has its own)."""

    def __post_init__(self) -> None:
        self._check_periods_and_models()
        self._check_candidates()
        self._check_numbers()
        check_regions(self.regions, self.candidates, self.periods)
        if self.regions and self.power_cap_kw is not None:
            raise fail("power_cap_kw", "give the power cap of each region instead")

    def _check_periods_and_models(self) -> None:
        if not self.period_hours:
            raise fail("period_hours", "give at least one period")
        for hours in self.period_hours:
            if not math.isfinite(hours) or hours <= 0:
                raise fail("period_hours", f"every period needs hours > 0, got {hours!r}")
        periods = len(self.period_hours)
        names = [m.name for m in self.models]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise fail("models", f"duplicate model name(s) {duplicates}; names must be unique")
        for m in self.models:
            if len(m.requests_per_s_by_period) != periods:
                raise fail(
                    f"model {m.name!r}",
                    f"{len(m.requests_per_s_by_period)} load values for {periods} periods",
                )

    def _check_candidates(self) -> None:
        known = {m.name for m in self.models}
        seen: set[CandidateKey] = set()
        for c in self.candidates:
            if c.name not in known:
                raise fail(f"candidate {c.label}", f"no model named {c.name!r}")
            if c.key in seen:
                raise fail(f"candidate {c.label}", "duplicate (name, gpu, layout)")
            seen.add(c.key)
            missing = [g for g, _ in c.gpu_use if g not in self.inventory]
            if missing:
                raise fail(f"candidate {c.label}", f"GPU {missing[0]!r} is not in the inventory")

    def _check_numbers(self) -> None:
        for gpu, count in self.inventory.items():
            if count is not None and count < 0:
                raise fail(f"inventory {gpu!r}", f"available must be >= 0, got {count}")
        if not math.isfinite(self.pue) or self.pue < 1.0:
            raise fail("pue", f"must be >= 1, got {self.pue!r}")
        non_negative(
            "economics",
            electricity_usd_per_kwh=self.electricity_usd_per_kwh,
            grid_g_co2_per_kwh=self.grid_g_co2_per_kwh,
            carbon_usd_per_kg=self.carbon_usd_per_kg,
            power_cap_kw=self.power_cap_kw,
            budget_usd=self.budget_usd,
            relative_gap=self.relative_gap,
        )
        profile = self.grid_g_co2_per_kwh_by_period
        if profile is not None:
            if len(profile) != self.periods:
                raise fail(
                    "grid_g_co2_per_kwh_by_period",
                    f"{len(profile)} values for {self.periods} periods; give one per period",
                )
            non_negative("grid profile", **{f"period {i}": v for i, v in enumerate(profile)})
        if not self.time_limit_s > 0:
            raise fail("time_limit_s", f"must be > 0, got {self.time_limit_s!r}")
        if self.threads < 1:
            raise fail("threads", f"must be >= 1, got {self.threads}")
        for gpu, count in self.gpus_per_node.items():
            if count < 1:
                raise fail(f"gpus_per_node {gpu!r}", f"must be >= 1, got {count}")

    @property
    def periods(self) -> int:
        """Number of periods."""
        return len(self.period_hours)

    @functools.cached_property
    def period_grid_g_co2_per_kwh(self) -> tuple[float, ...]:
        """Grid intensity of every period: the profile, or the flat factor in each."""
        return grid_by_period(
            self.grid_g_co2_per_kwh, self.grid_g_co2_per_kwh_by_period, self.periods
        )

    @functools.cached_property
    def sites(self) -> tuple[Region, ...]:
        """The regions, or the one site of the top-level fields (name ``""``) without them."""
        if self.regions:
            return self.regions
        only = Region(
            "",
            self.pue,
            self.electricity_usd_per_kwh,
            self.grid_g_co2_per_kwh,
            self.grid_g_co2_per_kwh_by_period,
            self.power_cap_kw,
            self.inventory,
        )
        return (only,)

    def site(self, c: Candidate) -> Region:
        """The site candidate *c* runs in."""
        return self._sites_by_name[c.region]

    @functools.cached_property
    def _sites_by_name(self) -> dict[str, Region]:
        return {r.name: r for r in self.sites}

    @functools.cached_property
    def stock(self) -> Mapping[str, int | None]:
        """Inventory by :func:`~planner.inputs.regions.stock_key`: ``inventory`` without regions,
        ``gpu@region`` -> GPUs with them."""
        return regional_stock(self.regions) if self.regions else self.inventory

    def available(self, c: Candidate) -> int | None:
        """GPUs of *c*'s type available in its site (None: unlimited)."""
        return self.stock.get(stock_key(c))

    @property
    def has_power_cap(self) -> bool:
        """True when some site has a facility power cap."""
        return any(r.power_cap_kw is not None for r in self.sites)

    @property
    def linked(self) -> bool:
        """True when a limit links the model entries: a power cap, a budget or an inventory."""
        return (
            self.has_power_cap
            or self.budget_usd is not None
            or any(v is not None for v in self.stock.values())
        )

    @property
    def hours(self) -> float:
        """Length of the horizon (h; summed exactly: 24 periods of 2000/24 h are 2000 h, not
        1999.9999999999993)."""
        return math.fsum(self.period_hours)

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

    def node_gpus(self, gpu: str) -> int:
        """GPUs per node of *gpu* (node failover)."""
        return self.gpus_per_node.get(gpu, DEFAULT_GPUS_PER_NODE)

    def replicas_per_unit(self, c: Candidate) -> int:
        """Replicas one failover loss unit of *c* holds (1 without node failover)."""
        failover = self.model(c.name).failover
        return unit_replicas(failover, ((self.node_gpus(g), n) for g, n in c.gpu_use))

    def model(self, name: str) -> ModelDemand:
        """The model entry called *name*."""
        found = self._models_by_name.get(name)
        if found is None:
            raise fail("models", f"no model named {name!r}")
        return found

    @functools.cached_property
    def _models_by_name(self) -> dict[str, ModelDemand]:
        return {m.name: m for m in self.models}

    def with_candidates(self, candidates: Iterable[Candidate]) -> PlanningInputs:
        """A copy restricted to *candidates* (used by the baselines)."""
        from dataclasses import replace

        return replace(self, candidates=tuple(candidates))
