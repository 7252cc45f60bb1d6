"""Fuzz round 24: disaggregated prefill/decode units end to end.

Each test below failed before its fix. With ``regions:``, an entry whose units may mix two GPU
types and whose region holds too few of them was told "no combination of replicas meets the
inventory, power cap and budget", though the scenario set no power cap and no budget (without
regions the same case named each type's need); an engine that does not run on the only GPU of
an entry with disaggregated units suggested hf-transformers and llama.cpp, which the scenario
then refuses for units; a saved plan whose unit allocation's ``gpu`` was not its decode pool's
was reported (and diffed) as written, where the same edit of its candidate was refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.bundled_runs import BundledRuns
from tests.cli_runner import one_error_line, plan_text, run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

_ENTRY = """
models:
  - name: rag
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s: 3, input_tokens: 4000, output_tokens: 400}
    sla: {itl_ms: 15, ttft_ms: 800}
"""
REGIONS = (
    """
name: round24-regions
horizon_hours: 8760
region: US
electricity_usd_per_kwh: 0.12
objective: {minimize: energy}
engine: vllm
precision: bf16
deployment: disaggregated
gpus:
  H100-SXM5-80GB: {}
  L40S: {}
regions:
  east:
    grid_g_co2_per_kwh: 300
    gpus:
      H100-SXM5-80GB: {available: 1}
      L40S: {available: 2}
  west:
    grid_g_co2_per_kwh: 100
    gpus:
      H100-SXM5-80GB: {available: 64}
      L40S: {available: 0}
"""
    + _ENTRY
    + "    regions: [east]\n"
)
MI300X = (
    """
name: round24-mi300x
horizon_hours: 8760
region: US
electricity_usd_per_kwh: 0.12
engine: tensorrt-llm
precision: bf16
deployment: disaggregated
gpus:
  MI300X: {}
"""
    + _ENTRY
)


def _messages(tmp_path: Path, scenario: str, *args: str) -> list[str]:
    """The ``solve.messages`` of a plan that has none (exit 1, JSON written)."""
    result, out = plan_text(tmp_path, scenario, *args)
    assert result.code == 1, (result.out, result.err)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["status"] == "infeasible", data["solve"]
    messages: list[str] = data["solve"]["messages"]
    return messages


@pytest.mark.slow  # a search before its explanation (~1.5 s); the per-region counts are in
# tests/test_fuzz_round24_regions.py
def test_regions_name_each_types_need_against_its_regions_inventory(tmp_path: Path) -> None:
    """Units that take H100 prefill and L40S decode workers (or either alone) in region east,
    which has 1 H100 and 2 L40S: each type's need in that region, as without regions; no power
    cap or budget, which the scenario does not set."""
    messages = _messages(tmp_path, REGIONS)
    assert messages == [
        "inventory: H100-SXM5-80GB in region east needs 2 GPUs, has 1",
        "inventory: L40S in region east needs 3 GPUs, has 2",
    ], messages
    text = " ".join(messages)
    assert "power cap" not in text and "budget" not in text, text


@pytest.mark.slow  # a plan whose search runs before its explanation (~4 s)
def test_an_entry_that_may_use_two_regions_is_told_the_need_of_one(tmp_path: Path) -> None:
    """The entry may use east or west (1 H100, 1 L40S): the explanation places it in one region
    (the cheaper relaxation, east), never adding GPUs of both regions together."""
    messages = _messages(
        tmp_path,
        REGIONS,
        "--set",
        "models[0].regions=[east, west]",
        "--set",
        "regions.west.gpus.H100-SXM5-80GB.available=1",
        "--set",
        "regions.west.gpus.L40S.available=1",
    )
    assert messages == [
        "inventory: H100-SXM5-80GB in region east needs 2 GPUs, has 1",
        "inventory: L40S in region east needs 3 GPUs, has 2",
    ], messages


def test_an_engine_refusal_suggests_only_engines_of_units(tmp_path: Path) -> None:
    """tensorrt-llm does not run on MI300X: an entry with units is told vllm or sglang, the
    engines of units that run there (hf-transformers and llama.cpp would be refused); an
    aggregated entry keeps every engine that runs there."""
    for deployment in ("disaggregated", "both"):
        (message,) = _messages(tmp_path, MI300X, "--set", f"deployment={deployment}")
        assert "tensorrt-llm does not run on MI300X" in message, message
        assert "use vllm or sglang on MI300X" in message, message
        assert "hf-transformers" not in message and "llama.cpp" not in message, message
    (message,) = _messages(tmp_path, MI300X, "--set", "deployment=aggregated")
    assert "use vllm, sglang, hf-transformers or llama.cpp on MI300X" in message, message


@pytest.fixture(scope="module")
def unit_plan(bundled: BundledRuns) -> dict[str, Any]:
    """``wattgpu plan disagg-tight-sla --format json``: aggregated replicas and units."""
    data: dict[str, Any] = json.loads(bundled.plan_json("disagg-tight-sla"))
    return data


def test_a_unit_allocations_gpu_off_its_decode_pool_is_refused(
    tmp_path: Path, unit_plan: dict[str, Any]
) -> None:
    """The allocation's ``gpu`` is no part of its identity (its pools are): an edit of it was
    read as written by ``report`` and ``diff``. It is refused on read, one line naming the file
    and the field, as the same edit of its candidate is."""
    i = next(i for i, a in enumerate(unit_plan["allocations"]) if a.get("pools"))
    decode = unit_plan["allocations"][i]["pools"][-1]["gpu"]
    other = next(g for g in ("L40S", "H100-SXM5-80GB", "A100-SXM4-80GB") if g != decode)
    edited = json.loads(json.dumps(unit_plan))
    edited["allocations"][i]["gpu"] = other
    original, path = tmp_path / "plan.json", tmp_path / "edited.json"
    original.write_text(json.dumps(unit_plan), encoding="utf-8")
    path.write_text(json.dumps(edited), encoding="utf-8")
    said = (
        f"error: {path}: allocations[{i}].gpu: '{other}', not the GPU type of its decode pool "
        f"('{decode}')"
    )
    as_planned = run_cli("report", str(original), "-f", "json", "-o", str(tmp_path / "r.json"))
    assert as_planned.code == 0, as_planned.err  # the planner's own units verify
    report = run_cli("report", str(path), "-f", "json", "-o", str(tmp_path / "report.json"))
    assert one_error_line(report).startswith(said), report.err
    diff = run_cli("diff", str(original), str(path))
    assert one_error_line(diff).startswith(said), diff.err


def test_compare_suggests_only_engines_of_units() -> None:
    """``compare --deployment disaggregated`` with an engine that does not run on the GPU names
    only the engines of units that do (before: hf-transformers and llama.cpp too)."""
    result = run_cli(
        "compare", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--requests-per-s", "2",
        "--itl-ms", "50", "--gpus", "MI300X", "--engine", "tensorrt-llm",
        "--deployment", "disaggregated", "-f", "json",
    )  # fmt: skip
    data = json.loads(result.out) if result.out else {}
    reasons = " ".join(r.get("reason", "") for r in data.get("rows", [])) or result.err
    assert "use vllm or sglang on MI300X" in reasons, reasons
    assert "hf-transformers" not in reasons and "llama.cpp" not in reasons
