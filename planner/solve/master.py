"""The master problems of column generation over the generated columns.

:class:`Master` is the restricted master LP (GLOP): a convex combination of known columns per
model under the linking rows, made elastic with a penalty so it is always feasible; its duals
price the linking rows. :func:`master_milp` is the same master with a binary choice of one
column per model (SCIP): the plan of :mod:`planner.solve.colgen`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.result import over_limit
from planner.solve.columns import Column, Decomposition
from planner.solve.decompose import FloatArray

LP_GAP_FRACTION = 0.25
"""Column generation stops when master LP and bound are this fraction of the target apart."""
MIN_SCIP_S = 1.0
"""Seconds a master MILP that must find the plan gets even when the time limit is (nearly) up."""
BUDGET_RESOLVES = 3
"""Re-solves of the master MILP with its budget row lowered by the overspend, when SCIP's
feasibility tolerance (about 1e-6 of the row) let through columns above the budget beyond
:data:`~planner.result.LIMIT_RTOL`; past them no plan is returned."""


@dataclass(frozen=True)
class LinkingRows:
    """The rows of a master problem: one convexity row per model, the linking rows (capped GPU
    types, power cap per period, budget) and the objective."""

    conv: list[Any]
    gpu: list[Any]
    power: list[Any]
    budget: list[Any]
    objective: Any
    group: list[int]
    """Per block, its convexity row (its model entry)."""

    @classmethod
    def build(cls, s: Any, dec: Decomposition, *, named: bool) -> LinkingRows:
        """The rows of *dec* in solver *s* (a minimisation), with readable names if *named*."""
        inputs = dec.inputs
        inf = s.infinity()

        def name(text: str) -> str:
            return text if named else ""

        conv = [s.Constraint(1.0, 1.0, name(f"conv[{b}]")) for b in range(dec.groups)]
        gpu = [
            s.Constraint(-inf, float(inputs.stock[g] or 0), name(f"inventory[{g}]"))
            for g in dec.gpus
        ]
        power = [
            s.Constraint(
                -inf,
                site.power_cap_kw,
                name(f"power_cap[{site.name},{t}]" if site.name else f"power_cap[{t}]"),
            )
            for site in dec.capped
            for t in range(inputs.periods)
        ]
        budget_usd = inputs.budget_usd
        budget = [s.Constraint(-inf, budget_usd, name("budget"))] if budget_usd is not None else []
        objective = s.Objective()
        objective.SetMinimization()
        return cls(conv, gpu, power, budget, objective, dec.group)

    def put(self, var: Any, col: Column) -> None:
        """Give variable *var* the coefficients of column *col* in every row."""
        self.conv[self.group[col.block]].SetCoefficient(var, 1.0)
        for ct, use in zip(self.gpu, col.gpu_use, strict=True):
            if use:
                ct.SetCoefficient(var, float(use))
        for ct, kw in zip(self.power, col.power_kw, strict=False):
            ct.SetCoefficient(var, float(kw))
        for ct in self.budget:
            ct.SetCoefficient(var, col.budget_usd)
        self.objective.SetCoefficient(var, col.cost)


class Master:
    """Restricted master LP (GLOP) over the generated columns."""

    def __init__(self, dec: Decomposition, penalty: float) -> None:
        from ortools.linear_solver import pywraplp

        self.dec = dec
        s = pywraplp.Solver.CreateSolver("GLOP")
        self.solver = s
        self.rows = LinkingRows.build(s, dec, named=True)
        inf = s.infinity()
        for rows in (self.rows.gpu, self.rows.power, self.rows.budget):
            for ct in rows:
                slack = s.NumVar(0.0, inf, f"slack[{ct.name()}]")
                ct.SetCoefficient(slack, -1.0)
                self.rows.objective.SetCoefficient(slack, penalty / max(1.0, ct.ub()))
        self.columns: list[Column] = []
        self.vars: list[Any] = []
        self.stock = np.asarray([float(dec.inputs.stock[g] or 0) for g in dec.gpus])
        self.fits: set[int] = set()
        """The model entries with a column that holds no more GPUs than any inventory."""
        self.over: dict[int, list[Any]] = {}
        """Per model entry, the weights of its columns that alone overdraw an inventory."""

    def add(self, col: Column) -> None:
        """Add a column (a convex-combination weight of one model's replica vector). A column
        that alone holds more GPUs than an inventory is in no plan: once its model entry has
        another column its weight is held at 0, so that mixing it in cannot lower the LP (and
        so price the inventory) below what the plans reach; until then it keeps the LP
        feasible."""
        var = self.solver.NumVar(0.0, self.solver.infinity(), f"lambda[{len(self.columns)}]")
        self.rows.put(var, col)
        self.columns.append(col)
        self.vars.append(var)
        group = self.dec.group[col.block]
        if self.stock.size and (col.gpu_use > self.stock + 1e-9).any():
            if group in self.fits:
                var.SetUb(0.0)
            else:
                self.over.setdefault(group, []).append(var)
        elif group not in self.fits:
            self.fits.add(group)
            for held in self.over.pop(group, []):
                held.SetUb(0.0)

    def solve(self) -> tuple[float, list[float], FloatArray, FloatArray, float] | None:
        """(objective, σ per model entry, y per GPU row, y per power row (per period, per capped
        site and period with regions), y budget), None on failure."""
        from ortools.linear_solver import pywraplp

        if self.solver.Solve() != pywraplp.Solver.OPTIMAL:
            return None

        def y(rows: list[Any]) -> FloatArray:
            return np.asarray([max(0.0, -ct.dual_value()) for ct in rows], dtype=np.float64)

        rows = self.rows
        return (
            rows.objective.Value(),
            [ct.dual_value() for ct in rows.conv],
            y(rows.gpu),
            y(rows.power) if rows.power else np.zeros(self.dec.inputs.periods),
            float(y(rows.budget).sum()),
        )


def master_milp(
    master: Master,
    weights: list[float],
    deadline: float,
    gap: float | None = None,
    *,
    improving: bool = False,
) -> tuple[list[Column], float] | None:
    """One column per model entry under the linking rows (SCIP) and SCIP's bound on the master MILP;
    ([], inf) when SCIP proves it infeasible, None when it finds no plan in time.

    SCIP gets at least :data:`MIN_SCIP_S` past *deadline* when the call must find the plan; an
    *improving* call (a plan is already known) gets no time past it and is skipped then."""
    from ortools.linear_solver import pywraplp

    left_s = deadline - time.perf_counter()
    if improving and left_s <= 0.0:
        return None
    dec, inputs = master.dec, master.dec.inputs
    s = pywraplp.Solver.CreateSolver("SCIP")
    pick = [s.BoolVar(f"pick[{i}]") for i in range(len(master.columns))]
    rows = LinkingRows.build(s, dec, named=False)
    best_weight: dict[int, tuple[float, int]] = {}
    for i, (col, var) in enumerate(zip(master.columns, pick, strict=True)):
        rows.put(var, col)
        weight = weights[i] if i < len(weights) else 0.0
        group = dec.group[col.block]
        if group not in best_weight or weight > best_weight[group][0]:
            best_weight[group] = (weight, i)
    hint = {i for _, i in best_weight.values()}
    s.SetHint(pick, [1.0 if i in hint else 0.0 for i in range(len(pick))])
    floor_ms = 1 if improving else int(1000 * MIN_SCIP_S)
    s.SetTimeLimit(max(floor_ms, int(1000 * (deadline - time.perf_counter()))))
    s.SetNumThreads(inputs.threads)
    s.SetSolverSpecificParametersAsString(f"randomization/randomseedshift = {inputs.seed}\n")
    params = pywraplp.MPSolverParameters()
    params.SetDoubleParam(
        params.RELATIVE_MIP_GAP, LP_GAP_FRACTION * inputs.relative_gap if gap is None else gap
    )
    for _ in range(BUDGET_RESOLVES + 1):
        code = s.Solve(params)
        if code == pywraplp.Solver.INFEASIBLE:
            return [], math.inf
        if code not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
            return None
        chosen = [
            col for col, var in zip(master.columns, pick, strict=True) if var.solution_value() > 0.5
        ]
        if len(chosen) != dec.groups:
            return None
        over = over_budget(chosen, inputs.budget_usd)
        if not over:
            return sorted(chosen, key=lambda col: col.block), s.Objective().BestBound()
        rows.budget[0].SetUb(rows.budget[0].ub() - over)  # past SCIP's feasibility tolerance
    return None


def over_budget(chosen: list[Column], budget: float | None) -> float:
    """How far the columns *chosen* spend above *budget* (:func:`planner.result.over_limit`)."""
    return 0.0 if budget is None else over_limit(math.fsum(c.budget_usd for c in chosen), budget)
