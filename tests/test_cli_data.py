"""Tests of ``wattgpu data summary``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_measurements import StubCatalog, _watt_counts_csv
from typer.testing import CliRunner

from planner.cli.app import app, main


@pytest.fixture
def stub_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use a tiny catalog so these tests do not depend on the bundled catalog files."""
    import predictors.catalog.store

    monkeypatch.setattr(predictors.catalog.store, "load_catalog", lambda *a, **k: StubCatalog())


@pytest.mark.usefixtures("stub_catalog")
def test_summary_json_reports_unresolved(tmp_path: Path) -> None:
    _watt_counts_csv(tmp_path / "wc.csv")
    result = CliRunner().invoke(
        app, ["data", "summary", "--data", str(tmp_path), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    s = json.loads(result.output)
    assert s["rows_total"] == 3
    names = {u["name"] for u in s["unresolved"]}
    assert "Mystery GPU 9000" in names
    assert sum(d["rows"] for d in s["dropped"]) == s["rows_total"] - s["rows_usable"]
    assert any("1.5 x" in r for r in s["rules"])


@pytest.mark.usefixtures("stub_catalog")
def test_summary_table_text(tmp_path: Path) -> None:
    _watt_counts_csv(tmp_path / "wc.csv")
    result = CliRunner().invoke(app, ["data", "summary", "--data", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "rows dropped, by reason" in result.output
    assert "quality rules" in result.output
    assert "watt-counts" in result.output
    assert "H100-NVL-94GB" in result.output  # usable rows per source x GPU


def test_summary_missing_dir_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["data", "summary", "--data", str(tmp_path / "absent")])
    assert exc.value.code == 1
    assert "error:" in capsys.readouterr().err


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
@pytest.mark.shared_data
def test_summary_on_shared_data(measurements_dir: Path) -> None:
    result = CliRunner().invoke(
        app, ["data", "summary", "--data", str(measurements_dir), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    s = json.loads(result.output)
    assert {r["source"] for r in s["sources"]} >= {"mlenergy-v1", "argonne", "aiconfigurator"}


def test_an_unknown_format_is_a_usage_error_like_every_command(tmp_path: Path) -> None:
    """docs/cli.md: a value not among an option's choices exits 2 (it exited 1 here)."""
    args = ["data", "summary", "--data", str(tmp_path), "--format", "xml"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "'xml' is not one of" in " ".join(result.output.split())
