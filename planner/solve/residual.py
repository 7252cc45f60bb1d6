"""Plans built one model entry at a time, each within what the entries before it left.

Column generation's master MILP chooses among the columns it has generated. When they combine
into no plan within the linking rows (GPU inventory, power cap, budget) and the exact
enumeration of :func:`planner.solve.enumeration.find_within` gives up (too many vectors, as
with node failover on many candidates), a plan may still be easy to find. This module builds
such plans greedily: the model entries in turn, each taking the cheapest replica vector of the
merit-order DP (:func:`planner.solve.decompose.merit_replicas`) at the linking-row prices of
column generation, among the counts that fit in the GPUs the entries before it left. A vector
that still overdraws a row (two candidates on one GPU type, the power of a period, the budget)
is priced again with that row made dearer (its price doubled from a scale of the entry's own
cost per unit of what is left), up to :data:`RETRIES` times. Two orders are tried: the entries
holding the most GPUs (in their cheapest unconstrained vector) first, and the least first;
under a power cap, with facility power priced ever dearer (:data:`FRUGAL`) until one finds a
plan.

Each plan found is a set of columns that together satisfy every linking row; added to the
master, they give its MILP at least that plan to choose. Nothing here changes the bound: the
gap column generation reports stays the one to its Lagrangian bound.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import numpy.typing as npt

from planner.solve.columns import Column, Decomposition
from planner.solve.decompose import FloatArray, IntArray, merit_replicas

RETRIES = 12
"""Re-pricings of one entry whose vector overdraws a linking row before the order gives up."""
TOL = 1e-9
FRUGAL: tuple[float, ...] = (0.0, 1.0, 10.0, 100.0)
"""Under a power cap, facility power is priced at these multiples of its energy cost in turn
(added to the duals) until an order finds a plan: an entry placed early at its cheapest
vector can leave too little power for the ones after it."""


def _left(dec: Decomposition) -> tuple[FloatArray, FloatArray, float]:
    """What the linking rows allow before any entry is placed: GPUs per binding type, facility
    kW per power row, budget (inf when none)."""
    inputs = dec.inputs
    gpus = np.asarray([float(inputs.stock[g] or 0) for g in dec.gpus], dtype=np.float64)
    power = np.asarray(
        [site.power_cap_kw for site in dec.capped for _ in range(inputs.periods)],
        dtype=np.float64,
    )
    budget = math.inf if inputs.budget_usd is None else float(inputs.budget_usd)
    return gpus, power, budget


def _over_kw(col: Column, power: FloatArray) -> npt.NDArray[np.bool_]:
    """Per power row, whether *col* draws more than the *power* left (none without a cap:
    a column's per-period power is then no linking row)."""
    if not power.size:
        return np.zeros(0, dtype=bool)
    return np.asarray(col.power_kw > power + TOL * np.maximum(1.0, np.abs(power)))


def _fits(col: Column, gpus: FloatArray, power: FloatArray, budget: float) -> bool:
    slack = TOL * max(1.0, abs(budget) if math.isfinite(budget) else 1.0)
    return bool(
        (col.gpu_use <= gpus + TOL).all()
        and not _over_kw(col, power).any()
        and col.budget_usd <= budget + slack
    )


def _bounded(dec: Decomposition, b: int, gpus: FloatArray) -> IntArray:
    """Block *b*'s replica bounds cut to the counts whose GPUs fit in *gpus* (one candidate
    alone; two candidates on one type are checked on the vector)."""
    block, use = dec.blocks[b], dec.use[b]
    ub = block.ub.astype(np.int64).copy()
    if use.size:
        with np.errstate(divide="ignore", invalid="ignore"):
            most = np.where(use > 0, np.floor((gpus + TOL) / np.where(use > 0, use, 1.0)), np.inf)
        ub = np.minimum(ub, most.min(axis=1, initial=np.inf)).astype(np.int64)
    return np.maximum(ub, 0)


def _column_within(
    dec: Decomposition,
    b: int,
    duals: tuple[FloatArray, FloatArray, float],
    left: tuple[FloatArray, FloatArray, float],
    deadline: float,
) -> Column | None:
    """Block *b*'s cheapest merit-order column at *duals* that fits in *left*, overdrawn rows
    priced up in turn; None when none was found."""
    gpus, power, budget = left
    y_gpu, y_power, y_b = (np.array(duals[0]), np.array(duals[1]), duals[2])
    block = dataclasses.replace(dec.blocks[b], ub=_bounded(dec, b, gpus))
    scale: float | None = None
    for attempt in range(RETRIES):
        if time.perf_counter() > deadline:
            return None
        found = merit_replicas(block, *dec.prices(b, y_gpu, y_power, y_b))
        if found is None:
            return None
        col = dec.column(b, found[1])
        if _fits(col, gpus, power, budget):
            return col
        scale = max(abs(col.cost), 1.0) if scale is None else scale
        step = scale * 2.0**attempt
        over_gpu = col.gpu_use > gpus + TOL
        y_gpu[over_gpu] += step / np.maximum(gpus[over_gpu], 1.0)
        over_kw = _over_kw(col, power)
        if over_kw.any() and y_power.size == power.size:
            y_power[over_kw] += step / np.maximum(power[over_kw], 1.0)
        if col.budget_usd > budget and math.isfinite(budget):
            y_b += step / max(budget, 1.0)
    return None


def _plan_in_order(
    dec: Decomposition,
    order: list[int],
    duals: tuple[FloatArray, FloatArray, float],
    deadline: float,
) -> list[Column] | None:
    """One column per model entry, the entries placed in *order* (each in the cheapest of its
    blocks that fits what is left); None when an entry finds no room."""
    gpus, power, budget = _left(dec)
    chosen: list[Column] = []
    for g in order:
        best: Column | None = None
        for b in (b for b, h in enumerate(dec.group) if h == g):
            col = _column_within(dec, b, duals, (gpus, power, budget), deadline)
            if col is not None and (best is None or col.cost < best.cost):
                best = col
        if best is None:
            return None
        chosen.append(best)
        gpus = gpus - best.gpu_use
        power = power - best.power_kw if power.size else power
        budget = budget - best.budget_usd
    return chosen


def residual_plans(
    dec: Decomposition,
    duals: tuple[FloatArray, FloatArray, float],
    first: list[Column],
    deadline: float,
) -> list[list[Column]]:
    """Plans (one column per model entry, every linking row kept) built greedily at the
    linking-row prices *duals* (GPU, power rows, budget): the entries holding the most GPUs in
    their *first* (unconstrained) columns placed first, then the least first."""
    held = np.zeros(dec.groups)
    for col in first:
        g = dec.group[col.block]
        held[g] = max(held[g], float(col.gpu_use.sum()) if col.gpu_use.size else 0.0)
    most_first = [int(g) for g in np.argsort(-held, kind="stable")]
    plans = []
    for frugal in FRUGAL:
        priced = duals
        if frugal and dec.power_rows:  # facility power priced at a multiple of its energy cost
            y_power = duals[1] + frugal * np.tile(dec.base_t / dec.kw_per_e, len(dec.capped))
            priced = (duals[0], y_power, duals[2])
        elif frugal:
            continue
        for order in (most_first, most_first[::-1]):
            plan = _plan_in_order(dec, order, priced, deadline)
            if plan is not None:
                plans.append(plan)
        if plans:
            return plans
    return plans
