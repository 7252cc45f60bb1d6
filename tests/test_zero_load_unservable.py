"""An entry with no load that no GPU can serve (found by a valid-scenario fuzzer, 2026-12-04).

``requests_per_s: 0`` (or every period 0) with an SLA no candidate meets gave "internal error
ValueError: zero-size array to reduction operation minimum" in every solver path: the entry's
decomposition block has no candidates, and the search reduced over its empty pieces. Such an
entry needs nothing, so the plan is the plan without it (same objective, no allocation of it);
with load or minimum replicas it stays infeasible, naming the entry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_runner import planned_json, run_cli
from plan_fixtures import REGIONS_SCENARIO

pytestmark = pytest.mark.usefixtures("cached_predictor")

UNSERVABLE = {
    "name": "never-used",
    "model": "google/gemma-2-9b-it",
    "load": {"input_tokens": 2048, "output_tokens": 512, "requests_per_s": 0},
    "sla": {"itl_ms": 0.5},  # below every candidate's ITL floor
}
SMALL: dict[str, Any] = {
    "name": "small",
    "region": "SE",
    "electricity_usd_per_kwh": 0.1,
    "gpus": {"L4": {"available": 4}, "A30": {"available": 2}},
    "models": [
        {
            "name": "chat",
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "load": {"input_tokens": 512, "output_tokens": 256, "requests_per_s": 2},
            "sla": {"itl_ms": 60},
        }
    ],
}


def _write(tmp_path: Path, name: str, data: dict[str, Any]) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


def _with_entry(data: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    return {**data, "models": [*data["models"], entry]}


def _same_plan_as_without(tmp_path: Path, base: dict[str, Any], entry: dict[str, Any]) -> None:
    without = planned_json(tmp_path / "without.json", _write(tmp_path, "without", base))
    scenario = _write(tmp_path, "with", _with_entry(base, entry))
    plan = planned_json(tmp_path / "with.json", scenario)
    assert plan["status"] == without["status"] == "optimal"
    assert plan["solve"]["objective"] == pytest.approx(without["solve"]["objective"], rel=1e-9)
    assert plan["totals"]["gpus"] == without["totals"]["gpus"]
    assert entry["name"] not in {a["name"] for a in plan["allocations"]}
    assert run_cli("report", str(tmp_path / "with.json"), "-o", str(tmp_path / "r.md")).code == 0


@pytest.mark.parametrize(
    "load",
    [
        {"requests_per_s": 0},
        {"requests_per_s_by_period": [0, 0]},
    ],
    ids=["no-rate", "every-period-zero"],
)
@pytest.mark.slow
def test_alone_it_plans_nothing(tmp_path: Path, load: dict[str, Any]) -> None:
    entry = {**UNSERVABLE, "load": {"input_tokens": 2048, "output_tokens": 512, **load}}
    scenario = _write(tmp_path, "alone", {**SMALL, "models": [entry]})
    plan = planned_json(tmp_path / "alone.json", scenario)
    assert plan["status"] == "optimal" and plan["allocations"] == []


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_beside_a_served_entry_the_plan_is_unchanged(tmp_path: Path) -> None:
    _same_plan_as_without(tmp_path, SMALL, UNSERVABLE)


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_under_a_power_cap_the_plan_is_unchanged(tmp_path: Path) -> None:
    """A facility power cap couples the entries (column generation, not the decomposition)."""
    _same_plan_as_without(tmp_path, {**SMALL, "power_cap_kw": 5.0}, UNSERVABLE)


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_every_gpu_forbidden_the_plan_is_unchanged(tmp_path: Path) -> None:
    entry = {**UNSERVABLE, "sla": {"itl_ms": 60}, "forbidden_gpus": ["L4", "A30"]}
    _same_plan_as_without(tmp_path, SMALL, entry)


@pytest.mark.slow  # plans two regions twice: 2.2 s
def test_in_two_regions_the_plan_is_unchanged(tmp_path: Path) -> None:
    regions = yaml.safe_load(Path(REGIONS_SCENARIO).read_text(encoding="utf-8"))
    _same_plan_as_without(tmp_path, regions, {**UNSERVABLE, "regions": ["fr"]})


@pytest.mark.slow
def test_with_load_or_minimum_replicas_it_stays_infeasible(tmp_path: Path) -> None:
    for name, entry in (
        ("loaded", {**UNSERVABLE, "load": {**UNSERVABLE["load"], "requests_per_s": 1}}),
        ("minimum", {**UNSERVABLE, "min_replicas": 1}),
    ):
        scenario = _write(tmp_path, name, _with_entry(SMALL, entry))
        out = tmp_path / f"{name}.json"
        result = run_cli("plan", scenario, "-f", "json", "-o", str(out))
        assert result.code == 1 and "internal error" not in result.err, result.err
        plan = json.loads(out.read_text(encoding="utf-8"))
        assert plan["status"] == "infeasible"
        assert any(m.startswith("never-used: ") for m in plan["solve"]["messages"]), plan["solve"]
