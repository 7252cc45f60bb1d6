"""Fuzz round 29 (does ``wattgpu validate`` agree with ``plan`` and ``sweep``?), findings 1–4.

* F1: validate did not list every problem: a rule that ties the sections together hid the
  ``tp_degrees`` / ``layouts`` rules (checked only once the scenario validated), and a rule
  broken inside a section (objective, failover, load, disclosure) hid every rule that ties the
  sections together (pydantic skips the scenario's after-validator). Now every rule whose
  fields hold values of their type and range is listed, each line as it reads alone.
* F2: a ``tp_degrees`` list that the heads rule empties for a model entry (Qwen2.5-7B's 28
  heads and TP 8) passed validate and planned "no candidate GPU at all (check allowed GPUs and
  inventory)"; it is refused, naming the field, the entry and the degrees its heads allow. For
  llama.cpp and hf-transformers, which split the layers, a degree is the GPU count of a layer
  split (TP 1 × PP degree): the heads rule neither drops nor refuses it.
* F3: with regions, an empty region ``gpus: {}`` and an entry whose regions offer no GPU type
  it may use passed validate (the plan found no candidate); both are refused, as at the top
  level.
* F4: ``wattgpu sweep`` of a scenario that sweeps nothing said so in a line naming neither the
  file nor the field; it names both. validate does not refuse such a block: ``sweep --draws
  N`` runs it (docs/scenarios.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.scenario.layout_checks import usable_degrees
from planner.scenario.sweep_block import SweepBlock
from planner.sweep.spec import SweepSettings, settings
from predictors.catalog.store import load_catalog
from predictors.core.errors import WattgpuError
from tests.cli_runner import run_cli

EXAMPLE = "paper-llama8b-low-load"
QWEN7 = "models[0].model=Qwen/Qwen2.5-7B-Instruct"


def _lines(*sets: str) -> list[str]:
    """The error lines of ``wattgpu validate EXAMPLE --set …`` (exit 1)."""
    args = [a for s in sets for a in ("--set", s)]
    result = run_cli("validate", EXAMPLE, *args)
    assert result.code == 1, result.out + result.err
    assert "Traceback" not in result.err
    return result.errors


# --- F1: every problem at once -------------------------------------------------------------

GRID = "grid_g_co2_per_kwh=100"
LAYOUT = "gpus.H100-SXM5-80GB.layouts=[{gpu_count: 3}]"
DEGREE = "gpus.L4.tp_degrees=[16]"


def test_a_cross_field_rule_hides_no_layout_rule_and_each_line_reads_as_alone() -> None:
    together = _lines(GRID, LAYOUT, DEGREE)
    alone = [line for s in (GRID, LAYOUT, DEGREE) for line in _lines(s)]
    assert sorted(together) == sorted(alone), together
    assert len(together) == 3
    assert together == _lines(GRID, LAYOUT, DEGREE)  # the same order every run
    assert any("gpus.L4.tp_degrees: 16 is larger than" in line for line in together)
    assert any("gpus.H100-SXM5-80GB.layouts[0]: gpu_count:" in line for line in together)


def test_regions_with_a_power_cap_hide_no_layout_rule() -> None:
    lines = _lines("regions={a: {}}", "power_cap_kw=5", LAYOUT)
    assert any("power_cap_kw: not used with regions" in line for line in lines), lines
    assert any("gpus.H100-SXM5-80GB.layouts[0]:" in line for line in lines), lines


@pytest.mark.parametrize(
    ("section", "field"),
    [
        ("failover={replicas: 1, nodes: 1}", "failover.nodes: given together with replicas"),
        (
            "objective={minimize: energy, weights: {cost_usd: 1}}",
            "objective.weights: weights are only used with minimize: weighted",
        ),
        (
            "models[0].load.requests_per_s_by_period=[1, 2]",
            "models[0].load.requests_per_s_by_period: given together with requests_per_s",
        ),
        ("disclosure={wue_l_per_kwh: 1}", "disclosure.wue_source: missing"),
    ],
)
def test_a_rule_inside_a_section_hides_no_scenario_rule(section: str, field: str) -> None:
    forbid = "models[0].forbidden_gpus=[L4, A30, H100-SXM5-80GB]"
    lines = _lines(section, GRID, forbid, LAYOUT)
    assert any(field in line for line in lines), lines
    assert any("grid_g_co2_per_kwh: given together with region US" in line for line in lines)
    assert any("models[0].forbidden_gpus: forbids every GPU type" in line for line in lines)
    # the entry forbids every type, so no layout applies to it: no layout line
    assert not any("layouts[0]" in line for line in lines), lines
    assert len(lines) == 3, lines
    assert sorted(_lines(section)) == sorted(line for line in lines if field in line)


def test_a_load_with_two_rates_is_named_once() -> None:
    """The section's values reach the scenario rules, but a load with a daily profile and a
    per-period list is not also "models use different numbers of periods"."""
    profile = "models[0].load.daily_profile=[" + ", ".join(["1"] * 24) + "]"
    lines = _lines(profile, "models[0].load.requests_per_s_by_period=[1, 2]")
    assert len(lines) == 1 and "given together with daily_profile" in lines[0], lines


def test_a_field_error_still_hides_the_cross_field_rules() -> None:
    """docs/scenarios.md: a field error (a quoted number) hides them until it is fixed."""
    lines = _lines("electricity_usd_per_kwh='0.1'", GRID, LAYOUT)
    assert len(lines) == 1 and "electricity_usd_per_kwh: expected a number" in lines[0], lines


# --- F2: tp_degrees and the heads ----------------------------------------------------------


def test_degrees_the_heads_leave_empty_are_refused_by_validate_and_plan() -> None:
    sets = ("engine=vllm", QWEN7, "gpus={L4: {tp_degrees: [8]}}")
    lines = _lines(*sets)
    assert len(lines) == 1, lines
    line = lines[0]
    assert "gpus.L4.tp_degrees: [8] leave model entry chat-8b" in line, line
    assert "allow tensor parallelism 1, 2, 4 in its 8-GPU NVLink domain" in line
    assert "add one of those degrees" in line and "forbidden_gpus" in line
    plan = run_cli("plan", EXAMPLE, *[a for s in sets for a in ("--set", s)])
    assert plan.code == 1 and plan.errors == lines, plan.out + plan.err
    assert "no candidate GPU at all" not in plan.out + plan.err


def test_stated_layouts_or_another_degree_leave_the_type_usable() -> None:
    for gpus in (
        "{L4: {tp_degrees: [8, 4]}}",
        "{L4: {tp_degrees: [8], layouts: [{gpu_count: 4}]}}",
    ):
        result = run_cli("validate", EXAMPLE, "--set", QWEN7, "--set", f"gpus={gpus}")
        assert result.code == 0, result.err


def test_layer_split_engines_take_every_degree_as_a_gpu_count() -> None:
    catalog = load_catalog()
    qwen = catalog.llm("Qwen/Qwen2.5-7B-Instruct")
    assert usable_degrees([8, 2, 6], qwen, "vllm") == [2]
    assert usable_degrees([8, 2, 6], qwen, "llama.cpp") == [2, 6, 8]
    assert usable_degrees([8, 2, 6], qwen, "hf-transformers") == [2, 6, 8]
    # TP 6 fits no head count of Qwen2.5-32B: refused for vLLM, a 6-GPU layer split for llama.cpp
    big = ("models[0].model=Qwen/Qwen2.5-32B-Instruct", "gpus={L4: {tp_degrees: [6]}}")
    refused = _lines("engine=vllm", *big)
    assert len(refused) == 1 and "[6] fit the attention heads of no model entry" in refused[0]
    ok = run_cli(
        "validate", EXAMPLE, *[a for s in ("engine=llama.cpp", *big) for a in ("--set", s)]
    )
    assert ok.code == 0, ok.err


def test_llama_cpp_plans_a_degree_the_heads_do_not_divide(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    sets = ("engine=llama.cpp", QWEN7, "gpus={L4: {tp_degrees: [8]}}")
    args = [a for s in sets for a in ("--set", s)]
    result = run_cli("plan", EXAMPLE, *args, "--candidates", "-f", "json", "-o", str(out))
    assert "no candidate GPU at all" not in result.out + result.err
    doc = json.loads(out.read_text(encoding="utf-8"))
    shapes = {(c["gpu"], c["tensor_parallel"], c["pipeline_parallel"]) for c in doc["candidates"]}
    assert ("L4", 1, 8) in shapes, shapes


# --- F3: regions -----------------------------------------------------------------------------


def test_an_empty_region_gpus_is_refused_as_at_the_top_level() -> None:
    lines = _lines("regions={fr: {gpus: {}}}")
    assert len(lines) == 1, lines
    assert "regions.fr.gpus: no GPU types listed — list at least one, or omit gpus" in lines[0]


def test_an_entry_its_regions_cannot_serve_is_refused() -> None:
    forbid = _lines("regions={fr: {gpus: {L4: {}}}}", "models[0].forbidden_gpus=[L4]")
    assert len(forbid) == 1, forbid
    assert (
        "models[0].forbidden_gpus: forbids every GPU type the regions it may be placed in "
        in (forbid[0])
    )
    assert "(fr: L4), so nothing can serve the entry" in forbid[0]
    allow = _lines("regions={fr: {gpus: {L4: {}}}}", "models[0].allowed_gpus=[A30]")
    assert len(allow) == 1 and "models[0].allowed_gpus: allows none of the GPU types" in allow[0]
    # a region that offers every type serves it
    ok = run_cli(
        "validate",
        EXAMPLE,
        "--set",
        "regions={fr: {gpus: {L4: {}}}, de: {}}",
        "--set",
        "models[0].allowed_gpus=[A30]",
    )
    assert ok.code == 0, ok.err


def test_an_entry_with_nothing_to_serve_is_not_refused() -> None:
    sets = ("regions={fr: {gpus: {L4: {}}}}", "models[0].forbidden_gpus=[L4]")
    idle = ("models[0].load.requests_per_s=0", "models[0].min_replicas=0")
    args = [a for s in (*sets, *idle) for a in ("--set", s)]
    assert run_cli("validate", EXAMPLE, *args).code == 0


# --- F4: a sweep that sweeps nothing ----------------------------------------------------------


def _settings(block: SweepBlock | None, draws: int | None) -> SweepSettings:
    return settings(
        block,
        draws=draws,
        seed=None,
        choose="none",
        sla_probability=0.95,
        force=False,
        source=lambda field: "s.yaml",
    )


def test_nothing_to_sweep_names_the_file_and_the_field() -> None:
    block = SweepBlock.model_validate({"draws": 0, "grid": {}})
    with pytest.raises(WattgpuError) as caught:
        _settings(block, None)
    assert str(caught.value) == (
        "s.yaml: sweep: nothing to sweep — sweep.draws is 0 and sweep.grid has no axis; give "
        "--draws N, or sweep.draws or a sweep.grid axis in the scenario (docs/sweep.md)"
    )
    with pytest.raises(WattgpuError, match=r"^s\.yaml: sweep: .*no sweep block"):
        _settings(None, None)
    with pytest.raises(WattgpuError, match=r"--draws 0 and sweep.grid has no axis; give --draws"):
        _settings(SweepBlock.model_validate({"draws": 5}), 0)
    assert _settings(block, 20).draws == 20  # --draws N gives the draws
    grid = SweepBlock.model_validate({"grid": {"load_growth": [1.0]}})
    assert _settings(grid, None).draws == 0  # a grid-only sweep


def test_sweep_refuses_an_empty_block_in_one_line_validate_lets_sweep_draws_run_it() -> None:
    block = "sweep={draws: 0, grid: {}}"
    assert run_cli("validate", EXAMPLE, "--set", block).code == 0  # sweep --draws N runs it
    result = run_cli("sweep", EXAMPLE, "--set", block)
    assert result.code == 1 and len(result.errors) == 1, result.err
    line = result.errors[0]
    assert f"paper-llama8b-low-load.yaml --set {block}: sweep: nothing to sweep" in line, line
