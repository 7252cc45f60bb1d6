"""When the generated columns combine into no plan within the linking rows.

Column generation's master MILP chooses among the columns it has generated; when none of their
combinations keeps the GPU inventory, the power cap and the budget, :func:`when_none_combine`
looks further, in this order:

1. the reduced-cost enumeration a little above the Lagrangian bound
   (:func:`planner.solve.enumeration.find_within`, up to 10 % above it): a plan found there is
   proven within its step;
2. the greedy plans of :mod:`planner.solve.residual` (each entry within what the entries
   before it left), through the master MILP;
3. when the caller asks (after its cheap proofs, :mod:`planner.solve.optimize`), the
   enumeration further above the bound, ten times wider each step, until a plan is found,
   every replica vector of every block is in the master (then no combination meets the
   limits: a proof that no plan exists) or there are too many vectors
   (:data:`planner.solve.enumeration.MAX_ENUMERATED`, or a block's search holds too many
   partial vectors);
4. then every covering vector of every block, when their bounds' boxes hold at most that
   many, with the master MILP solved to optimality (exact, like
   :func:`planner.solve.columns.all_columns` on small instances).

Before steps 3 and 4 the fuzzer's capped scenario (3 entries on 29 candidates, inventory and a
power cap binding) ended with neither a plan nor a proof; step 3 proves it infeasible in about
10 s. With every evaluated layout (32 candidates) step 3 gives up (one entry's search holds
too many partial vectors) and step 4 proves it in about 21 s (10,500 vectors in the boxes;
those that alone break a linking row are not routed).
"""

from __future__ import annotations

import math

import numpy as np

from planner.solve.columns import Column, Decomposition, all_columns
from planner.solve.decomposed import DecomposedSolution, no_plan, settled
from planner.solve.enumeration import MAX_ENUMERATED, Pool, Priced, find_within, wider_steps
from planner.solve.master import master_milp
from planner.solve.residual import residual_plans


def when_none_combine(
    dec: Decomposition,
    pool: Pool,
    priced: Priced,
    first: list[Column],
    start: float,
    deadline: float,
    widen: bool = False,
) -> DecomposedSolution | tuple[list[Column], float] | None:
    """No plan among the generated columns: the solution when the enumeration settles it (a
    plan proven within its step, or every vector tried and no plan exists), else a plan to
    improve and the valid bound, or None when nothing is found."""
    # raise the bound until the columns of every plan below it are in the master and one is
    # found (or give up with that bound)
    located, bound = find_within(dec, pool, priced, deadline)
    if located is not None:
        return settled(dec, located, bound, start)
    if bound == math.inf:  # the enumeration held every vector: no combination fits
        return no_plan(start)
    # the enumeration gave up: a greedy plan (improved by the caller like the master's own)
    greedy = _greedy_plan(dec, pool, priced, first, deadline)
    if greedy is not None:
        return greedy, bound
    if not widen:
        return None
    # no greedy plan either: enumerate further above the bound, until a plan is found, every
    # vector is in the master (no plan exists) or there are too many
    located, bound = find_within(dec, pool, priced, deadline, wider_steps())
    if bound == math.inf:
        return no_plan(start)
    if located is not None:
        return located, bound
    # step 4: every covering vector, when their bounds' boxes hold at most MAX_ENUMERATED
    every = all_columns(dec, MAX_ENUMERATED, deadline)
    return None if every is None else exhaustive(dec, pool, every, [], bound, start, deadline)


def exhaustive(
    dec: Decomposition,
    pool: Pool,
    every: list[Column],
    weights: list[float],
    bound: float,
    start: float,
    deadline: float,
) -> DecomposedSolution | None:
    """Every column of every block (*every*) in the master, its MILP solved to optimality:
    the plan is exact (its bound the larger of *bound* and the MILP's), and no plan among them
    is a proof that none exists; None when the MILP finds nothing in time. *weights*: the
    master LP's, for the MILP's hint."""
    for col in every:
        pool.add(col)
    exact = master_milp(pool.master, weights, deadline, gap=0.0)
    if exact is None:
        return None
    chosen, proven = exact
    if not chosen:  # every column tried: no combination meets the linking rows
        return no_plan(start)
    return settled(dec, chosen, max(bound, proven), start)


def _greedy_plan(
    dec: Decomposition, pool: Pool, priced: Priced, first: list[Column], deadline: float
) -> list[Column] | None:
    """The best plan of the master MILP once the greedy plans of :mod:`planner.solve.residual`
    (each entry within what the entries before it left) are among its columns; None when no
    greedy plan was found or the MILP found none in time."""
    y_power = priced.y_power if priced.y_power is not None else np.zeros(dec.power_rows)
    duals = (priced.y_gpu, y_power, priced.y_b)
    plans = residual_plans(dec, duals, first, deadline)
    if not plans:
        return None
    for plan in plans:
        for col in plan:
            pool.add(col)
    cheapest = min(plans, key=lambda plan: sum(col.cost for col in plan))
    keys = {(col.block, col.n.tobytes()) for col in cheapest}
    hint = [1.0 if (c.block, c.n.tobytes()) in keys else 0.0 for c in pool.master.columns]
    found = master_milp(pool.master, hint, deadline)
    if found is None or not found[0]:
        return cheapest
    return found[0]
