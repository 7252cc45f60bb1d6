"""Fuzz round 27 (outputs): a year in ``diff``, a huge whole number written back by
``predict --input``, and a tiny power cap's explanation.

Each test below failed before its fix. ``wattgpu diff`` printed ``assumptions.grid_year: 2,023
-> 2,022 (-1, -0.0 %)`` (a year read as a quantity); ``predict --input`` wrote the cell
``12345678901234567890`` back as ``1.2345678901234567e+19`` (other digits than its error quotes,
where docs/contracts.md shows a cell as read, a bad number's cell empty); and a power cap of
1e-300 kW read "the load needs at least 0.080972237603 kW …, cap is 0.000000000000 kW", a weaker
bound than the 0.0970847 kW a cap of 0.097 kW was told, with no "raise power_cap_kw to" fix.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path

import polars as pl
import pytest

from planner.analysis.diff import Change, diff_plans, is_label
from planner.build import planning_inputs
from planner.scenario.load import load_scenario
from planner.solve.optimize import explain_infeasible
from planner.text import kw_apart
from predictors.api import Predictor, whole_number_columns, whole_numbers_as_int
from predictors.rows import predict_rows, read_rows_csv
from tests.cli_runner import run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

REPO = Path(__file__).resolve().parent.parent
PAPER = REPO / "scenarios" / "paper-llama8b-low-load.yaml"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


# --- #4: a year is a label in the diff ------------------------------------------------------


def test_a_year_in_the_diff_reads_as_written_with_no_change() -> None:
    assert Change("assumptions.grid_year", 2023, 2022).line() == (
        "assumptions.grid_year: 2023 -> 2022"
    )
    assert Change("regions.eu.grid_year", 2023, None).line() == (
        "regions.eu.grid_year: 2023 -> null"
    )
    big = Change("assumptions.grid_year", 2023, 10**20).line()
    assert big == "assumptions.grid_year: 2023 -> 100000000000000000000"


def test_quantities_keep_their_separators_and_change() -> None:
    assert (
        Change("inventory.L4", 2000, 3000).line()
        == "inventory.L4: 2,000 -> 3,000 (+1,000, +50.0 %)"
    )
    assert not is_label("totals.gpus.L4") and not is_label("models.chat.min_replicas")
    assert is_label("solve.seed") and is_label("assumptions.grid_year") and is_label("x.model_id")


def test_diff_of_two_plans_prints_the_year_as_a_label() -> None:
    a = {"assumptions": {"grid_year": 2023, "pue": 1.2}}
    b = {"assumptions": {"grid_year": 2022, "pue": 1.3}}
    lines = diff_plans(a, b).lines()
    assert "  assumptions.grid_year: 2023 -> 2022" in lines
    assert any(line.startswith("  assumptions.pue: 1.2 -> 1.3 (+0.1") for line in lines)


# --- #5: a huge whole number is written empty, every other cell as before --------------------

_ROWS = (
    "model,gpu,batch_size,input_tokens,note\n"
    f"{LLAMA},A30,99999,1024,a\n"
    f"{LLAMA},A30,12345678901234567890,1024,b\n"
    f"{LLAMA},A30,8,1024.5,c\n"
    f"{LLAMA},A30,0008,99999999999999999999999,d\n"
    f"{LLAMA},A30,9007199254740991,1024,e\n"
)


def _predicted(tmp_path: Path, text: str) -> list[dict[str, str]]:
    src, out = tmp_path / "rows.csv", tmp_path / "out.csv"
    src.write_text(text, encoding="utf-8")
    result = run_cli("predict", "--input", str(src), "-o", str(out))
    assert result.code == 0, result.err
    return list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))


def test_a_whole_number_beyond_a_float_is_written_empty(tmp_path: Path) -> None:
    rows = _predicted(tmp_path, _ROWS)
    assert [r["batch_size"] for r in rows] == ["99999", "", "8", "8", "9007199254740991"]
    assert [r["input_tokens"] for r in rows] == ["1024", "1024", "1024.5", "", "1024"]
    assert [r["note"] for r in rows] == ["a", "b", "c", "d", "e"]
    assert "(got '12345678901234567890')" in rows[1]["error"]
    assert "(got '99999999999999999999999')" in rows[3]["error"]
    assert "(got '9007199254740991')" in rows[4]["error"]
    assert rows[2]["error"] == "" and rows[2]["power_w_per_gpu"] != ""


@pytest.mark.slow
def test_good_rows_are_written_as_before(tmp_path: Path, predictor: Predictor) -> None:
    good = f"model,gpu,batch_size,input_tokens\n{LLAMA},A30,8,1024.5\n{LLAMA},A30,0008,1024\n"
    huge = good + f"{LLAMA},A30,12345678901234567890,1024\n"
    alone, beside = _predicted(tmp_path, good), _predicted(tmp_path, huge)
    assert beside[:2] == alone  # the bad row changes no other row's cells
    frames = []
    for text in (good, huge):  # nor their types in the Python API (Int64: 8, not 8.0)
        (tmp_path / "rows.csv").write_text(text, encoding="utf-8")
        frames.append(predict_rows(predictor, read_rows_csv(tmp_path / "rows.csv")))
    assert frames[1].head(2).equals(frames[0])
    assert frames[0].schema == frames[1].schema and frames[1]["batch_size"].dtype == pl.Int64
    assert frames[1]["batch_size"].to_list() == [8, 8, None]


def test_the_helpers_write_a_huge_cell_empty_and_keep_the_column_whole() -> None:
    rows = pl.DataFrame(
        {
            "gpu_count": [1.0, 2.0, 3.0],
            "batch_size": [8.0, 1.2345678901234567e19, 16.0],
            "input_tokens": [1024.0, 1024.5, 2.0**53 - 1],
            "output_tokens": [256.0, 256.0, -1e300],
        }
    )
    assert whole_number_columns(rows) == ["gpu_count", "batch_size", "output_tokens"]
    shown = whole_numbers_as_int(rows)
    assert shown["batch_size"].to_list() == [8, None, 16]
    assert shown["batch_size"].dtype == pl.Int64
    assert shown["input_tokens"].to_list() == [1024.0, 1024.5, 2.0**53 - 1]
    assert shown["output_tokens"].to_list() == [256, 256, None]


# --- #8: a tiny power cap --------------------------------------------------------------------


def test_a_tiny_cap_prints_with_its_digits() -> None:
    assert kw_apart(0.080972237603, 1e-300) == ("0.081", "1e-300")
    assert kw_apart(0.0809, 0.05) == ("0.081", "0.050")  # as before
    assert kw_apart(0.55, 0.2) == ("0.55", "0.20")


@pytest.mark.slow
def test_a_tiny_cap_gets_the_bound_and_fix_of_any_other(predictor: Predictor) -> None:
    scenario = load_scenario(PAPER, catalog=predictor.catalog)
    base = planning_inputs(scenario, predictor)
    lines = {
        cap: explain_infeasible(dataclasses.replace(base, power_cap_kw=cap))
        for cap in (1e-300, 0.05, 0.097)
    }
    bound = "every plan draws at least 0.0970846 kW"
    for cap, (line, *rest) in lines.items():
        assert not rest
        # the fix is rounded up (fuzz round 29: 0.0970847 was still below the bound)
        assert bound in line and "raise power_cap_kw to at least 0.0970846" in line, line
        assert f"above the cap of {cap:g} kW" in line
    assert "0.000000000000" not in lines[1e-300][0]


def test_the_cheap_power_bound_reads_a_tiny_cap_with_its_digits() -> None:
    """The cheap bound of large scenarios (:func:`planner.solve.bounds.power_messages`) wrote a
    cap of 1e-300 kW as ``0.000000000000 kW``, as the curves' message did."""
    import random

    from planner.solve import bounds
    from tests.test_optimize import random_instance

    inputs = random_instance(random.Random(300), 3, 3, periods=3, curved=True)
    (message,) = bounds.power_messages(dataclasses.replace(inputs, power_cap_kw=1e-300))
    assert "cap is 1e-300 kW" in message and "0.000000" not in message, message
