"""A problem found after ``--overlay`` files are merged names the file that set the field.

Before, every such line named the base scenario, so a misspelled key in an overlay sent the user
to a file that does not contain it (issue 22's hostile-input round, noticed while checking it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_scenario import TINY, base, catalog, user_dir, write

from planner.scenario.load import load_scenario
from planner.scenario.origin import origin_of
from predictors.catalog.store import Catalog
from predictors.core.errors import WattgpuError

__all__ = ["catalog", "user_dir"]  # the test catalog's fixtures (its test LLMs), reused


def _lines(path: Path, overlays: list[Path], catalog: Catalog) -> list[str]:
    with pytest.raises(WattgpuError) as info:
        load_scenario(path, catalog=catalog, overlays=overlays)
    return str(info.value).splitlines()


def test_each_problem_names_the_file_that_set_its_field(tmp_path: Path, catalog: Catalog) -> None:
    broken = base()
    broken["pue"] = 0.5  # the scenario's own problem
    path = write(tmp_path, broken)
    first = write(tmp_path, {"models": [{"name": "chat", "itl_sla_ms": 5}]}, "first.yaml")
    second = write(tmp_path, {"gpus": {"L4": {"available": -1}}}, "second.yaml")
    lines = _lines(path, [first, second], catalog)
    assert any(x.startswith(f"{path}: pue: ") for x in lines), lines
    assert any(x.startswith(f"{first}: models[0].itl_sla_ms: unknown key") for x in lines), lines
    assert any(x.startswith(f"{second}: gpus.L4.available: ") for x in lines), lines
    assert len(lines) == 3, lines


def test_the_last_overlay_that_states_a_field_owns_it(tmp_path: Path, catalog: Catalog) -> None:
    path = write(tmp_path, base())
    first = write(tmp_path, {"gpus": {"L4": {"available": -1}}}, "first.yaml")
    second = write(tmp_path, {"gpus": {"L4": {"available": -2}}}, "second.yaml")
    (line,) = _lines(path, [first, second], catalog)
    assert line.startswith(f"{second}: gpus.L4.available: -2 "), line
    (line,) = _lines(path, [second, first], catalog)
    assert line.startswith(f"{first}: gpus.L4.available: -1 "), line


def test_a_new_entry_missing_its_fields_names_the_overlay(tmp_path: Path, catalog: Catalog) -> None:
    path = write(tmp_path, base())
    overlay = write(tmp_path, {"models": [{"name": "new", "model": TINY}]}, "over.yaml")
    lines = _lines(path, [overlay], catalog)
    assert lines and all(x.startswith(f"{overlay}: models[1].") for x in lines), lines


def test_a_merged_entry_keeps_the_scenarios_fields(tmp_path: Path, catalog: Catalog) -> None:
    """The overlay changes the entry's load only; its broken SLA is still the scenario's."""
    broken = base()
    broken["models"][0]["sla"] = {"itl_ms": -1}
    path = write(tmp_path, broken)
    changed = {"models": [{"name": "chat", "load": {"requests_per_s": 2}}]}
    overlay = write(tmp_path, changed, "o.yaml")
    lines = _lines(path, [overlay], catalog)
    assert lines and all(x.startswith(f"{path}: models[0].sla") for x in lines), lines


def test_a_list_the_overlay_states_is_its_own_whole() -> None:
    merged = {"models": [{"name": "a", "allowed_gpus": ["L4", "X"]}], "pue": 1.2}
    layer = {"models": [{"name": "a", "allowed_gpus": ["L4", "X"]}]}
    origin = origin_of("s.yaml", [("o.yaml", layer)], merged)
    assert origin("models[0].allowed_gpus[1]") == "o.yaml"
    assert origin("models[0].allowed_gpus") == "o.yaml"
    assert origin("pue") == "s.yaml"
    assert origin("(top level)") == "s.yaml"  # not a field path
    assert origin("models[3].name") == "s.yaml"  # no such entry


def test_without_overlays_every_line_names_the_scenario(tmp_path: Path, catalog: Catalog) -> None:
    broken = base()
    broken["pue"] = 0.5
    broken["gpus"]["L4"]["available"] = -1
    path = write(tmp_path, broken)
    lines = _lines(path, [], catalog)
    assert len(lines) == 2 and all(x.startswith(f"{path}: ") for x in lines), lines


def test_a_value_given_with_set_names_the_override(tmp_path: Path, catalog: Catalog) -> None:
    """``--set`` applies last: a problem inside the path it set names it, not the file."""
    path = write(tmp_path, base())
    overlay = write(tmp_path, {"gpus": {"L4": {"available": -1}}}, "over.yaml")
    with pytest.raises(WattgpuError) as info:
        load_scenario(
            path,
            ["pue=0.5", "models[0].sla={itl_ms: -1}", "nokey"],
            catalog=catalog,
            overlays=[overlay],
        )
    lines = str(info.value).splitlines()
    assert any(x.startswith(f"{path} --set pue=0.5: pue: ") for x in lines), lines
    sla = f"{path} --set models[0].sla={{itl_ms: -1}}: models[0].sla.itl_ms: "
    assert any(x.startswith(sla) for x in lines), lines
    assert any(x.startswith(f"{over}: gpus.L4.available: ") for x in lines for over in [overlay])
    assert any(x.startswith(f"{path}: --set nokey: no '='") for x in lines), lines
    assert len(lines) == 4, lines


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("models: [5]\n", "models[1]: "),  # appended whole: no name to merge by
        ("models: [~]\n", "models[1]: "),
        ("models: [{name: [a]}]\n", "models[1].name: "),
        ("1: 2\n", "[1]: "),  # a YAML key that is not text
    ],
)
def test_an_entry_or_key_the_overlay_alone_holds_names_it(
    tmp_path: Path, catalog: Catalog, text: str, field: str
) -> None:
    path = write(tmp_path, base())
    overlay = tmp_path / "over.yaml"
    overlay.write_text(text, encoding="utf-8")
    lines = _lines(path, [overlay], catalog)
    assert any(x.startswith(f"{overlay}: {field}") for x in lines), lines
    assert not any(x.startswith(f"{path}: ") for x in lines), lines
