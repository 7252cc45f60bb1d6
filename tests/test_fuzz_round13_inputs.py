"""Findings of the input fuzzer, round 13 (/tmp/fuzz13b find6, find7, find8).

* A control character (an ANSI escape, CR LF, NUL) or a bidirectional override (U+202E) in the
  scenario's ``name`` or a ``models[i].name`` passed ``wattgpu validate`` and reached every
  output raw; so did the other free text of a scenario (description, sources, region names).
  Each is now one error line naming the file, the field and the character.
* ``wattgpu predict --input rows.csv`` with row options (``--model``, ``--batch-size`` …) or
  ``--format json`` ignored them silently and wrote CSV; now one error line names them.
* A batch row's bad number cell (``abc``, ``0x10``) was written empty and its error did not say
  what the user gave; the error now quotes the cell.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from cli_runner import Result, run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
BASE = Path(__file__).resolve().parents[1] / "scenarios" / "paper-llama8b-low-load.yaml"


def one_error(result: Result) -> str:
    """The single ``error:`` line of a failed command (exit 1, nothing else on stderr)."""
    assert result.code == 1, (result.code, result.out, result.err)
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    return lines[0]


def scenario(tmp_path: Path, old: str, new: str) -> Path:
    """The bundled paper scenario with *old* replaced by *new*, written to *tmp_path*."""
    text = BASE.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "scenario.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


# --- 1. control characters in the scenario's names and free text --------------------------------


@pytest.mark.parametrize(
    ("old", "new", "field", "point"),
    [
        ("- name: chat-8b", r'- name: "chat\e[31mRED\e[0m\r\nX"', "models[0].name", "U+001B"),
        ("name: paper-llama8b-low-load", r'name: "a\x00b\u202eevil"', "name", "U+0000"),
        ("name: paper-llama8b-low-load", r'name: "paper\u202eevil"', "name", "U+202E"),
        ("name: paper-llama8b-low-load", r'name: "paper\tx"', "name", "U+0009"),
    ],
    ids=["entry_ansi_crlf", "scenario_nul", "scenario_bidi", "scenario_tab"],
)
def test_a_control_character_in_a_name_is_refused_by_validate(
    tmp_path: Path, old: str, new: str, field: str, point: str
) -> None:
    path = scenario(tmp_path, old, new)
    line = one_error(run_cli("validate", str(path)))
    assert line.startswith(f"error: {path}: {field}: text '"), line
    assert f"({point}) — remove it" in line
    assert "\x1b" not in line and "\x00" not in line and "\u202e" not in line


def test_the_other_free_text_of_a_scenario_is_checked_too(tmp_path: Path) -> None:
    text = re.sub(
        r"description: >-\n(  .*\n)+",
        lambda _: 'description: "bell\\e[5m"\n',
        BASE.read_text("utf-8"),
    )
    path = tmp_path / "scenario.yaml"
    path.write_text(text, encoding="utf-8")
    line = one_error(run_cli("validate", str(path)))
    assert "description: text 'bell\\x1b[5m' holds a control character (U+001B)" in line
    # a region name and a source reach the plan and the report as well
    regions = scenario(tmp_path, "models:\n", 'regions:\n  "e\\x1bu": {}\nmodels:\n')
    line = one_error(run_cli("validate", str(regions)))
    assert ": regions: key text 'e\\x1bu' holds a control character (U+001B)" in line
    source = scenario(
        tmp_path,
        "models:\n",
        'disclosure: {wue_l_per_kwh: 1.0, wue_source: "x\\u2066y"}\nmodels:\n',
    )
    line = one_error(run_cli("validate", str(source)))
    assert ": disclosure.wue_source: text " in line and "(U+2066)" in line


def test_line_breaks_in_a_description_and_plain_names_stay_valid(tmp_path: Path) -> None:
    path = scenario(tmp_path, "description: >-", "description: |-")
    result = run_cli("validate", str(path))
    assert result.code == 0, result.err
    over = run_cli("validate", str(BASE), "--set", r'models[0].name="chat\e]0;x"')
    assert "models[0].name: text " in one_error(over)


# --- 2. predict --input with options the batch form does not use --------------------------------


def test_batch_predict_refuses_row_options_and_a_non_csv_format(tmp_path: Path) -> None:
    rows, out = tmp_path / "rows.csv", tmp_path / "out.csv"
    rows.write_text(f"model,gpu\n{LLAMA},A30\n", encoding="utf-8")
    args = ("predict", "--input", str(rows), "--output", str(out))
    line = one_error(run_cli(*args, "--model", "X", "--gpu", "Y", "--batch-size", "64"))
    assert line == (
        f"error: --input {rows}: --model, --gpu, --batch-size would be ignored — the batch "
        "form reads every row from the CSV's columns (docs/contracts.md); put the values in "
        "the CSV, or drop --input for the single form"
    )
    line = one_error(run_cli(*args, "--format", "json"))
    assert line.startswith("error: --format json: the batch form (--input) writes CSV only")
    line = one_error(run_cli(*args, "--requests-per-s", "1"))
    assert "--requests-per-s would be ignored" in line
    assert not out.exists()
    ok = run_cli(*args, "--format", "csv")
    assert ok.code == 0, ok.err
    assert out.read_text(encoding="utf-8").startswith("model,gpu,")
    line = one_error(run_cli("predict", "--model", LLAMA, "--gpu", "A30", "--format", "csv"))
    assert line.startswith("error: --format csv: only the batch form writes CSV")


# --- 3. a bad number cell is quoted in its row's error ------------------------------------------


def test_a_bad_number_cell_is_quoted_and_good_rows_are_predicted(tmp_path: Path) -> None:
    rows, out = tmp_path / "rows.csv", tmp_path / "out.csv"
    rows.write_text(
        f"model,gpu,batch_size,note\n{LLAMA},A30,abc,first\n{LLAMA},A30,0x10,second\n"
        f"{LLAMA},A30,8,third\n{LLAMA},A30,2,fourth\n",
        encoding="utf-8",
    )
    result = run_cli("predict", "--input", str(rows), "--output", str(out))
    assert result.code == 0, result.err
    assert "4 rows, 2 with errors" in result.out
    text = out.read_text(encoding="utf-8")
    got = list(csv.DictReader(io.StringIO(text, newline="")))
    fix = "batch_size: must be a whole number from 1 to 65,536"
    assert got[0]["error"] == f"{fix} (got 'abc')"
    assert got[1]["error"] == f"{fix} (got '0x10')"
    assert [r["note"] for r in got] == ["first", "second", "third", "fourth"]
    assert got[2]["error"] == got[3]["error"] == "" and got[2]["power_w_per_gpu"]
    plain = tmp_path / "plain.csv"
    rows.write_text(f"model,gpu,batch_size,note\n{LLAMA},A30,8,third\n", encoding="utf-8")
    assert run_cli("predict", "--input", str(rows), "--output", str(plain)).code == 0
    header = plain.read_text(encoding="utf-8").splitlines()[0]
    assert text.splitlines()[0] == header  # the contract's columns, in order


def test_the_single_form_quotes_its_bad_option(tmp_path: Path) -> None:
    line = one_error(run_cli("predict", "--model", LLAMA, "--gpu", "A30", "--batch-size", "0"))
    assert line == (
        "error: predict: --batch-size: must be a whole number from 1 to 65,536 (got '0')"
    )


def test_missing_input_columns_come_in_the_contracts_order(tmp_path: Path) -> None:
    """A file with only ``model,gpu`` got ``precision`` before ``gpu_count`` when it had rows
    (the checkpoint's precision is filled first) and the contract's order when it had none."""
    heads = []
    for name, body in (("empty", ""), ("one", "meta-llama/Llama-3.1-8B-Instruct,A30\n")):
        source, out = tmp_path / f"{name}.csv", tmp_path / f"{name}-out.csv"
        source.write_text("model,gpu\n" + body, encoding="utf-8")
        result = run_cli("predict", "--input", str(source), "--output", str(out))
        assert result.code == 0, result.err
        heads.append(out.read_text(encoding="utf-8").splitlines()[0].split(","))
    assert heads[0] == heads[1]
    assert heads[1][:6] == ["model", "gpu", "gpu_count", "engine", "precision", "batch_size"]
