"""The disclosure fields of a plan: :func:`build_disclosure`.

A function of the plan document (its allocations, candidate records and assumptions, with the
scenario's ``disclosure`` section it carries), its forecast, the energy ranges
(:mod:`planner.disclosure.ranges`) and the catalog (GPU embodied emissions, LLM configs).
Formulas: energy and emissions as the forecast accounts them (:mod:`planner.analysis.forecast`);
idle/active, prefill/decode and embodied in :mod:`planner.disclosure.energy`; FLOPs in
:mod:`planner.disclosure.flops`; SCI = (O + M) / R per 1M output tokens with O = facility energy ×
the marginal intensity when given (else the location-based average) and M the embodied share.
"""

from __future__ import annotations

from planner.disclosure.emissions import hourly_rows
from planner.disclosure.energy import AllocationEnergy, allocation_energy, embodied_kg_co2e
from planner.disclosure.fields import LABELS
from planner.disclosure.fleet import effective_pue, fleet_fields
from planner.disclosure.flops import METHOD as FLOPS_METHOD
from planner.disclosure.model_fields import model_fields
from planner.disclosure.ranges import EnergyRanges
from planner.documents.disclosure import (
    BoundaryItemDocument,
    DisclosureDocument,
    HardwareDocument,
    IdleActiveDocument,
    ModelDisclosureDocument,
)
from planner.documents.forecast import ForecastDocument
from planner.documents.plan import PlanDocument
from planner.scenario.disclosure import Disclosure, window_bounds
from predictors.catalog.store import Catalog
from predictors.core.errors import WattgpuError

FRAMEWORKS = [
    "EU AI Act Annex XI 2(e) / GPAI Code of Practice Model Documentation Form",
    "ISO/IEC 21031:2024 Software Carbon Intensity (SCI)",
    "GHG Protocol Scope 2 Guidance / ESRS E1",
    "AI Energy Score (Wh per 1,000 queries)",
]


def settings_of(doc: PlanDocument) -> Disclosure:
    """The scenario's disclosure section the plan carries (the defaults when it has none)."""
    return doc.assumptions.disclosure or Disclosure()


def window(doc: PlanDocument) -> tuple[str | None, str | None]:
    """(start, end) of the reporting window as ISO timestamps (None without a start date)."""
    start = settings_of(doc).reporting_start
    if start is None:
        return None, None
    bounds = window_bounds(start, doc.assumptions.hours)
    if bounds is None:  # the scenario and the plan JSON check refuse it before
        raise WattgpuError(
            f"assumptions.disclosure.reporting_start: {start!r} + {doc.assumptions.hours:,.10g} h "
            "ends after 9999-12-31 — plan the scenario again with an earlier reporting_start"
        )
    return bounds[0].isoformat(), bounds[1].isoformat()


def _embodied_boundary(energies: list[AllocationEnergy]) -> BoundaryItemDocument:
    """The embodied component as the fields treat it: included when every planned GPU has a
    catalog ``embodied_kg_co2e``; else excluded from the fleet's figures (not applicable there,
    :func:`planner.disclosure.fleet.fleet_fields`), naming the GPUs without one and the model
    entries whose own fields still include it (:func:`planner.disclosure.model_fields`)."""
    missing = sorted({g for e in energies for g, _, kg in e.embodied_by_gpu if kg is None})
    if not missing:
        return BoundaryItemDocument(
            component="embodied",
            treatment="included",
            note="GPU manufacturing share over the window (SCI M), modelled per catalog GPU",
        )
    names = dict.fromkeys(e.allocation.name for e in energies)
    lacking = {
        e.allocation.name for e in energies if any(kg is None for *_, kg in e.embodied_by_gpu)
    }
    kept = [n for n in names if n not in lacking]
    only = (
        f"; included only in the fields of model entr{'y' if len(kept) == 1 else 'ies'} "
        f"{', '.join(kept)}, whose GPUs have one"
        if kept
        else ""
    )
    return BoundaryItemDocument(
        component="embodied",
        treatment="excluded",
        note="not in the fleet's embodied and SCI fields (not applicable: no embodied_kg_co2e in "
        f"the catalog for {', '.join(missing)}){only}; give embodied_kg_co2e in the user "
        "catalog's gpus.csv to include the GPU manufacturing share",
    )


def _boundary(
    d: Disclosure, pue: float, embodied: BoundaryItemDocument
) -> list[BoundaryItemDocument]:
    host = (
        BoundaryItemDocument(
            component="host",
            treatment="approximated",
            factor=d.host_overhead_factor,
            note="host energy = GPU energy × (factor − 1), reported as energy_host_kwh; not in "
            "the facility energy or emissions figures",
        )
        if d.host_overhead_factor is not None
        else BoundaryItemDocument(
            component="host",
            treatment="excluded",
            note="host CPUs, memory, fans; give disclosure.host_overhead_factor to approximate",
        )
    )
    return [
        BoundaryItemDocument(
            component="gpu_board",
            treatment="included",
            note="board power of the inference GPUs, idle and under load (predicted)",
        ),
        host,
        BoundaryItemDocument(component="network", treatment="excluded", note="not modelled"),
        BoundaryItemDocument(component="storage", treatment="excluded", note="not modelled"),
        BoundaryItemDocument(
            component="idle_and_overprovisioned_replicas",
            treatment="included",
            note="every planned replica draws at least idle power in every period",
        ),
        BoundaryItemDocument(
            component="facility",
            treatment="approximated",
            factor=pue,
            note="cooling and power distribution through the PUE factor (facility energy = GPU "
            "energy × factor)",
        ),
        embodied,
        BoundaryItemDocument(
            component="training",
            treatment="included" if d.training_energy_kwh is not None else "excluded",
            note="user-supplied figure" if d.training_energy_kwh is not None else "not in scope",
        ),
    ]


def _hardware(doc: PlanDocument, catalog: Catalog) -> list[HardwareDocument]:
    out = []
    for a in doc.allocations:
        m = doc.model(a.name)
        precision = m.precision or f"checkpoint ({_default_dtype(catalog, m.model)})"
        out.append(
            HardwareDocument(
                name=a.name,
                model=a.model,
                gpu=a.gpu_label,
                gpus=a.gpus,
                tp=a.tp,
                replicas=a.replicas,
                layout=(
                    f"{a.replicas} unit(s) × {a.layout}"
                    if a.pools
                    else f"{a.replicas} replica(s) × TP{a.layout} on {a.gpu}"
                ),
                engine=doc.assumptions.engine,
                precision=precision,
            )
        )
    return out


def _default_dtype(catalog: Catalog, model: str) -> str:
    lid = catalog.try_resolve_llm(model)
    return str(catalog.llm(lid).get("default_dtype")) if lid else "not in the catalog"


def _price_basis(doc: PlanDocument) -> dict[str, str]:
    recorded = doc.assumptions.price_basis_by_gpu or {}
    return {
        gpu: recorded.get(gpu, "not recorded in the plan (written before price bases)")
        for gpu in doc.inventory
    }


def _idle_active(energies: list[AllocationEnergy]) -> list[IdleActiveDocument]:
    return [
        IdleActiveDocument(
            name=e.allocation.name,
            model=e.allocation.model,
            gpu=e.allocation.gpu_label,
            tp=e.allocation.tp,
            replicas=e.allocation.replicas,
            idle_energy_kwh=e.idle_energy_kwh,
            active_energy_kwh=e.active_energy_kwh,
            layout=e.allocation.layout,
        )
        for e in energies
    ]


def build_disclosure(
    doc: PlanDocument, fc: ForecastDocument, ranges: EnergyRanges, catalog: Catalog
) -> DisclosureDocument:
    """Every disclosure field of *doc* (a value or a ``not_applicable`` reason)."""
    d = settings_of(doc)
    energies = allocation_energy(doc, catalog)
    hours = doc.assumptions.hours
    embodied = [embodied_kg_co2e(e, hours, d.lifetime_years, d.resource_share) for e in energies]
    models = []
    for mf in fc.models:
        mine = [
            (e, m) for e, m in zip(energies, embodied, strict=True) if e.allocation.name == mf.name
        ]
        models.append(
            ModelDisclosureDocument(
                name=mf.name,
                fields=model_fields(doc, mf, mine, ranges, catalog, d),
            )
        )
    fields = fleet_fields(doc, fc, energies, embodied, models, ranges, d, window(doc))
    return DisclosureDocument(
        frameworks=FRAMEWORKS,
        recipients=list(d.recipients),
        phase="inference",
        persona=d.persona,
        fields=fields,
        models=models,
        boundary=_boundary(d, effective_pue(doc, fc), _embodied_boundary(energies)),
        idle_active=_idle_active(energies),
        hardware=_hardware(doc, catalog),
        hourly=hourly_rows(doc, fc),
        flops_methodology=FLOPS_METHOD,
        range_method=ranges.method,
        labels=LABELS,
        price_basis=_price_basis(doc),
    )
