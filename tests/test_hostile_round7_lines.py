"""Hostile inputs left open at stop 40, through the real CLI where a user meets them:

* a line break inside a path a scenario file states (``user_catalog: "cat\\nx"``) split its
  error into two ``error:`` lines (the CLI escaped only breaks it could trace to the command line
  and the ``WATTGPU_*`` variables);
* a saved plan's type errors named fields in pydantic's dotted form (``allocations.0.replicas``)
  where every other plan check says ``allocations[0].replicas``, showed a text value as nothing
  at all, and a container as ``a valid dictionary or instance of TotalsDocument``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import one_error_line, planned_json, run_cli
from pydantic import BaseModel, ValidationError

from planner.documents.base import field_path, first_error
from planner.scenario.errors import as_error
from predictors.core.errors import escape_breaks

PAPER = "paper-llama8b-low-load"
REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "scenarios" / f"{PAPER}.yaml"

pytestmark = pytest.mark.usefixtures("cached_predictor")


def _scenario(tmp_path: Path, head: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(head + SCENARIO.read_text(encoding="utf-8"), encoding="utf-8")
    return path


@pytest.mark.parametrize("brk", ["\\n", "\\r\\n", "\\u2028", "\\x1c"])
def test_a_line_break_in_a_scenario_path_stays_in_one_line(tmp_path: Path, brk: str) -> None:
    path = _scenario(tmp_path, f'user_catalog: "cat{brk}x"\n')
    for command in ("validate", "plan"):
        line = one_error_line(run_cli(command, str(path)))
        assert line.startswith(f"error: {path}: user_catalog: directory "), line
        assert line.endswith(f"cat{brk}x not found — fix the path"), line


def test_two_problems_stay_two_lines_when_one_holds_a_break(tmp_path: Path) -> None:
    path = _scenario(tmp_path, 'user_catalog: "cat\\nx"\nhorizon_hourz: 1\n')
    result = run_cli("validate", str(path))
    assert result.code == 1
    lines = result.err.strip().splitlines()
    assert len(lines) == 2, result.err
    assert any("user_catalog: directory" in line and "cat\\nx" in line for line in lines)
    assert any("horizon_hourz" in line and "horizon_hours" in line for line in lines)


def test_the_scenario_error_escapes_only_inside_a_problem() -> None:
    error = as_error("s.yaml", [("a", "bad a\u2028b"), ("b\nc", "worse")])
    assert str(error) == "s.yaml: a: bad a\\u2028b\ns.yaml: b\\nc: worse"
    assert escape_breaks("x\ry\x85z\tw") == "x\\ry\\x85z\tw"


class _Inner(BaseModel):
    n: int


class _Doc(BaseModel):
    items: list[_Inner]
    totals: _Inner
    names: dict[str, int]


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (
            {"items": [{"n": 1}, {"n": "two"}], "totals": {"n": 1}, "names": {}},
            'items[1].n: Input should be a valid integer, got the text "two"',
        ),
        (
            {"items": [], "totals": [1], "names": {}},
            "totals: Input should be a JSON object",
        ),
        ({"items": {}, "totals": {"n": 1}, "names": {}}, "items: Input should be a JSON array"),
        ({"items": [], "totals": {"n": 1}, "names": {"L4": True}}, "names.L4: Input should be"),
        ({"items": [], "totals": {"n": 1}}, "names: Field required"),
        ([], "(top level): Input should be a JSON object"),
    ],
)
def test_a_validation_error_names_the_field_as_the_plan_checks_do(data: object, said: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _Doc.model_validate(data, strict=True)
    assert first_error(caught.value).startswith(said)


def test_field_path_brackets_indices_only() -> None:
    assert (
        field_path(("allocations", 0, "pools", 1, "workers")) == "allocations[0].pools[1].workers"
    )
    assert field_path(("inventory", "H100-SXM5-80GB")) == "inventory.H100-SXM5-80GB"
    assert field_path(()) == "(top level)"


def test_a_long_text_value_is_shortened_and_stays_one_line(tmp_path: Path) -> None:
    data = planned_json(tmp_path / "plan.json", PAPER)
    data["allocations"][0]["replicas"] = "x\n" * 100
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    line = one_error_line(run_cli("report", str(bad)))
    assert f"error: {bad}: not a valid plan JSON: allocations[0].replicas: " in line
    assert 'got the text "x\\nx\\n' in line and '…"' in line and len(line) < 400
