"""Solve the fleet problem by model: exact decomposition or column generation with a bound.

Every model entry's part of a plan is a replica vector; its load split follows (merit order,
:mod:`planner.solve.decompose`). Models interact only through the *linking rows*: GPU types whose
inventory can bind (those where every model at its replica bound together would exceed the
count), the facility power cap per period and the budget.

* No linking row: each model's exact optimum (:func:`planner.solve.pricing.best_replicas`) is
  the plan's part for that model; the plan is optimal with gap 0.
* A power cap as the only linking row: first the least-peak column generation of
  :mod:`planner.solve.peak` (a proof of infeasibility when every plan's peak exceeds the cap,
  else power-frugal columns for what follows).
* Linking rows: Dantzig-Wolfe column generation. The restricted master LP (GLOP) chooses a
  convex combination of known replica vectors per model under the linking rows (made
  elastic with a large penalty so it is always feasible); its duals y >= 0 price the linking
  rows into each model's subproblem, whose exact optimum is a new column. For any y >= 0 the
  Lagrangian value Σ_m min_n (cost_m(n) + y·a_m(n)) - y·b is a valid lower bound on the
  optimum (weak duality; the subproblems are solved exactly), so the reported gap is honest.
  The plan is then the restricted master solved as a MILP (SCIP, binary choice of one column
  per model) within a third of the remaining time (:data:`MASTER_TIME_SHARE`; all of it when
  it finds no plan there). When that plan is not within the target gap, the
  master MILP is solved again with every neighbour of the plan's columns added (one replica
  more, one less, or one moved to another candidate; only the counts that screening at the
  bound's duals keeps within the gap, the others cannot improve the plan) and the plan as the
  hint: on the
  power-cap 50 × 30 × 24 seed 1 benchmark this took the plan from 0.15 % above the optimum
  to 0.009 % (optimum from a 57 s full-MILP run). Before it, the pricing searches cut short
  at the bound's duals run again deeper (:mod:`planner.solve.deepen`). That MILP gets half of
  the time left; the other half is for :func:`~planner.solve.enumeration.close_gap`, which
  adds every column of every plan up to the plan's objective and so raises the bound. Every
  step ends a margin before the limit (:data:`ACCOUNTING_SHARE`) so that the checked plan is
  out within it.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from planner.inputs import Candidate, PlanningInputs
from planner.result import PlanStatus
from planner.solve.columns import EXHAUSTIVE_MAX_COLUMNS as EXHAUSTIVE_MAX_COLUMNS
from planner.solve.columns import Column, Decomposition, all_columns, neighbours
from planner.solve.decompose import (
    FloatArray,
    IntArray,
    merit_replicas,
    search_block,
)
from planner.solve.decomposed import DecomposedSolution, decomposed, no_plan, settled
from planner.solve.deepen import deepened
from planner.solve.enumeration import MAX_ENUMERATED, Pool, Priced, close_gap, rc_ceiling
from planner.solve.fallback import exhaustive, when_none_combine
from planner.solve.master import LP_GAP_FRACTION, Master, master_milp
from planner.solve.peak import least_peak, peak_message
from planner.solve.pricing import first_vector, round_column
from planner.solve.search import screen

PENALTY_FACTOR = 10.0
"""Elastic linking rows cost this many times the first plan's objective per unit."""
NEIGHBOURHOOD = True
"""Re-solve the master MILP with the plan's neighbouring columns when a gap is left."""
CG_TIME_FRACTION = 0.6
"""Share of the time limit column generation may use (the rest is for the master MILP)."""
ACCOUNTING_SHARE = 0.02
ACCOUNTING_MAX_S = 1.0
"""The solver's steps end this share of the time limit (at most this many seconds) before it,
so that accounting the plan (re-pricing it on the curves, its checks) ends within the limit."""
RELAXED_NO_PLAN = (
    "no plan: even mixing the entries' replica vectors fractionally, no combination keeps the "
    "inventory, the power cap and the budget together (column generation with exact pricing "
    "and elastic limits: a valid proof) — loosen one of them"
)
"""The message of :func:`relaxation_infeasible`'s proof when no limit can be named."""
PROOF_PENALTY = 1e6
"""Elastic linking rows of :func:`relaxation_infeasible` cost this many times the largest
objective of any plan per unit (relative to the row's bound)."""
MASTER_TIME_SHARE = 1 / 3
"""Share of the time left that the first master MILP may use: over the generated columns it
can at best find their optimum, never close a gap the columns lack, so the rest is kept for the
neighbourhood step (half of it; its MILP starts from that plan) and for :func:`close_gap`,
which raises the bound (the other half). A first MILP that finds no plan in its share gets all
the time left."""
DEEPEN_SHARE = 0.25
"""Share of the time left that the deeper searches of :mod:`planner.solve.deepen` may use."""
FRUGAL_MULTIPLIERS: tuple[float, ...] = (0.3, 1.0, 3.0, 10.0, 100.0)
"""With a power cap, columns priced with power weighted by these multiples of its energy price."""


def solve_by_model(
    inputs: PlanningInputs,
    candidates: list[Candidate],
    *,
    dec: Decomposition | None = None,
    spent_s: float = 0.0,
    widen: bool = False,
) -> DecomposedSolution | None:
    """Exact decomposition, or column generation + master MILP when models are linked.

    Returns None when this method finds no plan (the caller falls back to the full MILP,
    which also proves and explains infeasibility). *dec*: the decomposition of these
    candidates when the caller has built it already; *spent_s*: seconds of the time limit the
    caller has used before; *widen*: when nothing else finds a plan, enumerate ever further
    above the bound (:mod:`planner.solve.fallback`, step 3; the caller tries its cheap proofs
    first).
    """
    start = time.perf_counter() - spent_s
    dec = Decomposition(inputs, candidates) if dec is None else dec
    if not dec.linked:
        return decomposed(dec, start)
    first = first_columns(dec)
    if first is None:
        return None
    return _column_generation(dec, first, start, widen)


def first_columns(dec: Decomposition) -> list[Column] | None:
    """Per block its cheapest vector without the linking rows (column generation prices the
    rest); None when a model entry has none."""
    inputs = dec.inputs
    zero_gpu, zero_t = np.zeros(len(dec.gpus)), np.zeros(max(dec.power_rows, inputs.periods))
    first: list[Column] = []
    for b, block in enumerate(dec.blocks):
        vector = first_vector(block, *dec.prices(b, zero_gpu, zero_t, 0.0))
        if vector is not None:
            first.append(dec.column(b, vector))
    if len({dec.group[col.block] for col in first}) < dec.groups:
        return None
    return first


def relaxation_infeasible(dec: Decomposition, spent_s: float) -> bool:
    """Whether column generation proves that no plan exists: with the linking rows elastic at a
    penalty :data:`PROOF_PENALTY` times the largest objective any plan can have (``top``, each
    block's :func:`~planner.solve.enumeration.rc_ceiling` at zero duals), its Lagrangian bound,
    a lower bound of the objective of every plan within the rows for any duals, exceeds
    ``top``. It does when even mixed fractionally the replica vectors cannot keep the rows."""
    inputs = dec.inputs
    start = time.perf_counter() - spent_s
    first = first_columns(dec)
    if first is None:
        return False
    zero_gpu, zero_t = np.zeros(len(dec.gpus)), np.zeros(max(dec.power_rows, inputs.periods))
    ceilings = [
        rc_ceiling(dec, b, *dec.prices(b, zero_gpu, zero_t, 0.0)) for b in range(len(dec.blocks))
    ]
    top = sum(
        max(c for c, g in zip(ceilings, dec.group, strict=True) if g == group)
        for group in range(dec.groups)
    )
    if not math.isfinite(top):
        return False
    pool = Pool(Master(dec, PROOF_PENALTY * max(1.0, top)))
    _seed(dec, pool, first)
    deadline = start + inputs.time_limit_s
    priced = _price(dec, pool, deadline, deadline)
    return priced is not None and priced.bound > top * (1 + 1e-6) + 1e-6


def _bound_rhs(dec: Decomposition, y_gpu: FloatArray, y_power: FloatArray, y_b: float) -> float:
    inputs = dec.inputs
    rhs = sum(float(inputs.stock[g] or 0) * y for g, y in zip(dec.gpus, y_gpu, strict=True))
    if not dec.regional and inputs.power_cap_kw is not None:
        rhs += inputs.power_cap_kw * float(y_power.sum())
    elif dec.regional:
        periods = inputs.periods
        for i, site in enumerate(dec.capped):
            assert site.power_cap_kw is not None
            rhs += site.power_cap_kw * float(y_power[i * periods : (i + 1) * periods].sum())
    if inputs.budget_usd is not None:
        rhs += inputs.budget_usd * y_b
    return rhs


def _seed(dec: Decomposition, pool: Pool, first: list[Column]) -> None:
    """The start columns, plus per model one that avoids the GPU types in short supply."""
    for col in first:
        pool.add(col)
    if not dec.gpus:
        return
    for b, block in enumerate(dec.blocks):
        restricted = dataclasses.replace(block, ub=np.where(dec.use[b].any(axis=1), 0, block.ub))
        zero_gpu, zero_t = np.zeros(len(dec.gpus)), np.zeros(dec.inputs.periods)
        best = merit_replicas(restricted, *dec.prices(b, zero_gpu, zero_t, 0.0))
        if best is not None:
            pool.add(dec.column(b, best[1]))


def _price(dec: Decomposition, pool: Pool, cg_deadline: float, deadline: float) -> Priced | None:
    """Column generation until no column prices out, the LP gap closes or time runs out.

    Rounds alternate: fast rounds price each model with the merit-order DP over the counts that
    can price out (:func:`~planner.solve.pricing.fast_vector`; its vector's reduced cost taken
    with exact routing; it may miss columns, so it gives no bound); when a fast round
    adds nothing (or time is up), an exact round prices every model by the exact search, whose
    lower bounds give the Lagrangian bound. The loop stops after an exact round that adds
    nothing, closes the LP gap or ends past *cg_deadline*; an exact search routes no vector
    past *deadline* (the time limit), its bound still valid.
    """
    inputs = dec.inputs
    bound = -math.inf
    at_bound: tuple[FloatArray, FloatArray, float, tuple[float, ...]] | None = None
    exact = False
    while True:
        solved = pool.master.solve()
        if solved is None:
            return None
        lp_value, sigma, y_gpu, y_power, y_b = solved
        weights = [var.solution_value() for var in pool.master.vars]
        lagrangian = -_bound_rhs(dec, y_gpu, y_power, y_b)
        new = 0
        floors = []
        cut = False
        for b, block in enumerate(dec.blocks):
            if exact and at_bound is not None and time.perf_counter() > cg_deadline:
                cut = True  # an exact round cut short gives no bound; keep the last one
                break
            price_n, price_t = dec.prices(b, y_gpu, y_power, y_b)
            conv = sigma[dec.group[b]]
            priced = round_column(block, price_n, price_t, conv, exact, deadline)
            if priced is None:
                if not dec.regional:
                    return None
                priced = (None, math.inf, math.inf)  # this site has no covering vector
            n, cost, floor = priced
            if exact:
                floors.append(floor)
            if n is not None and cost < conv - 1e-9 * max(1.0, abs(conv)):
                before = len(pool.master.columns)
                pool.add(dec.column(b, n))
                new += len(pool.master.columns) - before
        if exact and not cut:  # a valid lower bound of each entry's pricing problem
            for g in range(dec.groups):
                lagrangian += min(f for f, h in zip(floors, dec.group, strict=True) if h == g)
        late = time.perf_counter() > cg_deadline
        if not exact:
            exact = new == 0 or late
            continue
        if not cut and lagrangian > bound:
            bound = lagrangian
            at_bound = (y_gpu, y_power, y_b, tuple(floors))
        close = lp_value - bound <= LP_GAP_FRACTION * inputs.relative_gap * max(1.0, abs(bound))
        if new == 0 or close or late:
            if at_bound is None:
                return Priced(bound, weights, y_gpu, y_b)
            return Priced(
                bound, weights, y_gpu, y_b, at_bound[1], at_bound[3], at_bound[0], at_bound[2]
            )
        exact = False


def _add_frugal(dec: Decomposition, pool: Pool, priced: Priced, deadline: float) -> None:
    """Power-frugal columns (the DP with power priced M times the energy price): they give the
    master MILP combinations under the cap that the LP duals alone may not generate. None
    after *deadline* (the master then combines the columns it has)."""
    for mult in FRUGAL_MULTIPLIERS:
        y_frugal = mult * dec.base_t / dec.kw_per_e
        for b in range(len(dec.blocks)):
            if time.perf_counter() >= deadline:
                return
            if dec.regional:  # the block's own site's energy price on its rows
                sl = dec.power_slice[b]
                if sl is None:
                    continue  # no cap in its region: its frugal column is its cheapest
                y_frugal = np.zeros(dec.power_rows)
                y_frugal[sl] = mult * dec.base_t_of[b] / dec.kw_per_e_of[b]
            best = merit_replicas(dec.blocks[b], *dec.prices(b, priced.y_gpu, y_frugal, priced.y_b))
            if best is not None:
                pool.add(dec.column(b, best[1]))


def _could_improve(dec: Decomposition, priced: Priced, b: int, gap: float) -> IntArray | None:
    """Replica bounds of the columns of block *b* that can be in a plan less than *gap* above
    the Lagrangian bound: at the bound's duals such a column's reduced cost is within *gap* of
    the block's floor (:mod:`planner.solve.enumeration`), so screening at that threshold keeps
    all of them. None when the bound's duals are not known."""
    if priced.y_power is None or priced.duals_gpu is None or not priced.floors:
        return None
    price_n, price_t = dec.prices(b, priced.duals_gpu, priced.y_power, priced.duals_b)
    floor = dec.group_floor(priced.floors, b)
    return screen(search_block(dec.blocks[b]), price_n, price_t, floor + gap)


def _solve_restricted(
    dec: Decomposition,
    pool: Pool,
    priced: Priced,
    first: list[Column],
    start: float,
    deadline: float,
    widen: bool = False,
) -> DecomposedSolution | None:
    """Price-and-branch: the master MILP over the generated columns, then over their
    neighbours (one replica more, less or moved) when a gap to the bound is left."""
    inputs = dec.inputs
    bound = priced.bound
    found = master_milp(pool.master, priced.weights, _share(deadline, MASTER_TIME_SHARE))
    if found is None and time.perf_counter() < deadline:  # no plan in its share: all the time
        found = master_milp(pool.master, priced.weights, deadline)
    if found is None or not found[0]:
        fallback = when_none_combine(dec, pool, priced, first, start, deadline, widen)
        if fallback is None or isinstance(fallback, DecomposedSolution):
            return fallback
        found = (fallback[0], -math.inf)
        bound = fallback[1]
    chosen = found[0]
    gap_left = sum(col.cost for col in chosen) - bound
    if gap_left > inputs.relative_gap * max(1.0, abs(bound)):  # cut searches, run deeper
        deeper = deepened(dec, pool, priced, _share(deadline, DEEPEN_SHARE))
        if deeper.bound > priced.bound:  # they proved more: a valid bound above the old one
            bound = max(bound, deeper.bound)
            gap_left = sum(col.cost for col in chosen) - bound
        priced = deeper
    if NEIGHBOURHOOD and gap_left > inputs.relative_gap * max(1.0, abs(bound)):
        chosen_keys = {(col.block, col.n.tobytes()) for col in chosen}
        for col in chosen:
            within = _could_improve(dec, priced, col.block, gap_left)
            for n in neighbours(dec.blocks[col.block], col.n):
                if time.perf_counter() >= deadline:
                    break  # each column routes its load exactly: up to ~0.2 s on long curves
                if within is None or (n <= within).all():
                    pool.add(dec.column(col.block, n))
        hint = [
            1.0 if (c.block, c.n.tobytes()) in chosen_keys else 0.0 for c in pool.master.columns
        ]
        better = master_milp(pool.master, hint, _share(deadline, 0.5), improving=True)
        if better is not None and better[0]:
            if sum(c.cost for c in better[0]) < sum(c.cost for c in chosen):
                chosen = better[0]
    objective = float(sum(col.cost for col in chosen))
    if objective - bound > inputs.relative_gap * max(1.0, abs(objective)):
        chosen, bound = close_gap(dec, pool, priced, chosen, deadline)
    outcome = settled(dec, chosen, bound, start)
    if outcome.status == PlanStatus.FEASIBLE:
        outcome = dataclasses.replace(outcome, messages=(_why_open(deadline),))
    return outcome


def _why_open(deadline: float) -> str:
    """Why a column-generation plan is left above the target gap (its bound is valid)."""
    head = "not proven optimal (the gap is the plan's distance to the bound)"
    if time.perf_counter() >= deadline:
        return f"{head}; the time limit ended the search (a longer time_limit_s may close it)"
    return (
        f"{head}; the linking limits (inventory, power cap, budget) leave too many replica "
        f"vectors within that gap to list (the search lists up to {MAX_ENUMERATED:,}), so the "
        "master MILP over the generated columns (price-and-branch) is as far as it goes; the "
        "plan is valid and its bound holds"
    )


def _share(deadline: float, share: float) -> float:
    """The deadline of a step that may use *share* of the time left before *deadline*."""
    now = time.perf_counter()
    return now + share * max(0.0, deadline - now)


def _column_generation(
    dec: Decomposition, first: list[Column], start: float, widen: bool = False
) -> DecomposedSolution | None:
    inputs = dec.inputs
    deadline = (
        start + inputs.time_limit_s - min(ACCOUNTING_MAX_S, ACCOUNTING_SHARE * inputs.time_limit_s)
    )
    cg_deadline = start + CG_TIME_FRACTION * inputs.time_limit_s
    penalty = PENALTY_FACTOR * max(1.0, sum(col.cost for col in first))
    pool = Pool(Master(dec, penalty))
    _seed(dec, pool, first)
    cap_kw = inputs.power_cap_kw
    phase_one = cap_kw is not None and not dec.gpus and not dec.has_budget and not dec.regional
    if phase_one:
        assert cap_kw is not None
        peak = least_peak(dec, first, cap_kw, cg_deadline)
        if peak is None:
            return None
        if peak.bound_kw > cap_kw * (1 + 1e-9):
            return no_plan(start, peak_message(peak.bound_kw, cap_kw))
        for col in peak.columns:
            pool.add(col)
    priced = _price(dec, pool, cg_deadline, deadline)
    if priced is None:
        return None
    if dec.capped and not phase_one:  # phase 1's columns are the frugal ones
        _add_frugal(dec, pool, priced, deadline)
    every = all_columns(dec)
    if every is not None:
        return exhaustive(dec, pool, every, priced.weights, priced.bound, start, deadline)
    return _solve_restricted(dec, pool, priced, first, start, deadline, widen)
