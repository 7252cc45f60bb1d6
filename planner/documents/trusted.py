"""A plan's allocation records, and a saved plan reported with ``--trust``: its figures rebuilt
from what planning accounts.

Every allocation is rebuilt from its candidate, replicas and load (no edited copy of a
candidate's fact or figure is reported), and the fleet's and each region's totals from the
rebuilt allocations, so an edited total is neither reported nor kept in a report's copy of the
plan. A total that differed from the rebuilt one is warned about, once per field, unless the
check already named that field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from planner.documents.base import Document, dataclass_values
from planner.documents.plan_parts import AllocationDocument, TotalsDocument
from planner.documents.pools import allocation_pools
from planner.documents.records import candidate_of
from planner.documents.verify_pools import differs
from planner.inputs import PlanningInputs
from planner.result import (
    Allocation,
    itl_s_at_served_load,
    make_allocation,
    make_totals,
    period_power_w,
    region_totals,
)

Doc = TypeVar("Doc", bound=Document)


def allocation_document(a: Allocation, split: bool) -> AllocationDocument:
    """The JSON record of allocation *a* (*split*: with the deployment keys of units)."""
    c = a.candidate
    x = a.requests_per_s_by_period
    return AllocationDocument(
        name=c.name,
        model=c.model,
        gpu=c.gpu,
        tp=c.tp,
        replicas=a.replicas,
        gpus=a.gpus,
        requests_per_s_by_period=list(x),
        batch_size=c.batch_size,
        itl_s=c.itl_s_at_capacity,
        power_w_per_gpu=a.power_w_per_gpu,
        energy_kwh=a.energy_kwh,
        facility_energy_kwh=a.facility_energy_kwh,
        cost_usd=a.cost_usd,
        gpu_cost_usd=a.gpu_cost_usd,
        energy_cost_usd=a.energy_cost_usd,
        carbon_cost_usd=a.carbon_cost_usd,
        carbon_kg=a.carbon_kg,
        power_w_by_period=period_power_w(c, a.replicas, x),
        itl_s_at_capacity=c.itl_s_at_capacity,
        itl_s_at_served_load=a.itl_s_at_served_load,
        itl_s_at_served_load_by_period=itl_s_at_served_load(c, a.replicas, x),
        requests_per_s_per_replica_by_period=[v / a.replicas if a.replicas else 0.0 for v in x],
        tensor_parallel=c.tp,
        pipeline_parallel=c.pipeline_parallel,
        data_parallel=c.data_parallel,
        expert_parallel=c.expert_parallel,
        nodes=c.nodes,
        region=c.region or None,
        **allocation_pools(c, a.replicas, x, split),
    )


def _totals_document(t: Any) -> TotalsDocument:
    return TotalsDocument(**dataclass_values(t), cost_usd=t.cost_usd)


def _differs(stated: Any, again: Any) -> bool:
    """The check's tolerance (:func:`.verify_pools.differs`); GPU counts by type exactly."""
    if isinstance(again, dict):
        return dict(stated) != dict(again)
    return differs(stated, float(again))


def _edited(where: str, stated: TotalsDocument | None, again: TotalsDocument) -> list[str]:
    if stated is None:
        return []
    fields = again.model_dump()
    return [
        f"{where}.{key}: {getattr(stated, key)!r}, but the allocations add up to "
        + (f"{value}" if isinstance(value, dict) else f"{value:.6g}")
        for key, value in fields.items()
        if _differs(getattr(stated, key), value)
    ]


def trusted_document(
    doc: Doc,
    inputs: PlanningInputs,
    source: str,
    warned: set[str],
    warn: Callable[[str], None] | None = None,
) -> Doc:
    """The plan document *doc* (planned on *inputs*) with its allocations and totals rebuilt; a
    total that differed is a warning through *warn* (``FILE: field: …``) unless its field is in
    *warned* (named by the check already)."""
    d: Any = doc  # a PlanDocument (planner.documents.plan imports this module)
    split = any(a.deployment is not None for a in d.allocations)  # its deployment keys
    allocations = tuple(
        make_allocation(
            candidate_of(d.candidate(a.key)),
            a.replicas,
            tuple(a.requests_per_s_by_period),
            inputs,
        )
        for a in d.allocations
    )
    update: dict[str, Any] = {"allocations": [allocation_document(a, split) for a in allocations]}
    edited: list[str] = []
    if d.totals is not None:
        totals = _totals_document(make_totals(allocations, inputs))
        edited += _edited("totals", d.totals, totals)
        update["totals"] = totals
    if d.regions:
        by_region = region_totals(allocations, inputs)
        regions = []
        for i, r in enumerate(d.regions):
            again = _totals_document(by_region[r.name])
            edited += _edited(f"regions[{i}].totals", r.totals, again)
            regions.append(r.model_copy(update={"totals": again}))
        update["regions"] = regions
    for line in edited:
        if line.split(": ", 1)[0] not in warned:
            (warn or (lambda _: None))(
                f"warning: {source}: {line} (--trust: reported with the figures its "
                "allocations recompute to)"
            )
    return doc.model_copy(update=update)
