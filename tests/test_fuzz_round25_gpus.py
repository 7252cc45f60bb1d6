"""Round-25 findings on GPUs a user adds that nobody measured.

Before: ``validate``, ``plan`` and ``compare`` divided by zero (``internal error
ZeroDivisionError``) when a user GPU's NVLink domain was no whole number of its nodes (36 GPUs
on 8-GPU nodes, an NVL36-like rack with ``node_gpus`` left empty) and a replica's whole nodes
outnumbered the domain's GPUs; a user row re-rating a measured GPU's id (H100 capped to 350 W)
said ``gpu_measured`` false but kept the measured GPU's narrow intervals; a disclosure said
embodied emissions were ``included`` in its boundary while every embodied field said "not
applicable" (a planned user GPU without ``embodied_kg_co2e``).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

from planner.layouts import held_gpus
from predictors.api import Predictor
from predictors.catalog.store import load_catalog
from predictors.core.paths import catalogs_dir
from tests.cli_runner import run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

LLAMA8 = "meta-llama/Llama-3.1-8B-Instruct"
LLAMA70 = "meta-llama/Llama-3.1-70B-Instruct"
DEEPSEEK = "deepseek-ai/DeepSeek-V3"
FABRIC = {"scale_out_gbit_s": "400", "scale_out_latency_us": "5", "fabric_source": "test"}


def _h100(**changes: Any) -> dict[str, Any]:
    """The bundled H100 SXM row with *changes* (its id kept unless *changes* give one)."""
    gpus = pl.read_csv(catalogs_dir() / "gpus.csv", infer_schema=False)
    row: dict[str, Any] = gpus.filter(pl.col("id") == "H100-SXM5-80GB").row(0, named=True)
    return {**row, **changes}


def _catalog(folder: Path, gpus: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(gpus[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(gpus)
    (folder / "gpus.csv").write_text(out.getvalue(), encoding="utf-8")
    return folder


def _scenario(
    tmp_path: Path, catalog: Path, gpus: dict[str, Any], models: list[dict[str, Any]]
) -> Path:
    doc = {
        "name": "round25",
        "region": "US",
        "electricity_usd_per_kwh": 0.12,
        "user_catalog": str(catalog),
        "gpus": gpus,
        "models": [
            {
                "load": {"requests_per_s": 1, "input_tokens": 1024, "output_tokens": 256},
                "sla": {"itl_ms": 100},
                **m,
            }
            for m in models
        ],
    }
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


# --- F1: a domain that is no whole number of nodes ------------------------------------------------


NVL36 = {"nvlink_domain_gpus": 36, "form_factor": "SXM6"}  # node_gpus: the SXM6 default 8
D16N3 = {"nvlink_domain_gpus": 16, "node_gpus": 3, "form_factor": "SXM5"}
D12N8 = {"nvlink_domain_gpus": 12, "node_gpus": 8, "form_factor": "SXM5"}
NVL72 = {"nvlink_domain_gpus": 72, "node_gpus": 4, "form_factor": "Superchip"}


def test_a_replica_holds_whole_nodes_but_never_more_than_its_domain() -> None:
    cases: list[tuple[dict[str, Any], int, tuple[int, int]]] = [
        # whole nodes beyond the domain's GPUs (divided by zero): the whole domain, its nodes
        # the last one cut to the domain (36 GPUs on 8-GPU nodes: 5 nodes)
        (NVL36, 36, (36, 5)),
        (NVL36, 33, (36, 5)),
        (D16N3, 16, (16, 6)),
        (D12N8, 12, (12, 2)),
        (D12N8, 9, (12, 2)),
        # across domains: whole domains, each of ⌈D / node⌉ nodes
        (NVL36, 72, (72, 10)),
        (D16N3, 32, (32, 12)),
        # unchanged: replicas that fit the domain take their share of it
        (NVL36, 32, (36, 4)),
        (NVL36, 16, (18, 2)),
        (D16N3, 4, (8, 2)),
        (NVL72, 16, (18, 4)),
        (NVL72, 144, (144, 36)),
    ]
    for gpu, count, expected in cases:
        held, nodes = held_gpus(gpu, count)
        assert (held, nodes) == expected, (gpu, count)
        domain = gpu["nvlink_domain_gpus"]
        assert held >= count and (count > domain or held <= domain), (gpu, count)


def _nvl36(tmp_path: Path) -> Path:
    row = _h100(
        id="MY-NVL36",
        aliases="",
        assumed_aliases="",
        form_factor="SXM6",
        memory_gb="186",
        nvlink_domain_gpus="36",
        node_gpus="",
        fabric_source="NVL36 rack: 36 GPUs in one NVLink domain; node_gpus left empty",
    )
    return _catalog(tmp_path / "unvl36", [row])


@pytest.mark.slow
def test_a_stated_layout_filling_an_nvl36_domain_of_8_gpu_nodes_validates_and_plans(
    tmp_path: Path,
) -> None:
    catalog = _nvl36(tmp_path)
    layouts = [{"gpu_count": 36, "pipeline_parallel": 9}]
    scenario = _scenario(
        tmp_path,
        catalog,
        {"MY-NVL36": {"layouts": layouts}},
        [{"name": "big", "model": LLAMA70}],
    )
    checked = run_cli("validate", str(scenario))
    assert checked.code == 0 and "ZeroDivisionError" not in checked.err, checked.err
    out = tmp_path / "plan.json"
    planned = run_cli(
        "plan", str(scenario), "--format", "json", "--candidates", "all", "-o", str(out)
    )
    assert planned.code == 0, planned.err
    doc = json.loads(out.read_text(encoding="utf-8"))
    (stated,) = [c for c in doc["candidates"] if c["tp"] * c["pipeline_parallel"] == 36]
    assert (stated["gpus_per_replica"], stated["nodes"]) == (36, 5)


@pytest.mark.slow
def test_compare_plans_a_16_gpu_domain_of_3_gpu_nodes(tmp_path: Path) -> None:
    catalog = _catalog(
        tmp_path / "ufab",
        [
            _h100(
                id="FAB-D16N3",
                aliases="",
                assumed_aliases="",
                nvlink_domain_gpus="16",
                node_gpus="3",
                **FABRIC,
            )
        ],
    )
    result = run_cli(
        "compare",
        "--user-catalog",
        str(catalog),
        "--model",
        DEEPSEEK,
        "--requests-per-s",
        "1",
        "--itl-ms",
        "100",
        "--gpus",
        "FAB-D16N3",
        "--precision",
        "bf16",
    )
    assert result.code == 0 and not result.errors, result.err
    # rack-scale TP 16 fills the domain (6 nodes, the last cut to 1 GPU); PP 2 takes 2 domains
    assert "1 × TP16×PP2 on 12 nodes" in result.out


# --- F2: a re-rated measured id gets the band of an unmeasured GPU --------------------------------


@pytest.mark.slow
def test_a_re_rated_measured_id_gets_the_interval_of_the_same_specs_under_a_new_id(
    tmp_path: Path, predictor: Predictor
) -> None:
    capped = _h100(tdp_w="350", idle_power_w="52.5", source="power capped to 350 W")
    twin = {**capped, "id": "MY-H100-CAP350", "aliases": "", "assumed_aliases": ""}
    catalog = load_catalog(_catalog(tmp_path / "urerate", [capped, twin]))
    user = Predictor(predictor.models, catalog)
    rows = pl.DataFrame(
        {
            "model": [LLAMA8] * 4,
            "gpu": ["H100-SXM5-80GB", "MY-H100-CAP350"] * 2,
            "batch_size": [64, 64, 8, 8],
            "input_tokens": [1024] * 4,
            "output_tokens": [256] * 4,
        }
    )
    out = user.predict(rows, with_ttft=True)
    assert out["error"].to_list() == [""] * 4
    assert not any(out["gpu_measured"].to_list())
    bands = [c for c in out.columns if c.endswith(("_lo", "_hi"))]
    assert len(bands) == 6
    for pair in ((0, 1), (2, 3)):
        rerated, renamed = (out.row(i, named=True) for i in pair)
        assert {c: rerated[c] for c in bands} == {c: renamed[c] for c in bands}
    # the bundled, measured H100 keeps its narrower band
    bundled = predictor.predict(rows.head(1), with_ttft=True).row(0, named=True)
    assert bundled["gpu_measured"]
    rerated = out.row(0, named=True)
    assert rerated["itl_s_hi"] / rerated["itl_s"] > bundled["itl_s_hi"] / bundled["itl_s"]


# --- F3: the embodied boundary follows the embodied fields ----------------------------------------


def _minimal_gpu(gpu_id: str) -> dict[str, str]:
    return {
        "id": gpu_id,
        "vendor": "other",
        "architecture": "Foo",
        "form_factor": "PCIe",
        "release_year": "2024",
        "memory_gb": "48",
        "memory_bandwidth_gb_s": "1000",
        "tdp_w": "300",
        "idle_power_w": "45",
        "idle_power_source": "rule: test",
        "fp16_tflops_dense": "200",
        "interconnect_gb_s": "",
        "usd_per_hour": "1.0",
        "source": "min fields",
    }


def _report(tmp_path: Path, scenario: Path, fmt: str) -> str:
    plan = tmp_path / "plan.json"
    if not plan.exists():
        planned = run_cli("plan", str(scenario), "--format", "json", "-o", str(plan))
        assert planned.code == 0, planned.err
    out = tmp_path / f"report.{fmt}"
    result = run_cli("report", str(plan), "--format", fmt, "-o", str(out))
    assert result.code == 0, result.err
    return out.read_text(encoding="utf-8")


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_embodied_is_excluded_from_the_boundary_when_a_planned_gpu_has_no_figure(
    tmp_path: Path,
) -> None:
    catalog = _catalog(tmp_path / "uemb", [_minimal_gpu("MY-MIN")])
    scenario = _scenario(tmp_path, catalog, {"MY-MIN": {}}, [{"name": "chat", "model": LLAMA8}])
    disclosure = json.loads(_report(tmp_path, scenario, "json"))["disclosure"]
    (embodied,) = [b for b in disclosure["boundary"] if b["component"] == "embodied"]
    assert embodied["treatment"] == "excluded"
    assert "MY-MIN" in embodied["note"] and "included only" not in embodied["note"]
    for key in ("embodied_total_kg_co2e", "embodied_kg_co2e", "sci_g_co2e_per_1m_output_tokens"):
        assert "MY-MIN" in disclosure["fields"][key]["not_applicable"], key
    sci = disclosure["fields"]["sci_g_co2e_per_1m_output_tokens"]
    assert sci["unit"] == "g CO2e per 1M output tokens"
    (chat,) = disclosure["models"]
    assert chat["fields"]["sci_g_co2e_per_1m_output_tokens"]["not_applicable"]
    md = _report(tmp_path, scenario, "md")
    assert "| embodied | excluded |" in md and "| embodied | included |" not in md
    cdx = json.loads(_report(tmp_path, scenario, "cyclonedx"))
    (card,) = [
        c["modelCard"]["considerations"]["environmentalConsiderations"] for c in cdx["components"]
    ]
    values = {p["name"]: p["value"] for e in card["energyConsumptions"] for p in e["properties"]}
    assert values["wattgpu:disclosure:fleet.boundary.embodied"] == "excluded"


@pytest.mark.slow
def test_the_boundary_names_the_entries_whose_fields_still_include_embodied(
    tmp_path: Path,
) -> None:
    catalog = _catalog(tmp_path / "uemb", [_minimal_gpu("MY-MIN")])
    scenario = _scenario(
        tmp_path,
        catalog,
        {"MY-MIN": {}, "L4": {}},
        [
            {"name": "chat", "model": LLAMA8, "allowed_gpus": ["MY-MIN"]},
            {"name": "small", "model": "meta-llama/Llama-3.2-1B-Instruct", "allowed_gpus": ["L4"]},
        ],
    )
    disclosure = json.loads(_report(tmp_path, scenario, "json"))["disclosure"]
    (embodied,) = [b for b in disclosure["boundary"] if b["component"] == "embodied"]
    assert embodied["treatment"] == "excluded"
    assert "for MY-MIN" in embodied["note"] and "model entry small" in embodied["note"]
    fields = {m["name"]: m["fields"]["embodied_kg_co2e"] for m in disclosure["models"]}
    assert fields["chat"]["not_applicable"] and fields["small"]["value"] > 0
