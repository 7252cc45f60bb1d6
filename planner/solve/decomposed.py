"""The fleet problem when nothing links the models, and the solution of the by-model solvers.

:func:`decomposed`: with no binding inventory, power cap or budget every model entry is solved
on its own (the exact search of :mod:`planner.solve.pricing`; with regions the cheapest over its
regions), and the plan's bound is the sum of the entries' bounds. :class:`DecomposedSolution`
is what :func:`planner.solve.colgen.solve_by_model` returns, :func:`solution` builds it from one
column per entry (loads by exact routing).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from planner.inputs import Candidate
from planner.result import PlanStatus
from planner.solve.columns import Column, Decomposition
from planner.solve.decompose import dispatch, release
from planner.solve.pricing import price_block
from planner.solve.restrict import keep_rows
from planner.solve.search import MAX_EVALUATIONS, Found

RETRY_EFFORT = 10
"""Unlinked models above the target gap: a search cut short runs again routing this many
times as many vectors (``large-generated``'s one cut model, m0299, is then proven optimal)."""
RETRY_TIME_FRACTION = 0.25
"""Share of the time limit after which no cut search is run again."""


@dataclass(frozen=True)
class DecomposedSolution:
    """Outcome of :func:`solve_by_model` (replicas and loads in ``candidates`` order)."""

    status: PlanStatus
    seconds: float
    objective: float
    bound: float
    candidates: list[Candidate]
    replicas: list[int]
    loads: list[tuple[float, ...]]
    method: str
    messages: tuple[str, ...] = ()
    """Why no plan exists, when a proof says so (status infeasible)."""


def solution(
    dec: Decomposition,
    chosen: list[Column],
    status: PlanStatus,
    start: float,
    bound: float,
    method: str,
) -> DecomposedSolution:
    """The :class:`DecomposedSolution` of one column per entry, *chosen* (its loads routed
    exactly), with *status*, *bound* and *method*; seconds counted from *start*."""
    candidates: list[Candidate] = []
    replicas: list[int] = []
    loads: list[tuple[float, ...]] = []
    idle = (0.0,) * dec.inputs.periods  # the loads of a candidate with no replica
    for col in chosen:
        block = dec.blocks[col.block]
        x = dispatch(block, col.n)
        candidates.extend(block.candidates)
        replicas.extend(col.n.tolist())
        loads.extend(tuple(x[k].tolist()) if col.n[k] else idle for k in range(col.n.size))
    objective = float(sum(col.cost for col in chosen))
    return DecomposedSolution(
        status, time.perf_counter() - start, objective, bound, candidates, replicas, loads, method
    )


def decomposed(dec: Decomposition, start: float) -> DecomposedSolution | None:
    """Nothing links the models: each entry's exact optimum (the cheapest over its regions).
    When the gap is above the target, the searches that were cut short run again, largest
    gap first, routing :data:`RETRY_EFFORT` times as many vectors, within
    :data:`RETRY_TIME_FRACTION` of the time limit."""
    inputs = dec.inputs
    zero_gpu, zero_t = np.zeros(len(dec.gpus)), np.zeros(max(dec.power_rows, inputs.periods))
    found: list[Found | None] = []
    deadline = start + inputs.time_limit_s  # a search or bound cut there keeps a valid bound
    for b, block in enumerate(dec.blocks):
        found.append(price_block(block, *dec.prices(b, zero_gpu, zero_t, 0.0), deadline=deadline))
        done = found[-1]
        if done is not None and done.complete:  # never priced again: only its vector is asked
            keep_rows(block, dec.keep)
            release(block, done.n)
    if _gap(dec, found) > inputs.relative_gap:
        budget = start + RETRY_TIME_FRACTION * inputs.time_limit_s
        cut = [b for b, f in enumerate(found) if f is not None and not f.complete]
        for b in sorted(cut, key=lambda b: -_block_gap(found[b])):
            if time.perf_counter() > budget or _gap(dec, found) <= inputs.relative_gap:
                break
            prices = dec.prices(b, zero_gpu, zero_t, 0.0)
            found[b] = price_block(
                dec.blocks[b], *prices, RETRY_EFFORT * MAX_EVALUATIONS, deadline=budget
            )
    best = _per_entry(dec, found)
    if best is None:
        return None
    chosen = [col for col, _ in best]
    floor = 0.0
    for _, bound in best:
        floor += bound
    outcome = settled(dec, chosen, floor, start, "decomposed")
    shortened = sum(f is not None and not f.complete for f in found)
    if outcome.status == PlanStatus.FEASIBLE and shortened:
        why = (
            f"not proven optimal: the exact per-model search of {shortened} model entr"
            f"{'y' if shortened == 1 else 'ies'} stopped at its share of replica vectors (each "
            "routed exactly; retried with ten times as many within a quarter of the time "
            "limit); the plan is valid and its bound holds"
        )
        outcome = replace(outcome, messages=(*outcome.messages, why))
    return outcome


def _block_gap(f: Found | None) -> float:
    return 0.0 if f is None else f.cost - f.bound


def _per_entry(dec: Decomposition, found: list[Found | None]) -> list[tuple[Column, float]] | None:
    """Per model entry, the cheapest column over its blocks (regions) and the least of their
    bounds; None when an entry has no covering vector anywhere."""
    best: dict[int, tuple[Column, float]] = {}
    for b, f in enumerate(found):
        if f is None:
            continue
        col, g = dec.column(b, f.n), dec.group[b]
        if g not in best:
            best[g] = (col, f.bound)
        else:  # another site of the same entry: the cheaper column, the lesser bound
            kept, bound = best[g]
            best[g] = (col if col.cost < kept.cost else kept, min(bound, f.bound))
    if len(best) < dec.groups:
        return None
    return [best[g] for g in range(dec.groups)]


def _gap(dec: Decomposition, found: list[Found | None]) -> float:
    """The relative gap of the per-entry optima *found* (inf when an entry has none)."""
    best = _per_entry(dec, found)
    if best is None:
        return math.inf
    total = float(sum(col.cost for col, _ in best))
    return (total - min(total, sum(bound for _, bound in best))) / max(abs(total), 1e-9)


def settled(
    dec: Decomposition,
    chosen: list[Column],
    bound: float,
    start: float,
    method: str = "column-generation",
) -> DecomposedSolution:
    """:func:`solution` of *chosen* with a valid lower *bound* (capped at its objective):
    optimal when within the inputs' relative gap of it, else feasible."""
    objective = float(sum(col.cost for col in chosen))
    bound = min(float(bound), objective)
    gap = (objective - bound) / max(abs(objective), 1e-9)
    status = PlanStatus.OPTIMAL if gap <= dec.inputs.relative_gap else PlanStatus.FEASIBLE
    return solution(dec, chosen, status, start, bound, method)


def no_plan(start: float, *messages: str) -> DecomposedSolution:
    """No plan exists (every column tried, or a proof given by *messages*)."""
    return DecomposedSolution(
        PlanStatus.INFEASIBLE,
        time.perf_counter() - start,
        math.inf,
        math.inf,
        [],
        [],
        [],
        "column-generation",
        messages,
    )
