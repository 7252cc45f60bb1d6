"""A model block restricted to some of its candidates, sharing what was computed for them.

The baselines (:mod:`planner.solve.baselines`) plan the same model entries on a subset of the
plan's candidates. Everything a block computes per candidate — the replica bound, the concave
minorants at each count (:mod:`planner.solve.screen`'s pairs), the single-deployment costs —
depends on that candidate and the entry's loads alone, so the baseline's block takes those rows
of the plan's block instead of computing them again: the same numbers (the candidates keep their
merit order, a stable sort of the same keys; the knots stay padded to the plan's block width,
which changes no maximum or interpolation). What depends on the set of candidates (the least
minorant of the others, the search's memo) is computed for the subset.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from planner.inputs import Candidate
from planner.solve.decompose import FloatArray, IntArray, ModelBlock
from planner.solve.hull import Hulls
from planner.solve.routing import RouteCache
from planner.solve.screen import Pairs, _without_each
from planner.solve.search import SearchBlock


def restricted_block(parent: ModelBlock, candidates: list[Candidate]) -> ModelBlock | None:
    """*parent* restricted to *candidates* (every one of them a candidate of *parent*, by
    identity), with the parent's search data and single-deployment costs sliced when it has
    them; None when some candidate is not the parent's."""
    position = {id(c): k for k, c in enumerate(parent.candidates)}
    wanted = {id(c) for c in candidates}
    if len(wanted) != len(candidates) or not wanted <= position.keys():
        return None
    idx = np.asarray(sorted(position[i] for i in wanted), dtype=np.int64)
    curve_x = tuple(parent.curve_x[k] for k in idx)
    curve_d = tuple(parent.curve_d[k] for k in idx)
    block = ModelBlock(
        parent.demand,
        tuple(parent.candidates[k] for k in idx),
        parent.cap[idx],
        parent.e_j[idx],
        parent.ub[idx],
        parent.loads,
        curve_x,
        curve_d,
        RouteCache(curve_x, curve_d, parent.cap[idx], parent.loads),
        parent.failover_k,
        parent.per_unit[idx] if parent.failover_k else parent.per_unit,
        parent.stock_use[idx] if parent.stock.size else parent.stock_use[:0],
        parent.stock,
    )
    search = parent.memo.get("search")
    if isinstance(search, SearchBlock):
        block.memo["search"] = _restricted_search(search, block, idx)
    single = parent.memo.get("single")
    if single is not None:
        counts, watts, allowed = single
        block.memo["single"] = (counts[idx], watts[idx], allowed[idx])
    return block


def keep_rows(block: ModelBlock, ids: frozenset[int]) -> None:
    """Before *block*'s search data is freed, keep the part of the candidates *ids* (by
    identity: the baselines') as the block restricted to them, ``memo["shadow"]``; the
    baselines' blocks restrict that (:func:`shared_block`)."""
    kept = [c for c in block.candidates if id(c) in ids]
    if kept and "search" in block.memo:
        block.memo["shadow"] = restricted_block(block, kept)


def shared_block(block: ModelBlock) -> ModelBlock:
    """What a restriction of *block* takes its rows from: the part :func:`keep_rows` kept, or
    the block itself."""
    shadow = block.memo.get("shadow")
    return shadow if isinstance(shadow, ModelBlock) else block


def _restricted_pairs(pairs: Pairs, idx: IntArray, least_w: FloatArray) -> Pairs:
    sel = np.concatenate(
        [np.arange(pairs.start[k], pairs.start[k + 1]) for k in idx.tolist()]
        or [np.zeros(0, dtype=np.int64)]
    ).astype(np.int64)
    counts = pairs.start[idx + 1] - pairs.start[idx]
    parent_of = pairs.watts_of

    def watts_of(k: IntArray, m: FloatArray) -> FloatArray:
        return parent_of(idx[k], m)

    return Pairs(
        np.repeat(np.arange(idx.size), counts).astype(np.int64),
        pairs.count[sel],
        pairs.watts[sel],
        pairs.kept[sel],
        np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        _without_each(least_w),
        pairs.least_rate_w[idx],
        pairs.known[sel],
        watts_of,
    )


def _restricted_search(sb: SearchBlock, block: ModelBlock, idx: IntArray) -> SearchBlock:
    return dataclasses.replace(
        sb,
        cap=block.cap,
        ub=block.ub,
        least_w_per_rps=sb.least_w_per_rps[idx],
        least_w=sb.least_w[idx],
        pairs=_restricted_pairs(sb.pairs, idx, sb.least_w[idx]),
        knot_x=sb.knot_x[idx],
        knot_d=sb.knot_d[idx],
        curve_x=block.curve_x,
        curve_d=block.curve_d,
        per_unit=block.per_unit,
        stock_use=block.stock_use,
        hulls=Hulls(block.curve_x, block.curve_d, block.cap),
        screened={},
    )
