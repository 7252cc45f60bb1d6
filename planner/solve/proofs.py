"""Proofs that a facility power cap cannot be met: the least power of every model, exactly.

In period t a plan draws ``PUE · Σ_m (idle of m's replicas + W_m(n_m, L_m,t)) / 1000`` kW of
facility power. Each model's part depends on its own replica vector only, so the least facility
power any plan can draw in period t is the sum over models of the least power of one model,
each found by the exact search of :mod:`planner.solve.search` (replicas priced at their idle
facility kW, watts above idle at PUE/1000) with its valid lower bound, on the relaxation
where only period t's load must be covered. When that sum of bounds exceeds the cap in some
period, no plan exists — a proof; the bound is a cap every plan needs at least. Tighter than
:mod:`planner.solve.bounds` because routing and the curves are exact.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from planner.inputs import Candidate, PlanningInputs
from planner.solve.columns import Decomposition
from planner.solve.decompose import ModelBlock
from planner.solve.pricing import price_block
from planner.solve.routing import RouteCache

PERIODS_TRIED = 1
"""Periods tried, those with the largest total load first."""


def one_period(block: ModelBlock, t: int) -> ModelBlock:
    """*block* with period t alone (a relaxation: only that period's load must be covered)."""
    loads = block.loads[t : t + 1].copy()
    routes = RouteCache(block.curve_x, block.curve_d, block.cap, loads)
    return dataclasses.replace(block, loads=loads, routes=routes)


def least_facility_kw(
    inputs: PlanningInputs, candidates: list[Candidate]
) -> tuple[int, float] | None:
    """(period, valid lower bound on its facility kW) for the period with the largest bound
    among the :data:`PERIODS_TRIED` busiest; None when a model has no covering vector."""
    dec = Decomposition(inputs, candidates)
    total = np.zeros(inputs.periods)
    for m in inputs.models:
        total += np.asarray(m.requests_per_s_by_period, dtype=np.float64)
    best: tuple[int, float] | None = None
    for t in np.argsort(-total, kind="stable")[:PERIODS_TRIED].tolist():
        price_t = np.asarray([dec.kw_per_e])
        kw = 0.0
        for b, block in enumerate(dec.blocks):
            found = price_block(one_period(block, t), dec.kw_n[b], price_t)
            if found is None:
                return None
            kw += found.bound
        if best is None or kw > best[1]:
            best = (t, kw)
    return best
