"""Fuzz round 19d: scenarios the project had not seen.

Each test failed before its fix: a one-entry cost plan under inventory stopped at a 16 % gap
in 0.13 s (every column up to its objective was too many to list, and nothing smaller was
tried), though a plan 16 % cheaper exists; a budget that the least-cost plan keeps ended
``time_limit`` ("no plan found"); an ITL SLA written in seconds (``itl_ms: 0.04``) was refused
without saying the field is in milliseconds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import plan_text

BATCH_ENTRY = """
  - name: nightly-batch
    model: Qwen/Qwen2.5-7B-Instruct
    load:
      requests_per_s_by_period: [10, 12, 8, 0, 15, 20, 5]
      input_tokens: 3000
      output_tokens: 500
    sla: {itl_ms: 150}
"""
HEAD = """name: week
region: FR
electricity_usd_per_kwh: 0.15
horizon_hours: 168
objective: {minimize: cost}
gpus:
  L4: {available: 32}
  A10G: {available: 16}
  L40S: {available: 8}
models:"""
API_ENTRY = """
  - name: api
    model: google/gemma-2-9b-it
    load:
      requests_per_s_by_period: [2, 2, 2, 2, 2, 1, 1]
      input_tokens: 500
      output_tokens: 200
    sla: {itl_ms: 60}
    min_replicas: 3
"""
#: The nightly-batch part of the two-entry plan's optimum (its allocations fit the inventory
#: alone): the one-entry optimum costs at most this.
TWO_ENTRY_PART_USD = 5312.54


@pytest.mark.slow
def test_a_one_entry_cost_plan_under_inventory_reaches_its_optimum(tmp_path: Path) -> None:
    result, out = plan_text(tmp_path, HEAD + BATCH_ENTRY)
    assert result.code == 0, result.err
    plan = json.loads(out.read_text(encoding="utf-8"))
    assert plan["status"] == "optimal", plan["solve"]
    assert plan["totals"]["cost_usd"] <= TWO_ENTRY_PART_USD * (1 + 1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("budget", ["5840", "5900"])
def test_a_budget_the_least_cost_plan_keeps_gives_a_plan(tmp_path: Path, budget: str) -> None:
    least, least_out = plan_text(tmp_path, HEAD + BATCH_ENTRY + API_ENTRY)
    assert least.code == 0, least.err
    cheapest = json.loads(least_out.read_text(encoding="utf-8"))
    assert cheapest["totals"]["cost_usd"] <= float(budget)
    args = ("--set", "objective.minimize=energy", "--set", f"budget_usd={budget}")
    result, out = plan_text(tmp_path, HEAD + BATCH_ENTRY + API_ENTRY, *args)
    assert result.code == 0, result.err
    plan = json.loads(out.read_text(encoding="utf-8"))
    assert plan["status"] in ("optimal", "feasible")
    assert plan["totals"]["cost_usd"] <= float(budget) * (1 + 1e-9)
    energy = plan["totals"]["facility_energy_kwh"]
    assert energy <= cheapest["totals"]["facility_energy_kwh"] * (1 + 1e-9)


@pytest.mark.slow
def test_an_itl_sla_in_seconds_says_the_field_is_in_milliseconds(tmp_path: Path) -> None:
    scenario = """name: err
region: US
electricity_usd_per_kwh: 0.1
gpus:
  H100-SXM5-80GB: {available: 8}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s: 2, input_tokens: 500, output_tokens: 200}
    sla: {itl_ms: 0.04}
"""
    result, out = plan_text(tmp_path, scenario)
    assert result.code == 1
    plan = json.loads(out.read_text(encoding="utf-8"))
    assert plan["status"] == "infeasible"
    text = " ".join(" ".join(plan["solve"]["messages"]).split())
    assert "sla.itl_ms is in milliseconds: 0.04 ms; did you mean 40" in text


@pytest.mark.slow
def test_a_plan_left_above_the_gap_says_why(tmp_path: Path) -> None:
    scenario = """name: r1-racks
grid_g_co2_per_kwh: 250
pue: 1.1
electricity_usd_per_kwh: 0.08
gpus:
  GB200: {}
  GB300: {}
models:
  - name: r1
    model: deepseek-ai/DeepSeek-R1
    precision: fp4
    load: {requests_per_s: 6, input_tokens: 1000, output_tokens: 4000}
    sla: {itl_ms: 30}
"""
    result, out = plan_text(tmp_path, scenario)
    assert result.code == 0, result.err
    plan = json.loads(out.read_text(encoding="utf-8"))
    said = any(
        m.startswith("not proven optimal: the exact per-model search")
        for m in plan["solve"]["messages"]
    )
    # feasible above the target gap (3.8 % when written): the plan says why it is not proven
    assert plan["status"] == "optimal" or said, plan["solve"]
