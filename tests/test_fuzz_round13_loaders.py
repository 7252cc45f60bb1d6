"""Fuzz round 13, measurement loaders: a UTF-8 BOM on an Argonne CSV, unrecognised CSVs in an
Argonne folder, non-finite measured values, and folders named ``*.csv``.

Tests that need real Argonne lines copy a few from ``../shared`` (skipped when it is absent);
the quality-rule tests build their rows here.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from predictors.core.errors import DataError
from predictors.measurements import RULES, discover, load_measurements
from predictors.measurements.argonne import read_argonne
from predictors.measurements.load import apply_rules

ARGONNE = "argonne-llm-inference-bench"
HEADER = "Hardware,Num of Hardware,"
NON_FINITE = "non-finite measured value"


@pytest.fixture
def argonne_lines(measurements_dir: Path) -> list[str]:
    """Header and the first 12 data lines of the real main table."""
    text = (measurements_dir / ARGONNE / "Plots_All_results.csv").read_text(encoding="utf-8")
    lines = text.splitlines()[:13]
    assert lines[0].startswith(HEADER)
    return lines


def _write(folder: Path, lines: list[str], *, bom: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / "Plots_All_results.csv"
    f.write_text(("\ufeff" if bom else "") + "\n".join(lines) + "\n", encoding="utf-8")
    return f


# -- 1. UTF-8 BOM; unrecognised CSVs in an Argonne folder -------------------------------------


def test_bom_argonne_csv_reads_like_the_plain_one(tmp_path: Path, argonne_lines: list[str]) -> None:
    _write(tmp_path / "plain" / ARGONNE, argonne_lines)
    _write(tmp_path / "bom" / ARGONNE, argonne_lines, bom=True)
    plain = read_argonne(tmp_path / "plain" / ARGONNE)
    bom = read_argonne(tmp_path / "bom" / ARGONNE)
    assert plain.height > 0
    assert bom.height == plain.height
    assert [s.format for s in discover(tmp_path / "bom")] == ["argonne"]
    assert (
        load_measurements(tmp_path / "bom").all_rows.height
        == load_measurements(tmp_path / "plain").all_rows.height
    )


@pytest.mark.parametrize("folder", [ARGONNE, "my-copy"])
def test_unrecognised_csv_in_argonne_folder_is_a_one_line_data_error(
    tmp_path: Path, argonne_lines: list[str], folder: str
) -> None:
    _write(tmp_path / folder, argonne_lines)
    (tmp_path / folder / "notes.csv").write_text("Machine,Runs\nA100,3\n", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        discover(tmp_path)
    msg = str(exc.value)
    assert "notes.csv" in msg and HEADER in msg and "fix:" in msg
    assert "\n" not in msg
    with pytest.raises(DataError, match="notes.csv"):
        read_argonne(tmp_path / folder)


def test_lone_unrecognised_csv_in_named_argonne_folder_is_a_data_error(tmp_path: Path) -> None:
    (tmp_path / ARGONNE).mkdir()
    (tmp_path / ARGONNE / "Plots_All_results.csv").write_text("Hw;N\nA100;1\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"Plots_All_results\.csv: not an Argonne"):
        discover(tmp_path)


def test_unrecognised_csv_elsewhere_is_still_ignored(
    tmp_path: Path, argonne_lines: list[str]
) -> None:
    _write(tmp_path / ARGONNE, argonne_lines)
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "score.csv").write_text("model,score\nx,1\n", encoding="utf-8")
    assert [s.format for s in discover(tmp_path)] == ["argonne"]


# -- 2. non-finite measured values -------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400"])
def test_non_finite_argonne_latency_is_dropped_with_reason(
    tmp_path: Path, argonne_lines: list[str], value: str
) -> None:
    _write(tmp_path / "ref" / ARGONNE, argonne_lines)
    cells = argonne_lines[1].split(",")
    cells[6] = value  # Latency
    _write(tmp_path / "bad" / ARGONNE, [argonne_lines[0], ",".join(cells), *argonne_lines[2:]])
    ref = load_measurements(tmp_path / "ref")
    bad = load_measurements(tmp_path / "bad")
    assert bad.all_rows.height == ref.all_rows.height  # nothing lost silently
    assert bad.table.height == ref.table.height - 1
    for col in ("itl_s", "output_throughput_tok_s", "power_w_per_gpu", "ttft_s"):
        assert all(math.isfinite(v) for v in bad.table[col].drop_nulls())
    assert dict(bad.dropped.rows()).get(NON_FINITE) == 1


class _Catalog:
    """Every name resolves to itself; every GPU has a 700 W TDP."""

    def try_resolve_gpu(self, name: str) -> str | None:
        return name

    def try_resolve_llm(self, name: str) -> str | None:
        return name

    def gpu(self, name_or_id: str) -> dict[str, Any]:
        return {"tdp_w": 700.0}

    def llm(self, name_or_id: str) -> dict[str, Any]:
        return {}


def _frame(source: str, col: str | None, value: float) -> pl.DataFrame:
    row: dict[str, Any] = {
        "source": source,
        "model": "m",
        "model_raw": "m",
        "gpu_hint": None,
        "gpu_raw": "g",
        "precision": "fp16",
        "quality": "ok",
        "power_w_per_gpu": 300.0,
        "itl_s": 0.02,
        "ttft_s": 0.1,
        "output_throughput_tok_s": 50.0,
    }
    if col is not None:
        row[col] = value
    return pl.DataFrame([row], schema_overrides={"gpu_hint": pl.String})


@pytest.mark.parametrize("source", ["mlenergy_v1", "watt_counts", "aiconfigurator"])
@pytest.mark.parametrize("col", ["power_w_per_gpu", "itl_s", "ttft_s", "output_throughput_tok_s"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_rule_covers_every_measured_column_and_source(
    source: str, col: str, value: float
) -> None:
    assert apply_rules(_frame(source, None, 0.0), _Catalog())["drop_reason"].to_list() == [None]
    got = apply_rules(_frame(source, col, value), _Catalog())
    assert got["drop_reason"].to_list() == [NON_FINITE]


def test_rules_state_the_non_finite_rule() -> None:
    assert any(r.startswith(NON_FINITE) for r in RULES)
    assert RULES.index(next(r for r in RULES if r.startswith(NON_FINITE))) < RULES.index(
        next(r for r in RULES if r.startswith("non-positive"))
    )


# -- 3. a folder named *.csv --------------------------------------------------------------------


def test_folder_named_csv_in_argonne_folder_is_not_read(
    tmp_path: Path, argonne_lines: list[str]
) -> None:
    data, ref = tmp_path / "data", tmp_path / "ref"
    _write(data / ARGONNE, argonne_lines)
    (data / ARGONNE / "old.csv").mkdir()
    (data / ARGONNE / "old.csv" / "readme.txt").write_text("x", encoding="utf-8")
    _write(ref / ARGONNE, argonne_lines)
    assert read_argonne(data / ARGONNE).height == read_argonne(ref / ARGONNE).height > 0
    assert load_measurements(data).all_rows.height == load_measurements(ref).all_rows.height


@pytest.mark.parametrize("count", ["nan", "inf", "0", "2.5", ""])
def test_an_unreadable_gpu_count_is_one_line_naming_the_file(
    tmp_path: Path, argonne_lines: list[str], count: str
) -> None:
    """``Num of Hardware`` of ``nan`` was an internal error (int(nan)); an empty one a KeyError-
    like crash further on. Since fuzz round 20 the line is unreadable and the others are read
    (it stopped the whole source before)."""
    header = argonne_lines[0].split(",")
    column = header.index("Num of Hardware")
    cells = next(csv.reader([argonne_lines[1]]))
    cells[column] = count
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(cells)
    path = _write(tmp_path / ARGONNE, [argonne_lines[0], out.getvalue(), *argonne_lines[2:]])
    frame = read_argonne(path.parent)
    bad = frame.filter(pl.col("quality").str.starts_with("unreadable: "))
    assert bad.height == 1, frame["quality"].to_list()
    reason = bad["quality"][0]
    assert "Num of Hardware" in reason and f"{path.name} line 2" in reason and "\n" not in reason
    assert frame.height > 1


def test_a_v1_table_that_is_not_utf8_is_one_line_naming_it(tmp_path: Path) -> None:
    """ML.ENERGY v1 opened its files as strict UTF-8 and read them with polars unguarded: bytes
    that are not UTF-8 were an internal error."""
    folder = tmp_path / "ml-energy-benchmark"
    folder.mkdir()
    header = "model,throughput,response_length,latency,energy"
    path = folder / "A40_chat-concise_benchmark.csv"
    path.write_bytes(header.encode() + b"\n\xff\xfe\xfa,1,2,3,4\n")
    with pytest.raises(DataError, match="not a readable ML.ENERGY v1 table") as caught:
        load_measurements(tmp_path)
    assert str(path) in str(caught.value)
