"""Hostile plan documents, seventh round: planning inputs outside the candidates, and the served
load and ITL of an allocation.

* With ``--trust``, ``assumptions.pue: 0.5``, ``inventory.L40S: -1`` or ``models[0].itl_sla_s:
  0`` (and the like: a region's PUE, a model entry's load, the solver's threads) stopped the
  report with ``planning inputs: …``, naming neither the file nor the field. Each is now
  ``FILE: FIELD: …`` (:mod:`planner.documents.verify_inputs`), with or without ``--trust``.
* ``allocations[i].requests_per_s_per_replica_by_period``, ``itl_s_at_served_load_by_period``
  and ``itl_s_at_served_load`` could be edited to anything: the report JSON carried the edit.
  They are now recomputed from the allocation's load and its candidate's ITL curve.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import Result, one_error_line, run_cli
from plan_fixtures import REGIONS_SCENARIO, planned

from planner.documents.verify import plan_problems
from predictors.api import Predictor

#: Their fixtures plan disaggregated scenarios (about 5 s each): the slow pass runs them.
pytestmark = pytest.mark.slow

Edit = Callable[[dict[str, Any]], None]
REPO = Path(__file__).resolve().parent.parent
EDITED = "the plan was edited or damaged: plan the scenario again"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory, predictor: Predictor) -> dict[str, Any]:
    """``wattgpu plan enterprise-fleet --format json``."""
    return planned(tmp_path_factory, predictor, "enterprise-fleet")


@pytest.fixture(scope="module")
def units(tmp_path_factory: pytest.TempPathFactory, predictor: Predictor) -> dict[str, Any]:
    """``wattgpu plan disagg-tight-sla --format json``: aggregated replicas and units."""
    return planned(tmp_path_factory, predictor, "disagg-tight-sla")


@pytest.fixture(scope="module")
def regional(tmp_path_factory: pytest.TempPathFactory, predictor: Predictor) -> dict[str, Any]:
    """The plan JSON of tests/fixtures/regions.yaml (two regions)."""
    return planned(tmp_path_factory, predictor, REGIONS_SCENARIO)


def _saved(tmp_path: Path, data: dict[str, Any], edit: Edit) -> Path:
    edited = copy.deepcopy(data)
    edit(edited)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(edited), encoding="utf-8")
    return path


def _report(path: Path) -> Iterator[Result]:
    for trust in ([], ["--trust"]):
        yield run_cli("report", str(path), "-f", "md", "-o", str(path.with_suffix(".md")), *trust)


def _one_error(result: Result) -> str:
    return one_error_line(result, never=("planning inputs",))


def _set(*path: Any, value: Any) -> Edit:
    def edit(d: dict[str, Any]) -> None:
        for key in path[:-1]:
            d = d[key]
        d[path[-1]] = value

    return edit


INPUTS = [  # (edit, the line's start)
    (_set("assumptions", "pue", value=0.5), "assumptions.pue: 0.5 is impossible (at least 1)"),
    (_set("inventory", "L40S", value=-1), "inventory.L40S: -1 is impossible (at least 0)"),
    (_set("models", 0, "itl_sla_s", value=0), "models[0].itl_sla_s: 0.0 is impossible (above 0)"),
    (_set("models", 1, "min_replicas", value=-2), "models[1].min_replicas: -2 is impossible"),
    (_set("models", 0, "ttft_sla_s", value=-1.0), "models[0].ttft_sla_s: -1.0 is impossible"),
    (_set("assumptions", "electricity_usd_per_kwh", value=-0.1), "assumptions.electricity_usd"),
    (_set("assumptions", "budget_usd", value=-5.0), "assumptions.budget_usd: -5.0 is impossible"),
    (_set("assumptions", "period_hours", 3, value=0.0), "assumptions.period_hours[3]: 0.0 is"),
    (_set("assumptions", "gpus_per_node", value={"L4": 0}), "assumptions.gpus_per_node.L4: 0"),
    (_set("assumptions", "objective", "weights", "cost_usd", value=-1.0), "assumptions.objective"),
    (_set("solve", "threads", value=0), "solve.threads: 0 is impossible (at least 1)"),
    (_set("solve", "time_limit_s", value=0.0), "solve.time_limit_s: 0.0 is impossible (above 0)"),
]


@pytest.mark.parametrize(("edit", "said"), INPUTS, ids=[s.split(":")[0] for _, s in INPUTS])
def test_an_input_the_planning_inputs_refuse_is_named_by_file_and_field(
    tmp_path: Path, fleet: dict[str, Any], edit: Edit, said: str
) -> None:
    """Each stopped ``report --trust`` with ``planning inputs: …`` (no file, no field)."""
    path = _saved(tmp_path, fleet, edit)
    plain, trusted = _report(path)
    assert _one_error(plain).startswith(f"error: {path}: {said}"), plain.err
    assert plain.err.rstrip().endswith(EDITED) and "--trust" not in plain.err
    line = _one_error(trusted)
    assert line.startswith(f"error: {path}: {said}") and "not reportable even with --trust" in line


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("", "models[1].name: '' is impossible (a model entry has a name)"),
        ("support-bot", "models[1].name: 'support-bot' is the name of models[0] too"),
    ],
)
def test_a_model_entry_renamed_is_named_with_the_candidates_it_leaves(
    tmp_path: Path, fleet: dict[str, Any], name: str, said: str
) -> None:
    """A nameless or repeated entry stopped ``--trust`` with ``planning inputs: models: …``;
    its own line now comes with those of the candidates that name the entry it was."""
    assert fleet["models"][0]["name"] == "support-bot"
    path = _saved(tmp_path, fleet, _set("models", 1, "name", value=name))
    for result in _report(path):
        assert result.code == 1 and "Traceback" not in result.err, result.err
        assert "planning inputs" not in result.err and "internal error" not in result.err
        assert f"error: {path}: {said}" in result.err.splitlines()[-1]
        assert all(line.startswith(f"error: {path}: ") for line in result.err.splitlines())


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("pue", 0.9, "regions[1].pue: 0.9 is impossible (at least 1)"),
        ("grid_g_co2_per_kwh", -3.0, "regions[1].grid_g_co2_per_kwh: -3.0 is impossible"),
        ("power_cap_kw", -1.0, "regions[1].power_cap_kw: -1.0 is impossible"),
    ],
)
def test_a_regions_figure_the_planning_inputs_refuse_is_named(
    tmp_path: Path, regional: dict[str, Any], key: str, value: Any, said: str
) -> None:
    path = _saved(tmp_path, regional, _set("regions", 1, key, value=value))
    for result in _report(path):
        assert _one_error(result).startswith(f"error: {path}: {said}"), result.err


def test_a_regions_inventory_below_zero_is_named(tmp_path: Path, regional: dict[str, Any]) -> None:
    gpu = next(iter(regional["regions"][0]["inventory"]))
    path = _saved(tmp_path, regional, _set("regions", 0, "inventory", gpu, value=-4))
    for result in _report(path):
        assert f"regions[0].inventory.{gpu}: -4 is impossible (at least 0)" in _one_error(result)


def test_the_plans_as_planned_check(
    fleet: dict[str, Any], units: dict[str, Any], regional: dict[str, Any]
) -> None:
    for data in (fleet, units, regional):
        assert plan_problems(data) == []


def _allocation(data: dict[str, Any], unit: bool = False) -> int:
    """The first allocation (of a disaggregated unit with *unit*) that serves load."""
    return next(
        i
        for i, a in enumerate(data["allocations"])
        if bool(a.get("pools")) == unit and max(a["requests_per_s_by_period"]) > 0
    )


def _served_edits(i: int, t: int, periods: int) -> list[tuple[Edit, str]]:
    def scale(key: str, t: int, by: float) -> Edit:
        def edit(d: dict[str, Any]) -> None:
            d["allocations"][i][key][t] *= by

        return edit

    def drop(key: str) -> Edit:
        def edit(d: dict[str, Any]) -> None:
            d["allocations"][i][key].pop()

        return edit

    per_replica, itl = "requests_per_s_per_replica_by_period", "itl_s_at_served_load_by_period"
    return [
        (scale(per_replica, t, 3.0), f"allocations[{i}].{per_replica}[{t}]: "),
        (scale(per_replica, t, -1.0), f"allocations[{i}].{per_replica}[{t}]: "),
        (scale(itl, t, 0.5), f"allocations[{i}].{itl}[{t}]: "),
        (drop(per_replica), f"allocations[{i}].{per_replica}: {periods - 1} values for {periods}"),
        (drop(itl), f"allocations[{i}].{itl}: {periods - 1} values for {periods} periods"),
        (
            _set("allocations", i, "itl_s_at_served_load", value=1e-4),
            f"allocations[{i}].itl_s_at_served_load: 0.0001 s, but ",
        ),
    ]


def _named_then_warned(path: Path, said: str) -> None:
    """``report`` stops on one line naming the field; ``--trust`` warns of it and reports."""
    plain, trusted = _report(path)
    line = _one_error(plain)
    assert line.startswith(f"error: {path}: {said}"), line
    assert line.endswith(f"{EDITED}, or pass --trust to report it anyway")
    assert trusted.code == 0, trusted.err
    assert "planning inputs" not in trusted.err and said in trusted.err


@pytest.mark.slow
def test_an_allocations_served_load_and_itl_are_recomputed(
    tmp_path: Path, fleet: dict[str, Any]
) -> None:
    """Edited to anything, they were reported as they stood (the report JSON carried them)."""
    for n, (edit, said) in enumerate(_served_edits(_allocation(fleet), 9, 24)):
        (tmp_path / str(n)).mkdir()
        _named_then_warned(_saved(tmp_path / str(n), fleet, edit), said)


def test_a_units_served_load_and_itl_are_recomputed(tmp_path: Path, units: dict[str, Any]) -> None:
    """A disaggregated unit's ITL curve is its candidate record's, like a replica's."""
    assert units["assumptions"]["periods"] == 1
    for n, (edit, said) in enumerate(_served_edits(_allocation(units, unit=True), 0, 1)):
        (tmp_path / str(n)).mkdir()
        _named_then_warned(_saved(tmp_path / str(n), units, edit), said)


def test_the_served_figures_follow_the_candidates_itl_curve(fleet: dict[str, Any]) -> None:
    """The recomputation is the planner's: as planned, every allocation checks (above); one
    replica fewer in the per-replica load is named with the load the replicas really carry."""
    i = _allocation(fleet)
    data = copy.deepcopy(fleet)
    a = data["allocations"][i]
    n = a["replicas"]
    x = a["requests_per_s_by_period"]
    assert a["requests_per_s_per_replica_by_period"] == pytest.approx([v / n for v in x])
    a["requests_per_s_per_replica_by_period"] = [v / (n + 1) for v in x]
    (line,) = [p for p in plan_problems(data) if "per_replica" in p]
    assert line.startswith(f"allocations[{i}].requests_per_s_per_replica_by_period[")
