"""The parallel layouts the planner tries per (model entry, GPU type), and the inventory a replica
takes.

Per pair the layouts form a *ladder* of groups, one group per GPU count, ascending
(:func:`ladder`); :mod:`planner.build` evaluates it from the bottom until a layout meets the SLA,
plus the next group. The groups:

* the scenario's ``tp_degrees`` (pure tensor parallelism; a degree larger than the GPU's NVLink
  domain takes the engines' usual layout, TP over the domain and PP across domains); for a
  mixture-of-experts model whose KV cache TP would hold more than once (MLA, or fewer KV heads
  than the degree), also attention data parallelism over the same GPUs of one node (TP 1 × DP
  = the degree, EP = the degree), which holds it once;
* then, unless the GPU offer states its own ``layouts`` or its ``tp_degrees`` stop below the
  largest default degree the heads allow inside one node (the user capped TP; the default
  degrees cap nothing, even for 40 heads with 10 KV heads, where that degree is 2), the
  heads-valid degrees of one node above them that the powers of two leave out (TP 5 for 40
  heads with 10 KV heads, TP 6 for 12 with 2), **rack-scale** tensor parallelism inside a
  larger NVLink domain (doubling the largest degree while it fits the domain and the heads: TP
  16, 32, 64 on a GB200/GB300 NVL72 rack, then the domain's largest heads-valid degree, the
  one-domain layout before any that spans domains: TP 40 for 40 heads, TP 48 for 96), and the
  smallest **pipeline** layouts over 2, 4, 8 stages while a replica may span that many domains
  (TP = the largest heads-valid degree of one domain × PP; with TP 8 on 8-GPU nodes these are
  2, 4 and 8 nodes; a TP below the node, e.g. 4 for 28 heads, starts inside one node); for
  mixture-of-experts models also attention data parallelism instead of the stages (TP × DP,
  EP = TP × DP over every GPU of the replica); TP across NVLink domains is never generated
  (stated ones are: ``{gpu_count: 16, pipeline_parallel: 1}``);
* only layouts the scenario's ``engine`` runs (:mod:`predictors.catalog.engine_support`: no
  pipeline, attention DP, expert parallelism or second node for an engine without them);
* the offer's stated ``layouts`` (each checked by the predictors' validity rules,
  :func:`predictors.catalog.validity.layout_problems`; a layout invalid for a model entry that
  may use the GPU is a one-line error naming the rule).

Inventory (:func:`held_gpus`): a replica inside one node takes its GPUs (replicas share nodes, as
before layouts); a replica spanning nodes inside a larger NVLink domain takes its share of the
domain, ``D / ⌊D / (whole nodes)⌋`` (replicas of one size then always fit whole domains: TP 16 on
a GB200 NVL72 rack, 4 per rack, 18 GPUs each); one spanning NVLink domains whole domains (a
replica of 12 GPUs on 8-GPU nodes takes 2 nodes = 16 GPUs; TP 64 × PP 2 on GB200 NVL72 takes 2
racks = 144 GPUs), as many as its stages pack into (a stage never crosses a domain: TP 2 × DP 3
stages of 6 GPUs on 8-GPU nodes take one node each). A user GPU whose domain is no whole number
of nodes (``nvlink_domain_gpus`` 36 with ``node_gpus`` left at 8) has ``⌈D / node⌉`` nodes per
domain, the last one cut to the domain's GPUs: a replica whose whole nodes outnumber the domain's
GPUs takes the whole domain (TP 4 × PP 9 there: 36 GPUs on 5 nodes). The held GPUs are priced,
and those not running the replica draw idle power; :func:`held_reason` says why a replica holds
more than it runs on, for the inventory line of an infeasible plan.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.inputs import Candidate, Exclusion, Pool
from planner.scenario.limits import DEFAULT_TP_DEGREES
from planner.scenario.sections import LayoutOption
from predictors.catalog import engine_support, validity
from predictors.catalog.store import load_catalog
from predictors.core.errors import WattgpuError
from predictors.core.vocab import LAYER_SPLIT_ENGINES

#: Pipeline stages of the planner-generated layouts (while the replica may span as many domains).
MULTI_DOMAIN_COUNTS: tuple[int, ...] = (2, 4, 8)


class LayoutError(WattgpuError):
    """A scenario's stated layout that the predictors' validity rules refuse (one line each)."""


@dataclass(frozen=True)
class Shape:
    """One layout to try: degrees, the GPUs it runs on and the inventory it takes."""

    tp: int
    pp: int
    dp: int
    ep: int
    held: int
    """GPUs of inventory one replica takes (:func:`held_gpus`)."""
    nodes: int

    @property
    def gpus(self) -> int:
        """GPUs running the replica."""
        return self.tp * self.pp * self.dp

    @property
    def degrees(self) -> tuple[int, int, int, int]:
        """(TP, PP, DP, EP)."""
        return (self.tp, self.pp, self.dp, self.ep)


def held_gpus(
    gpu: Mapping[str, Any], count: int, stage: int | None = None, pp: int = 1
) -> tuple[int, int]:
    """(GPUs of inventory, nodes) one replica of *count* GPUs of catalog type *gpu* takes: its
    GPUs inside one node, its share of the NVLink domain beyond one node (module doc), whole
    domains beyond one domain: as many as its *pp* stages of *stage* GPUs pack into
    (:func:`predictors.catalog.validity.domains_spanned`; without *stage*, ``⌈count / D⌉``)."""
    node = validity.node_gpus(gpu)
    domain = validity.tp_domain_gpus(gpu)
    if count <= node:
        return count, 1
    nodes = math.ceil(count / node)
    if count <= domain:
        # whole nodes, and its share of the domain: replicas of this size never cross a domain
        # (TP 16 on an NVL72 rack: 4 per rack, 18 GPUs each; the 8 left are priced, idle); a
        # domain that is no whole number of nodes (36 GPUs on 8-GPU nodes) holds at least one
        # replica, whose whole nodes it cuts to its own GPUs: the whole domain
        per_domain = max(domain // (nodes * node), 1)
        return math.ceil(domain / per_domain), nodes
    domains = math.ceil(count / domain)
    if stage is not None:
        domains = max(domains, validity.domains_spanned(gpu, stage, pp))
    return domains * domain, domains * math.ceil(domain / node)


def held_reason(gpu: Mapping[str, Any], running: int, held: int, what: str = "replica") -> str:
    """Why a replica (*what*: or a ``worker`` of a disaggregated unit's pool) running on
    *running* GPUs of catalog type *gpu* takes *held* GPUs of inventory (:func:`held_gpus`),
    with the fix: its share of the NVLink domain, or the whole nodes or domains it spans (''
    when it takes only its own GPUs)."""
    node, domain = validity.node_gpus(gpu), validity.tp_domain_gpus(gpu)
    if held <= running or running <= node:
        return ""
    nodes = math.ceil(running / node)
    spans = f"({running} GPUs on {nodes} nodes of {node})"
    if running <= domain:
        per = max(domain // (nodes * node), 1)
        return (
            f"{spans} takes its share of the {domain}-GPU NVLink domain of {gpu.get('id')}, "
            f"{domain} / {per} {what}{'s' if per > 1 else ''} = {held} GPUs (a TP group never "
            f"crosses a domain) — make available a multiple of {held}, or state a layout of "
            f"whole nodes that divides {domain}"
        )
    unit = "node" if domain == node else f"{domain}-GPU NVLink domain"
    return (
        f"{spans} takes the {held // domain} whole {unit}s its stages span, {held} GPUs — make "
        f"available a multiple of {held}, or state a layout of whole {unit}s"
    )


def _catalog_gpu(gpu: str, user_catalog: str | None) -> Mapping[str, Any] | None:
    """The catalog row of GPU type *gpu* (*user_catalog*: the overlay a plan used; None: the
    bundled catalog and ``$WATTGPU_USER_CATALOG``); None where it is not found."""
    try:
        catalog = load_catalog(Path(user_catalog) if user_catalog else None)
        return catalog.gpu(gpu) if catalog.try_resolve_gpu(gpu) else None
    except WattgpuError:
        return None


def held_note(
    gpu: str, user_catalog: str | None, running: int, held: int, what: str = "replica"
) -> str:
    """:func:`held_reason` of GPU type *gpu* of the catalog a plan used (*user_catalog* its
    overlay); the general reason where that catalog is not found."""
    row = _catalog_gpu(gpu, user_catalog)
    reason = held_reason(row, running, held, what) if row else ""
    return reason or (
        f"runs on {running} GPUs and holds {held}: its share of the NVLink domain, or the whole "
        f'nodes or domains it spans (docs/method.md, "Inventory") — make available a multiple '
        f"of {held}"
    )


def _shape(gpu: Mapping[str, Any], layout: validity.Layout) -> Shape:
    held, nodes = held_gpus(gpu, layout.gpus, layout.tp * layout.dp, layout.pp)
    return Shape(layout.tp, layout.pp, layout.dp, layout.ep, held, nodes)


def _valid(
    llm: Mapping[str, Any],
    gpu: Mapping[str, Any],
    count: int,
    pp: int | None,
    dp: int | None,
    engine: str | None,
) -> Shape | None:
    layout, problems = validity.layout_problems(llm, gpu, count, pp, dp, engine=engine)
    return None if layout is None or problems else _shape(gpu, layout)


def _base(
    llm: Mapping[str, Any], gpu: Mapping[str, Any], degrees: Sequence[int], engine: str | None
) -> list[Shape]:
    """The ``tp_degrees`` (heads-valid, ascending): the engines' usual layout of each count; a
    count the rules refuse (the engine's capabilities included) stays pure TP, for the
    predictors to refuse with their reason."""
    out = []
    domain = validity.tp_domain_gpus(gpu)
    runs = engine_support.runs_on(engine, gpu)
    full = engine is None or engine in engine_support.FULL_ENGINES
    for t in degrees:
        # inside the domain, heads-valid pure TP needs no other rule for an engine that runs
        # every layout on every GPU it supports (its usual EP is valid); the others are checked
        shape = _usual(llm, gpu, t, engine) if full and t <= domain and runs else None
        shape = shape or _valid(llm, gpu, t, None, None, engine)
        if shape is None:
            pure = validity.resolve_layout(llm, gpu, t, 1, 1, engine=engine)
            shape = _shape(gpu, pure or validity.Layout(t, 1, 1, 1))
        out.append(shape)
        if t <= validity.node_gpus(gpu) and _tp_copies_kv(llm, t):
            out.extend(s for s in [_valid(llm, gpu, t, 1, t, engine)] if s)
    return out


def _tp_copies_kv(llm: Mapping[str, Any], tp: int) -> bool:
    """True for a mixture-of-experts model whose KV cache TP *tp* would hold more than once
    (:func:`predictors.catalog.validity.kv_copies`: MLA's one latent head, or fewer KV heads than
    *tp*): attention data parallelism over the same GPUs (TP 1 × DP *tp*, EP *tp*) holds it once,
    the layout engines run such models with."""
    return bool(llm.get("is_moe")) and validity.kv_copies(llm, tp) > 1.0


def _usual(
    llm: Mapping[str, Any], gpu: Mapping[str, Any], count: int, engine: str | None
) -> Shape | None:
    layout = validity.resolve_layout(llm, gpu, count, engine=engine)
    return None if layout is None else _shape(gpu, layout)


def _capped(heads: int, kv: int, node: int, top: int) -> bool:
    """True when the offer's degrees (largest *top*) stop below the largest of the default
    degrees that the heads allow inside one node: the user capped TP (the default degrees cap
    nothing, even where the heads allow none of 4 and 8: 40 heads with 10 KV heads)."""
    usual = [t for t in DEFAULT_TP_DEGREES if t <= node and validity.tp_fits_heads(t, heads, kv)]
    return top < max(usual, default=1)


def _automatic(
    llm: Mapping[str, Any], gpu: Mapping[str, Any], top: int, engine: str | None
) -> list[Shape]:
    """Above the offer's degrees (largest *top*): the heads-valid degrees of one node the
    powers of two leave out (TP 5 for 40 heads with 10 KV heads, TP 6 for 12 with 2), rack-scale
    TP inside the domain (doubling, then the domain's largest heads-valid degree: TP 40 in one
    NVL72 rack), then the smallest pipeline layouts over 2, 4 and 8 domains (and attention DP
    instead of the stages for mixture-of-experts models); none when the user capped TP
    (:func:`_capped`). An engine that splits the layers gets its usual layer split (TP 1, a
    stage per GPU) of each of those GPU counts instead (fuzz round 29: llama.cpp was planned
    at TP 4 × PP 2)."""
    heads, kv = int(llm["num_attention_heads"]), int(llm["num_kv_heads"])
    node, domain = validity.node_gpus(gpu), validity.tp_domain_gpus(gpu)
    if _capped(heads, kv, node, top):
        return []
    fitting = validity.valid_tp_degrees(heads, kv, domain)
    degrees = [t for t in fitting if top < t <= node]  # the node's gap: every valid degree
    t = max(top, *degrees, 1) * 2
    while t <= domain:  # rack-scale: doubling while the domain and the heads allow
        if validity.tp_fits_heads(t, heads, kv):
            degrees.append(t)
        t *= 2
    if fitting and fitting[-1] > top:  # one whole domain before spanning domains
        degrees.append(fitting[-1])
    split = engine in LAYER_SPLIT_ENGINES  # their layers split over every GPU: TP 1 × PP n
    pure = None if split else 1
    out = [s for t in sorted(set(degrees)) for s in [_valid(llm, gpu, t, pure, 1, engine)] if s]
    if not fitting:
        return out
    tp = fitting[-1]
    limit = validity.max_replica_gpus(gpu)
    for k in MULTI_DOMAIN_COUNTS:
        if k * domain > limit:
            break
        out.extend(s for s in [_valid(llm, gpu, tp * k, None if split else k, 1, engine)] if s)
        if llm.get("is_moe"):
            out.extend(s for s in [_valid(llm, gpu, tp * k, 1, k, engine)] if s)
    return out


def stated_shape(
    llm: Mapping[str, Any],
    gpu: Mapping[str, Any],
    option: LayoutOption,
    where: str,
    engine: str | None = None,
) -> Shape:
    """The :class:`Shape` of a scenario's stated layout; :class:`LayoutError` (one line naming
    *where* and the rule) when the predictors' validity rules refuse it for *engine*."""
    layout, problems = validity.layout_problems(
        llm,
        gpu,
        option.gpu_count,
        option.pipeline_parallel,
        option.data_parallel,
        option.expert_parallel,
        engine=engine,
    )
    if layout is None or problems:
        raise LayoutError(f"{where}: {problems[0]} (model {llm.get('id')})")
    return _shape(gpu, layout)


def grouped(shapes: Sequence[Shape], seen: set[tuple[int, int, int, int]]) -> list[list[Shape]]:
    """*shapes* in groups of one GPU count, ascending, leaving out (and adding to *seen*) the
    degrees already in *seen*."""
    groups: dict[int, list[Shape]] = {}
    for s in shapes:
        if s.degrees not in seen:
            seen.add(s.degrees)
            groups.setdefault(s.gpus, []).append(s)
    return [groups[n] for n in sorted(groups)]


def base_groups(
    llm: Mapping[str, Any],
    gpu: Mapping[str, Any],
    degrees: Sequence[int],
    engine: str | None = None,
) -> list[list[Shape]]:
    """The groups of the heads-valid ``tp_degrees`` *degrees* (the bottom of :func:`ladder`)
    for *engine* (None: any engine)."""
    return grouped(_base(llm, gpu, degrees, engine), set())


def more_groups(
    llm: Mapping[str, Any],
    gpu: Mapping[str, Any],
    below: Sequence[Sequence[Shape]],
    stated: Sequence[Shape] | None = None,
    engine: str | None = None,
) -> list[list[Shape]]:
    """The groups above the ``tp_degrees`` groups *below*: rack-scale and pipeline layouts the
    *engine* runs (module doc), or the offer's checked *stated* layouts (None: automatic)."""
    top = max((s.gpus for group in below for s in group), default=0)
    seen = {s.degrees for group in below for s in group}
    return grouped(_automatic(llm, gpu, top, engine) if stated is None else list(stated), seen)


def ladder(
    llm: Mapping[str, Any],
    gpu: Mapping[str, Any],
    degrees: Sequence[int],
    stated: Sequence[Shape] | None = None,
    engine: str | None = None,
) -> list[list[Shape]]:
    """Groups of layouts by GPU count, ascending, each layout once (module doc); *degrees* the
    heads-valid ``tp_degrees``, *stated* the offer's checked ``layouts`` (None: automatic),
    *engine* the entry's (None: any engine)."""
    below = base_groups(llm, gpu, degrees, engine)
    more = more_groups(llm, gpu, below, stated, engine)
    return grouped([s for g in [*below, *more] for s in g], set())


def smallest_fitting(cands: Sequence[Candidate]) -> dict[tuple[str, str], Candidate]:
    """Per (model entry, GPU) the evaluated aggregated candidate with the fewest GPUs whose
    weights fit (not a memory exclusion; scenario rules and prediction errors say nothing about
    memory)."""
    out: dict[tuple[str, str], Candidate] = {}
    for c in cands:
        if c.pools or c.exclusion in (Exclusion.MEMORY, Exclusion.RULE, Exclusion.PREDICTION):
            continue
        best = out.get((c.name, c.gpu))
        if best is None or c.gpus_per_replica < best.gpus_per_replica:
            out[(c.name, c.gpu)] = c
    return out


def smallest_workers(cands: Sequence[Candidate]) -> dict[tuple[str, str], Pool]:
    """Per (model entry, GPU) the pool of a feasible disaggregated unit whose workers run on the
    fewest GPUs: every feasible unit is kept (:func:`planner.disagg.evaluate.kept_units`), each
    worker holding the weights, so the smallest worker that meets the SLA in a unit."""
    out: dict[tuple[str, str], Pool] = {}
    for c in cands:
        for p in c.pools if c.feasible else ():
            best = out.get((c.name, p.gpu))
            if best is None or p.running_gpus_per_worker < best.running_gpus_per_worker:
                out[(c.name, p.gpu)] = p
    return out


def multi_node_notes(
    cands: Sequence[Candidate],
    pairs: Collection[tuple[str, str]] | None = None,
    user_catalog: str | None = None,
) -> list[str]:
    """One line per (model entry, GPU) — of *pairs* when given — whose smallest fitting layout
    (:func:`smallest_fitting`) spans more than one node; of disaggregated units alone (no
    aggregated candidate there), whose smallest worker (:func:`smallest_workers`) does, its
    nodes from the catalog (*user_catalog* the overlay the plan used)."""
    out, aggregated = [], smallest_fitting(cands)
    for (name, gpu), c in aggregated.items():
        if c.nodes > 1 and (pairs is None or (name, gpu) in pairs):
            out.append(
                f"{name} needs more than one node of {gpu}: the smallest layout that fits is "
                f"TP {c.layout} on {c.tp * c.pipeline_parallel * c.data_parallel} GPUs "
                f"({c.nodes} nodes)"
            )
    for (name, gpu), p in smallest_workers(cands).items():
        row, gpus = _catalog_gpu(gpu, user_catalog), p.running_gpus_per_worker
        nodes = held_gpus(row, gpus, p.tp * p.data_parallel, p.pipeline_parallel)[1] if row else 1
        if nodes > 1 and (name, gpu) not in aggregated and (pairs is None or (name, gpu) in pairs):
            out.append(
                f"{name} needs more than one node of {gpu} per worker: the smallest worker "
                f"layout of a unit that meets the SLA is TP {p.layout} on {gpus} GPUs "
                f"({nodes} nodes)"
            )
    return out
