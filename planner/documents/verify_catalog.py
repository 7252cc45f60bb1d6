"""The plan JSON check (:mod:`planner.documents.verify`) of the facts the catalogs decide: a
model entry's tokens against its model's context window, and a candidate's layout, the GPUs of
inventory it holds and the nodes it spans.

A scenario refuses an entry whose prompt and output tokens exceed the context of its model
(:func:`predictors.catalog.context_window.context_excess`), the validity rules refuse expert or
attention data parallelism on a dense model and the layouts the engines do not run
(:func:`predictors.catalog.validity.layout_problems`), and the planner gives a replica the GPUs of
inventory and nodes :func:`planner.layouts.held_gpus` gives its layout (a disaggregated unit:
each worker as the aggregated replica of its layout, the unit's nodes
:func:`planner.disagg.units.unit_nodes`). A saved plan with ``input_tokens`` 200,000 for
Llama-3.1-8B (a 131,072-token context), ``expert_parallel`` 4 on that dense model or ``nodes`` 5
on a 1-GPU replica was reported as written; each is now one line naming the field.

The rules are read from the catalogs of the plan (the bundled ones plus its ``user_catalog``):
the context window and the layout rule whenever the model and GPU are found there, the held GPUs
and nodes only when they are the catalogs the plan was made with (its ``catalog_sha256``: a node
size is a catalog fact). A replica never spans more nodes than it holds GPUs, whatever the
catalogs. Works on the plain JSON mapping, like the rest of the check.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.documents.json_values import is_number, is_whole
from planner.documents.verify_pools import RELATIVE_TOLERANCE
from predictors.catalog import validity
from predictors.catalog.context_window import context_excess
from predictors.core.errors import WattgpuError
from predictors.core.escape import short_repr
from predictors.core.vocab import ENGINES

if TYPE_CHECKING:
    from predictors.catalog.store import Catalog

#: A layout rule's field (:func:`predictors.catalog.validity.layout_problems`) -> the record's.
_FIELDS = {"gpu_count": "tp"}
#: A record's layout degrees, in the order of the validity rules.
_DEGREES = ("tp", "pipeline_parallel", "data_parallel", "expert_parallel")


def plan_catalog(a: Mapping[str, Any]) -> tuple[Catalog | None, bool]:
    """The catalogs of a plan whose assumptions are *a* (the bundled ones plus its
    ``user_catalog``) and whether they are those it was made with (its ``catalog_sha256``);
    (None, False) when they cannot be read."""
    from predictors.catalog.store import load_catalog  # the catalogs only where a plan is read

    recorded = a.get("user_catalog")
    try:
        catalog = load_catalog(Path(recorded) if isinstance(recorded, str) and recorded else None)
    except (WattgpuError, OSError, ValueError):
        return None, False
    stated = a.get("catalog_sha256")
    return catalog, isinstance(stated, str) and bool(stated) and stated == catalog.fingerprint


class _Rules:
    """The catalogs of one plan, their rows and the layout rule's verdicts as they are read (a
    plan repeats a model, a GPU type and a layout in many candidates)."""

    def __init__(self, catalog: Catalog, same: bool, engine: Any) -> None:
        self.catalog, self.same = catalog, same
        self.engine = engine if isinstance(engine, str) and engine in ENGINES else None
        self._rows: dict[tuple[str, Any], dict[str, Any] | None] = {}
        self._verdicts: dict[tuple[Any, ...], str] = {}

    def row(self, kind: str, name: Any) -> dict[str, Any] | None:
        """The catalog row of the model (*kind* ``llm``) or GPU (``gpu``) *name*; None when
        there is none."""
        key = (kind, name)
        if key not in self._rows:
            self._rows[key] = self._read(kind, name)
        return self._rows[key]

    def _read(self, kind: str, name: Any) -> dict[str, Any] | None:
        if not isinstance(name, str):
            return None
        c = self.catalog
        try:
            if kind == "llm":
                return c.llm(name) if c.try_resolve_llm(name) else None
            return c.gpu(name) if c.try_resolve_gpu(name) else None
        except (WattgpuError, KeyError, ValueError):
            return None

    def verdict(
        self, llm: Mapping[str, Any], row: Mapping[str, Any], degrees: tuple[int, ...]
    ) -> str:
        """The first problem :func:`predictors.catalog.validity.layout_problems` finds with
        *degrees* (TP, PP, DP, EP) of catalog model *llm* on catalog GPU *row* under the plan's
        engine ('' when none)."""
        key = (llm.get("id"), row.get("id"), *degrees)
        if key not in self._verdicts:
            tp, pp, dp, ep = degrees
            _, problems = validity.layout_problems(
                llm, row, tp * pp * dp, pp, dp, ep, engine=self.engine
            )
            self._verdicts[key] = problems[0] if problems else ""
        return self._verdicts[key]


def _context(data: dict[str, Any], rules: _Rules) -> Iterator[str]:
    """Each model entry whose tokens exceed its model's context window, by the scenario's rule
    (:func:`predictors.catalog.context_window.context_excess`)."""
    for i, m in enumerate(data.get("models") or []):
        if not isinstance(m, dict):
            continue
        llm = rules.row("llm", m.get("model"))
        given: Any = (m.get("input_tokens"), m.get("output_tokens"))
        if llm is None or not all(is_number(t) and t > 0 for t in given):
            continue  # a bad token count is the entries check's to name
        excess = context_excess(llm, float(given[0]), float(given[1]))
        if excess:
            yield f"models[{i}].input_tokens: {excess} (a scenario refuses such an entry)"


def _layout_rule(
    where: str, model: Any, gpu: Any, record: Mapping[str, Any], rules: _Rules
) -> Iterator[str]:
    """The layout (``tp``, ``pipeline_parallel``, ``data_parallel``, ``expert_parallel``) of
    *record* against the validity rules: a dense model has expert and data parallelism 1 (every
    candidate); the whole rule for a feasible one (the planner keeps a layout the rule refuses as
    an excluded candidate, for the predictors to give their reason)."""
    llm = rules.row("llm", model)
    if llm is None:
        return
    degrees = tuple(int(record.get(k) or 1) for k in _DEGREES)
    if not llm.get("is_moe"):
        for key, value in zip(_DEGREES[2:], degrees[2:], strict=True):
            if value != 1:
                yield (
                    f"{where}.{key}: {value}, but {model} is a dense model (no experts): its "
                    f"{key} is 1 (the validity rules of predict and of a scenario's layouts)"
                )
                return
    row = rules.row("gpu", gpu)
    if record.get("feasible") is False or row is None:
        return
    if not (llm.get("num_attention_heads") and llm.get("num_kv_heads")):
        return  # the rules read the heads; the predictors say why they cannot predict it
    problem = rules.verdict(llm, row, degrees)
    if problem:
        field, _, what = problem.partition(": ")
        key = _FIELDS.get(field, field) if what else "tp"
        yield (
            f"{where}.{key}: {short_repr(record.get(key))}, but the layout rule refuses it on "
            f"{gpu}: {what or problem}"
        )


def _held(row: Mapping[str, Any], record: Mapping[str, Any]) -> tuple[int, int]:
    """(GPUs of inventory, nodes) one replica (or worker) of *record*'s layout takes."""
    from planner.layouts import held_gpus

    tp, pp, dp = (int(record.get(k) or 1) for k in ("tp", "pipeline_parallel", "data_parallel"))
    return held_gpus(row, tp * pp * dp, tp * dp, pp)


def _geometry(where: str, c: Mapping[str, Any], rules: _Rules | None) -> Iterator[str]:
    """A replica's nodes against its GPUs; with the catalogs the plan was made with (*rules*,
    None when they are not), its held GPUs and nodes (a unit's workers' and nodes) as the
    planner gives them."""
    nodes: Any = c.get("nodes")
    gpus: Any = c.get("gpus_per_replica")
    if not (is_whole(nodes, 1) and is_whole(gpus, 1)):
        return
    if nodes > gpus:
        yield (
            f"{where}.nodes: {nodes} is impossible (more than the {gpus} GPU(s) of its replica: "
            "a node holds at least one)"
        )
        return
    if rules is None or c.get("feasible") is False:
        return
    pools = c.get("pools") if c.get("deployment") == "disaggregated" else None
    if pools:
        yield from _unit_geometry(where, c, pools, rules)
        return
    row = rules.row("gpu", c.get("gpu"))
    if row is None:
        return
    held, spans = _held(row, c)
    layout = f"TP {c.get('tp')} × PP {c.get('pipeline_parallel') or 1} × DP "
    layout += f"{c.get('data_parallel') or 1} of {c.get('gpu')}"
    if gpus != held:
        yield (
            f"{where}.gpus_per_replica: {gpus}, but a replica of {layout} holds {held} GPUs of "
            "inventory (planner.layouts.held_gpus, the catalogs the plan was made with)"
        )
    elif nodes != spans:
        yield (
            f"{where}.nodes: {nodes}, but a replica of {layout} spans {spans} node(s) of "
            f"{validity.node_gpus(row)} GPUs (the catalogs the plan was made with)"
        )


def _unit_geometry(
    where: str, c: Mapping[str, Any], pools: list[Any], rules: _Rules
) -> Iterator[str]:
    """A unit's workers hold what the aggregated replica of their layout holds; its nodes are
    :func:`planner.disagg.units.unit_nodes` of them."""
    from planner.disagg.units import Side, unit_nodes

    sides, node_gpus = [], {}
    for j, p in enumerate(pools):
        row = rules.row("gpu", p.get("gpu"))
        if row is None:
            return
        held, spans = _held(row, p)
        if p.get("gpus_per_worker") != held:
            yield (
                f"{where}.pools[{j}].gpus_per_worker: {p.get('gpus_per_worker')!r}, but a worker "
                f"of TP {p.get('tp')} × PP {p.get('pipeline_parallel') or 1} × DP "
                f"{p.get('data_parallel') or 1} of {p.get('gpu')} holds {held} GPUs of inventory "
                "(planner.layouts.held_gpus, the catalogs the plan was made with)"
            )
            return
        node_gpus[str(p["gpu"])] = validity.node_gpus(row)
        tp, pp, dp, ep = (int(p.get(k) or 1) for k in _DEGREES)
        sides.append(Side(str(p["gpu"]), int(p["workers"]), tp, pp, dp, ep, held, spans, 0.0))
    spans = unit_nodes(sides, node_gpus)
    if c.get("nodes") != spans:
        yield (
            f"{where}.nodes: {c.get('nodes')!r}, but its pools' workers span {spans} node(s) "
            "(planner.disagg.units.unit_nodes, the catalogs the plan was made with)"
        )


def _pool_power(where: str, p: Mapping[str, Any], rules: _Rules) -> Iterator[str]:
    """A pool without a curve (hand-built: :mod:`.verify_power` checks one with a curve against
    it): its power at capacity inside [its idle, its GPUs × the TDP of its GPU type]."""
    idle: Any = p.get("idle_power_w")
    top: Any = p.get("power_w_at_capacity")
    gpus: Any = p.get("gpus")
    row = rules.row("gpu", p.get("gpu"))
    tdp = row.get("tdp_w") if row else None
    if p.get("power_curve_w") or not (is_number(idle) and is_number(top) and is_number(tdp)):
        return
    assert tdp is not None
    least, most = float(idle), float(tdp) * float(gpus) if is_whole(gpus, 1) else math.inf
    if not least * (1 - RELATIVE_TOLERANCE) <= float(top) <= most * (1 + RELATIVE_TOLERANCE):
        yield (
            f"{where}.power_w_at_capacity: {short_repr(top)} W is outside the pool's [idle, "
            f"GPUs × TDP] = [{least:g}, {most:g}] W"
        )


def _candidates(data: dict[str, Any], rules: _Rules) -> Iterator[str]:
    for i, c in enumerate(data.get("candidates") or []):
        if not isinstance(c, dict):
            continue
        where = f"candidates[{i}]"
        pools = c.get("pools") if c.get("deployment") == "disaggregated" else None
        for j, p in enumerate(pools if isinstance(pools, list) else ()):
            if isinstance(p, dict):
                record = {**p, "feasible": c.get("feasible")}
                at = f"{where}.pools[{j}]"
                yield from _layout_rule(at, c.get("model"), p.get("gpu"), record, rules)
                yield from _pool_power(at, p, rules)
        if not pools:
            yield from _layout_rule(where, c.get("model"), c.get("gpu"), c, rules)
        yield from _geometry(where, c, rules if rules.same else None)


def catalog_problems(data: dict[str, Any]) -> list[str]:
    """Every model entry and candidate of the plan JSON *data* that its catalogs refuse (module
    doc), one line per field; a replica spanning more nodes than it holds GPUs even when the
    catalogs cannot be read."""
    a = data.get("assumptions")
    a = a if isinstance(a, dict) else {}
    catalog, same = plan_catalog(a)
    if catalog is None:
        return [
            line
            for i, c in enumerate(data.get("candidates") or [])
            if isinstance(c, dict)
            for line in _geometry(f"candidates[{i}]", c, None)
        ]
    rules = _Rules(catalog, same, a.get("engine"))
    return [*_context(data, rules), *_candidates(data, rules)]
