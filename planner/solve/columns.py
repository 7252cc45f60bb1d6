"""The decomposition of a fleet problem into model blocks and the columns of each block.

:class:`Decomposition` holds one :class:`~planner.solve.decompose.ModelBlock` per model entry,
each candidate's objective, facility-power and budget coefficients, and the *linking rows*: GPU
types whose inventory can bind, the facility power cap per period and the budget. A
:class:`Column` is one model's replica vector priced under those rows; :func:`all_columns`
enumerates every column of a small instance and :func:`neighbours` the vectors one replica away.
Column generation over them is :mod:`planner.solve.colgen`. With regions a block is one model
entry in one site, and a plan takes one block's column per model entry.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from planner.inputs import Candidate, PlanningInputs
from planner.solve.coefficients import (
    Horizon,
    flat_grid,
    kwh_weight_by_period,
    objective_weights,
    replica_usd_of,
    usd_per_facility_kwh_by_period,
)
from planner.solve.decompose import (
    FloatArray,
    IntArray,
    ModelBlock,
    covers,
    load_watts,
    make_block,
)
from planner.solve.restrict import restricted_block, shared_block

EXHAUSTIVE_MAX_COLUMNS = 500
"""When every model's replica vectors number at most this many in all, the master MILP gets
all of them and its proven optimum is the exact optimum (small instances). Each column is routed
exactly (:mod:`planner.solve.routing`, about 2.6-3.4 ms a vector on curves), so 20,000 columns
cost ~50 s a solve: a Pareto front over a saved plan's 5,041 vectors took 68 s, 2.8 s through
column generation with reduced-cost enumeration, which is exact too. At 2,000, the report of
``enterprise-fleet`` (every evaluated layout kept: it has inventories) routed 8,848 vectors in
its Pareto front's six solves, 16-22 s; at 500 column generation takes them. When nothing else
decides an instance, :mod:`planner.solve.fallback` lists up to 20,000 (its step 4)."""


@dataclass(frozen=True)
class Column:
    """One model's replica vector with its objective and linking-row use."""

    block: int
    n: IntArray
    cost: float
    gpu_use: FloatArray
    power_kw: FloatArray
    budget_usd: float


class Decomposition:
    """Model blocks, their cost coefficients and the linking rows of one instance.

    A block is one model entry's candidates in one site (:mod:`planner.inputs.regions`; without
    regions one block per model entry). :attr:`group` maps each block to its model entry: a plan
    takes one column per model entry, from one of its blocks (the entry is placed in one site).
    The power rows are one per capped site and period (:attr:`power_slice` of a block: its
    site's rows, None when its site has no cap)."""

    def __init__(
        self,
        inputs: PlanningInputs,
        candidates: list[Candidate],
        parent: Decomposition | None = None,
        keep: frozenset[int] = frozenset(),
    ) -> None:
        """*parent*: a decomposition of the same inputs over more candidates, whose blocks
        this one's restrict (:mod:`planner.solve.restrict`: the same numbers, computed once);
        *keep*: the candidates (by identity) whose search data is kept after pricing, for
        such a restriction."""
        self.inputs = inputs
        self.keep = keep
        sites = inputs.sites
        by_place: dict[tuple[str, str], list[Candidate]] = {}
        for c in candidates:
            by_place.setdefault((c.name, c.region), []).append(c)
        # an entry no site has a candidate for keeps one block (its first site's, empty): its
        # only column is the empty vector, which covers an entry that needs nothing
        served = {name for name, _ in by_place}
        places = [
            (g, m, r)
            for g, m in enumerate(inputs.models)
            for i, r in enumerate(sites)
            if by_place.get((m.name, r.name)) or (i == 0 and m.name not in served)
        ]
        stock = dict(inputs.stock)
        shared = _parent_blocks(inputs, parent)
        self.blocks = []
        for _, m, r in places:
            cands = by_place.get((m.name, r.name), [])
            above = shared.get((m.name, r.name))
            block = restricted_block(above, cands) if above is not None and cands else None
            if block is None or block.demand != m:
                block = make_block(m, cands, stock, inputs.gpus_per_node)
            self.blocks.append(block)
        self.group = [g for g, _, _ in places]
        """Per block, the index of its model entry (its convexity row)."""
        self.groups = len(inputs.models)
        self.site_of = [r for _, _, r in places]
        """Per block, its site."""
        self.regional = bool(inputs.regions)
        self.gpus = self._binding_gpus()
        gpu_row = {g: i for i, g in enumerate(self.gpus)}
        per_rent = objective_weights(inputs).per_rent_usd
        hours = np.asarray(inputs.period_hours, dtype=np.float64)
        self.hours = hours
        self.capped = [r for r in sites if r.power_cap_kw is not None]
        """The sites with a power cap, in the order of their power rows."""
        slices = {
            r.name: slice(i * inputs.periods, (i + 1) * inputs.periods)
            for i, r in enumerate(self.capped)
        }
        self.power_slice = [slices.get(r.name) for r in self.site_of]
        self.power_rows = len(self.capped) * inputs.periods
        self.zero_t = np.zeros(inputs.periods)
        self.flat_of: list[bool] = []
        self.usd_per_kwh_of: list[FloatArray] = []
        """Per block, $ per facility kWh in every period (carbon price on the site's grid)."""
        self.kw_per_e_of: list[float] = []
        """Per block, facility kW per (J/request × request/s) at its site's PUE."""
        self.base_t_of: list[FloatArray] = []
        self.obj_n: list[FloatArray] = []
        self.kw_n: list[FloatArray] = []
        self.budget_n: list[FloatArray] = []
        self.use: list[FloatArray] = []
        """Per block: GPUs of each binding inventory row (:attr:`gpus`: a GPU type, per region
        with regions) one replica holds (a disaggregated unit: both pools' types)."""
        for block, site in zip(self.blocks, self.site_of, strict=True):
            per_kwh = kwh_weight_by_period(inputs, site)
            kw_per_e = site.pue / 1000.0
            self.flat_of.append(flat_grid(inputs, site))
            self.usd_per_kwh_of.append(
                np.asarray(usd_per_facility_kwh_by_period(inputs, site), dtype=np.float64)
            )
            self.kw_per_e_of.append(kw_per_e)
            self.base_t_of.append(np.asarray(per_kwh, dtype=np.float64) * kw_per_e * hours)
            # the site's sums once per block (each candidate's coefficient: the same arithmetic)
            energy = Horizon.of(inputs, per_kwh, site)
            usd = Horizon.of(inputs, usd_per_facility_kwh_by_period(inputs, site), site)
            # every candidate's coefficient at once: idle_kw, Horizon.times and replica_usd
            # element by element (the same arithmetic)
            idle_w = np.asarray([c.idle_power_w_per_replica for c in block.candidates], float)
            usd_h = np.asarray([c.usd_per_hour_per_replica for c in block.candidates], float)
            kw = site.pue * idle_w / 1000.0
            self.kw_n.append(kw)
            self.obj_n.append(energy.times(kw) + per_rent * usd_h * energy.hours)
            self.budget_n.append(replica_usd_of(usd_h, kw, usd))
            use = np.zeros((len(block.candidates), len(self.gpus)), dtype=np.float64)
            for k, c in enumerate(block.candidates if self.gpus else ()):
                for g, held in c.stock_use:
                    if g in gpu_row:
                        use[k, gpu_row[g]] += held
            self.use.append(use)
        # the one site's figures (the least-peak phase and the power proofs, no regions)
        self.flat = self.flat_of[0]
        self.usd_per_kwh = self.usd_per_kwh_of[0]
        self.kw_per_e = self.kw_per_e_of[0]
        self.base_t = self.base_t_of[0]

    def _binding_gpus(self) -> list[str]:
        """Capped stock (GPU types, per region with regions) that all models at their replica
        bounds could exceed."""
        capped = {g for g, available in self.inputs.stock.items() if available is not None}
        most: dict[str, int] = {}
        for block in self.blocks if capped else ():
            for c, ub in zip(block.candidates, block.ub, strict=True):
                for g, held in c.stock_use:
                    most[g] = most.get(g, 0) + int(ub) * held
        return [
            g
            for g, available in sorted(self.inputs.stock.items())
            if available is not None and most.get(g, 0) > available
        ]

    @property
    def linked(self) -> bool:
        """True when some constraint links the models."""
        return bool(self.gpus) or bool(self.capped) or self.has_budget

    @property
    def has_budget(self) -> bool:
        """True when the inputs set a budget."""
        return self.inputs.budget_usd is not None

    def site_duals(self, b: int, y_power: FloatArray) -> FloatArray:
        """The power-row prices of block *b*'s site, per period (zeros when it has no cap)."""
        sl = self.power_slice[b]
        if sl is None:
            return self.zero_t
        if not self.regional:
            return y_power
        # callers without duals pass zeros of one period row each
        return y_power[sl] if y_power.size == self.power_rows else self.zero_t

    def group_floor(self, floors: tuple[float, ...], b: int) -> float:
        """The least of *floors* (one per block) over the blocks of block *b*'s model entry."""
        g = self.group[b]
        return min(f for f, h in zip(floors, self.group, strict=True) if h == g)

    def prices(
        self, b: int, y_gpu: FloatArray, y_power: FloatArray, y_budget: float
    ) -> tuple[FloatArray, FloatArray]:
        """Replica and per-period energy prices of block *b* under linking-row prices y."""
        y_t = self.site_duals(b, y_power)
        kw_per_e = self.kw_per_e_of[b]
        price_n = (
            self.obj_n[b]
            + (self.use[b] @ y_gpu if y_gpu.size else 0.0)
            + self.kw_n[b] * float(y_t.sum())
            + self.budget_n[b] * y_budget
        )
        price_t = (
            self.base_t_of[b]
            + kw_per_e * y_t
            + y_budget * kw_per_e * self.usd_per_kwh_of[b] * self.hours
        )
        return price_n, price_t

    def column(self, b: int, n: IntArray) -> Column:
        """The :class:`Column` of replica vector *n* of block *b* (merit-order dispatch)."""
        block = self.blocks[b]
        e_load = load_watts(block, n)  # watts above idle per period
        gpu_use = n @ self.use[b] if self.gpus else np.zeros(0)
        power_kw = float(n @ self.kw_n[b]) + self.kw_per_e_of[b] * e_load
        sl = self.power_slice[b]
        if self.regional:  # the block's site's rows only
            site_kw, power_kw = power_kw, np.zeros(self.power_rows)
            if sl is not None:
                power_kw[sl] = site_kw
        return Column(
            block=b,
            n=n,
            cost=float(n @ self.obj_n[b] + self.base_t_of[b] @ e_load),
            gpu_use=gpu_use,
            power_kw=power_kw,
            budget_usd=float(n @ self.budget_n[b] + self._load_usd(b, e_load)),
        )

    def _load_usd(self, b: int, e_load: FloatArray) -> float:
        """$ of the facility energy of *e_load* (watts above idle per period) over the horizon."""
        kw_per_e, usd = self.kw_per_e_of[b], self.usd_per_kwh_of[b]
        if self.flat_of[b]:
            return float(kw_per_e * usd[0] * (self.hours @ e_load))
        return float(kw_per_e * ((usd * self.hours) @ e_load))


def _parent_blocks(
    inputs: PlanningInputs, parent: Decomposition | None
) -> dict[tuple[str, str], ModelBlock]:
    """The blocks of *parent* by (model entry, site), when its inputs differ from *inputs* in
    the candidates only (the same loads, inventory and nodes); else none."""
    if parent is None:
        return {}
    was = parent.inputs
    if (was.stock, was.gpus_per_node, was.models) != (
        inputs.stock,
        inputs.gpus_per_node,
        inputs.models,
    ):
        return {}
    return {
        (block.demand.name, site.name): shared_block(block)
        for block, site in zip(parent.blocks, parent.site_of, strict=True)
    }


def all_columns(
    dec: Decomposition, limit: int = EXHAUSTIVE_MAX_COLUMNS, deadline: float | None = None
) -> list[Column] | None:
    """Every replica vector of every model within its bounds that covers its peak (after its
    failover losses) and minimum replicas and keeps each linking row on its own, or None when
    there are more than *limit* vectors in their bounds' boxes, or the clock passes *deadline*
    (each column is routed exactly)."""
    # float products: hundreds of candidates per model give inf, not an error
    sizes = [math.prod(float(u) + 1.0 for u in block.ub) for block in dec.blocks]
    if sum(sizes) > limit:
        return None
    out: list[Column] = []
    stock = np.asarray([float(dec.inputs.stock[g] or 0) for g in dec.gpus])
    budget = dec.inputs.budget_usd
    for b, block in enumerate(dec.blocks):
        site = dec.site_of[b]
        cap_kw = site.power_cap_kw if dec.regional else dec.inputs.power_cap_kw
        for combo in itertools.product(*(range(int(u) + 1) for u in block.ub)):
            n = np.asarray(combo, dtype=np.int64)
            if not covers(block, n) or int(n.sum()) < block.demand.min_replicas:
                continue
            # a vector that alone holds more GPUs than a binding type's stock, draws more idle
            # power than the cap or spends more on its replicas than the budget is in no plan
            # (not routed)
            if stock.size and (n @ dec.use[b] > stock * (1 + 1e-9)).any():
                continue
            if cap_kw is not None and float(n @ dec.kw_n[b]) > cap_kw * (1 + 1e-9):
                continue
            if budget is not None and float(n @ dec.budget_n[b]) > budget * (1 + 1e-9):
                continue
            if deadline is not None and time.perf_counter() > deadline:
                return None
            out.append(dec.column(b, n))
    return out


def neighbours(block: ModelBlock, n: IntArray) -> list[IntArray]:
    """Replica vectors one replica away from *n* (added, removed or moved) that still cover
    the peak load (after the failover losses) and the minimum replicas within the block's
    bounds."""
    out: list[IntArray] = []

    def keep(m: IntArray) -> None:
        if (
            (m >= 0).all()
            and (m <= block.ub).all()
            and covers(block, m)
            and int(m.sum()) >= block.demand.min_replicas
        ):
            out.append(m)

    size = len(block.candidates)
    for k in range(size):
        up = n.copy()
        up[k] += 1
        keep(up)
        if n[k] <= 0:
            continue
        down = n.copy()
        down[k] -= 1
        keep(down)
        for j in range(size):
            if j != k:
                moved = down.copy()
                moved[j] += 1
                keep(moved)
    return out
