"""A plan JSON is recomputed before it is trusted (planner.documents.verify).

Untouched plans check clean; every hand edit of the hostile-input round 3 is caught and named:
a tampered total, a negative energy, replicas beyond the inventory, a status that contradicts
the allocations, an edited model name or GPU, a per-period power that is not the curve's.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

from planner.documents.verify import plan_problems

GOLDEN = Path(__file__).parent / "golden"
PLANS = sorted(GOLDEN.glob("*.json"))


def _plan(name: str = "enterprise-fleet") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.stem)
def test_an_untouched_plan_checks_clean(path: Path) -> None:
    assert plan_problems(json.loads(path.read_text(encoding="utf-8"))) == []


def _scale_total(d: dict[str, Any]) -> None:
    d["totals"]["energy_kwh"] *= 10


def _negative_energy(d: dict[str, Any]) -> None:
    d["allocations"][0]["energy_kwh"] = -5.0


def _thousand_replicas(d: dict[str, Any]) -> None:
    d["allocations"][0]["replicas"] = 1000


def _infeasible_with_allocations(d: dict[str, Any]) -> None:
    d["status"] = "infeasible"


def _renamed_model(d: dict[str, Any]) -> None:
    d["allocations"][0]["model"] = "acme/not-this-model"


def _moved_gpu(d: dict[str, Any]) -> None:
    d["allocations"][0]["gpu"] = "B300"  # not among the scenario's GPUs


def _period_power(d: dict[str, Any]) -> None:
    d["allocations"][1]["power_w_by_period"][3] *= 1.01


def _objective(d: dict[str, Any]) -> None:
    d["solve"]["objective"] *= 0.5


def _peak(d: dict[str, Any]) -> None:
    d["totals"]["peak_facility_power_kw"] = 0.1


def _repeated_candidate(d: dict[str, Any]) -> None:
    twin = copy.deepcopy(d["candidates"][1])
    twin["max_requests_per_s_per_replica"] *= 2  # other figures under the same identity
    d["candidates"].append(twin)


EDITS: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (_scale_total, "totals.energy_kwh"),
    (_negative_energy, "allocations[0].energy_kwh"),
    (_thousand_replicas, "inventory has"),
    (_infeasible_with_allocations, "status"),
    (_renamed_model, "allocations[0].model"),
    (_moved_gpu, "not a feasible candidate"),
    (_period_power, "allocations[1].power_w_by_period[3]"),
    (_objective, "solve.objective"),
    (_peak, "totals.peak_facility_power_kw"),
    (_repeated_candidate, "the same candidate as candidates[1]"),
]


@pytest.mark.parametrize(("edit", "named"), EDITS, ids=[e.__name__.strip("_") for e, _ in EDITS])
def test_every_hand_edit_is_caught_and_named(
    edit: Callable[[dict[str, Any]], None], named: str
) -> None:
    data = copy.deepcopy(_plan())
    edit(data)
    problems = plan_problems(data)
    assert problems, "the edit went unnoticed"
    assert any(named in line for line in problems), problems


@pytest.mark.slow
def test_an_optimal_plan_without_allocations_is_damaged_only_when_some_entry_has_load(
    tmp_path: Path,
) -> None:
    """Every entry at 0 req/s (min_replicas 0) plans optimally with no allocation; report, diff
    and pareto refused that plan as "edited or damaged"."""
    out = tmp_path / "zero.json"
    result = run_cli("plan", "paper-llama8b-low-load", "--set", "models[0].load.requests_per_s=0",
                     "--set", "models[0].min_replicas=0", "-f", "json", "-o", str(out))  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["status"] == "optimal" and data["allocations"] == []
    assert plan_problems(data) == []
    assert run_cli("report", str(out), "-f", "json").code == 0
    emptied = copy.deepcopy(_plan())
    emptied["allocations"] = []
    assert any("no allocation for its model entries" in p for p in plan_problems(emptied))


def test_a_relative_slip_below_the_tolerance_is_accepted() -> None:
    data = _plan()
    data["totals"]["energy_kwh"] *= 1 + 1e-9
    assert plan_problems(data) == []


def _saved(tmp_path: Path, edit: Callable[[dict[str, Any]], None] | None = None) -> Path:
    data = _plan("paper-llama8b-low-load")
    data["solve"]["seconds"] = 0.1  # goldens leave out the wall-clock time
    if edit is not None:
        edit(data)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_report_of_a_tampered_plan_exits_1_naming_the_field(tmp_path: Path) -> None:
    path = _saved(tmp_path, _scale_total)
    result = run_cli("report", str(path), "-f", "json", "--pareto-points", "0")
    assert result.code == 1 and result.out == ""
    assert result.errors and "totals.energy_kwh" in result.errors[0] and "--trust" in result.err


def test_with_trust_it_warns_and_json_and_md_agree(tmp_path: Path) -> None:
    path = _saved(tmp_path, _scale_total)
    as_json = run_cli("report", str(path), "-f", "json", "--pareto-points", "0", "--trust")
    assert as_json.code == 0, as_json.err
    assert "warning:" in as_json.err and "totals.energy_kwh" in as_json.err
    energy = json.loads(as_json.out)["headline"]["estimated_energy_kwh"]
    as_md = run_cli("report", str(path), "-f", "md", "--pareto-points", "0", "--trust")
    assert as_md.code == 0 and f"| GPU energy (kWh) | {energy:,.0f} |" in as_md.out
    untouched = run_cli("report", str(_saved(tmp_path)), "-f", "json", "--pareto-points", "0")
    assert json.loads(untouched.out)["headline"]["estimated_energy_kwh"] == energy


@pytest.mark.parametrize("edit", [_renamed_model, _moved_gpu], ids=["model", "gpu"])
def test_an_allocation_outside_the_plan_is_a_clean_error_even_with_trust(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None]
) -> None:
    path = _saved(tmp_path, edit)
    for extra in ([], ["--trust"]):
        result = run_cli("report", str(path), "--pareto-points", "0", *extra)
        assert result.code == 1 and result.errors, result.err
        assert "internal error" not in result.err and "allocations[0]" in result.err


def test_diff_checks_both_plans(tmp_path: Path) -> None:
    good = _saved(tmp_path)
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    bad = _saved(bad_dir, _negative_energy)
    result = run_cli("diff", str(good), str(bad))
    assert result.code == 1 and "allocations[0].energy_kwh" in result.err
    assert run_cli("diff", str(good), str(bad), "--trust").code == 0


@pytest.mark.parametrize(
    "args",
    [["pareto", "paper-llama8b-low-load", "-n", "100000"],
     ["report", "paper-llama8b-low-load", "--pareto-points", "1000"]],
    ids=["pareto-n", "pareto-points"],
)  # fmt: skip
def test_front_sizes_have_an_upper_bound(args: list[str]) -> None:
    result = run_cli(*args)
    words = " ".join(re.sub("[│╭╮╰╯─]", " ", result.err).split())  # the usage box, unwrapped
    assert result.code == 2 and "less than or equal to 50" in words, result.err
