"""Which candidates a plan JSON carries (issue 22): by default the allocated ones, the best
feasible alternatives of each model entry and every excluded one; ``--candidates all`` keeps
every one. The selection is recorded (``candidates_kept``, ``candidate_counts``), checked on
read, and the one-record-per-line JSON holds the same values as fully indented JSON."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from planner.documents.kept import BEST_ALTERNATIVES, kept_candidates, objective_per_request
from planner.documents.plan import load_plan, plan_json, read_plan
from planner.inputs import record_key
from planner.pipeline import PlanRun, plan_file
from planner.text import records_json, to_json
from predictors.api import Predictor
from predictors.core.errors import WattgpuError
from tests.cli_runner import run_cli

REPO = Path(__file__).resolve().parent.parent
ENTERPRISE = REPO / "scenarios" / "enterprise-fleet.yaml"

pytestmark = pytest.mark.usefixtures("cached_predictor")


@pytest.fixture(scope="module")
def run(predictor: Predictor) -> PlanRun:
    return plan_file(ENTERPRISE, [], [], predictor=predictor)


def test_default_json_keeps_allocated_best_alternatives_and_exclusions(run: PlanRun) -> None:
    plan = run.plan
    data = plan_json(plan)
    kept = {record_key(c) for c in data["candidates"]}
    allocated = {a.candidate.key for a in plan.allocations}
    assert allocated <= kept
    every = plan.inputs.candidates
    assert {c.key for c in every if not c.feasible} <= kept
    alternatives: dict[str, list[Any]] = defaultdict(list)
    dropped: dict[str, list[Any]] = defaultdict(list)
    for c in every:
        if c.feasible and c.key not in allocated:
            (alternatives if c.key in kept else dropped)[c.name].append(c)
    assert any(dropped.values()), "the example must have alternatives to drop"
    for name, options in alternatives.items():
        # the best under the plan's objective, plus the entry's best alone at minimum cost and
        # at minimum energy (the ends of a saved plan's Pareto front)
        assert len(options) <= BEST_ALTERNATIVES + 2
        ranked = sorted(
            options + dropped[name], key=lambda c: (objective_per_request(plan.inputs, c), c.key)
        )
        assert {c.key for c in ranked[:BEST_ALTERNATIVES]} <= {c.key for c in options}
    counts = data["candidate_counts"]
    assert data["candidates_kept"] == "best"
    assert counts == {
        "total": len(every),
        "feasible": sum(c.feasible for c in every),
        "feasible_out_of_domain": sum(c.feasible and not c.in_domain for c in every),
        "kept": len(data["candidates"]),
    }
    assert counts["kept"] < counts["total"]


def test_all_keeps_every_candidate_in_order(run: PlanRun) -> None:
    data = plan_json(run.plan, "all")
    keys = [record_key(c) for c in data["candidates"]]
    assert keys == [c.key for c in run.plan.inputs.candidates]
    assert data["candidates_kept"] == "all"
    assert data["candidate_counts"]["kept"] == data["candidate_counts"]["total"] == len(keys)
    assert kept_candidates(run.plan, "all") == run.plan.inputs.candidates


@pytest.mark.parametrize("selection", ["best", "all"])
def test_saved_plan_recomputes_to_itself(run: PlanRun, tmp_path: Path, selection: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(records_json(plan_json(run.plan, selection)), encoding="utf-8")  # type: ignore[arg-type]
    doc = load_plan(path)  # raises on any figure that does not recompute
    assert doc.candidates_kept == selection
    assert len(doc.allocations) == len(run.plan.allocations)


def test_tampered_counts_are_an_error_naming_the_field(run: PlanRun, tmp_path: Path) -> None:
    data = plan_json(run.plan)
    data["candidate_counts"]["kept"] += 1
    path = tmp_path / "plan.json"
    path.write_text(to_json(data), encoding="utf-8")
    with pytest.raises(WattgpuError, match=r"candidate_counts\.kept"):
        load_plan(path)
    data = plan_json(run.plan)
    data["candidates_kept"] = "all"  # claims every candidate, carries a selection
    path.write_text(to_json(data), encoding="utf-8")
    with pytest.raises(WattgpuError, match="candidates_kept"):
        load_plan(path)
    warned: list[str] = []
    assert load_plan(path, trust=True, warn=warned.append).candidates_kept == "all"
    assert any("candidates_kept" in w for w in warned)


@pytest.mark.slow
def test_cli_candidates_flag_and_values(tmp_path: Path) -> None:
    bare_last = run_cli("plan", str(ENTERPRISE), "--candidates")
    bare_first = run_cli("plan", "--candidates", str(ENTERPRISE))
    assert bare_last.code == bare_first.code == 0, bare_last.err + bare_first.err
    assert "excluded candidates" in bare_last.out and "excluded candidates" in bare_first.out
    assert "excluded candidates" not in run_cli("plan", str(ENTERPRISE)).out
    out = tmp_path / "all.json"
    done = run_cli(
        "plan", str(ENTERPRISE), "--format", "json", "--candidates", "all", "-o", str(out)
    )
    assert done.code == 0, done.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["candidates_kept"] == "all"
    assert len(data["candidates"]) == data["candidate_counts"]["total"]
    wrong = run_cli("plan", str(ENTERPRISE), "--candidates=some")
    assert wrong.code == 2 and "best" in wrong.err and "all" in wrong.err


def test_records_json_holds_the_same_values_as_indented_json() -> None:
    value: dict[str, Any] = {
        "a": 1,
        "nested": {"list": [1.5, math.nan, {"deep": [math.inf, -math.inf, "x"]}], "e": []},
        "records": [{"k": i, "v": [i / 3, None]} for i in range(3)],
        "empty": {},
        "ü": "ñ",
    }
    one, two = records_json(value), to_json(value)
    assert json.loads(one) == json.loads(two)
    assert "NaN" not in one and "Infinity" not in one
    lines = one.splitlines()
    assert sum('"k": ' in line for line in lines) == 3  # one record per line
    assert to_json(value, expand_depth=0).count("\n") == 1


def test_saved_plan_gives_the_values_it_checked_and_finds_every_candidate(
    run: PlanRun, tmp_path: Path
) -> None:
    """``read_plan`` hands back the mapping it verified (what ``diff`` compares): the document's
    own JSON values; ``candidate`` finds each record by its key (the first of equal keys)."""
    path = tmp_path / "plan.json"
    path.write_text(to_json(plan_json(run.plan, "all")), encoding="utf-8")
    doc, data = read_plan(path)
    assert data == doc.to_json_dict()
    first: dict[Any, Any] = {}
    for c in doc.candidates:
        first.setdefault(c.key, c)
    assert all(doc.candidate(c.key) is first[c.key] for c in doc.candidates)
    assert all(doc.candidate(a.key).key == a.key for a in doc.allocations)
    with pytest.raises(KeyError):
        doc.candidate(("no such entry", "H100", 1, 1, 1, 1, ""))
    assert doc == load_plan(path)  # the look-up index is no part of the document


def test_a_copy_with_other_candidates_never_reads_a_stale_index() -> None:
    from planner.documents.plan import plan_document
    from planner.pipeline import plan_file

    doc = plan_document(plan_file("paper-llama8b-low-load", baselines=False).plan)
    first = doc.candidates[0]
    assert doc.candidate(first.key) is first  # the index is built
    other = first.model_copy(update={"tp": first.tp + 1})
    copy = doc.model_copy(update={"candidates": [other]})
    assert copy.candidate(other.key) is other
    with pytest.raises(KeyError):
        copy.candidate(first.key)
    assert doc.candidate(first.key) is first
