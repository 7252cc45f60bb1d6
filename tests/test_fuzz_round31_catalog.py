"""Fuzz round 31 (a GPU nobody measured, added by the user): catalog cells and headers.

A release year of 20255 was accepted (it widened every interval of the row); a misspelt required
column gave an "unknown column" line listing all 40 names beside a "required column is missing"
one; ``vendor: nvidia`` and ``Nvidea`` were refused without a suggestion; and a bandwidth written
``3.35 TB/s`` got only "fix: correct memory_bandwidth_gb_s".
"""

from __future__ import annotations

from pathlib import Path

from tests.cli_runner import run_cli

HEADER = (
    "id,aliases,vendor,architecture,form_factor,release_year,memory_gb,memory_bandwidth_gb_s,"
    "tdp_w,idle_power_w,idle_power_source,fp16_tflops_dense,source"
)
CELLS = "MYG,,NVIDIA,Hopper,SXM5,2022,80,3350,700,105,rule,989.4,synthetic clone"


def _validate(tmp_path: Path, header: str = HEADER, cells: str = CELLS) -> list[str]:
    folder = tmp_path / "cat"
    folder.mkdir(exist_ok=True)
    (folder / "gpus.csv").write_text(f"{header}\n{cells}\n", encoding="utf-8")
    result = run_cli("catalog", "validate", "--user-catalog", str(folder))
    return [result.code, *result.err.strip().splitlines()]  # type: ignore[list-item]


def _with(cell: str, value: str) -> str:
    names = HEADER.split(",")
    values = CELLS.split(",")
    values[names.index(cell)] = value
    return ",".join(values)


def test_a_release_year_typo_is_refused(tmp_path: Path) -> None:
    code, *lines = _validate(tmp_path, cells=_with("release_year", "20255"))
    assert code == 1 and len(lines) == 1
    assert "column 'release_year': 20255 must be at most 2040 (a typo?)" in lines[0]


def test_a_misspelt_required_column_is_one_line_saying_rename(tmp_path: Path) -> None:
    header = HEADER.replace("memory_bandwidth_gb_s", "memory_bandwith_gb_s")
    code, *lines = _validate(tmp_path, header=header)
    assert code == 1 and len(lines) == 1, lines
    assert lines[0].endswith(
        "column 'memory_bandwith_gb_s': unknown column, and memory_bandwidth_gb_s is required; "
        "fix: rename it to memory_bandwidth_gb_s"
    )


def test_an_optional_column_typo_gets_did_you_mean(tmp_path: Path) -> None:
    code, *lines = _validate(tmp_path, header=HEADER + ",interconect_gb_s", cells=CELLS + ",900")
    assert code == 1 and len(lines) == 1, lines
    assert "unknown column (did you mean: interconnect_gb_s" in lines[0]


def test_a_vendor_in_another_case_is_read_and_a_misspelt_one_suggested(tmp_path: Path) -> None:
    assert _validate(tmp_path, cells=_with("vendor", "nvidia"))[0] == 0
    code, *lines = _validate(tmp_path, cells=_with("vendor", "Nvidea"))
    assert code == 1 and "unknown value 'Nvidea' (did you mean: NVIDIA?)" in lines[0]


def test_a_number_with_its_unit_is_told_the_unit(tmp_path: Path) -> None:
    code, *lines = _validate(tmp_path, cells=_with("memory_bandwidth_gb_s", "3.35 TB/s"))
    assert code == 1 and len(lines) == 1
    assert lines[0].endswith(
        "'3.35 TB/s' is not a number; fix: give GB/s (3350 for 3.35 TB/s), a plain number "
        "without its unit"
    )
