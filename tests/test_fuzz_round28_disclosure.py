"""Fuzz round 28 (disclosure): the sweep section's escaping, the exports' ids and what SPDX 3.0.1
requires of an AIPackage.

Each test below failed before its fix. ``wattgpu report PLAN --sweep SWEEP -f md`` (and
``-f text``, and ``wattgpu sweep -f md``) wrote scenario and entry names raw in the sweep section
(``## Sweep: x<script>alert(1)</script>\\|pipeevil``) where the rest of the report writes
``&lt;script&gt;``, and the HTML report showed the Markdown escape ``\\|`` in the sweep's heading
and paragraphs; two different plans of one scenario reported in the same second got the same
CycloneDX ``serialNumber`` and SPDX ``spdxId``s (a UUID-5 of the scenario name and the time
only); and the SPDX ``ai_AIPackage``s lacked ``suppliedBy``, ``releaseTime``,
``software_downloadLocation`` and ``software_packageVersion`` (minCount 1 in the AIPackage
class) and the ``hasConcludedLicense``/``hasDeclaredLicense`` relationships the AI profile's
conformance requires exactly once each.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from spdx_python_model import v3_0_1 as spdx

from planner.disclosure.exports import cyclonedx_document, spdx_document
from planner.disclosure.spdx_package import download_location, repo_owner
from planner.documents.plan import load_plan
from planner.documents.report import ReportDocument
from planner.report.build import make_report
from planner.report.sweep_html import unescaped
from predictors.api import Predictor
from predictors.core.escape import md_text
from tests.cli_runner import Result, run_cli
from tests.test_disclosure_exports import cyclonedx_errors, spdx_objects

NAME = "x<script>alert(1)</script>|pipeevil"
ENTRY_A = "a<script>alert('m')</script>"
ENTRY_B = 'b|cd"e'
SCENARIO = f"""\
name: {json.dumps(NAME)}
horizon_hours: 24
region: US
electricity_usd_per_kwh: 0.12
objective: {{minimize: energy}}
gpus:
  L40S: {{}}
  H100-SXM5-80GB: {{}}
disclosure:
  training_energy_kwh: 1000
  training_source: "train src"
models:
  - name: {json.dumps(ENTRY_A)}
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {{requests_per_s: 2, input_tokens: 512, output_tokens: 128}}
    sla: {{itl_ms: 50}}
  - name: {json.dumps(ENTRY_B)}
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {{requests_per_s: 1, input_tokens: 512, output_tokens: 128}}
    sla: {{itl_ms: 50}}
"""
OTHER_LOAD = "models[0].load.requests_per_s=4"
# RFC 4122 as the CycloneDX 1.6 schema's serialNumber pattern, with the version and variant bits
URN_UUID = re.compile(
    r"^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, module_cached_predictor: None) -> Path:
    """The hostile scenario, its plan (``plan.json``), the plan at another load
    (``other.json``) and its sweep (``sweep.json``, 4 draws)."""
    where = tmp_path_factory.mktemp("round28_disclosure")
    scenario = where / "s.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    for out, sets in (("plan.json", ()), ("other.json", ("--set", OTHER_LOAD))):
        planned = run_cli("plan", str(scenario), *sets, "-f", "json", "-o", str(where / out))
        assert planned.code == 0, planned.err
    swept = run_cli(
        "sweep", str(scenario), "-n", "4", "-w", "1", "-f", "json", "-o", str(where / "sweep.json")
    )
    assert swept.code == 0, swept.err
    return where


def _report(folder: Path, tmp_path: Path, fmt: str) -> str:
    out = tmp_path / f"r.{fmt}"
    result: Result = run_cli(
        "report",
        str(folder / "plan.json"),
        "--sweep",
        str(folder / "sweep.json"),
        "-f",
        fmt,
        "--pareto-points",
        "0",
        "-o",
        str(out),
    )
    assert result.code == 0, result.err
    return out.read_text(encoding="utf-8")


def _sweep_section(text: str) -> str:
    start = text.index("## Sweep: ")
    assert start > 0  # after the report's own body
    return text[start:]


# --- 1. the sweep section escapes names as the rest of the report ----------------------------


def test_the_text_report_writes_names_in_its_sweep_as_in_its_body(
    folder: Path, tmp_path: Path
) -> None:
    text = _report(folder, tmp_path, "text")
    title = f"Sweep: {NAME.replace(chr(9), ' ')}"
    start = text.index(f"\n{title}\n") + 1  # an underlined title, as the text form's others
    body, section = text[:start], text[start:]
    assert ENTRY_A in body and ENTRY_A in section  # as they are, like the rest of the text form
    assert "&lt;" not in section and "&gt;" not in section
    assert section.startswith(f"{title}\n{'-' * len(title)}\n")
    # fuzz round 29: the section was Markdown ('## ' heading, '|---|' tables) in the text form
    assert "## " not in section and "|---" not in section and "| " not in section


@pytest.mark.parametrize("fmt", ["md"])
def test_the_sweep_section_escapes_names_as_the_report(
    folder: Path, tmp_path: Path, fmt: str
) -> None:
    section = _sweep_section(_report(folder, tmp_path, fmt))
    assert "<script" not in section and "<" not in section
    assert section.startswith(f"## Sweep: {md_text(NAME)}\n")
    assert "## Sweep: x&lt;script&gt;alert(1)&lt;/script&gt;\\|pipeevil" in section
    assert f"Base plan: {md_text(ENTRY_A)} L40S" in section
    assert f"| {md_text(ENTRY_A)} | " in section  # the SLA probability table


def test_the_md_report_escapes_a_name_the_same_in_its_body_and_its_sweep(
    folder: Path, tmp_path: Path
) -> None:
    md = _report(folder, tmp_path, "md")
    body, section = md[: md.index("## Sweep: ")], _sweep_section(md)
    assert md_text(ENTRY_A) in body and md_text(ENTRY_A) in section
    assert "<script" not in md


def test_wattgpu_sweep_md_escapes_names(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep.md"
    result = run_cli(
        "sweep", str(folder / "s.yaml"), "-n", "2", "-w", "1", "-f", "md", "-o", str(out)
    )
    assert result.code == 0, result.err
    text = out.read_text(encoding="utf-8")
    assert "<script" not in text and f"Sweep: {md_text(NAME)}" in text


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_the_html_sweep_section_shows_the_name_itself_escaped_once(
    folder: Path, tmp_path: Path
) -> None:
    html = _report(folder, tmp_path, "html")
    section = html[html.index('<section id="sweep">') :]
    section = section[: section.index("</section>")]
    assert "<h2>Sweep: x&lt;script&gt;alert(1)&lt;/script&gt;|pipeevil</h2>" in section
    assert "Base plan: a&lt;script&gt;alert(&#x27;m&#x27;)&lt;/script&gt; L40S" in section
    assert "b|cd&quot;e L40S" in section
    assert "\\|" not in section and "&amp;lt;" not in section and "<script" not in section
    assert "<td>a&lt;script&gt;alert(&#x27;m&#x27;)&lt;/script&gt;</td>" in section


@pytest.mark.parametrize(
    "text",
    [NAME, ENTRY_A, ENTRY_B, "a\\|b", "x\\", "&amp; &lt; *[b]* \\*", "tab\there", "\\\\|"],
)
def test_the_html_undoes_exactly_the_markdown_escapes(text: str) -> None:
    assert unescaped(md_text(text)) == text.replace("\t", " ")


# --- 2. ids of the content, not of the scenario name and the second ---------------------------


@pytest.fixture(scope="module")
def reports(folder: Path, predictor: Predictor) -> tuple[ReportDocument, ReportDocument]:
    """The plan's and the other plan's reports, both generated at the same second."""
    card = predictor.card
    docs = [make_report(load_plan(folder / f), card)[0] for f in ("plan.json", "other.json")]
    return docs[0], docs[1].model_copy(update={"generated_at": docs[0].generated_at})


def _ids(doc: dict[str, Any]) -> set[str]:
    return {str(n["spdxId"]) for n in doc["@graph"] if "spdxId" in n}


def test_two_plans_reported_in_the_same_second_get_other_ids(
    reports: tuple[ReportDocument, ReportDocument],
) -> None:
    a, b = reports
    assert a.scenario.name == b.scenario.name and a.generated_at == b.generated_at
    bom_a, bom_b = cyclonedx_document(a), cyclonedx_document(b)
    assert bom_a["serialNumber"] != bom_b["serialNumber"]
    assert URN_UUID.match(bom_a["serialNumber"]) and URN_UUID.match(bom_b["serialNumber"])
    assert cyclonedx_errors(bom_a) is None and cyclonedx_errors(bom_b) is None
    assert not _ids(spdx_document(a)) & _ids(spdx_document(b))


def test_the_same_plan_at_the_same_time_keeps_its_ids(
    reports: tuple[ReportDocument, ReportDocument],
) -> None:
    a, _ = reports
    again = a.model_copy(deep=True)
    assert cyclonedx_document(a) == cyclonedx_document(again)
    assert spdx_document(a) == spdx_document(again)
    base = spdx_document(a)["@graph"][1]["spdxId"].split("#")[0]
    assert URN_UUID.match(base)


def test_another_time_gets_other_ids(reports: tuple[ReportDocument, ReportDocument]) -> None:
    a, _ = reports
    later = a.model_copy(update={"generated_at": "2031-01-01T00:00:00+00:00"})
    assert cyclonedx_document(a)["serialNumber"] != cyclonedx_document(later)["serialNumber"]
    assert not _ids(spdx_document(a)) & _ids(spdx_document(later))


# --- 3. what SPDX 3.0.1 requires of an AIPackage --------------------------------------------

# model/AI/Classes/AIPackage.md, "External properties restrictions" (each minCount 1)
REQUIRED = (
    "suppliedBy",
    "software_downloadLocation",
    "software_packageVersion",
    "software_primaryPurpose",
    "releaseTime",
)
NO_ASSERTION_LICENSE = "https://spdx.org/rdf/3.0.1/terms/ExpandedLicensing/NoAssertionLicense"


def aipackage_problems(doc: dict[str, Any]) -> list[str]:
    """What the AIPackage class and the AI profile's conformance (model/AI/AI.md) require and
    *doc* lacks: the properties above, ``suppliedBy`` an Agent of the document, exactly one
    ``hasConcludedLicense`` and one ``hasDeclaredLicense`` Relationship from each package."""
    graph = doc["@graph"]
    by_id = {n["spdxId"]: n for n in graph if "spdxId" in n}
    agents = {"Agent", "Organization", "Person", "SoftwareAgent"}
    problems = []
    for p in (n for n in graph if n["type"] == "ai_AIPackage"):
        problems += [f"{p['spdxId']}: no {k}" for k in REQUIRED if not p.get(k)]
        if by_id.get(p.get("suppliedBy"), {}).get("type") not in agents:
            problems.append(f"{p['spdxId']}: suppliedBy is not an Agent of the document")
        for kind in ("hasConcludedLicense", "hasDeclaredLicense"):
            rels = [
                r
                for r in graph
                if r["type"] == "Relationship"
                and r["from"] == p["spdxId"]
                and r["relationshipType"] == kind
            ]
            if len(rels) != 1:
                problems.append(f"{p['spdxId']}: {len(rels)} {kind} relationships")
    return problems


def test_every_aipackage_has_what_spdx_requires(
    reports: tuple[ReportDocument, ReportDocument],
) -> None:
    doc = spdx_document(reports[0])
    assert aipackage_problems(doc) == []
    objects = spdx_objects(doc)  # the 3.0.1 bindings: types, references, dates, URIs
    packages = list(objects.foreach_type(spdx.ai_AIPackage))
    assert len(packages) == 2
    for p in packages:
        assert isinstance(p.suppliedBy, spdx.Agent) and p.suppliedBy.name == "meta-llama"
        assert p.software_downloadLocation == f"https://huggingface.co/{p.name}"
        assert p.software_packageVersion == "NOASSERTION"  # no revision in the catalog
        assert p.software_primaryPurpose == spdx.software_SoftwarePurpose.model
        created = doc["@graph"][0]["created"]
        assert p.releaseTime.strftime("%Y-%m-%dT%H:%M:%SZ") == created  # said in the comment
        assert "releaseTime is this document's creation time" in p.comment
    rels = list(objects.foreach_type(spdx.Relationship))
    assert len(rels) == 4
    assert {r.relationshipType for r in rels} == {
        spdx.RelationshipType.hasConcludedLicense,
        spdx.RelationshipType.hasDeclaredLicense,
    }
    assert all([str(t) for t in r.to] == [NO_ASSERTION_LICENSE] for r in rels)
    (document,) = objects.foreach_type(spdx.SpdxDocument)
    listed = {e if isinstance(e, str) else e._id for e in document.element}
    assert {r._id for r in rels} <= listed and {p.suppliedBy._id for p in packages} <= listed


@pytest.mark.parametrize(
    "breaks",
    [
        lambda g: next(n for n in g if n["type"] == "ai_AIPackage").pop("suppliedBy"),
        lambda g: next(n for n in g if n["type"] == "ai_AIPackage").pop("releaseTime"),
        lambda g: g.remove(next(n for n in g if n["type"] == "Relationship")),
        lambda g: g.append({**next(n for n in g if n["type"] == "Relationship"), "spdxId": "x"}),
    ],
)
def test_the_check_finds_a_missing_requirement(
    reports: tuple[ReportDocument, ReportDocument], breaks: Any
) -> None:
    doc = copy.deepcopy(spdx_document(reports[0]))
    breaks(doc["@graph"])
    assert aipackage_problems(doc)


def test_a_model_id_with_no_owner_is_no_assertion(
    reports: tuple[ReportDocument, ReportDocument],
) -> None:
    assert repo_owner("meta-llama/Llama-3.1-8B-Instruct") == "meta-llama"
    assert repo_owner("gpt2") is None and download_location("gpt2") == "https://huggingface.co/gpt2"
    for odd in ("my model", "../x", "a/b/c", "a/", "<b>/x", ""):
        assert repo_owner(odd) is None and download_location(odd) == "NOASSERTION"
    report = reports[0].model_copy(deep=True)
    assert report.disclosure is not None
    for m, model_id in zip(report.disclosure.models, ("gpt2", "my model"), strict=True):
        m.fields["model_id"] = m.fields["model_id"].model_copy(update={"value": model_id})
    doc = spdx_document(report)
    assert aipackage_problems(doc) == []
    objects = spdx_objects(doc)
    packages = {p.name: p for p in objects.foreach_type(spdx.ai_AIPackage)}
    assert packages["gpt2"].software_downloadLocation == "https://huggingface.co/gpt2"
    assert packages["my model"].software_downloadLocation == "NOASSERTION"
    assert {p.suppliedBy.name for p in packages.values()} == {"NOASSERTION"}
