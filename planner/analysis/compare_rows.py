"""The rows of ``wattgpu compare``: which candidates each row plans, and the row of a plan.

:func:`row_groups` gives every row its candidates (one GPU type's replicas, one unit's GPU types,
or both mixed); :func:`plan_row` turns the plan of one group into a :class:`CompareRow`, or says
why the group has none in the words of ``compare``'s options; :func:`rank_key` orders the rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from planner.analysis.compare_errors import option_text
from planner.inputs import Exclusion, pools_gpu_cell, pools_layout_cell
from predictors.catalog import engine_support, precision_support

if TYPE_CHECKING:
    from planner.inputs import Candidate, ModelDemand
    from planner.result import Plan

#: The row kind of a GPU type's best fleet mixing replicas and units (``--deployment both``).
MIXED = "mixed"

UnfitKind = Literal["memory", "engine", "precision", "replicas", "sla", "other"]
"""Why a row has no fleet (:func:`unfit_kind`): carried beside the rows, in no output, so the
closing error (:func:`planner.analysis.compare_view.no_fit_message`) says what the rows say
without reading their text."""


@dataclass(frozen=True)
class CompareRow:
    """The best fleet of one GPU type (or why there is none)."""

    gpu: str
    fits: bool
    reason: str
    priced: bool
    deployment: str
    """e.g. ``2 × TP1``, ``1 × TP2 + 1 × TP1`` or ``1 × TP8×PP2 on 2 nodes``; empty when it
    does not fit."""
    tp: int | None
    replicas: int
    gpus: int
    itl_ms: float | None
    power_w_per_gpu: float | None
    wh_per_1k_output_tokens: float | None
    usd_per_million_output_tokens: float | None
    energy_kwh: float | None
    cost_usd: float | None
    in_domain: bool | None
    itl_ms_at_served_load: float | None = None
    """Mean ITL at the load each replica serves (``itl_ms`` is the ITL at capacity)."""
    layout: str = ""
    """The layout of a replica of the deployment listed first in ``deployment``, the one with
    the most replicas (``8`` for TP 8, ``8×PP2``; empty when it does not fit)."""
    nodes: int | None = None
    """Nodes one replica of that deployment spans (1 inside one node)."""
    deployment_kind: str = "aggregated"
    """``aggregated``, ``disaggregated`` (then ``gpu`` is the unit's GPU type, or its
    ``prefill → decode`` types) or, with ``--deployment both``, ``mixed`` (replicas and units on
    one GPU type, when the best fleet mixes them); only in the output of ``--deployment`` other
    than aggregated."""
    carbon_kg: float | None = None
    """Emissions of the fleet over the horizon at ``--region``'s grid intensity and the PUE
    (kg CO2e; empty when it does not fit)."""


def why_not(demand: ModelDemand, cands: list[Candidate], *, precision_given: bool = True) -> str:
    """Why no layout of this GPU type serves the model: memory and SLA as separate reasons
    (:func:`planner.solve.explain.unserved_reasons`), in ``compare``'s option names
    (:func:`~planner.analysis.compare_errors.option_text`)."""
    from planner.solve.explain import unserved_reasons

    if not cands:
        return "no candidate (check --gpus)"
    return option_text("; ".join(unserved_reasons(demand, cands)), precision_given=precision_given)


def too_many_replicas(demand: ModelDemand, cands: list[Candidate]) -> str | None:
    """The fleet-size reason of one row (:func:`planner.build.check_fleet_size` on its own
    candidates), so a GPU type's row never depends on the other types listed."""
    from planner.build import FleetSizeError, check_fleet_size

    try:
        check_fleet_size([demand], cands)
    except FleetSizeError as exc:
        text = str(exc).split(" — split the load", 1)[0].replace(f" for {demand.name}", "")
        option, _, rest = option_text(text).partition(": ")
        return f"{rest} ({option})" if rest else option  # a cell never starts with "-"
    return None


def unfit_kind(
    cands: list[Candidate], engine: str, precision: str, gpus: list[Mapping[str, Any]]
) -> UnfitKind:
    """Why no candidate of a row (on catalog GPUs *gpus*) is feasible, in the predictors' order
    (:mod:`predictors.catalog.validity`): the engine does not run on one of its GPU types, else
    one cannot serve the precision, else no layout holds the weights (every candidate excluded
    for memory, as :func:`why_not` then says), else a layout misses an SLA, else ``other``."""
    if not all(engine_support.runs_on(engine, g) for g in gpus):
        return "engine"
    if not all(precision_support.serves(precision, g) for g in gpus):
        return "precision"
    if cands and all(c.exclusion == Exclusion.MEMORY for c in cands):
        return "memory"
    if any(c.exclusion in (Exclusion.ITL_SLA, Exclusion.TTFT_SLA) for c in cands):
        return "sla"
    return "other"


def unfit_row(gpu: str, reason: str, priced: bool, kind: str) -> CompareRow:
    """The row of a GPU type (or unit) with no fleet, and why."""
    return CompareRow(
        gpu, False, reason, priced, "", None, 0, 0, None, None, None, None, None, None, None,
        deployment_kind=kind,
    )  # fmt: skip


def plan_row(
    gpu: str,
    priced: bool,
    price_note: str | None,
    plan: Plan,
    cands: list[Candidate],
    tokens: float,
    kind: str,
    *,
    precision_given: bool = True,
) -> CompareRow:
    """The row of *plan* (the best fleet of *cands*); *priced*: its cost is ranked;
    *price_note*: None for a GPU type with a catalog rental price, else what its cost rests on
    (TCO) or that it has none; *precision_given*: ``--precision`` was given (:func:`why_not`)."""
    t = plan.totals
    if not plan.has_solution or t is None:
        given = precision_given
        reason = (
            why_not(plan.inputs.models[0], cands, precision_given=given)
            if not any(c.feasible for c in cands)
            else option_text("; ".join(plan.solve.messages), precision_given=given)
            or plan.status.value
        )
        return unfit_row(gpu, reason, priced, kind)
    allocs = sorted(plan.allocations, key=lambda a: (-a.replicas, a.candidate.tp))
    gpus = sum(a.gpus for a in allocs)
    cost = t.cost_usd if priced else None
    return CompareRow(
        gpu=gpu,
        fits=True,
        reason=(price_note or "")
        if priced
        else f"no $/hour for {gpu} in the catalog: cost not ranked",
        priced=priced,
        deployment=" + ".join(f"{a.replicas} × {layout_cell(a.candidate)}" for a in allocs),
        tp=allocs[0].candidate.tp,
        replicas=sum(a.replicas for a in allocs),
        gpus=gpus,
        itl_ms=1000.0 * max(a.candidate.itl_s_at_capacity for a in allocs),
        power_w_per_gpu=t.mean_power_w / gpus if gpus else None,
        wh_per_1k_output_tokens=t.energy_kwh * 1000.0 / (tokens / 1000.0) if tokens else None,
        usd_per_million_output_tokens=cost / tokens * 1e6 if cost is not None and tokens else None,
        energy_kwh=t.energy_kwh,
        cost_usd=cost,
        in_domain=all(a.candidate.in_domain for a in allocs),
        itl_ms_at_served_load=1000.0 * max(a.itl_s_at_served_load for a in allocs),
        layout=allocs[0].candidate.layout,
        nodes=allocs[0].candidate.nodes,
        deployment_kind=kind,
        carbon_kg=t.carbon_kg,
    )


def layout_cell(c: Candidate) -> str:
    """A replica's layout with the nodes it spans when more than one: ``8×PP2 on 2 nodes``; a
    unit's pools (``[P 3×2 → D 2×8]``)."""
    if c.pools:
        return f"[{pools_layout_cell(c.pools)}]"
    return "TP" + c.layout + (f" on {c.nodes} nodes" if c.nodes > 1 else "")


def rank_key(by: str) -> Any:
    """Sort key of the rows: fleets before the types without one, by *by*."""

    def key(row: CompareRow) -> tuple[Any, ...]:
        if not row.fits:
            return (2, 0.0, 0.0, row.gpu, row.deployment_kind)
        if by == "cost":
            return (0 if row.priced else 1, row.cost_usd or 0.0, row.energy_kwh, row.gpu)
        cost = row.cost_usd if row.priced else float("inf")
        return (0, row.energy_kwh, cost, row.gpu, row.deployment_kind)

    return key


def row_groups(
    deployment: str, cands: tuple[Candidate, ...], gpus: list[str]
) -> dict[tuple[str, str], list[Candidate]]:
    """The candidates of every row: (deployment kind, GPU type or a unit's types) -> them; with
    disaggregated rows, every GPU type of *gpus* that is in no unit gets a row of its replicas'
    candidates (empty or infeasible: its row says why no unit could be built)."""
    out: dict[tuple[str, str], list[Candidate]] = {}
    if deployment != "disaggregated":
        for gpu in gpus:
            out[("aggregated", gpu)] = [c for c in cands if not c.pools and c.gpu == gpu]
    for c in cands:
        if c.pools and deployment != "aggregated":
            out.setdefault(("disaggregated", pools_gpu_cell(c.pools)), []).append(c)
    if deployment != "aggregated":
        in_units = {g for kind, key in out if kind == "disaggregated" for g in key.split(" → ")}
        for gpu in gpus:
            if gpu not in in_units:
                out[("disaggregated", gpu)] = [c for c in cands if not c.pools and c.gpu == gpu]
    if deployment == "both":  # the planner mixes the two kinds on one GPU type
        for gpu in gpus:
            units = [c for c in out.get(("disaggregated", gpu), []) if c.pools]
            if units and out.get(("aggregated", gpu)):
                out[(MIXED, gpu)] = [*out[("aggregated", gpu)], *units]
    return out
