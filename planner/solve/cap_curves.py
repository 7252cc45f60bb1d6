"""Why a scenario under a power cap has no plan, proven on the power curves.

The elastic re-solves of :mod:`planner.solve.explain` price power on each candidate's
least-slope line, below its curve. Under a power cap they can then find a plan within every
limit on that line when none exists on the curves ("no limit can be named … add inventory or
loosen the power cap"), name the inventory, whose relaxation alone meets the cap on the line,
when no inventory is enough on the curves, or name the cap alone with a need the inventory,
shared between the entries, makes larger (fuzz round 26: "needs at least 2.9 kW" where every
plan draws 3.69 kW, and every plan within 16 L4, 4 L40S and 4 H100 3.74 kW; the least-power one
found 3.81 kW). With candidates that have power curves, one site with a power cap and no budget
(the budget's own message is priced on the curves), :func:`curve_cap_messages` replaces such an
explanation with what the least-peak bounds prove (each entry's replica vectors within its own
rules: minimum replicas, failover):

1. with the inventory unlimited (:mod:`planner.solve.peak`): above the cap, the cap binds
   whatever the inventory — the message of the same scenario with unlimited inventory — and the
   inventory is named as well when it binds on its own (no plan within it even without the cap:
   :func:`planner.solve.explain.inventory_alone`), or when, shared between the entries, it
   raises the least power (:func:`inventory_need`), or when that bound, refined past the proof,
   is above a cap-alone line's (fuzz round 27: 0.081 kW on the least-slope lines for a cap of
   1e-300 kW where every plan draws 0.0971 kW); otherwise a cap-alone line is kept;
2. else, when the inventory can bind, within it (:func:`least_peak_within`: the GPUs available
   a row shared by the entries, priced by its own duals): the cap and the inventory bind
   together (raise the cap, or add inventory). Only an explanation that named no limit or the
   cap alone is replaced by it.

Within the inventory the least-power plan found among the bound's columns (and their
neighbours, one replica away, while that lowers it) is a plan: its peak, rounded up, is a cap
that is enough, named beside the bound, which may be lower (whole replicas can need more than
the bound's fractional mix). An explanation that names the replica limit is kept. The bounds
share :data:`~planner.solve.colgen.CG_TIME_FRACTION` of the explanation's
:data:`~planner.solve.explain.EXPLAIN_BUDGET_S` (or of the time limit when shorter; about 4 s
each on the 500-entry example), the inventory's elastic re-solve the rest; the inventory's only
where it can bind. They run only once a scenario is proven infeasible. Their deadline is in CPU
seconds (``time.process_time``, and SCIP's CPU clock), as the elastic re-solves' are, so a busy
machine does not cut them short (fuzz round 30: under four busy loops a plan, and a sweep's
draw, lost "within the inventory … meets a cap of 7.6064 kW").
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, replace

import numpy as np

from planner.inputs import PlanningInputs
from planner.solve.colgen import CG_TIME_FRACTION, first_columns
from planner.solve.columns import Column, Decomposition, neighbours
from planner.solve.explain import (
    CAP_ALONE_LEAD,
    EXPLAIN_BUDGET_S,
    NO_LIMIT_LEAD,
    REPLICA_LIMIT_LEAD,
    inventory_alone,
    no_candidate_messages,
)
from planner.solve.peak import GAP_RTOL, least_peak, peak_message
from planner.solve.presolve import prune_dominated
from planner.solve.pricing import round_column

ROW_PENALTY = 1e3
"""Per GPU beyond the inventory, the master LP of :func:`least_peak_within` pays this many times
the cap (an elastic row, so its first columns need not fit the inventory)."""


def _least_peak_kw(inputs: PlanningInputs, dec: Decomposition, deadline: float) -> float:
    """The least-peak bound of *dec* (kW; -inf when none is proven above the cap)."""
    assert inputs.power_cap_kw is not None
    first = first_columns(dec)
    cap_kw = inputs.power_cap_kw
    found = None
    if first is not None:
        found = least_peak(dec, first, cap_kw, deadline, tight=True, clock=time.process_time)
    return -math.inf if found is None else found.bound_kw


def _decomposition(inputs: PlanningInputs) -> Decomposition:
    return Decomposition(inputs, prune_dominated(inputs, inputs.feasible_candidates()))


@dataclass(frozen=True)
class WithinInventory:
    """What :func:`least_peak_within` proves and finds."""

    bound_kw: float
    """A valid lower bound on the peak facility power of every plan within the inventory
    (kW; -inf when none is proven)."""
    plan_kw: float | None
    """The peak of the least-power plan found within the inventory (kW): a cap that is enough;
    None when none was found in time."""


class _Master:
    """``min σ`` s.t. ``Σ λ·P_t <= σ`` per period, ``Σ λ·gpus_g <= available_g`` per binding
    GPU type (elastic), one convex combination of columns per block (GLOP)."""

    def __init__(self, dec: Decomposition, stock: list[float], penalty: float) -> None:
        from ortools.linear_solver import pywraplp

        s = pywraplp.Solver.CreateSolver("GLOP")
        inf = s.infinity()
        self.solver, self.columns, self.seen = s, list[Column](), set[tuple[int, bytes]]()
        sigma = s.NumVar(-inf, inf, "peak_kw")
        s.Objective().SetCoefficient(sigma, 1.0)
        self.conv = [s.Constraint(1.0, 1.0) for _ in dec.blocks]
        self.rows = [s.Constraint(-inf, 0.0) for _ in range(dec.inputs.periods)]
        for row in self.rows:
            row.SetCoefficient(sigma, -1.0)
        self.gpu_rows = [s.Constraint(-inf, available) for available in stock]
        self.beyond = [s.NumVar(0.0, inf, "") for _ in stock]
        for row, beyond in zip(self.gpu_rows, self.beyond, strict=True):
            row.SetCoefficient(beyond, -1.0)
            s.Objective().SetCoefficient(beyond, penalty)
        s.Objective().SetMinimization()

    def add(self, col: Column) -> bool:
        key = (col.block, col.n.tobytes())
        if key in self.seen:
            return False
        self.seen.add(key)
        var = self.solver.NumVar(0.0, self.solver.infinity(), "")
        self.conv[col.block].SetCoefficient(var, 1.0)
        for row, kw in zip(self.rows, col.power_kw, strict=True):
            row.SetCoefficient(var, float(kw))
        for row, gpus in zip(self.gpu_rows, col.gpu_use, strict=True):
            row.SetCoefficient(var, float(gpus))
        self.columns.append(col)
        return True

    def duals(self) -> tuple[float, np.ndarray, np.ndarray, list[float]] | None:
        """(LP value, y per period, μ per GPU row, σ per block), y summing to 1; None."""
        from ortools.linear_solver import pywraplp

        if self.solver.Solve() != pywraplp.Solver.OPTIMAL:
            return None
        y = np.asarray([max(0.0, -r.dual_value()) for r in self.rows])
        mu = np.asarray([max(0.0, -r.dual_value()) for r in self.gpu_rows])
        sigma = [c.dual_value() for c in self.conv]
        scale = float(y.sum()) or 1.0
        return self.solver.Objective().Value(), y / scale, mu / scale, [v / scale for v in sigma]


def _bound(dec: Decomposition, master: _Master, stock: np.ndarray, deadline: float) -> float:
    """Column generation on *master* (fast and exact rounds as :func:`least_peak`); the best
    Lagrangian bound ``Σ_b ℓ_b(y, μ) − μ·available`` of its exact rounds (-inf: none)."""
    bound, exact = -math.inf, False
    while True:
        solved = master.duals()
        if solved is None:
            return bound
        lp_kw, y, mu, sigma = solved
        total, new, cut = 0.0, 0, False
        for b, block in enumerate(dec.blocks):
            if exact and time.process_time() > deadline:
                cut = True
                break
            price_n = dec.kw_n[b] * float(y.sum()) + (dec.use[b] @ mu if mu.size else 0.0)
            priced = round_column(block, price_n, dec.kw_per_e * y, sigma[b], exact)
            if priced is None:
                return bound
            n, value, floor = priced
            total += floor if exact else 0.0
            if n is not None and value < sigma[b] - 1e-9 * max(1.0, abs(sigma[b])):
                new += master.add(dec.column(b, n))
        if exact and not cut:
            bound = max(bound, total - float(mu @ stock))
        if time.process_time() > deadline:
            return bound
        if exact and (new == 0 or lp_kw - bound <= GAP_RTOL * max(1.0, abs(lp_kw))):
            return bound
        exact = not exact if exact else new == 0


def _least_plan(
    dec: Decomposition, columns: list[Column], stock: np.ndarray, deadline: float
) -> tuple[float, list[Column]] | None:
    """The least peak of a plan of one of *columns* per block within *stock* (SCIP), with its
    columns; None when none is found."""
    from ortools.linear_solver import pywraplp

    s = pywraplp.Solver.CreateSolver("SCIP")
    inf = s.infinity()
    peak = s.NumVar(0.0, inf, "peak_kw")
    one = [s.Constraint(1.0, 1.0) for _ in dec.blocks]
    rows = [s.Constraint(-inf, 0.0) for _ in range(dec.inputs.periods)]
    for row in rows:
        row.SetCoefficient(peak, -1.0)
    gpu_rows = [s.Constraint(-inf, float(available)) for available in stock]
    pick = []
    for col in columns:  # the rows' coefficients one by one: linear in the columns
        var = s.BoolVar("")
        one[col.block].SetCoefficient(var, 1.0)
        for row, kw in zip(rows, col.power_kw, strict=True):
            row.SetCoefficient(var, float(kw))
        for row, gpus in zip(gpu_rows, col.gpu_use, strict=True):
            row.SetCoefficient(var, float(gpus))
        pick.append(var)
    s.Objective().SetCoefficient(peak, 1.0)
    s.Objective().SetMinimization()
    s.SetTimeLimit(max(500, int(1000 * (deadline - time.process_time()))))
    s.SetNumThreads(dec.inputs.threads)
    s.SetSolverSpecificParametersAsString(  # SCIP's CPU clock, as the deadline's
        f"randomization/randomseedshift = {dec.inputs.seed}\ntiming/clocktype = 1\n"
    )
    params = pywraplp.MPSolverParameters()
    params.SetDoubleParam(params.RELATIVE_MIP_GAP, 1e-9)  # the least peak, not one near it
    if s.Solve(params) not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        return None
    chosen = [c for c, v in zip(columns, pick, strict=True) if v.solution_value() > 0.5]
    if len(chosen) != len(dec.blocks):
        return None
    return float(np.sum([c.power_kw for c in chosen], axis=0).max()), chosen


def _stock(inputs: PlanningInputs, dec: Decomposition) -> np.ndarray:
    return np.asarray([float(inputs.stock[g] or 0) for g in dec.gpus])


def least_peak_within(
    inputs: PlanningInputs, dec: Decomposition, deadline: float
) -> WithinInventory:
    """The least peak within the inventory (module docstring, step 2): the bound of column
    generation with the binding GPU types' rows priced, and the least-power plan found among its
    columns, improved by their neighbours (one replica away) while that lowers it."""
    assert inputs.power_cap_kw is not None
    first = first_columns(dec)
    if first is None:
        return WithinInventory(-math.inf, None)
    stock = _stock(inputs, dec)
    master = _Master(dec, list(stock), ROW_PENALTY * max(1.0, inputs.power_cap_kw))
    for col in first:
        master.add(col)
    bound = _bound(dec, master, stock, deadline)
    if master.duals() is None or any(v.solution_value() > 1e-6 for v in master.beyond):
        return WithinInventory(-math.inf, None)  # no mix of its columns fits the inventory
    columns, seen, best = list(master.columns), set(master.seen), None
    grow = list(columns)  # the columns whose neighbours join next
    while True:
        for col in grow:
            for n in neighbours(dec.blocks[col.block], col.n):
                key = (col.block, n.tobytes())
                if key in seen or time.process_time() > deadline:
                    continue
                seen.add(key)
                near = dec.column(col.block, n)
                if not (near.gpu_use > stock * (1 + 1e-9)).any():
                    columns.append(near)
        found = _least_plan(dec, columns, stock, deadline)
        if found is None or (best is not None and found[0] >= best[0] * (1 - 1e-9)):
            break
        best, grow = found, found[1]
        if time.process_time() > deadline:
            break
    return WithinInventory(bound, None if best is None else best[0])


def _enough(kw: float) -> str:
    """*kw* to 6 significant digits rounded up: a cap that is enough stays enough as printed."""
    digits = 5 - math.floor(math.log10(kw)) if kw > 0 else 6
    scale = 10.0**digits
    return f"{math.ceil(kw * scale * (1 - 1e-12)) / scale:,.6g}"


def _fix(within: WithinInventory, free_kw: float) -> str:
    """`` (raise power_cap_kw to …, or add inventory…)``: the sufficient cap of the plan found,
    else the bound with what it leaves out (*free_kw*: the bound with unlimited GPUs)."""
    free = f": with unlimited GPUs the bound is {free_kw:,.6g} kW" if math.isfinite(free_kw) else ""
    if within.plan_kw is not None:
        enough = _enough(within.plan_kw)
        return (
            f"; the least-power plan found within it meets a cap of {enough} kW (raise "
            f"power_cap_kw to {enough}, or add inventory{free})"
        )
    return (
        f" (raise power_cap_kw to at least {_enough(within.bound_kw)} — whole replicas may need "
        f"more — or add inventory{free})"
    )


def _joint_message(within: WithinInventory, free_kw: float, cap_kw: float) -> str | None:
    """Step 2 of the module docstring in words; None when it proves nothing above the cap."""
    if within.bound_kw > cap_kw * (1 + 1e-9):
        head = (
            f"power cap: within the inventory every plan draws at least {within.bound_kw:,.6g} "
            f"kW facility power in its busiest period (a valid lower bound: the least power of "
            f"each model on its curves with the GPUs available shared between the models, the "
            f"periods weighted by the column generation's duals), above the cap of {cap_kw:g} kW"
        )
    elif within.plan_kw is not None and within.plan_kw > cap_kw * (1 + 1e-9):
        head = (
            f"power cap: within the inventory no plan meets the cap of {cap_kw:g} kW on the "
            f"power curves"
        )
    else:
        return None
    return head + _fix(within, free_kw)


def inventory_need(
    inputs: PlanningInputs, floor_kw: float, deadline: float, dec: Decomposition | None = None
) -> str:
    """``; within the inventory every plan draws at least …``: what the inventory, shared
    between the entries, adds to a bound of *floor_kw* kW proven without it, with the cap that
    is enough within it (:func:`least_peak_within` on *dec*, by default the inputs' own
    decomposition); '' when it proves no more."""
    within = least_peak_within(inputs, dec or _decomposition(inputs), deadline)
    if within.bound_kw <= floor_kw * (1 + 1e-6):
        return ""
    return f"; within the inventory every plan draws at least {within.bound_kw:,.6g} kW" + _fix(
        within, -math.inf
    )


def _replica_rules(inputs: PlanningInputs) -> str:
    """``; the bound counts min_replicas (chat) and failover (code): lowering them may give a
    plan too`` where entries' own replica rules enter the bound (empty where none do)."""
    floors = [m.name for m in inputs.models if m.min_replicas > 0]
    spares = [m.name for m in inputs.models if m.failover is not None]
    rules = [
        f"{rule} ({', '.join(names)})"
        for rule, names in (("min_replicas", floors), ("failover", spares))
        if names
    ]
    if not rules:
        return ""
    return (
        f"; the bound counts {' and '.join(rules)}: lowering "
        f"{'it' if len(rules) == 1 else 'them'} may give a plan too"
    )


_CAP_ALONE_KW = re.compile(re.escape(CAP_ALONE_LEAD) + r" ([\d,.]+) kW")


def _elastic_kw(explained: list[str]) -> float:
    """The least power the cap-alone elastic line of *explained* names (-inf: none)."""
    found = [_CAP_ALONE_KW.match(line) for line in explained]
    return max((float(m.group(1).replace(",", "")) for m in found if m), default=-math.inf)


def curve_cap_messages(inputs: PlanningInputs, explained: list[str]) -> list[str] | None:
    """The explanation of infeasible *inputs* proven on the power curves (module docstring) in
    place of the elastic one, *explained*; None when it is kept."""
    cap_kw = inputs.power_cap_kw
    if (
        cap_kw is None
        or inputs.regions
        or inputs.budget_usd is not None
        or not any(c.power_curve_w_per_replica for c in inputs.feasible_candidates())
        or any(line.startswith(REPLICA_LIMIT_LEAD) for line in explained)
        or no_candidate_messages(inputs)
    ):
        return None
    cap_alone = bool(explained) and all(line.startswith(CAP_ALONE_LEAD) for line in explained)
    elastic_kw = _elastic_kw(explained) if cap_alone else -math.inf
    budget_s = min(EXPLAIN_BUDGET_S, inputs.time_limit_s)
    deadline = time.process_time() + CG_TIME_FRACTION * budget_s  # every bound together
    unlimited = replace(inputs, inventory=dict.fromkeys(inputs.inventory))
    free, within = _decomposition(unlimited), _decomposition(inputs)
    # the inventory matters only where it cuts an entry's replica bounds or can bind together
    binds = bool(within.gpus) or any(
        len(a.ub) != len(b.ub) or bool((a.ub != b.ub).any())
        for a, b in zip(within.blocks, free.blocks, strict=False)
    )
    binds = binds or len(within.blocks) != len(free.blocks)
    free_kw = _least_peak_kw(unlimited, free, deadline)
    if free_kw > cap_kw * (1 + 1e-9):  # the cap binds whatever the inventory
        alone = binds and not cap_alone  # the cap alone restores a plan: the inventory has one
        short = inventory_alone(inputs, (1 - CG_TIME_FRACTION) * budget_s) if alone else []
        floor_kw = max(free_kw, elastic_kw)
        more = "" if short or not binds else inventory_need(inputs, floor_kw, deadline, within)
        if cap_alone and not more and elastic_kw >= free_kw:
            return None  # the cap alone, with nothing the curves add: its elastic line
        lead = explained[0] if elastic_kw > free_kw else peak_message(free_kw, cap_kw)
        return [lead + more + _replica_rules(inputs), *short]
    named_none = bool(explained) and explained[0].startswith(NO_LIMIT_LEAD)
    if not binds or not (named_none or cap_alone):
        return None  # the bound within the inventory is the one above
    message = _joint_message(least_peak_within(inputs, within, deadline), free_kw, cap_kw)
    return None if message is None else [message + _replica_rules(inputs)]
