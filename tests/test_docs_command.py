"""``wattgpu docs``: the documentation the messages cite, from any directory and in a wheel."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from planner.guides import doc_names, doc_path
from planner.paths import docs_dir
from tests.cli_runner import run_cli

REPO = Path(__file__).resolve().parent.parent


def test_the_listing_names_every_document_with_its_title() -> None:
    result = run_cli("docs")
    assert result.code == 0, result.err
    listed = {line.split()[0] for line in result.out.splitlines() if line and line[0] != " "}
    names = {p.stem for p in (REPO / "docs").glob("*.md")}
    assert names and names <= listed
    assert "method             Method" in result.out
    assert "scenarios          Scenario files" in result.out


@pytest.mark.parametrize("name", ["scenarios", "scenarios.md", "docs/scenarios.md", "SCENARIOS"])
def test_a_document_prints_as_it_is_written(name: str) -> None:
    result = run_cli("docs", name)
    assert result.code == 0, result.err
    assert result.out == (REPO / "docs" / "scenarios.md").read_text(encoding="utf-8")


def test_an_unknown_document_is_one_line_with_the_closest_name() -> None:
    result = run_cli("docs", "scenario")
    assert result.code == 1 and result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert "unknown document 'scenario' (did you mean: scenarios?) — give one of" in lines[0]


def test_output_writes_the_document(tmp_path: Path) -> None:
    target = tmp_path / "method.md"
    result = run_cli("docs", "method", "-o", str(target))
    assert result.code == 0, result.err
    assert target.read_text(encoding="utf-8") == doc_path("method").read_text(encoding="utf-8")


def test_the_wheel_ships_every_document() -> None:
    """The wheel's force-include maps each docs/*.md to planner/_docs (what docs_dir reads in an
    install); a document added to docs/ without it would be missing from ``wattgpu docs``."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    for path in sorted((REPO / "docs").glob("*.md")):
        assert shipped.get(f"docs/{path.name}") == f"planner/_docs/{path.name}", path.name
    assert docs_dir() == REPO / "docs"  # a checkout reads docs/ itself
    assert doc_names() == sorted(p.stem for p in (REPO / "docs").glob("*.md"))


def test_the_message_that_cites_the_scenario_reference_says_how_to_read_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: x\n", encoding="utf-8")
    result = run_cli("validate", str(path))
    assert result.code == 1
    assert "required but missing — add it (see docs/scenarios.md: wattgpu docs scenarios)" in (
        result.err
    )


def test_a_directory_as_output_is_refused_with_a_markdown_name(tmp_path: Path) -> None:
    result = run_cli("docs", "method", "-o", f"{tmp_path}/")
    assert result.code == 1 and not list(tmp_path.iterdir())
    assert "names a directory; give a file name such as" in result.err
    assert result.err.strip().endswith("method.md"), result.err
