"""The decomposition of a fleet problem into model blocks and the columns of each block.

:class:`Decomposition` holds one :class:`~planner.solve.decompose.ModelBlock` per model entry,
each candidate's objective, facility-power and budget coefficients, and the *linking rows*: GPU
types whose inventory can bind, the facility power cap per period and the budget. A
:class:`Column` is one model's replica vector priced under those rows; :func:`all_columns`
enumerates every column of a small instance and :func:`neighbours` the vectors one replica away.
Column generation over them is :mod:`planner.solve.colgen`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from planner.inputs import Candidate, PlanningInputs
from planner.solve.coefficients import (
    cost_coefficients,
    facility_kw_coefficients,
    flat_grid,
    kwh_weight_by_period,
    objective_weights,
    over_horizon,
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

EXHAUSTIVE_MAX_COLUMNS = 2000
"""When every model's replica vectors number at most this many in all, the master MILP gets
all of them and its proven optimum is the exact optimum (small instances). Each column is routed
exactly (:mod:`planner.solve.routing`, about 2.6 ms a vector on curves), so 20,000 columns cost
~50 s a solve: a Pareto front over a saved plan's 5,041 vectors took 68 s, 2.8 s through
column generation with reduced-cost enumeration, which is exact too."""


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
    """Model blocks, their cost coefficients and the linking rows of one instance."""

    def __init__(self, inputs: PlanningInputs, candidates: list[Candidate]) -> None:
        self.inputs = inputs
        by_name: dict[str, list[Candidate]] = {m.name: [] for m in inputs.models}
        for c in candidates:
            by_name[c.name].append(c)
        inventory = dict(inputs.inventory)
        self.blocks = [
            make_block(m, by_name[m.name], inventory, inputs.gpus_per_node) for m in inputs.models
        ]
        self.gpus = self._binding_gpus()
        gpu_row = {g: i for i, g in enumerate(self.gpus)}
        per_kwh = kwh_weight_by_period(inputs)
        per_rent = objective_weights(inputs).per_rent_usd
        hours = np.asarray(inputs.period_hours, dtype=np.float64)
        self.flat = flat_grid(inputs)
        self.usd_per_kwh = np.asarray(usd_per_facility_kwh_by_period(inputs), dtype=np.float64)
        """$ per facility kWh in every period (carbon price on the period's grid intensity)."""
        self.kw_per_e = inputs.pue / 1000.0
        """Facility kW per (J/request × request/s)."""
        self.hours = hours
        self.base_t = np.asarray(per_kwh, dtype=np.float64) * self.kw_per_e * hours
        self.obj_n: list[FloatArray] = []
        self.kw_n: list[FloatArray] = []
        self.budget_n: list[FloatArray] = []
        self.use: list[FloatArray] = []
        """Per block: GPUs of each binding type (columns, :attr:`gpus`) one replica holds."""
        for block in self.blocks:
            kw = [facility_kw_coefficients(inputs, c)[0] for c in block.candidates]
            self.kw_n.append(np.asarray(kw, dtype=np.float64))
            self.obj_n.append(
                np.asarray(
                    [
                        over_horizon(inputs, per_kwh, k)
                        + per_rent * c.usd_per_hour_per_replica * inputs.hours
                        for k, c in zip(kw, block.candidates, strict=True)
                    ],
                    dtype=np.float64,
                )
            )
            self.budget_n.append(
                np.asarray(
                    [cost_coefficients(inputs, c)[0] for c in block.candidates], dtype=np.float64
                )
            )
            use = np.zeros((len(block.candidates), len(self.gpus)), dtype=np.float64)
            for k, c in enumerate(block.candidates):
                for g, held in c.gpu_use:
                    if g in gpu_row:
                        use[k, gpu_row[g]] += held
            self.use.append(use)

    def _binding_gpus(self) -> list[str]:
        """Capped GPU types that all models at their replica bounds could exceed."""
        most: dict[str, int] = {}
        for block in self.blocks:
            for c, ub in zip(block.candidates, block.ub, strict=True):
                for g, held in c.gpu_use:
                    most[g] = most.get(g, 0) + int(ub) * held
        return [
            g
            for g, available in sorted(self.inputs.inventory.items())
            if available is not None and most.get(g, 0) > available
        ]

    @property
    def linked(self) -> bool:
        """True when some constraint links the models."""
        return bool(self.gpus) or self.inputs.power_cap_kw is not None or self.has_budget

    @property
    def has_budget(self) -> bool:
        """True when the inputs set a budget."""
        return self.inputs.budget_usd is not None

    def prices(
        self, b: int, y_gpu: FloatArray, y_power: FloatArray, y_budget: float
    ) -> tuple[FloatArray, FloatArray]:
        """Replica and per-period energy prices of block *b* under linking-row prices y."""
        price_n = (
            self.obj_n[b]
            + (self.use[b] @ y_gpu if y_gpu.size else 0.0)
            + self.kw_n[b] * float(y_power.sum())
            + self.budget_n[b] * y_budget
        )
        price_t = (
            self.base_t
            + self.kw_per_e * y_power
            + y_budget * self.kw_per_e * self.usd_per_kwh * self.hours
        )
        return price_n, price_t

    def column(self, b: int, n: IntArray) -> Column:
        """The :class:`Column` of replica vector *n* of block *b* (merit-order dispatch)."""
        block = self.blocks[b]
        e_load = load_watts(block, n)  # watts above idle per period
        gpu_use = n @ self.use[b] if self.gpus else np.zeros(0)
        return Column(
            block=b,
            n=n,
            cost=float(n @ self.obj_n[b] + self.base_t @ e_load),
            gpu_use=gpu_use,
            power_kw=float(n @ self.kw_n[b]) + self.kw_per_e * e_load,
            budget_usd=float(n @ self.budget_n[b] + self._load_usd(e_load)),
        )

    def _load_usd(self, e_load: FloatArray) -> float:
        """$ of the facility energy of *e_load* (watts above idle per period) over the horizon."""
        if self.flat:
            return float(self.kw_per_e * self.usd_per_kwh[0] * (self.hours @ e_load))
        return float(self.kw_per_e * ((self.usd_per_kwh * self.hours) @ e_load))


def all_columns(dec: Decomposition) -> list[Column] | None:
    """Every replica vector of every model within its bounds that covers its peak (after its
    failover losses) and minimum replicas, or None when there are more than
    :data:`EXHAUSTIVE_MAX_COLUMNS`."""
    # float products: hundreds of candidates per model give inf, not an error
    sizes = [math.prod(float(u) + 1.0 for u in block.ub) for block in dec.blocks]
    if sum(sizes) > EXHAUSTIVE_MAX_COLUMNS:
        return None
    out: list[Column] = []
    for b, block in enumerate(dec.blocks):
        for combo in itertools.product(*(range(int(u) + 1) for u in block.ub)):
            n = np.asarray(combo, dtype=np.int64)
            if covers(block, n) and int(n.sum()) >= block.demand.min_replicas:
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
