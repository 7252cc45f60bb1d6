"""Fuzz round 24: a saved plan's report reads the user catalog the plan was made with.

Before: the plan JSON did not record the scenario's ``user_catalog`` and ``report`` read a saved
plan against the bundled catalogs (plus ``$WATTGPU_USER_CATALOG``): a user GPU's embodied
emissions became "not applicable", a user row replacing a bundled id showed the bundled value,
and user LLMs lost their parameters. The plan now records the directory
(``assumptions.user_catalog``), the report of the saved plan reads it (or ``--user-catalog``), and
a recorded directory that is gone is one error naming the field.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import Result, run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")
REPO = Path(__file__).resolve().parents[1]
EMBODIED_KG = 4321.0


def _user_catalog(folder: Path) -> Path:
    """A user catalog of one GPU, MYH100: the bundled H100-SXM5-80GB row under a new id, with
    embodied emissions of its own."""
    with (REPO / "catalogs" / "gpus.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    row = next(r for r in rows if r["id"] == "H100-SXM5-80GB")
    row |= {"id": "MYH100", "aliases": "", "assumed_aliases": "", "list_price_usd": ""}
    row |= {"embodied_kg_co2e": str(EMBODIED_KG), "embodied_source": "test: own figure"}
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(row), lineterminator="\n")
    writer.writeheader()
    writer.writerow(row)
    folder.mkdir()
    (folder / "gpus.csv").write_text(out.getvalue(), encoding="utf-8")
    return folder


@pytest.fixture
def planned(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(scenario, its user catalog, the saved plan JSON)."""
    catalog = _user_catalog(tmp_path / "cat")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: user-gpu\nhorizon_hours: 8760\nregion: US\nelectricity_usd_per_kwh: 0.12\n"
        "user_catalog: cat\ngpus:\n  MYH100: {usd_per_hour: 3}\nmodels:\n"
        "- name: chat\n  model: meta-llama/Llama-3.1-8B-Instruct\n"
        "  load: {requests_per_s: 5, input_tokens: 1024, output_tokens: 256}\n"
        "  sla: {itl_ms: 30}\n",
        encoding="utf-8",
    )
    plan = tmp_path / "plan.json"
    result = run_cli("plan", str(scenario), "-f", "json", "-o", str(plan))
    assert result.code == 0, result.err
    return scenario, catalog, plan


def _embodied(source: Path, tmp_path: Path, *more: str) -> tuple[Result, Any]:
    out = tmp_path / f"r-{source.stem}.json"
    result = run_cli(
        "report", str(source), "-f", "json", "--pareto-points", "0", "-o", str(out), *more
    )
    if result.code != 0:
        return result, None
    fields = json.loads(out.read_text(encoding="utf-8"))["disclosure"]["fields"]
    return result, fields["embodied_total_kg_co2e"]["value"]


def test_the_plan_records_its_user_catalog(planned: tuple[Path, Path, Path]) -> None:
    _, catalog, plan = planned
    data = json.loads(plan.read_text(encoding="utf-8"))
    assert data["assumptions"]["user_catalog"] == str(catalog.resolve())


def test_a_saved_plan_reports_as_its_scenario(
    planned: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    scenario, _, plan = planned
    from_scenario = _embodied(scenario, tmp_path)
    from_plan = _embodied(plan, tmp_path)
    assert from_scenario[0].code == 0 and from_plan[0].code == 0, from_plan[0].err
    replicas = json.loads(plan.read_text(encoding="utf-8"))["totals"]["gpus"]["MYH100"]
    assert from_plan[1] == from_scenario[1] == pytest.approx(EMBODIED_KG * replicas)


@pytest.mark.slow
def test_a_moved_user_catalog_is_named_and_can_be_given(
    planned: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, catalog, plan = planned
    moved = shutil.move(catalog, tmp_path / "moved")
    result, _ = _embodied(plan, tmp_path)
    assert result.code == 1 and len(result.errors) == 1, result.err
    assert "assumptions.user_catalog" in result.errors[0] and "--user-catalog" in result.errors[0]
    result, value = _embodied(plan, tmp_path, "--user-catalog", str(moved))
    assert result.code == 0, result.err
    replicas = json.loads(plan.read_text(encoding="utf-8"))["totals"]["gpus"]["MYH100"]
    assert value == pytest.approx(EMBODIED_KG * replicas)


def test_user_catalog_option_is_for_a_saved_plan_only(
    planned: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    scenario, catalog, _ = planned
    result, _ = _embodied(scenario, tmp_path, "--user-catalog", str(catalog))
    assert result.code == 1 and "applies to a saved plan" in result.errors[0], result.err


def _warnings(result: Result) -> list[str]:
    return [line for line in result.err.splitlines() if "assumptions.catalog_sha256" in line]


def test_a_catalog_edited_since_the_plan_is_read_with_a_warning(
    planned: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Review of round 24: the report of a saved plan read the user catalog as it is now, with
    no word that it changed since the plan (an embodied figure of 4321 read as 9999)."""
    _, catalog, plan = planned
    result, _ = _embodied(plan, tmp_path)
    assert result.code == 0 and not _warnings(result), result.err
    gpus = catalog / "gpus.csv"
    gpus.write_text(gpus.read_text(encoding="utf-8").replace("4321.0", "9999.0"), encoding="utf-8")
    result, value = _embodied(plan, tmp_path)
    assert result.code == 0, result.err
    assert len(_warnings(result)) == 1 and "read as they are now" in _warnings(result)[0]
    replicas = json.loads(plan.read_text(encoding="utf-8"))["totals"]["gpus"]["MYH100"]
    assert value == pytest.approx(9999.0 * replicas)


def test_an_overlay_a_plan_was_made_without_is_warned_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bundled: Any
) -> None:
    plan = tmp_path / "paper.json"
    plan.write_text(bundled.plan_json("paper-llama8b-low-load"), encoding="utf-8")
    data = json.loads(plan.read_text(encoding="utf-8"))
    assert "user_catalog" not in data["assumptions"] and data["assumptions"]["catalog_sha256"]
    monkeypatch.setenv("WATTGPU_USER_CATALOG", str(_user_catalog(tmp_path / "overlay")))
    result, _ = _embodied(plan, tmp_path)
    assert result.code == 0 and len(_warnings(result)) == 1, result.err


def test_a_recorded_path_that_is_not_absolute_is_refused(
    planned: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, _, plan = planned
    data = json.loads(plan.read_text(encoding="utf-8"))
    data["assumptions"]["user_catalog"] = ""
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    result, _ = _embodied(edited, tmp_path, "--trust")
    assert result.code == 1 and "assumptions.user_catalog" in result.errors[-1], result.err
