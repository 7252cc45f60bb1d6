"""Fuzz round 13, ``wattgpu report`` inputs: the accuracy CSV, a sweep JSON and a model card.

* A non-numeric ``measured``/``predicted`` cell of ``--accuracy`` was an internal error
  (polars' "cannot compare string with numeric type", exit 2); NaN read the same.
* An ``--accuracy`` file that is missing, empty or has a column twice gave a "Chart skipped" note
  (or a misleading "missing columns ['predicted']") and exit 0; with md/json/text the option was
  ignored without a word.
* A hand-edited ``--sweep`` JSON was read as it came: negative draws, no records for 5 draws,
  ``"draws": "5"`` taken as 5.
* A model card without ``intervals`` (or ``metrics``, ``domain``…) was accepted and its report
  said ``intervals: null``.

Each is now one ``error:`` line naming the file and the field, exit 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import one_error_line, run_cli

REPO = Path(__file__).resolve().parents[1]
SCENARIO = "paper-llama8b-low-load"
HEADER = "target,split,method,measured,predicted"
GOOD_ROWS = [f"power,logo,ours,{100 + i},{110 + i}" for i in range(5)]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A saved plan JSON of the bundled example and a 2-draw sweep JSON of it."""
    folder = tmp_path_factory.mktemp("round13_report")
    plan, sweep = folder / "plan.json", folder / "sweep.json"
    done = run_cli("plan", SCENARIO, "-f", "json", "-o", str(plan))
    assert done.code == 0, done.err
    done = run_cli("sweep", SCENARIO, "--draws", "2", "-f", "json", "-o", str(sweep))
    assert done.code == 0, done.err
    return plan, sweep


def _csv(folder: Path, name: str, lines: list[str]) -> Path:
    path = folder / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _html_report(plan: Path, tmp_path: Path, *args: str) -> Any:
    out = tmp_path / "out.html"
    return run_cli("report", str(plan), "-f", "html", "--pareto-points", "0", "-o", str(out), *args)


@pytest.mark.parametrize(("cell", "column"), [("abc", "measured"), ("nan", "predicted")])
def test_a_non_numeric_accuracy_cell_names_file_column_and_line(
    saved: tuple[Path, Path], tmp_path: Path, cell: str, column: str
) -> None:
    row = f"power,logo,ours,{cell},200" if column == "measured" else f"power,logo,ours,200,{cell}"
    csv = _csv(tmp_path, "acc.csv", [HEADER, *GOOD_ROWS, row])
    result = _html_report(saved[0], tmp_path, "--accuracy", str(csv))
    line = one_error_line(result, str(csv), repr(column), "line 7", "not a finite number")
    assert "ComputeError" not in line


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (None, "cannot read"),
        ([], "empty"),
        (["target,split,method,measured,measured", "power,logo,ours,1,2"], "appears 2 times"),
        ([HEADER], "no rows of method 'ours'"),
        (["target,split,method,predicted", "power,logo,ours,2"], "missing columns ['measured']"),
    ],
    ids=["missing", "empty", "duplicate-header", "header-only", "no-measured"],
)
def test_an_unusable_accuracy_file_is_an_error_not_a_skipped_chart(
    saved: tuple[Path, Path], tmp_path: Path, lines: list[str] | None, said: str
) -> None:
    csv = tmp_path / "acc.csv" if lines is None else _csv(tmp_path, "acc.csv", lines)
    result = _html_report(saved[0], tmp_path, "--accuracy", str(csv))
    one_error_line(result, str(csv), said, "wattgpu evaluate")
    assert not (tmp_path / "out.html").exists()


def test_a_good_accuracy_file_draws_the_chart(saved: tuple[Path, Path], tmp_path: Path) -> None:
    csv = _csv(tmp_path, "acc.csv", [HEADER, *GOOD_ROWS])
    result = _html_report(saved[0], tmp_path, "--accuracy", str(csv))
    assert result.code == 0, result.err
    assert '<figure id="chart-accuracy"><svg ' in (tmp_path / "out.html").read_text()


@pytest.mark.parametrize("fmt", ["md", "json", "text"])
def test_accuracy_with_a_format_without_charts_is_refused(
    saved: tuple[Path, Path], tmp_path: Path, fmt: str
) -> None:
    csv = _csv(tmp_path, "acc.csv", [HEADER, *GOOD_ROWS])
    result = run_cli(
        "report", str(saved[0]), "-f", fmt, "--pareto-points", "0", "--accuracy", str(csv)
    )
    one_error_line(result, "--accuracy", f"--format {fmt}", "--format html")


def _edit_sweep(saved: tuple[Path, Path], tmp_path: Path, **changes: Any) -> Path:
    data = json.loads(saved[1].read_text(encoding="utf-8"))
    data.update(changes)
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"draws": -3}, "draws: must be >= 0, got -3"),
        ({"draws": "2"}, 'draws: Input should be a valid integer, got the text "2"'),
        ({"records": []}, "records: holds 0 records but draws is 2"),
        ({"draws": 5}, "summary: counts 2 draws but draws is 5"),
        ({"summary": None}, "summary: is null but draws is 2"),
        ({"sampler": "halton"}, "sampler: unknown sampler 'halton'"),
        ({"seed": -1}, "seed: must be in [0, 2**63 - 1], got -1"),
    ],
    ids=[
        "negative-draws",
        "string-draws",
        "no-records",
        "draws-vs-summary",
        "no-summary",
        "sampler",
        "seed",
    ],
)
def test_a_hand_edited_sweep_is_one_line_naming_the_field(
    saved: tuple[Path, Path], tmp_path: Path, changes: dict[str, Any], said: str
) -> None:
    sweep = _edit_sweep(saved, tmp_path, **changes)
    result = run_cli("report", str(saved[0]), "--pareto-points", "0", "--sweep", str(sweep))
    one_error_line(result, str(sweep), "not a valid sweep JSON", said, "wattgpu sweep")


def test_a_sweep_whose_counts_disagree_with_its_records_is_refused(
    saved: tuple[Path, Path], tmp_path: Path
) -> None:
    data = json.loads(saved[1].read_text(encoding="utf-8"))
    summary = dict(data["summary"], draws_failed=1, draws_with_plan=1)
    sweep = _edit_sweep(saved, tmp_path, summary=summary)
    result = run_cli("report", str(saved[0]), "--pareto-points", "0", "--sweep", str(sweep))
    one_error_line(result, str(sweep), "records:", "the summary says 1")


def test_the_written_sweep_still_reads(saved: tuple[Path, Path]) -> None:
    result = run_cli("report", str(saved[0]), "--pareto-points", "0", "--sweep", str(saved[1]))
    assert result.code == 0, result.err
    assert "2 uncertainty draws" in result.out


@pytest.mark.parametrize("key", ["intervals", "metrics", "domain", "name", "targets"])
@pytest.mark.parametrize("how", ["missing", "null"])
def test_a_model_card_without_a_section_the_report_reads_names_it(
    saved: tuple[Path, Path], tmp_path: Path, key: str, how: str
) -> None:
    card = json.loads((REPO / "predictors" / "trained" / "model_card.json").read_text())
    if how == "missing":
        del card[key]
    else:
        card[key] = None
    path = tmp_path / "model_card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    result = run_cli(
        "report", str(saved[0]), "-f", "json", "--pareto-points", "0", "--model-card", str(path)
    )
    # a null of a typed section (metrics: a list or object) fails its type first, naming it too
    said = f"section {key!r} is {how}" if how == "missing" or key == "intervals" else key
    one_error_line(result, str(path), "not a valid model card", said, "wattgpu train")
    assert result.out == ""
