"""Fuzz round 19b: saved plans given to ``report``, ``diff`` and ``pareto``.

Each test failed before its fix: a model entry's load edited away from what its allocations
serve, ``totals.gpus`` edited (checked only with ``--trust``), an allocation above its
candidate's capacity, a candidate idling above its TDP and numbers no scenario can hold were
reported; ``diff --trust`` diffed the edited figures; ``diff`` ignored the predictors and an
allocation's load and doubled a unit's TP in its label; a plan without a power interval was
refused without naming its file."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.bundled_runs import BundledRuns
from tests.cli_runner import Result, run_cli


@pytest.fixture(scope="module")
def base(bundled: BundledRuns) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(bundled.plan_json("paper-llama8b-low-load"))
    return data


def _saved(tmp_path: Path, data: dict[str, Any], name: str = "edited.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _report(path: Path, *args: str) -> Result:
    out = str(path.with_suffix(".report.json"))
    return run_cli("report", str(path), "-f", "json", "--pareto-points", "0", "-o", out, *args)


def test_the_unedited_plan_reports(tmp_path: Path, base: dict[str, Any]) -> None:
    result = _report(_saved(tmp_path, base))
    assert result.code == 0, result.err


def test_a_load_its_allocations_do_not_serve_is_refused(
    tmp_path: Path, base: dict[str, Any]
) -> None:
    data = copy.deepcopy(base)
    data["models"][0]["requests_per_s_by_period"] = [5.0]
    result = _report(_saved(tmp_path, data))
    assert result.code == 1
    assert "models[0].requests_per_s_by_period[0]: 5.0 req/s, but its allocations serve" in (
        result.err
    )


def test_an_edited_gpu_count_is_refused_without_trust(tmp_path: Path, base: dict[str, Any]) -> None:
    data = copy.deepcopy(base)
    gpu = next(iter(data["totals"]["gpus"]))
    data["totals"]["gpus"][gpu] += 4
    result = _report(_saved(tmp_path, data))
    assert result.code == 1
    assert "totals.gpus:" in result.err and "but the allocations take" in result.err


def test_an_allocation_above_its_capacity_is_refused(tmp_path: Path, base: dict[str, Any]) -> None:
    data = copy.deepcopy(base)
    alloc = data["allocations"][0]
    cand = next(
        c
        for c in data["candidates"]
        if (c["name"], c["gpu"], c["tp"]) == (alloc["name"], alloc["gpu"], alloc["tp"])
    )
    alloc["requests_per_s_by_period"] = [cand["max_requests_per_s_per_replica"] * 3]
    result = _report(_saved(tmp_path, data))
    assert result.code == 1
    assert "above the candidate's capacity" in result.err


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("idle_power_w_per_gpu", 100_000.0, "is not below tdp_w_per_gpu"),
        ("tdp_w_per_gpu", 1.0, "is not below tdp_w_per_gpu"),
        ("power_w_per_gpu_at_capacity", 10_000.0, "outside the GPU's [idle, TDP]"),
    ],
)
def test_a_candidate_power_outside_idle_and_tdp_is_refused(
    tmp_path: Path, base: dict[str, Any], field: str, value: float, words: str
) -> None:
    data = copy.deepcopy(base)
    data["candidates"][0][field] = value
    result = _report(_saved(tmp_path, data))
    assert result.code == 1, result.err
    assert "candidates[0]." in result.err and words in result.err


@pytest.mark.parametrize(
    ("field", "value"),
    [("output_tokens", 1e308), ("input_tokens", 1e30), ("requests_per_s_by_period", [1e308])],
)
def test_numbers_no_scenario_can_hold_are_one_line_errors(
    tmp_path: Path, base: dict[str, Any], field: str, value: Any
) -> None:
    data = copy.deepcopy(base)
    data["models"][0][field] = value
    out = str(tmp_path / "r.md")
    result = run_cli("report", str(_saved(tmp_path, data)), "-f", "md", "-o", out)
    assert result.code == 1, result.err
    assert "the most a scenario allows" in result.err
    assert "internal error" not in result.err and len(result.errors) == 1


def test_diff_with_trust_diffs_the_recomputed_figures(tmp_path: Path, base: dict[str, Any]) -> None:
    data = copy.deepcopy(base)
    data["allocations"][0]["cost_usd"] = 1.0
    data["totals"]["cost_usd"] = 1.0
    a, b = _saved(tmp_path, base, "a.json"), _saved(tmp_path, data, "b.json")
    result = run_cli("diff", str(a), str(b), "--trust")
    assert result.code == 0, result.err
    assert "no differences" in result.out, result.out


def test_diff_names_other_predictors(tmp_path: Path, base: dict[str, Any]) -> None:
    data = copy.deepcopy(base)
    data["predictors"] = {**data["predictors"], "name": "my-models"}
    a, b = _saved(tmp_path, base, "a.json"), _saved(tmp_path, data, "b.json")
    result = run_cli("diff", str(a), str(b), "-f", "json")
    assert result.code == 0, result.err
    changes = json.loads(result.out)
    assert not changes["identical"]
    assert [c["where"] for c in changes["scenario"]] == ["predictors"]


@pytest.mark.slow
def test_diff_shows_an_allocations_load_and_names_a_unit_once(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run_cli("plan", "disagg-tight-sla", "-f", "json", "-o", str(a)).code == 0
    more = ("--set", "models[0].load.requests_per_s=28")  # 30 before the retrain of 2026-12-06
    assert run_cli("plan", "disagg-tight-sla", *more, "-f", "json", "-o", str(b)).code == 0
    result = run_cli("diff", str(a), str(b))
    assert result.code == 0, result.err
    changed = [line for line in result.out.splitlines() if ": requests_per_s_by_period:" in line]
    assert changed, result.out
    units = [line for line in result.out.splitlines() if "→" in line and "on [" in line]
    assert units, result.out
    assert not any("TP8 TP8" in line or "TP4 TP4" in line for line in result.out.splitlines())


def test_a_plan_without_a_power_interval_names_its_file(
    tmp_path: Path, base: dict[str, Any]
) -> None:
    data = copy.deepcopy(base)
    for c in data["candidates"]:
        c["power_w_per_gpu_predicted"] = None
    path = _saved(tmp_path, data, "old.json")
    result = run_cli("report", str(path), "-f", "md", "-o", str(tmp_path / "r.md"))
    assert result.code == 1
    assert result.errors and result.errors[0].startswith(f"error: {path}: ")
