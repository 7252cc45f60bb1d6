"""Which disaggregated units the planner tries for a model entry (docs/scenarios.md,
"Deployment"; docs/method.md, "Disaggregated units in the planner").

A unit is ``x`` prefill workers and ``y`` decode workers (:data:`WORKER_RATIOS`). Per side, every
GPU type the entry may use and that has a price, and on it the worker layouts of the entry's whole
aggregated ladder (:mod:`planner.build` evaluates every group of it for such entries: where the
layout rule ends the aggregated candidates depends on the SLA, and a looser SLA must never remove
a unit): on units of one type every layout whose weights fit, on both sides; on mixed units the
smallest that fits and the widest inside one node (:func:`mixed_layouts`).
Both sides may use the same type or different ones: any two usable types while there are at most
:data:`MIXED_TYPES`, else two of the :data:`MIXED_TYPES` whose aggregated replicas need the least
energy per request. So an entry with ``T`` usable types of at most ``L`` fitting layouts each
tries at most ``(L² · T + 4 · M·(M − 1)) · len(WORKER_RATIOS)`` units (``M`` = min(T,
MIXED_TYPES)); each is one replica of its candidate.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from planner.inputs import Candidate, Exclusion

#: (prefill workers, decode workers) of the units tried: coprime (two units of 1:1 are the
#: solver's 2 × 1:1), from prompt-heavy (3:2) to output-heavy (1:4) loads.
WORKER_RATIOS: tuple[tuple[int, int], ...] = (
    (1, 1),
    (1, 2),
    (1, 3),
    (1, 4),
    (2, 1),
    (2, 3),
    (3, 2),
)


#: GPU types whose pools may be mixed in one unit: every usable type while an entry has at most
#: this many, else this many whose aggregated replicas need the least energy per request at
#: capacity (every usable type still gets same-type units). Up to it the units tried do not
#: depend on which other types are offered, so offering one more type never removes a unit
#: (a plan never gets worse, or infeasible, for a longer offer); above it they may.
MIXED_TYPES = 6


@dataclass(frozen=True)
class Side:
    """One side of a unit: its GPU type, workers and one worker's layout."""

    gpu: str
    workers: int
    tp: int
    pp: int
    dp: int
    ep: int
    held_per_worker: int
    """GPUs of inventory one worker takes (as the aggregated replica of the same layout)."""
    nodes_per_worker: int
    """Nodes one worker spans (1 inside one node)."""
    usd_per_hour_per_gpu: float

    @property
    def gpus_per_worker(self) -> int:
        """GPUs running one worker: tp × pp × dp."""
        return self.tp * self.pp * self.dp


def unit_nodes(sides: Sequence[Side], node_gpus: Mapping[str, int]) -> int:
    """Nodes a unit's workers take: whole nodes of their own for workers spanning nodes, the
    other workers of one GPU type (both pools) packed on nodes of that type."""
    spanning = sum(s.workers * s.nodes_per_worker for s in sides if s.nodes_per_worker > 1)
    packed: dict[str, int] = {}
    for s in sides:
        if s.nodes_per_worker <= 1:
            packed[s.gpu] = packed.get(s.gpu, 0) + s.workers * s.held_per_worker
    return spanning + sum(-(-n // node_gpus[g]) for g, n in packed.items())


@dataclass(frozen=True)
class EntryFacts:
    """What the serving model needs of a model entry besides its units."""

    engine: str
    precision: str
    input_tokens: float
    output_tokens: float
    itl_sla_s: float
    ttft_sla_s: float | None
    percentile: float | None


@dataclass(frozen=True)
class UnitSpec:
    """One disaggregated unit to evaluate for a model entry."""

    name: str
    model: str
    facts: EntryFacts
    prefill: Side
    decode: Side


def worker_layouts(cands: Sequence[Candidate]) -> list[Candidate]:
    """The aggregated candidates of one (entry, GPU) whose weights fit, fewest GPUs first: the
    layouts workers of a same-type unit take (module doc)."""
    fitting = [c for c in cands if c.exclusion not in (Exclusion.MEMORY, Exclusion.PREDICTION)]
    return sorted(fitting, key=lambda c: c.tp * c.pipeline_parallel * c.data_parallel)


def mixed_layouts(cands: Sequence[Candidate]) -> list[Candidate]:
    """Of :func:`worker_layouts`, the smallest and the widest inside one node: the layouts
    workers of a mixed-type unit take (module doc)."""
    fitting = worker_layouts(cands)
    one_node = [c for c in fitting if c.nodes <= 1]
    return list(dict.fromkeys(fitting[:1] + one_node[-1:]))


def _j_per_request(cands: Sequence[Candidate]) -> float:
    """Least energy per request at capacity of the feasible aggregated candidates (inf: none)."""
    return min(
        (c.curve[1][-1] / c.max_requests_per_s_per_replica for c in cands if c.feasible),
        default=math.inf,
    )


def _side(c: Candidate, workers: int) -> Side:
    return Side(
        gpu=c.gpu,
        workers=workers,
        tp=c.tp,
        pp=c.pipeline_parallel,
        dp=c.data_parallel,
        ep=c.expert_parallel,
        held_per_worker=c.gpus_per_replica,
        nodes_per_worker=c.nodes,
        usd_per_hour_per_gpu=c.usd_per_hour_per_replica / c.gpus_per_replica,
    )


def unit_specs(
    name: str, model: str, facts: EntryFacts, aggregated: Sequence[Candidate]
) -> list[UnitSpec]:
    """Every unit tried for model entry *name* from its *aggregated* candidates (module doc),
    in (prefill GPU, decode GPU, prefill layout, decode layout, ratio) order. GPU types excluded
    by the entry's rules or without a price take no side."""
    by_gpu: dict[str, list[Candidate]] = {}
    for c in aggregated:
        by_gpu.setdefault(c.gpu, []).append(c)
    usable = [
        g
        for g, cs in by_gpu.items()
        if not any(c.exclusion in (Exclusion.RULE, Exclusion.NO_PRICE) for c in cs)
    ]
    mixed = set(sorted(usable, key=lambda g: _j_per_request(by_gpu[g]))[:MIXED_TYPES])
    out = []
    for a, b in itertools.product(usable, usable):
        if a != b and not {a, b} <= mixed:
            continue
        layouts = worker_layouts if a == b else mixed_layouts
        prefill, decode = layouts(by_gpu[a]), layouts(by_gpu[b])
        out += [
            UnitSpec(name, model, facts, _side(p, x), _side(d, y))
            for p, d in itertools.product(prefill, decode)
            for x, y in WORKER_RATIOS
        ]
    return out
