"""Which disaggregated units the planner tries for a model entry (docs/scenarios.md,
"Deployment"; docs/method.md, "Disaggregated units in the planner").

A unit is ``x`` prefill workers and ``y`` decode workers (:data:`WORKER_RATIOS`). Per side, every
GPU type the entry may use and that has a price, and on it the worker layouts of the entry's
aggregated ladder (:mod:`planner.build`) whose weights fit: the smallest, and the ladder's two
widest, at most :data:`MAX_LAYOUTS` (the ladder runs from the smallest that fits to one group
above the smallest that meets the SLA as an aggregated replica: a wider worker prefills and
decodes faster, wider ones only add idle GPUs). Both sides may use the same type or different
ones: every ordered pair of usable (type, layout). So an entry with ``T`` usable types has at most
``(3·T)² × len(WORKER_RATIOS)`` units; each is one replica of its candidate.
"""

from __future__ import annotations

import itertools
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


#: Worker layouts per GPU type and side: the smallest fitting layout of the aggregated ladder and
#: its two widest (the ladder stops one group above the first that meets the SLA).
MAX_LAYOUTS = 3


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
    usd_per_hour_per_gpu: float

    @property
    def gpus_per_worker(self) -> int:
        """GPUs running one worker: tp × pp × dp."""
        return self.tp * self.pp * self.dp


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
    """The aggregated candidates of one (entry, GPU) whose layouts the units' workers take
    (module doc), fewest GPUs first: the smallest whose weights fit and the ladder's widest
    ones (the smallest that meets the SLA and the next), at most :data:`MAX_LAYOUTS`."""
    fitting = [c for c in cands if c.exclusion not in (Exclusion.MEMORY, Exclusion.PREDICTION)]
    fitting.sort(key=lambda c: c.tp * c.pipeline_parallel * c.data_parallel)
    return list(dict.fromkeys([*fitting[:1], *fitting[1:][-(MAX_LAYOUTS - 1) :]]))


def _side(c: Candidate, workers: int) -> Side:
    return Side(
        gpu=c.gpu,
        workers=workers,
        tp=c.tp,
        pp=c.pipeline_parallel,
        dp=c.data_parallel,
        ep=c.expert_parallel,
        held_per_worker=c.gpus_per_replica,
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
    usable: Mapping[str, list[Candidate]] = {
        g: worker_layouts(cs)
        for g, cs in by_gpu.items()
        if not any(c.exclusion in (Exclusion.RULE, Exclusion.NO_PRICE) for c in cs)
    }
    layouts = [c for cs in usable.values() for c in cs]
    return [
        UnitSpec(name, model, facts, _side(p, x), _side(d, y))
        for p, d in itertools.product(layouts, layouts)
        for x, y in WORKER_RATIOS
    ]
