"""``wattgpu report --format spdx|cyclonedx``: the disclosure as SPDX 3.0.1 JSON-LD (AI profile)
and CycloneDX 1.6 JSON, validated against the published specifications.

* CycloneDX: the official 1.6 JSON Schema shipped by ``cyclonedx-python-lib``
  (``JsonStrictValidator(SchemaVersion.V1_6)``).
* SPDX: no maintained PyPI package ships the SPDX 3.0.1 JSON Schema (``spdx3-validate``
  downloads it from spdx.org at run time, which tests cannot do). The structure is validated
  instead with ``spdx-python-model``, SPDX's own bindings generated from the published 3.0.1
  model: every object is deserialised into its class (unknown types and properties, bad enum
  values, decimals and dates are errors), references are linked, and re-serialising checks the
  required properties. Broken documents are shown to fail both validators.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from spdx_python_model import v3_0_1 as spdx

from planner.disclosure.exports import cyclonedx_document, spdx_document
from planner.documents.plan import as_document
from planner.documents.report import ReportDocument
from planner.pipeline import plan_file
from planner.report.build import make_report
from predictors.api import Predictor
from predictors.core.output import write_output
from tests.cli_runner import run_cli
from tests.test_disclosure import SCENARIO


@pytest.fixture(scope="module")
def saved_plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("exports")
    scenario = folder / "s.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    run = plan_file(scenario, predictor=Predictor.load())
    assert run.plan.has_solution
    path = folder / "plan.json"
    write_output(path, as_document(run.plan).model_dump_json())
    return path


@pytest.fixture(scope="module")
def report(saved_plan: Path) -> ReportDocument:
    from planner.documents.plan import load_plan

    doc, _ = make_report(load_plan(saved_plan), Predictor.load().card)
    return doc


def cyclonedx_errors(data: dict[str, Any]) -> object:
    return JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(data))


def spdx_objects(data: dict[str, Any]) -> spdx.SHACLObjectSet:
    """Deserialise, link and re-serialise *data* with the SPDX 3.0.1 bindings (raises)."""
    objects = spdx.SHACLObjectSet()
    spdx.JSONLDDeserializer().deserialize_data(data, objects)
    assert objects.link() == set()  # every reference resolves inside the document
    spdx.JSONLDSerializer().write(objects, io.BytesIO())  # required properties present
    return objects


def test_cyclonedx_validates_and_carries_the_energy(report: ReportDocument) -> None:
    bom = cyclonedx_document(report)
    assert cyclonedx_errors(bom) is None
    assert report.disclosure is not None
    for i, (comp, m) in enumerate(zip(bom["components"], report.disclosure.models, strict=True)):
        cons = comp["modelCard"]["considerations"]["environmentalConsiderations"]
        # the fleet's training figure is given once, on the first component (fuzz round 17)
        inference, *rest = cons["energyConsumptions"]
        assert len(rest) == (1 if i == 0 else 0)
        training = (
            rest[0] if rest else {"activity": "training", "activityEnergyCost": {"value": 12345.0}}
        )
        assert inference["activity"] == "inference" and training["activity"] == "training"
        kwh = m.fields["energy_facility_kwh"].value
        assert inference["activityEnergyCost"] == {"value": kwh, "unit": "kWh"}
        kg = m.fields["emissions_location_kg_co2e"].value
        assert isinstance(kg, float)
        assert inference["co2CostEquivalent"]["value"] == pytest.approx(kg / 1000.0)
        assert training["activityEnergyCost"]["value"] == 12345.0
        names = {p["name"] for p in inference["properties"]}
        assert "wattgpu:disclosure:sci_g_co2e_per_1m_output_tokens" in names
        assert "wattgpu:disclosure:fleet.emissions_market_kg_co2e" in names


def test_cyclonedx_schema_rejects_a_broken_bom(report: ReportDocument) -> None:
    bom = cyclonedx_document(report)
    broken = copy.deepcopy(bom)
    cons = broken["components"][0]["modelCard"]["considerations"]["environmentalConsiderations"]
    cons["energyConsumptions"][0]["activityEnergyCost"]["unit"] = "Wh"
    assert cyclonedx_errors(broken) is not None
    broken = copy.deepcopy(bom)
    del broken["components"][0]["modelCard"]["considerations"]["environmentalConsiderations"][
        "energyConsumptions"
    ][0]["energyProviders"]
    assert cyclonedx_errors(broken) is not None


def test_spdx_validates_against_the_3_0_1_model(report: ReportDocument) -> None:
    doc = spdx_document(report)
    assert doc["@context"] == "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"
    objects = spdx_objects(doc)
    packages = list(objects.foreach_type(spdx.ai_AIPackage))
    assert report.disclosure is not None
    assert len(packages) == len(report.disclosure.models)
    by_name = {m.fields["model_id"].value: m for m in report.disclosure.models}
    given = []
    for p in packages:
        m = by_name[p.name]
        (inference,) = p.ai_energyConsumption.ai_inferenceEnergyConsumption
        assert inference.ai_energyQuantity == pytest.approx(m.fields["energy_facility_kwh"].value)
        assert inference.ai_energyUnit == spdx.ai_EnergyUnitType.kilowattHour
        given += [t.ai_energyQuantity for t in p.ai_energyConsumption.ai_trainingEnergyConsumption]
        keys = {e.key for e in p.ai_metric}
        assert {"inference_flops_per_request", "fleet.embodied_kg_co2e"} <= keys
    assert given == [pytest.approx(12345.0)]  # the fleet's figure, once (fuzz round 17)
    (document,) = objects.foreach_type(spdx.SpdxDocument)
    assert spdx.ProfileIdentifierType.ai in document.profileConformance


@pytest.mark.parametrize(
    "breaks",
    [
        lambda p: p["ai_energyConsumption"]["ai_inferenceEnergyConsumption"][0].update(
            ai_energyUnit="watt"
        ),
        lambda p: p.update(ai_energyConsumptio={}),
        lambda p: p.pop("creationInfo"),
        lambda p: p["ai_energyConsumption"]["ai_inferenceEnergyConsumption"][0].update(
            ai_energyQuantity="many"
        ),
    ],
)
def test_spdx_validation_rejects_a_broken_document(report: ReportDocument, breaks: Any) -> None:
    doc = copy.deepcopy(spdx_document(report))
    breaks(next(o for o in doc["@graph"] if o["type"] == "ai_AIPackage"))
    with pytest.raises((ValueError, KeyError, TypeError)):
        spdx_objects(doc)


@pytest.mark.parametrize("fmt", ["spdx", "cyclonedx"])
def test_cli_writes_the_export(saved_plan: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"report.{fmt}.json"
    result = run_cli("report", str(saved_plan), "--format", fmt, "--output", str(out))
    assert result.code == 0, result.err
    data = json.loads(out.read_text(encoding="utf-8"))
    if fmt == "cyclonedx":
        assert cyclonedx_errors(data) is None
    else:
        spdx_objects(data)
