"""Fuzz round 28 (saved plans): layout facts, pool figures, a model entry's context window,
candidate power figures and savings that no plan can hold.

Each test below failed before its fix: ``report`` reported as written a dense Llama-3.1-8B
replica with ``expert_parallel`` 4 (on its candidate and allocation, or on a disaggregated unit's
pool), a 1-GPU replica spanning 5 nodes, a unit's pool idling at 1 W or drawing 99,999 W at
capacity (above its 4 × 700 W TDP), an entry of 200,000 input tokens for a 131,072-token context,
a candidate's ``idle_power_w_per_gpu``, ``energy_j_per_request`` or ``power_w_per_gpu_at_capacity``
that its power curve does not give, and ``savings`` that are not the baselines less the totals.
Each is now one ``error:`` line naming the field (exit 1); every bundled plan still checks clean.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from planner.documents.verify import plan_problems
from planner.documents.verify_pools import record_identity
from predictors.catalog.store import load_catalog
from tests.bundled_runs import BundledRuns
from tests.cli_runner import one_error_line, run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

PAPER = "paper-llama8b-low-load"
DISAGG = "disagg-tight-sla"
FIX = "plan the scenario again"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def _data(bundled: BundledRuns, name: str = PAPER) -> dict[str, Any]:
    """A bundled plan's JSON (made now: its ``catalog_sha256`` is the catalogs')."""
    data: dict[str, Any] = json.loads(bundled.plan_json(name))
    return data


def _write(folder: Path, data: dict[str, Any]) -> Path:
    path = folder / "plan.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _allocated(data: dict[str, Any], unit: bool = False) -> tuple[int, int]:
    """(allocation, its candidate's index) of the first allocation (of a disaggregated unit when
    *unit*)."""
    a = next(k for k, alloc in enumerate(data["allocations"]) if bool(alloc.get("pools")) == unit)
    key = record_identity(data["allocations"][a])
    return a, next(i for i, c in enumerate(data["candidates"]) if record_identity(c) == key)


def _only(data: dict[str, Any], line: str) -> None:
    """*line* is the plan's one problem."""
    assert plan_problems(data) == [line], plan_problems(data)


def _refused(folder: Path, data: dict[str, Any], line: str) -> None:
    """``report`` and ``diff`` stop on the edited plan with *line*, one line, exit 1."""
    plan = _write(folder, data)
    one_error_line(run_cli("report", str(plan)), f"{plan}: {line}", FIX)
    one_error_line(run_cli("diff", str(plan), str(plan)), f"{plan}: {line}", FIX)


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
@pytest.mark.parametrize("name", [DISAGG, "enterprise-fleet", "eu-power-cap-carbon", PAPER])
def test_every_bundled_plan_checks_clean(bundled: BundledRuns, name: str) -> None:
    assert plan_problems(_data(bundled, name)) == []


def test_an_untouched_plan_reports(bundled: BundledRuns, tmp_path: Path) -> None:
    result = run_cli("report", str(_write(tmp_path, _data(bundled))), "-f", "text")
    assert result.code == 0, result.err
    assert "error:" not in result.err and "warning:" not in result.err


# --- F3a: expert parallelism on a dense model, and nodes --------------------------------------


def test_expert_parallelism_on_a_dense_model_is_named(bundled: BundledRuns, tmp_path: Path) -> None:
    data = _data(bundled)
    a, i = _allocated(data)
    data["candidates"][i]["expert_parallel"] = 4
    data["allocations"][a]["expert_parallel"] = 4
    for flag in data["uncertainty_flags"]["flags"]:
        flag["expert_parallel"] = 4
    line = (
        f"candidates[{i}].expert_parallel: 4, but {LLAMA} is a dense model (no experts): its "
        "expert_parallel is 1 (the validity rules of predict and of a scenario's layouts)"
    )
    _only(data, line)
    _refused(tmp_path, data, line)


def test_more_nodes_than_gpus_is_named(bundled: BundledRuns, tmp_path: Path) -> None:
    data = _data(bundled)
    a, i = _allocated(data)
    assert data["candidates"][i]["gpus_per_replica"] == 1
    data["candidates"][i]["nodes"] = 5
    data["allocations"][a]["nodes"] = 5
    line = (
        f"candidates[{i}].nodes: 5 is impossible (more than the 1 GPU(s) of its replica: a node "
        "holds at least one)"
    )
    _only(data, line)
    _refused(tmp_path, data, line)


def _two_gpus(data: dict[str, Any]) -> int:
    """The index of the plan's L4 TP 2 candidate."""
    return next(i for i, c in enumerate(data["candidates"]) if (c["gpu"], c["tp"]) == ("L4", 2))


def test_nodes_the_layout_does_not_span_are_named(bundled: BundledRuns) -> None:
    data = _data(bundled)
    i = _two_gpus(data)
    data["candidates"][i]["nodes"] = 2
    _only(
        data,
        f"candidates[{i}].nodes: 2, but a replica of TP 2 × PP 1 × DP 1 of L4 spans 1 node(s) "
        "of 8 GPUs (the catalogs the plan was made with)",
    )


def test_gpus_the_layout_does_not_hold_are_named(bundled: BundledRuns) -> None:
    data = _data(bundled)
    i = _two_gpus(data)
    data["candidates"][i]["gpus_per_replica"] = 4
    assert (
        f"candidates[{i}].gpus_per_replica: 4, but a replica of TP 2 × PP 1 × DP 1 of L4 holds 2 "
        "GPUs of inventory (planner.layouts.held_gpus, the catalogs the plan was made with)"
    ) in plan_problems(data)


def test_other_catalogs_keep_the_node_size_lenient_but_not_the_gpu_bound(
    bundled: BundledRuns,
) -> None:
    data = _data(bundled)
    data["assumptions"]["catalog_sha256"] = "0" * 64
    assert plan_problems(data) == []
    i = _two_gpus(data)
    data["candidates"][i]["nodes"] = 2  # a node size is a catalog fact
    assert plan_problems(data) == []
    data["candidates"][i]["nodes"] = 3  # but a node holds at least one GPU
    assert plan_problems(data) == [
        f"candidates[{i}].nodes: 3 is impossible (more than the 2 GPU(s) of its replica: a node "
        "holds at least one)"
    ]


@pytest.mark.slow
def test_a_units_nodes_are_its_workers(bundled: BundledRuns) -> None:
    data = _data(bundled, DISAGG)
    _, allocated = _allocated(data, unit=True)
    i = next(
        k
        for k, c in enumerate(data["candidates"])
        if c.get("pools") and c["feasible"] and k != allocated
    )
    nodes = data["candidates"][i]["nodes"]
    data["candidates"][i]["nodes"] = nodes + 1
    _only(
        data,
        f"candidates[{i}].nodes: {nodes + 1}, but its pools' workers span {nodes} node(s) "
        "(planner.disagg.units.unit_nodes, the catalogs the plan was made with)",
    )


# --- F3b: disaggregated pool figures -----------------------------------------------------------


def _unit_edit(data: dict[str, Any], key: str, value: Any) -> int:
    """Set *key* of the prefill pool of the allocated unit (candidate and allocation) to
    *value*; the candidate's index."""
    a, i = _allocated(data, unit=True)
    data["candidates"][i]["pools"][0][key] = value
    data["allocations"][a]["pools"][0][key] = value
    return i


@pytest.mark.slow
def test_a_pool_idle_power_off_its_curve_is_named(bundled: BundledRuns, tmp_path: Path) -> None:
    data = _data(bundled, DISAGG)
    i = _unit_edit(data, "idle_power_w", 1.0)
    idle = data["candidates"][i]["pools"][0]["power_curve_w"][0]
    pools = data["candidates"][i]["pools"]
    assert sum(p["power_curve_w"][0] for p in pools) == pytest.approx(
        data["candidates"][i]["idle_power_w_per_replica"]
    )
    line = (
        f"candidates[{i}].pools[0].idle_power_w: 1.0 W, but its power_curve_w starts at "
        f"{idle:.6g} W"
    )
    _only(data, line)
    _refused(tmp_path, data, line)


def test_a_pool_power_at_capacity_off_its_curve_is_named(
    bundled: BundledRuns, tmp_path: Path
) -> None:
    data = _data(bundled, DISAGG)
    i = _unit_edit(data, "power_w_at_capacity", 99999.0)
    top = data["candidates"][i]["pools"][0]["power_curve_w"][-1]
    line = (
        f"candidates[{i}].pools[0].power_w_at_capacity: 99999.0 W, but its power_curve_w ends "
        f"at {top:.6g} W"
    )
    _only(data, line)
    _refused(tmp_path, data, line)


def test_a_pool_stating_neither_figure_is_named_beside_pools_that_state_them(
    bundled: BundledRuns,
) -> None:
    data = _data(bundled, DISAGG)
    i = _unit_edit(data, "idle_power_w", 0.0)
    _unit_edit(data, "power_w_at_capacity", 0.0)
    idle = data["candidates"][i]["pools"][0]["power_curve_w"][0]
    assert (
        f"candidates[{i}].pools[0].idle_power_w: 0.0 W, but its power_curve_w starts at "
        f"{idle:.6g} W"
    ) in plan_problems(data)


def test_a_pool_without_a_curve_stays_inside_idle_and_tdp(bundled: BundledRuns) -> None:
    data = _data(bundled, DISAGG)
    i = next(k for k, c in enumerate(data["candidates"]) if c.get("pools") and not c["feasible"])
    pool = data["candidates"][i]["pools"][0]
    pool.pop("power_curve_w")
    assert plan_problems(data) == []
    pool["power_w_at_capacity"] = 99999.0
    tdp = float(load_catalog().gpu(pool["gpu"])["tdp_w"])
    _only(
        data,
        f"candidates[{i}].pools[0].power_w_at_capacity: 99999.0 W is outside the pool's [idle, "
        f"GPUs × TDP] = [{pool['idle_power_w']:g}, {tdp * pool['gpus']:g}] W",
    )


def test_a_pools_expert_parallelism_on_a_dense_model_is_named(
    bundled: BundledRuns, tmp_path: Path
) -> None:
    data = _data(bundled, DISAGG)
    i = _unit_edit(data, "expert_parallel", 4)
    line = (
        f"candidates[{i}].pools[0].expert_parallel: 4, but {LLAMA} is a dense model (no experts): "
        "its expert_parallel is 1 (the validity rules of predict and of a scenario's layouts)"
    )
    _only(data, line)
    _refused(tmp_path, data, line)


# --- F4: a model entry's tokens beyond its model's context window -------------------------------


def test_tokens_beyond_the_context_window_are_named(bundled: BundledRuns, tmp_path: Path) -> None:
    data = _data(bundled)
    output = data["models"][0]["output_tokens"]
    data["models"][0]["input_tokens"] = 200000
    line = (
        f"models[0].input_tokens: {200000 + output:,.0f} tokens (input 200,000 + output "
        f"{output:,.0f}) exceed the 131,072-token context of {LLAMA} (a scenario refuses such an "
        "entry)"
    )
    _only(data, line)
    _refused(tmp_path, data, line)


def test_tokens_that_fill_the_context_exactly_check_clean(bundled: BundledRuns) -> None:
    data = _data(bundled)
    data["models"][0]["input_tokens"] = 131072 - data["models"][0]["output_tokens"]
    assert plan_problems(data) == []


# --- F1 (outputs): a candidate's power figures against its curve --------------------------------


def _candidate_edit(
    bundled: BundledRuns, key: str, change: Callable[[float], float]
) -> tuple[dict[str, Any], int, dict[str, Any]]:
    data = _data(bundled)
    _, i = _allocated(data)
    c = data["candidates"][i]
    c[key] = change(c[key])
    return data, i, c


def test_idle_power_per_gpu_off_the_replica_is_named(bundled: BundledRuns, tmp_path: Path) -> None:
    data, i, c = _candidate_edit(bundled, "idle_power_w_per_gpu", lambda v: v * 0.8)
    idle = c["idle_power_w_per_replica"]
    line = (
        f"candidates[{i}].idle_power_w_per_gpu: {c['idle_power_w_per_gpu']!r} W, but the "
        f"replica's idle {idle:.6g} W (idle_power_w_per_replica) over its 1 GPU(s) is "
        f"{idle:.6g} W"
    )
    _only(data, line)
    _refused(tmp_path, data, line)
    trusted = run_cli("report", str(tmp_path / "plan.json"), "--trust", "-f", "text")
    assert trusted.code == 0, trusted.err
    assert "warning:" in trusted.err and "idle_power_w_per_gpu" in trusted.err


def test_idle_power_per_replica_off_the_curve_is_named(bundled: BundledRuns) -> None:
    data, i, c = _candidate_edit(bundled, "idle_power_w_per_replica", lambda v: v * 0.8)
    _only(
        data,
        f"candidates[{i}].idle_power_w_per_replica: {c['idle_power_w_per_replica']!r} W, but its "
        f"power_curve_w_per_replica starts at {c['power_curve_w_per_replica'][0]:.6g} W (the "
        "replica's power at no load)",
    )


def test_energy_per_request_off_the_curve_is_named(bundled: BundledRuns, tmp_path: Path) -> None:
    data, i, c = _candidate_edit(bundled, "energy_j_per_request", lambda v: v * 2)
    line = (
        f"candidates[{i}].energy_j_per_request: {c['energy_j_per_request']!r} J, but its curve "
        f"gives {c['energy_j_per_request'] / 2:.6g} J (the least watts above idle per req/s over "
        "its knots)"
    )
    _only(data, line)
    _refused(tmp_path, data, line)


def test_power_per_gpu_at_capacity_off_the_curve_is_named(
    bundled: BundledRuns, tmp_path: Path
) -> None:
    data, i, c = _candidate_edit(bundled, "power_w_per_gpu_at_capacity", lambda v: v * 1.1)
    top = c["power_curve_w_per_replica"][-1]
    line = (
        f"candidates[{i}].power_w_per_gpu_at_capacity: {c['power_w_per_gpu_at_capacity']!r} W, "
        f"but its power at capacity {top:.6g} W (the curve's last knot) over its 1 GPU(s) is "
        f"{top:.6g} W"
    )
    _only(data, line)
    _refused(tmp_path, data, line)


def test_capacity_off_the_curve_is_named(bundled: BundledRuns) -> None:
    data = _data(bundled)
    i = _two_gpus(data)
    c = data["candidates"][i]
    c["max_requests_per_s_per_replica"] *= 1.1
    _only(
        data,
        f"candidates[{i}].max_requests_per_s_per_replica: {c['max_requests_per_s_per_replica']!r}"
        f" req/s, but its curve ends at {c['load_curve_requests_per_s'][-1]:.6g} req/s (the "
        "capacity is its last knot)",
    )


# --- F2 (outputs): savings against the baselines and totals -------------------------------------


def test_savings_off_the_baselines_less_the_totals_are_named(
    bundled: BundledRuns, tmp_path: Path
) -> None:
    data = _data(bundled)
    s, b, t = data["savings"][1], data["baselines"][1], data["totals"]
    saved = s["energy_kwh"]
    s["energy_kwh"] = saved * 2
    line = (
        f"savings[1].energy_kwh: {saved * 2!r}, but baselines[1].energy_kwh "
        f"{b['energy_kwh']:.6g} less totals.energy_kwh {t['energy_kwh']:.6g} is {saved:.6g}"
    )
    _only(data, line)
    _refused(tmp_path, data, line)


def test_an_edited_baseline_no_longer_gives_its_savings(bundled: BundledRuns) -> None:
    data = _data(bundled)
    b = data["baselines"][1]
    b["energy_kwh"] /= 2
    again = b["energy_kwh"] - data["totals"]["energy_kwh"]
    assert plan_problems(data) == [
        f"savings[1].energy_kwh: {data['savings'][1]['energy_kwh']!r}, but baselines[1]."
        f"energy_kwh {b['energy_kwh']:.6g} less totals.energy_kwh "
        f"{data['totals']['energy_kwh']:.6g} is {again:.6g}"
    ]


@pytest.mark.parametrize("value", [50.0, None])
def test_a_saving_percentage_off_its_baseline_is_named(bundled: BundledRuns, value: Any) -> None:
    data = _data(bundled)
    s, b = data["savings"][1], data["baselines"][1]
    pct = s["cost_pct"]
    s["cost_pct"] = value
    shown = "null" if value is None else repr(value)
    _only(
        data,
        f"savings[1].cost_pct: {shown}, but it is {pct:.6g} %: {s['cost_usd']:.6g} of "
        f"baselines[1].cost_usd {b['cost_usd']:.6g}",
    )


def test_a_saving_missing_or_of_another_baseline_is_named(bundled: BundledRuns) -> None:
    data = _data(bundled)
    data["savings"].pop()
    _only(
        data,
        "savings: 2 entries, but 3 baselines have figures (one saving per such baseline, in "
        "their order)",
    )
    data = _data(bundled)
    data["savings"][2]["baseline"] = "h100"
    _only(
        data,
        "savings[2].baseline: 'h100', but the baseline it saves against is baselines[2] "
        "'cheapest-per-hour'",
    )
