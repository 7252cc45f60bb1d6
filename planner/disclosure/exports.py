"""Machine-readable exports of a report's disclosure: SPDX 3.0.1 (JSON-LD, AI profile) and
CycloneDX 1.6 (JSON, model cards with ``environmentalConsiderations.energyConsumptions``).

Both are plain JSON values built from the :class:`~planner.documents.report.ReportDocument`
(no SBOM library at run time). One element per model entry: an SPDX ``ai_AIPackage`` with
``ai_energyConsumption.ai_inferenceEnergyConsumption`` (facility kWh over the window) and every
disclosure field as an ``ai_metric`` entry; a CycloneDX ``machine-learning-model`` component
whose model card carries the inference energy (facility kWh, with the grid as its energy
provider) and its location-based CO2e, every field as a ``wattgpu:disclosure:*`` property.
Fleet fields are repeated under ``fleet.`` on every element, so each is self-contained.
Each SPDX package also carries what SPDX 3.0.1 requires of an AIPackage
(:mod:`planner.disclosure.spdx_package`). Identifiers (the CycloneDX ``serialNumber``, the SPDX
``spdxId`` base) are UUID-5s of a SHA-256 of the document's own content (its creation time
included) and of the plan JSON: the same plan reported at the same time, the same ids; another
plan or another document, other ids (fuzz round 28: two plans of one scenario reported in the
same second shared them).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from decimal import Decimal
from typing import Any

from planner.disclosure.spdx_package import (
    license_relationships,
    package_properties,
    suppliers,
)
from planner.documents.disclosure import DisclosureDocument, FieldDocument
from planner.documents.report import ReportDocument
from predictors.core.errors import WattgpuError

SPDX_CONTEXT = "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"
CYCLONEDX_SCHEMA = "http://cyclonedx.org/schema/bom-1.6.schema.json"
EXPORT_FORMATS = ("spdx", "cyclonedx")


def field_text(f: FieldDocument) -> str:
    """One field as text: 'value unit [label] P10-P90 a to b; source: …' or 'not_applicable: …'
    ('to' between the ends: a hyphen there read like the sign of a negative exponent)."""
    if f.not_applicable is not None:
        return f"not_applicable: {f.not_applicable}"
    rng = f" P10-P90 {f.p10:.6g} to {f.p90:.6g}" if f.p10 is not None and f.p90 is not None else ""
    shown = f"{f.value:.6g}" if isinstance(f.value, float | int) else str(f.value)
    unit = f" {f.unit}" if f.unit else ""
    return f"{shown}{unit} [{f.label}]{rng}; source: {f.source}"


def _disclosure(report: ReportDocument) -> DisclosureDocument:
    if report.disclosure is None:
        raise WattgpuError(
            f"plan {report.scenario.name}: status {report.status}, no allocations to disclose; "
            "plan a feasible scenario first"
        )
    return report.disclosure


#: the ids a document is first built with, to hash its content before it has its own
PLACEHOLDER_URN = f"urn:uuid:{uuid.UUID(int=0)}"


def content_urn(kind: str, document: dict[str, Any], report: ReportDocument) -> str:
    """``urn:uuid:`` (RFC 4122, version 5) of *document* (built with :data:`PLACEHOLDER_URN`)
    and of the report's plan: a SHA-256 of both, so that it names this content at this time."""
    digest = hashlib.sha256()
    digest.update(json.dumps(document, sort_keys=True, ensure_ascii=False).encode())
    digest.update(b"\0")
    digest.update(report.plan.model_dump_json().encode())
    return f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'wattgpu:{kind}:{digest.hexdigest()}')}"


def _entries(report: ReportDocument, name: str) -> list[tuple[str, str]]:
    d = _disclosure(report)
    mine = next(m for m in d.models if m.name == name)
    pairs = [(k, field_text(f)) for k, f in mine.fields.items()]
    pairs += [(f"fleet.{k}", field_text(f)) for k, f in d.fields.items()]
    pairs += [("fleet.boundary." + b.component, b.treatment) for b in d.boundary]
    return pairs


def _kwh(report: ReportDocument, name: str) -> float:
    f = next(m for m in _disclosure(report).models if m.name == name).fields["energy_facility_kwh"]
    return float(f.value) if isinstance(f.value, float | int) else 0.0


def decimal_text(value: float) -> str:
    """*value* as an ``xsd:decimal`` (SPDX ``ai_energyQuantity``): fixed-point, no exponent,
    with every significant digit of the float (its shortest round-trip form), so that a small
    figure (9.62181e-05 kWh) is not rounded away as ``%.6f`` did (``0.000096``)."""
    text = format(Decimal(repr(float(value))), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _spdx_time(iso: str) -> str:
    return dt.datetime.fromisoformat(iso).astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def spdx_document(report: ReportDocument) -> dict[str, Any]:
    """The report's disclosure as an SPDX 3.0.1 JSON-LD document (AI profile), its ids named
    after its content (:func:`content_urn`)."""
    draft = _spdx(report, PLACEHOLDER_URN)
    return _spdx(report, content_urn("spdx", draft, report))


def _spdx(report: ReportDocument, base: str) -> dict[str, Any]:
    d = _disclosure(report)
    agent = f"{base}#wattgpu"
    info = "_:creationinfo"
    created = _spdx_time(report.generated_at)
    training = d.fields.get("training_energy_kwh")
    model_ids = [str(m.fields["model_id"].value) for m in d.models]
    agents, supplied_by = suppliers(model_ids, base, info)
    graph: list[dict[str, Any]] = [
        {
            "type": "CreationInfo",
            "@id": info,
            "specVersion": "3.0.1",
            "created": created,
            "createdBy": [agent],
            "comment": report.note,
        },
        {
            "type": "SoftwareAgent",
            "spdxId": agent,
            "creationInfo": info,
            "name": f"wattgpu {report.wattgpu_version}",
        },
    ]
    graph += agents
    packages: list[str] = []
    relationships: list[dict[str, Any]] = []
    for i, m in enumerate(d.models):
        pid = f"{base}#model-{i}"
        packages.append(pid)
        energy: dict[str, Any] = {
            "type": "ai_EnergyConsumption",
            "ai_inferenceEnergyConsumption": [
                {
                    "type": "ai_EnergyConsumptionDescription",
                    "ai_energyQuantity": decimal_text(_kwh(report, m.name)),
                    "ai_energyUnit": "kilowattHour",
                }
            ],
        }
        # the training figure is the fleet's (all served models together): given once, on the
        # first package, so that a sum over packages is the figure (fuzz round 17: it was on each)
        if i == 0 and training is not None and isinstance(training.value, float | int):
            energy["ai_trainingEnergyConsumption"] = [
                {
                    "type": "ai_EnergyConsumptionDescription",
                    "ai_energyQuantity": decimal_text(float(training.value)),
                    "ai_energyUnit": "kilowattHour",
                }
            ]
        graph.append(
            {
                "type": "ai_AIPackage",
                "spdxId": pid,
                "creationInfo": info,
                "name": model_ids[i],
                "summary": f"model entry {m.name} of scenario {report.scenario.name}",
                "description": (
                    "Estimated inference energy over the reporting window: facility kWh "
                    "(GPU energy × PUE), modelled by wattgpu; every disclosure field is an "
                    "ai_metric entry."
                ),
                **package_properties(model_ids[i], supplied_by[i], created),
                "ai_energyConsumption": energy,
                "ai_metric": [
                    {"type": "DictionaryEntry", "key": k, "value": v}
                    for k, v in _entries(report, m.name)
                ],
                "ai_standardCompliance": list(d.frameworks),
                "ai_informationAboutApplication": d.flops_methodology,
            }
        )
        relationships += license_relationships(pid, info)
    graph += relationships
    graph.append(
        {
            "type": "SpdxDocument",
            "spdxId": f"{base}#document",
            "creationInfo": info,
            "name": f"{report.title} — {report.scenario.name}",
            "profileConformance": ["core", "software", "ai"],
            "rootElement": packages,
            "element": [
                agent,
                *(a["spdxId"] for a in agents),
                *packages,
                *(r["spdxId"] for r in relationships),
            ],
        }
    )
    return {"@context": SPDX_CONTEXT, "@graph": graph}


def cyclonedx_document(report: ReportDocument) -> dict[str, Any]:
    """The report's disclosure as a CycloneDX 1.6 JSON BOM (model cards), its ``serialNumber``
    named after its content (:func:`content_urn`)."""
    bom = _cyclonedx(report)
    bom["serialNumber"] = content_urn("cyclonedx", bom, report)
    return bom


def _cyclonedx(report: ReportDocument) -> dict[str, Any]:
    d = _disclosure(report)
    grid = report.assumptions.grid
    provider = f"grid {grid.region}" if grid.region else "grid (explicit figure)"
    components = []
    sections = {s.name: s for s in report.models}
    for i, m in enumerate(d.models):
        kwh = _kwh(report, m.name)
        kg = m.fields.get("emissions_location_kg_co2e")
        grid_text, grid_name = report.assumptions.grid_text, provider
        section = sections.get(m.name)
        regions = (
            sorted({r for r in (x.region for x in section.deployments) if r}) if section else []
        )
        if regions and kg is not None and isinstance(kg.value, float | int) and kwh > 0:
            # placed in regions: their grids, not the scenario's default (fuzz round 17)
            grid_name = f"grid of region {', '.join(regions)}"
            grid_text = (
                f"{float(kg.value) * 1000.0 / kwh:.3f} gCO2e/kWh, the facility-energy-weighted "
                f"average of the grids of region {', '.join(regions)}"
            )
        consumption: dict[str, Any] = {
            "activity": "inference",
            "energyProviders": [
                {
                    "description": f"{grid_text} (location-based)",
                    "organization": {"name": grid_name},
                    "energySource": "unknown",
                    "energyProvided": {"value": kwh, "unit": "kWh"},
                }
            ],
            "activityEnergyCost": {"value": kwh, "unit": "kWh"},
            "properties": [
                {"name": f"wattgpu:disclosure:{k}", "value": v} for k, v in _entries(report, m.name)
            ],
        }
        if kg is not None and isinstance(kg.value, float | int):
            tonnes = float(kg.value) / 1000.0
            consumption["co2CostEquivalent"] = {"value": tonnes, "unit": "tCO2eq"}
        considerations: list[dict[str, Any]] = [consumption]
        training = d.fields.get("training_energy_kwh")
        if i == 0 and training is not None and isinstance(training.value, float | int):
            considerations.append(  # the fleet's figure, once (as in the SPDX document)
                {
                    "activity": "training",
                    "energyProviders": [
                        {
                            "description": (
                                "training of all the fleet's served models together, "
                                f"user-supplied: {training.source}"
                            ),
                            "organization": {"name": "not stated"},
                            "energySource": "unknown",
                            "energyProvided": {"value": float(training.value), "unit": "kWh"},
                        }
                    ],
                    "activityEnergyCost": {"value": float(training.value), "unit": "kWh"},
                }
            )
        components.append(
            {
                "type": "machine-learning-model",
                "bom-ref": f"model-{i}",
                "name": str(m.fields["model_id"].value),
                "description": f"model entry {m.name} of scenario {report.scenario.name}",
                "modelCard": {
                    "considerations": {
                        "environmentalConsiderations": {"energyConsumptions": considerations}
                    }
                },
            }
        )
    return {
        "$schema": CYCLONEDX_SCHEMA,
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "serialNumber": PLACEHOLDER_URN,
        "version": 1,
        "metadata": {
            "timestamp": report.generated_at,
            "tools": {
                "components": [
                    {"type": "application", "name": "wattgpu", "version": report.wattgpu_version}
                ]
            },
            "properties": [
                {"name": "wattgpu:note", "value": report.note},
                {"name": "wattgpu:frameworks", "value": "; ".join(d.frameworks)},
                {"name": "wattgpu:persona", "value": d.persona},
                {"name": "wattgpu:recipients", "value": ", ".join(d.recipients)},
            ],
        },
        "components": components,
    }


def export_document(report: ReportDocument, fmt: str) -> dict[str, Any]:
    """The export *fmt* (``spdx`` or ``cyclonedx``) of *report*."""
    if fmt == "spdx":
        return spdx_document(report)
    if fmt == "cyclonedx":
        return cyclonedx_document(report)
    raise ValueError(f"unknown export {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}")
