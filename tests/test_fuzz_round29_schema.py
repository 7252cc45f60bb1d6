"""Fuzz round 29 (schema): the committed JSON Schemas describe the plan's ``assumptions`` and the
objective as the loader reads them.

Each test below failed before its fix. ``AssumptionsDocument`` and ``ObjectiveDocument`` left
out their absent trailing keys through a ``@model_serializer(mode="wrap")`` returning a plain
dict, so pydantic's serialization-mode schema (docs/schemas/plan.schema.json and
report.schema.json) gave them as a bare ``{"type": "object", "additionalProperties": true}``:
a plan whose ``assumptions`` was ``{}`` or held unknown keys met the schema, and every reader
refused it (``Field required`` / ``Extra inputs are not permitted``). The keys are now left out
with ``Field(exclude_if=...)``, as in the other documents, and the schemas list them.
"""

from __future__ import annotations

import copy
import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

from planner.documents import _MODELS, SCHEMA_NAMES
from planner.documents.plan import PlanDocument
from planner.documents.plan_parts import AssumptionsDocument, ObjectiveDocument
from planner.documents.report import ReportDocument
from tests.bundled_runs import BundledRuns
from tests.cli_runner import run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

REPO = Path(__file__).resolve().parent.parent
SCHEMA_DIR = REPO / "docs" / "schemas"
SCENARIO = "paper-llama8b-low-load"
#: The models whose wrap serializer hid their fields, and the schemas that hold them.
AFFECTED: tuple[tuple[str, type[BaseModel]], ...] = (
    ("plan", AssumptionsDocument),
    ("plan", ObjectiveDocument),
    ("report", AssumptionsDocument),
    ("report", ObjectiveDocument),
)


def _committed(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(
        (SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8")
    )
    return schema


def _errors(schema: dict[str, Any], data: Any) -> list[str]:
    return [e.message for e in Draft202012Validator(schema).iter_errors(data)]


def _of_def(schema: dict[str, Any], name: str) -> dict[str, Any]:
    """*schema* narrowed to its ``$defs`` entry *name* (references still resolve)."""
    return {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}


def _json_names(model: type[BaseModel]) -> tuple[set[str], set[str]]:
    """Every key of *model* in JSON, and those without a default."""
    names = {f.alias or n for n, f in model.model_fields.items()}
    required = {f.alias or n for n, f in model.model_fields.items() if f.is_required()}
    return names, required


# --- the schema names the fields, requires the required ones, refuses unknown keys ----------


@pytest.mark.parametrize(("kind", "model"), AFFECTED, ids=lambda x: getattr(x, "__name__", x))
def test_the_schema_lists_the_fields_of_the_model(kind: str, model: type[BaseModel]) -> None:
    entry = _committed(kind)["$defs"][model.__name__]
    names, required = _json_names(model)
    assert entry.get("type") == "object"
    assert entry.get("additionalProperties") is False, entry
    assert set(entry.get("properties", {})) == names
    assert set(entry.get("required", [])) == required
    assert required  # hours, pue, …, objective; minimize


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_every_object_the_loader_closes_is_closed_in_the_committed_schema(name: str) -> None:
    """The documented (serialization-mode) schema of every output describes each object as the
    loader (validation mode) reads it: the same keys, the same required keys, and no others
    where the loader refuses them — a serializer that returns a plain dict cannot open one."""
    module, cls = _MODELS[name]
    model = getattr(importlib.import_module(module), cls)
    read = model.model_json_schema(mode="validation")
    written = _committed(name)
    read_defs = {"<root>": read, **read.get("$defs", {})}
    written_defs = {"<root>": written, **written.get("$defs", {})}
    closed = [k for k, d in read_defs.items() if d.get("additionalProperties") is False]
    assert closed or name == "model-card"  # the card keeps unknown keys (extra="allow")
    for key in closed:
        assert key in written_defs, key
        got, want = written_defs[key], read_defs[key]
        assert got.get("additionalProperties") is False, (key, got)
        assert set(got.get("properties", {})) == set(want["properties"]), key
        assert set(got.get("required", [])) == set(want.get("required", [])), key


# --- real outputs meet the schemas; what the loader refuses, the schema refuses --------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, module_cached_predictor: None) -> Path:
    """``plan.json`` of the paper scenario (``wattgpu plan … -f json``) and ``report.json``
    of it (``wattgpu report plan.json -f json``)."""
    where = tmp_path_factory.mktemp("round29_schema")
    plan = where / "plan.json"
    result = run_cli("plan", SCENARIO, "-f", "json", "-o", str(plan))
    assert result.code == 0, result.err
    result = run_cli("report", str(plan), "-f", "json", "-o", str(where / "report.json"))
    assert result.code == 0, result.err
    return where


def _read(folder: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / name).read_text(encoding="utf-8"))
    return data


def test_a_real_plan_and_its_report_meet_the_schemas(saved: Path) -> None:
    plan, report = _read(saved, "plan.json"), _read(saved, "report.json")
    assert _errors(_committed("plan"), plan) == []
    assert _errors(_committed("report"), report) == []
    assert report["plan"]["assumptions"] == plan["assumptions"]


@pytest.mark.slow  # two scenario plans (~5 s)
@pytest.mark.parametrize("scenario", ["enterprise-fleet", "eu-power-cap-carbon"])
def test_plans_with_the_optional_assumptions_meet_the_schema(
    bundled: BundledRuns, scenario: str
) -> None:
    """Weighted objective with weights and GPU price bases (enterprise-fleet); a disclosure
    section (eu-power-cap-carbon)."""
    plan = json.loads(bundled.plan_json(scenario))
    assert _errors(_committed("plan"), plan) == []
    shown = set(plan["assumptions"])
    assert "price_basis_by_gpu" in shown
    assert ("weights" in plan["assumptions"]["objective"]) == (scenario == "enterprise-fleet")
    assert ("disclosure" in shown) == (scenario == "eu-power-cap-carbon")


def test_every_optional_assumption_written_meets_the_schema(saved: Path) -> None:
    """All the keys left out when absent, set at once, and a weighted objective."""
    values = _read(saved, "plan.json")["assumptions"] | {
        "objective": {"minimize": "weighted", "weights": {"cost_usd": 1.0, "carbon_kg": 0.1}},
        "disclosure": {"persona": "consumer"},
        "grid_g_co2_per_kwh_by_period": [300.0],
        "price_basis_by_gpu": {"L4": "rental"},
        "gpus_per_node": {"L4": 8},
        "user_catalog": "/somewhere/catalogs",
        "catalog_sha256": "0" * 64,
    }
    written = AssumptionsDocument.model_validate(values).to_json_dict()
    names, _ = _json_names(AssumptionsDocument)
    assert set(written) == names
    for kind in ("plan", "report"):
        assert _errors(_of_def(_committed(kind), "AssumptionsDocument"), written) == []
    left_out = AssumptionsDocument.model_validate(
        {k: v for k, v in values.items() if k not in ("disclosure", "gpus_per_node")}
        | {"objective": {"minimize": "cost"}}
    ).to_json_dict()
    assert "disclosure" not in left_out and "gpus_per_node" not in left_out
    assert left_out["objective"] == {"minimize": "cost"}
    assert _errors(_of_def(_committed("plan"), "AssumptionsDocument"), left_out) == []


def _edits() -> list[tuple[str, Any]]:
    """(what, an edit of a plan's JSON) that every reader refuses."""

    def unknown(p: dict[str, Any]) -> None:
        p["assumptions"]["bogus_key"] = 1

    def emptied(p: dict[str, Any]) -> None:
        p["assumptions"] = {}

    def no_hours(p: dict[str, Any]) -> None:
        del p["assumptions"]["hours"]

    def no_objective(p: dict[str, Any]) -> None:
        del p["assumptions"]["objective"]

    def objective_unknown(p: dict[str, Any]) -> None:
        p["assumptions"]["objective"]["bogus_key"] = 1

    def objective_empty(p: dict[str, Any]) -> None:
        p["assumptions"]["objective"] = {}

    def objective_wrong_kind(p: dict[str, Any]) -> None:
        p["assumptions"]["objective"]["minimize"] = "speed"

    return [
        ("unknown key", unknown),
        ("empty", emptied),
        ("no hours", no_hours),
        ("no objective", no_objective),
        ("objective unknown key", objective_unknown),
        ("objective empty", objective_empty),
        ("objective unknown kind", objective_wrong_kind),
    ]


@pytest.mark.parametrize(("what", "edit"), _edits(), ids=[w for w, _ in _edits()])
def test_a_plan_the_loader_refuses_fails_the_schema(saved: Path, what: str, edit: Any) -> None:
    plan = _read(saved, "plan.json")
    edit(plan)
    with pytest.raises(ValidationError):
        PlanDocument.model_validate(plan, strict=True)
    assert _errors(_committed("plan"), plan), what
    bad = saved / f"bad-{what.replace(' ', '-')}.json"
    bad.write_text(json.dumps(plan), encoding="utf-8")
    result = run_cli("report", str(bad), "-f", "json")
    assert result.code != 0 and "not a valid plan JSON" in result.err, result.err


@pytest.mark.parametrize(("what", "edit"), _edits(), ids=[w for w, _ in _edits()])
def test_a_report_with_such_a_plan_fails_the_schema(saved: Path, what: str, edit: Any) -> None:
    report = _read(saved, "report.json")
    edit(report["plan"])
    with pytest.raises(ValidationError):
        ReportDocument.model_validate(report)
    assert _errors(_committed("report"), report), what


@pytest.mark.parametrize("edit", ["unknown", "missing"])
def test_the_reports_own_objective_is_closed(saved: Path, edit: str) -> None:
    """The report's ``assumptions.objective`` is the same ObjectiveDocument."""
    report = copy.deepcopy(_read(saved, "report.json"))
    objective = report["assumptions"]["objective"]
    if edit == "unknown":
        objective["bogus_key"] = 1
    else:
        del objective["minimize"]
    with pytest.raises(ValidationError):
        ReportDocument.model_validate(report)
    assert _errors(_committed("report"), report)
