"""The monolithic fleet MILP: :class:`PlanningInputs` -> OR-Tools model -> :class:`RawSolution`.

Formulation (sets: models m, feasible candidates c = (m, GPU g, TP k), periods t with h_t hours)

* n[c] ∈ Z, 0 <= n[c] <= max(ceil(max_t L[m,t] / r[c]), min_replicas[m]) — replicas, fixed
  over the horizon (rented for all of it), r[c] the capacity or, on a curve with a convex end,
  the lower relief rate (:func:`~planner.solve.coefficients.replica_limit`: more replicas than
  that can never help);
* x[c,t] >= 0 — requests/s that candidate c serves in period t.

With failover, the rows of :mod:`planner.solve.failover` (capacity left after the worst k lost
replicas or nodes covers the peak) are added per model entry.

GPU power (W) in period t: Σ_c idle_w[c]·n[c] + e_j[c]·x[c,t]  (J/request × request/s = W).
For candidates with a power curve (the capacity model's), e_j is the curve's least slope above
idle, a linear under-estimate: this MILP is then a relaxation (its bound and its infeasibility
proofs are valid; its plans are re-priced on the curves, :mod:`planner.solve.optimize`),
so facility energy (kWh) = PUE · Σ_t h_t · power_t / 1000 and GPU rent ($) = Σ_c usd_h[c]·H·n[c]
with H = Σ_t h_t. The objective is ``Σ_t a_t · facility kWh_t + b · GPU rent $`` with a_t the
weight of a facility kWh in period t (:func:`~planner.solve.coefficients.kwh_weight_by_period`:
carbon on that period's grid intensity) and b the rent weight (see :mod:`planner.result` for the
accounting of each term).

Used by :mod:`planner.solve.optimize` for small linked instances, as the fallback of the
decomposition and (with elastic families) by :mod:`planner.solve.explain`. With regions,
:mod:`planner.solve.milp_regions` adds each entry's placement in one region and each region's
power cap (the explanation's rows: with regions the search solvers plan).

Solver: OR-Tools ``linear_solver`` with SCIP, one thread (more threads switch SCIP to its
non-deterministic concurrent mode) and a fixed random seed, so the same inputs give the same
plan. On the 50 × 30 × 24 benchmark (seed 0, after dominance pruning) SCIP proved 0.1 % in
6 s where HiGHS needed 15 s (CBC not tried); CP-SAT would need the continuous loads
scaled to integers. Exact presolve: dominated candidates get no variables
(:func:`planner.solve.presolve.prune_dominated`); a greedy single-GPU plan is passed as a hint.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from planner.inputs import MAX_REPLICAS_PER_CANDIDATE, Candidate, CandidateKey, PlanningInputs
from planner.result import PlanStatus
from planner.solve.coefficients import (
    cost_coefficients,
    facility_kw_coefficients,
    flat_grid,
    kwh_weight_by_period,
    objective_weights,
    over_horizon,
    replica_bound,
    replicas_needed,
)
from planner.solve.failover import add_failover
from planner.solve.milp_regions import add_placement, add_region_caps
from planner.solve.presolve import prune_dominated

SOLVER_ID = "SCIP"
SCIP_PARAMS = ""
"""Extra SCIP settings (none: the defaults measured best)."""
FAMILIES: tuple[str, ...] = ("inventory", "power_cap", "budget", "min_replicas", "failover")
"""Constraint families that may be relaxed (made elastic) to explain infeasibility."""


@dataclass
class MilpModel:
    """The built OR-Tools model and its variables (candidate order = ``candidates``)."""

    inputs: PlanningInputs
    solver: Any
    candidates: list[Candidate]
    n: list[Any] = field(default_factory=list)
    x: list[list[Any]] = field(default_factory=list)
    elastic: frozenset[str] = frozenset()
    slacks: dict[str, list[tuple[str, float, Any]]] = field(default_factory=dict)
    """family -> [(what, limit, slack variable)] for elastic families."""

    def slack(self, family: str, what: str, limit: float) -> Any | None:
        """A slack variable when *family* is elastic (None otherwise)."""
        if family not in self.elastic:
            return None
        var = self.solver.NumVar(0.0, self.solver.infinity(), f"slack_{family}[{what}]")
        self.slacks.setdefault(family, []).append((what, limit, var))
        return var


def add_variables(mm: MilpModel) -> None:
    """n[c] integer replicas and x[c,t] continuous req/s (bounds in the module docstring)."""
    s = mm.solver
    for c in mm.candidates:
        mm.n.append(s.IntVar(0.0, float(replica_bound(mm.inputs, c)), f"n[{c.label}]"))
        mm.x.append(
            [s.NumVar(0.0, s.infinity(), f"x[{c.label},{t}]") for t in range(mm.inputs.periods)]
        )


def add_load_served(mm: MilpModel) -> None:
    """load_served[m,t]:  Σ_{c of m} x[c,t] = L[m,t]  for every model and period."""
    for m in mm.inputs.models:
        idx = [i for i, c in enumerate(mm.candidates) if c.name == m.name]
        for t, load in enumerate(m.requests_per_s_by_period):
            ct = mm.solver.Constraint(load, load, f"load_served[{m.name},{t}]")
            for i in idx:
                ct.SetCoefficient(mm.x[i][t], 1.0)


def add_capacity(mm: MilpModel) -> None:
    """capacity[name,gpu,tp,t]:  x[c,t] <= cap[c] · n[c].

    Strengthened with the integer-rounding (MIR) row of the pair {x[c,t] <= cap·n[c],
    x[c,t] <= L[m,t]}: with q = floor(L/cap), r = L - q·cap,
    capacity_mir[name,gpu,tp,t]:  x[c,t] <= r · n[c] + (cap - r) · q,
    which is the convex hull for one period (q = 0 gives x[c,t] <= L·n[c]). It forces
    n >= q + 1 when one candidate serves the whole load, so the LP bound is tight.
    """
    inf = mm.solver.infinity()
    for i, c in enumerate(mm.candidates):
        cap = c.max_requests_per_s_per_replica
        loads = mm.inputs.model(c.name).requests_per_s_by_period
        for t in range(mm.inputs.periods):
            ct = mm.solver.Constraint(-inf, 0.0, f"capacity[{c.label},{t}]")
            ct.SetCoefficient(mm.x[i][t], 1.0)
            ct.SetCoefficient(mm.n[i], -cap)
            q = math.floor(loads[t] / cap)
            r = loads[t] - q * cap
            if r <= 1e-9 * cap:
                continue
            mir = mm.solver.Constraint(-inf, (cap - r) * q, f"capacity_mir[{c.label},{t}]")
            mir.SetCoefficient(mm.x[i][t], 1.0)
            mir.SetCoefficient(mm.n[i], -r)


def add_inventory(mm: MilpModel) -> None:
    """inventory[g]:  Σ_c gpus_on_g[c] · n[c] <= available[g]  (unlimited types skipped; a
    disaggregated unit counts the GPUs of both pools on their types)."""
    by_gpu: dict[str, list[tuple[int, int]]] = {}
    for i, c in enumerate(mm.candidates):
        for g, k in c.stock_use:
            by_gpu.setdefault(g, []).append((i, k))
    for gpu, available in sorted(mm.inputs.stock.items()):
        use = by_gpu.get(gpu, [])
        if available is None or not use:
            continue
        ct = mm.solver.Constraint(-mm.solver.infinity(), float(available), f"inventory[{gpu}]")
        for i, k in use:
            ct.SetCoefficient(mm.n[i], float(k))
        slack = mm.slack("inventory", gpu, float(available))
        if slack is not None:
            ct.SetCoefficient(slack, -1.0)


def add_power_cap(mm: MilpModel) -> None:
    """power_cap[t]:  PUE · Σ_c (idle_w[c]·n[c] + e_j[c]·x[c,t]) / 1000 <= cap_kw  per period."""
    cap_kw = mm.inputs.power_cap_kw
    if cap_kw is None:
        return
    slack = mm.slack("power_cap", "facility kW", cap_kw)
    for t in range(mm.inputs.periods):
        ct = mm.solver.Constraint(-mm.solver.infinity(), cap_kw, f"power_cap[{t}]")
        for i, c in enumerate(mm.candidates):
            kw_n, kw_x = facility_kw_coefficients(mm.inputs, c)
            ct.SetCoefficient(mm.n[i], kw_n)
            ct.SetCoefficient(mm.x[i][t], kw_x)
        if slack is not None:
            ct.SetCoefficient(slack, -1.0)


def add_budget(mm: MilpModel) -> None:
    """budget:  GPU rent + electricity (+ carbon price) over the horizon <= budget_usd."""
    budget = mm.inputs.budget_usd
    if budget is None:
        return
    ct = mm.solver.Constraint(-mm.solver.infinity(), budget, "budget")
    for i, c in enumerate(mm.candidates):
        per_n, per_x = cost_coefficients(mm.inputs, c)
        ct.SetCoefficient(mm.n[i], per_n)
        for t, coef in enumerate(per_x):
            ct.SetCoefficient(mm.x[i][t], coef)
    slack = mm.slack("budget", "usd", budget)
    if slack is not None:
        ct.SetCoefficient(slack, -1.0)


def add_min_replicas(mm: MilpModel) -> None:
    """min_replicas[m]:  Σ_{c of m} n[c] >= min_replicas[m]  (availability)."""
    for m in mm.inputs.models:
        if m.min_replicas <= 0:
            continue
        ct = mm.solver.Constraint(
            float(m.min_replicas), mm.solver.infinity(), f"min_replicas[{m.name}]"
        )
        for i, c in enumerate(mm.candidates):
            if c.name == m.name:
                ct.SetCoefficient(mm.n[i], 1.0)
        slack = mm.slack("min_replicas", m.name, float(m.min_replicas))
        if slack is not None:
            ct.SetCoefficient(slack, 1.0)


def add_objective(mm: MilpModel) -> None:
    """minimise Σ_t a_t · facility kWh_t + b · GPU rent $  (a_t per period, module docstring).

    With elastic families (infeasibility diagnosis) minimise instead Σ slack / max(1, limit):
    the smallest relative relaxation that makes the problem feasible.
    """
    obj = mm.solver.Objective()
    obj.SetMinimization()
    if mm.elastic:
        for entries in mm.slacks.values():
            for _, limit, var in entries:
                obj.SetCoefficient(var, 1.0 / max(1.0, limit))
        return
    per_kwh = kwh_weight_by_period(mm.inputs)
    per_rent = objective_weights(mm.inputs).per_rent_usd
    hours = mm.inputs.hours
    for i, c in enumerate(mm.candidates):
        kw_n, kw_x = facility_kw_coefficients(mm.inputs, c)
        obj.SetCoefficient(
            mm.n[i],
            over_horizon(mm.inputs, per_kwh, kw_n) + per_rent * c.usd_per_hour_per_replica * hours,
        )
        for t, h in enumerate(mm.inputs.period_hours):
            obj.SetCoefficient(mm.x[i][t], per_kwh[t] * kw_x * h)


def add_greedy_hint(mm: MilpModel) -> None:
    """Give the solver a starting plan: per model (largest peak load first) the single
    candidate that serves all its load at the lowest objective within the GPUs left.

    Only a hint (it may break the power cap or budget); it lets the solver prune early.
    """
    if mm.elastic:
        return
    per_kwh = kwh_weight_by_period(mm.inputs)
    per_rent = objective_weights(mm.inputs).per_rent_usd
    flat = flat_grid(mm.inputs)
    hours, left = mm.inputs.hours, dict(mm.inputs.stock)
    hint = [0] * len(mm.candidates)
    order = sorted(mm.inputs.models, key=lambda m: -max(m.requests_per_s_by_period))
    for m in order:
        loads = m.requests_per_s_by_period
        best: tuple[float, int, int] | None = None
        for i, c in enumerate(mm.candidates):
            if c.name != m.name:
                continue
            n = replicas_needed(mm.inputs, c)  # the fewest: a hint is one feasible plan
            if n > MAX_REPLICAS_PER_CANDIDATE or any(
                (left.get(g) is not None and n * k > (left[g] or 0)) for g, k in c.stock_use
            ):
                continue
            kw_n, kw_x = facility_kw_coefficients(mm.inputs, c)
            if flat:
                kwh = kw_n * n * hours + kw_x * sum(
                    h * x for h, x in zip(mm.inputs.period_hours, loads, strict=True)
                )
                energy = per_kwh[0] * kwh
            else:
                energy = sum(
                    w * (kw_n * n + kw_x * x) * h
                    for w, h, x in zip(per_kwh, mm.inputs.period_hours, loads, strict=True)
                )
            value = energy + per_rent * n * c.usd_per_hour_per_replica * hours
            if best is None or value < best[0]:
                best = (value, i, n)
        if best is None:
            continue
        _, i, n = best
        hint[i] = n
        for gpu, k in mm.candidates[i].stock_use:
            free = left.get(gpu)
            if free is not None:
                left[gpu] = free - n * k
    _hint_plan(
        mm,
        hint,
        [mm.inputs.model(c.name).requests_per_s_by_period for c in mm.candidates],
    )


def build_model(inputs: PlanningInputs, elastic: frozenset[str] = frozenset()) -> MilpModel:
    """The MILP of the module docstring, one function per constraint family.

    Candidates the capacity model excluded (memory, SLA, scenario exclusions) get no variables.
    """
    from ortools.linear_solver import pywraplp

    solver = pywraplp.Solver.CreateSolver(SOLVER_ID)
    if solver is None:  # pragma: no cover - OR-Tools wheels ship SCIP
        raise RuntimeError(f"OR-Tools has no {SOLVER_ID} solver")
    mm = MilpModel(
        inputs, solver, prune_dominated(inputs, inputs.feasible_candidates()), elastic=elastic
    )
    add_variables(mm)
    add_load_served(mm)
    add_capacity(mm)
    add_inventory(mm)
    add_power_cap(mm)
    add_budget(mm)
    add_min_replicas(mm)
    add_failover(mm)
    add_placement(mm)  # regions: each entry in one region, each region's power cap
    add_region_caps(mm)
    add_objective(mm)
    add_greedy_hint(mm)
    return mm


@dataclass(frozen=True)
class RawSolution:
    """Solver outcome before accounting."""

    status: PlanStatus
    seconds: float
    objective: float | None
    bound: float | None
    replicas: list[int]
    loads: list[tuple[float, ...]]


def run_solver(mm: MilpModel, *, cpu_clock: bool = False) -> RawSolution:
    """Solve with the inputs' time limit, threads, seed and relative gap (never asserts).

    *cpu_clock*: the time limit counts the solver's CPU seconds, not wall seconds, so other
    processes on the machine cannot change where it stops (the explanation re-solves of
    :mod:`planner.solve.explain`, whose messages a sweep records: a busy machine once turned
    "needs 73 GPUs" into "needs at most …" between two runs of the same sweep)."""
    from ortools.linear_solver import pywraplp

    inputs, s = mm.inputs, mm.solver
    s.SetTimeLimit(max(1, int(inputs.time_limit_s * 1000)))
    s.SetNumThreads(inputs.threads)
    if SOLVER_ID == "SCIP":
        clock = "timing/clocktype = 1\n" if cpu_clock else ""  # SCIP: 1 CPU, 2 wall
        s.SetSolverSpecificParametersAsString(
            f"randomization/randomseedshift = {inputs.seed}\n" + clock + SCIP_PARAMS
        )
    params = pywraplp.MPSolverParameters()
    params.SetDoubleParam(params.RELATIVE_MIP_GAP, inputs.relative_gap)
    start = time.perf_counter()
    code = s.Solve(params)
    seconds = time.perf_counter() - start
    status = {
        pywraplp.Solver.OPTIMAL: PlanStatus.OPTIMAL,
        pywraplp.Solver.FEASIBLE: PlanStatus.FEASIBLE,
        pywraplp.Solver.INFEASIBLE: PlanStatus.INFEASIBLE,
    }.get(code, PlanStatus.ERROR)
    if status not in (PlanStatus.OPTIMAL, PlanStatus.FEASIBLE):
        return RawSolution(status, seconds, None, None, [], [])
    replicas = [max(0, round(v.solution_value())) for v in mm.n]
    loads = [
        tuple(min(max(0.0, v.solution_value()), n * c.max_requests_per_s_per_replica) for v in xs)
        for xs, n, c in zip(mm.x, replicas, mm.candidates, strict=True)
    ]
    objective = s.Objective().Value()
    bound = s.Objective().BestBound()
    return RawSolution(status, seconds, objective, bound, replicas, loads)


def set_hint(
    mm: MilpModel,
    replicas: dict[CandidateKey, int],
    loads: dict[CandidateKey, tuple[float, ...]],
) -> None:
    """Replace the greedy hint by a known plan (replicas and loads by candidate key)."""
    _hint_plan(
        mm,
        [replicas.get(c.key, 0) for c in mm.candidates],
        [loads.get(c.key, (0.0,) * mm.inputs.periods) for c in mm.candidates],
    )


def _hint_plan(mm: MilpModel, replicas: list[int], loads: list[Sequence[float]]) -> None:
    """Hint the solver a plan: *replicas* per candidate and each one's load per period (no
    load where it has no replica)."""
    variables, values = [], []
    for i, n in enumerate(replicas):
        variables.append(mm.n[i])
        values.append(float(n))
        for t, x in enumerate(loads[i]):
            variables.append(mm.x[i][t])
            values.append(x if n > 0 else 0.0)
    mm.solver.SetHint(variables, values)
