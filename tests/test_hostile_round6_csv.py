"""Hostile CSV text found in the sixth review: the CSV files a user gives (``wattgpu predict
--input``, the user catalog) in UTF-16, with old-Mac line ends, or with control characters.

A UTF-16/UTF-32 file or one whose lines end with a bare CR is one ``error:`` line naming the file
and the fix (it used to be ``missing column(s) model, gpu``, or an internal error); a UTF-8
byte-order mark and CRLF line ends keep working. A control character (tab excepted) in a header
name refuses the file; in a ``predict`` cell it refuses that row only (its ``error`` names the
column, the good rows are predicted, nothing of it is copied to the output); in a user catalog
cell it is a validation problem naming the row and column.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from cli_runner import Result, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

import predictors.rows
from predictors.core.csv_text import text_problem
from predictors.core.safe_read import duplicate_csv_columns

pytestmark = pytest.mark.usefixtures("cached_predictor")

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
ROWS = f"model,gpu,batch_size,note\n{LLAMA},A30,1,first\n{LLAMA},L4,4,second\n"
#: A byte of the output that is a control character other than tab and the LF ending a line.
CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def one_error(result: Result) -> str:
    """The single ``error:`` line of a failed command (exit 1, nothing else on stderr)."""
    assert result.code == 1, (result.code, result.err)
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    return lines[0]


def predicted(tmp_path: Path, data: bytes) -> tuple[list[dict[str, str]], bytes]:
    """Run ``predict --input`` on *data*; the output rows and the output's bytes."""
    rows, out = tmp_path / "rows.csv", tmp_path / "out.csv"
    rows.write_bytes(data)
    result = run_cli("predict", "--input", str(rows), "--output", str(out))
    assert result.code == 0, result.err
    raw = out.read_bytes()
    return list(csv.DictReader(io.StringIO(raw.decode("utf-8"), newline=""))), raw


# --- predict --input: the file's text ------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (ROWS.encode("utf-16"), "is UTF-16 text (byte-order mark FF FE)"),  # little-endian + BOM
        (b"\xfe\xff" + ROWS.encode("utf-16-be"), "is UTF-16 text (byte-order mark FE FF)"),
        (ROWS.encode("utf-16-le"), "is UTF-16 text (little-endian, no byte-order mark)"),
        (ROWS.encode("utf-16-be"), "is UTF-16 text (big-endian, no byte-order mark)"),
        (ROWS.encode("utf-32"), "is UTF-32 text (byte-order mark FF FE 00 00)"),
        (ROWS.encode("utf-32-be"), "is UTF-32 text (big-endian, no byte-order mark)"),
    ],
    ids=["utf16le_bom", "utf16be_bom", "utf16le", "utf16be", "utf32le_bom", "utf32be"],
)
def test_wide_text_is_named_not_a_missing_column(tmp_path: Path, data: bytes, what: str) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_bytes(data)
    line = one_error(run_cli("predict", "--input", str(rows)))
    assert line == f"error: --input: {rows}: {what}; save it as UTF-8"


def test_bare_cr_line_ends_are_named(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_bytes(ROWS.replace("\n", "\r").encode())
    line = one_error(run_cli("predict", "--input", str(rows)))
    assert line == (
        f"error: --input: {rows}: lines end with a bare carriage return (CR); save it with LF or "
        "CRLF line ends"
    )  # it was an internal error (the repeated-column check's csv.Error)


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf" + ROWS.encode(),
        ROWS.replace("\n", "\r\n").encode(),
        b"\xef\xbb\xbf" + ROWS.replace("\n", "\r\n").encode(),
        ROWS.rstrip("\n").encode() + b"\r",  # a last line ended by a CR alone
    ],
    ids=["utf8_bom", "crlf", "utf8_bom_crlf", "last_line_cr"],
)
def test_utf8_bom_and_crlf_keep_working(tmp_path: Path, data: bytes) -> None:
    out, raw = predicted(tmp_path, data)
    assert raw.startswith(b"model,gpu,")  # the BOM is not part of the first column's name
    assert [r["note"] for r in out] == ["first", "second"]
    assert all(r["error"] == "" and r["power_w_per_gpu"] for r in out), out


def test_a_header_name_over_the_csv_field_limit_is_no_internal_error(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(f"model,gpu,{'x' * 200_000}\n{LLAMA},A30,1\n", encoding="utf-8")
    assert duplicate_csv_columns(rows) == []  # csv.Error: field larger than field limit
    assert run_cli("predict", "--input", str(rows)).code == 0


# --- predict --input: control characters ---------------------------------------------------------


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
@pytest.mark.parametrize(
    ("column", "char"),
    [
        ("note", "\x00"),
        ("gpu", "\x01"),  # "A3\x010" was predicted as an A30, the \x01 copied out
        ("model", "\x1b"),
        ("note", "\n"),  # in a quoted cell
        ("note", "\r"),
        ("batch_size", "\x7f"),
        ("note", "\x85"),  # C1: NEL
    ],
    ids=["nul", "soh_in_gpu", "esc_in_model", "lf_quoted", "cr_quoted", "del", "c1_nel"],
)
def test_a_control_character_in_a_cell_refuses_that_row_only(
    tmp_path: Path, column: str, char: str
) -> None:
    good = {"model": LLAMA, "gpu": "A30", "batch_size": "1", "note": "ok"}
    bad = {**good, column: good[column][:2] + char + good[column][2:]}
    frame = pl.DataFrame([good, bad, good])
    text = io.StringIO()
    frame.write_csv(text)  # quotes the LF and CR cells
    out, raw = predicted(tmp_path, text.getvalue().encode())
    assert len(out) == 3
    assert CONTROL_BYTES.search(raw.replace(b"\n", b"")) is None  # nothing copied out
    # last: a control character in a number also makes it no number ("1\x7f")
    assert out[1]["error"].split("; ")[-1] == (
        f"{column}: holds a control character (U+{ord(char):04X})"
    )
    assert out[1]["power_w_per_gpu"] == "" and out[1]["domain_reason"] == "invalid row (see error)"
    # a number column is written as numbers: a cell that is no number is written empty
    shown = "" if column == "batch_size" else bad[column].replace(char, "\ufffd")
    assert out[1][column] == shown
    for row in (out[0], out[2]):
        assert row["error"] == "" and row["power_w_per_gpu"] and row["note"] == "ok", row
    assert out[0]["power_w_per_gpu"] == out[2]["power_w_per_gpu"]


def test_a_tab_in_a_cell_is_kept(tmp_path: Path) -> None:
    out, _ = predicted(tmp_path, f"model,gpu,note\n{LLAMA},A30,a\tb\n".encode())
    assert out[0]["error"] == "" and out[0]["note"] == "a\tb"


def test_every_bad_column_and_the_rate_are_named(tmp_path: Path) -> None:
    data = f"model,gpu,requests_per_s,note,tag\n{LLAMA},A30,-1,\x00,\x02x\n{LLAMA},A30,,a,b\n"
    out, raw = predicted(tmp_path, data.encode())
    assert out[0]["error"] == (
        "requests_per_s: must be a positive number (or empty) (got '-1'); "
        "note: holds a control character (U+0000); tag: holds a control character (U+0002)"
    )
    assert out[0]["concurrency"] == "" and out[1]["error"] == "" and out[1]["power_w_per_gpu"]
    assert CONTROL_BYTES.search(raw.replace(b"\n", b"")) is None


@pytest.mark.slow
def test_a_control_character_in_a_later_chunk_refuses_only_its_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(predictors.rows, "ROWS_CHUNK", 3)  # the pieces of a large input
    notes = ["b\x00d" if i == 7 else str(i) for i in range(10)]
    lines = [f"{LLAMA},A30,1,{note}" for note in notes]
    out, raw = predicted(tmp_path, ("model,gpu,batch_size,note\n" + "\n".join(lines)).encode())
    assert [r["error"] != "" for r in out] == [i == 7 for i in range(10)]
    assert out[7]["error"] == "note: holds a control character (U+0000)"
    assert out[7]["note"] == "b\ufffdd" and CONTROL_BYTES.search(raw.replace(b"\n", b"")) is None


@pytest.mark.parametrize("char", ["\x00", "\x07", "\r"])
def test_a_control_character_in_the_header_refuses_the_file(tmp_path: Path, char: str) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_bytes(f'model,gpu,"no{char}te"\r\n{LLAMA},A30,1\r\n'.encode())
    line = one_error(run_cli("predict", "--input", str(rows)))
    if char == "\r":  # a CR inside the first line: it reads as old-Mac line ends
        assert "bare carriage return (CR)" in line
        return
    shown = repr(f"no{char}te")
    assert line == (
        f"error: --input: {rows}: header column {shown} holds a control character "
        f"(U+{ord(char):04X}); remove it"
    )


def test_the_single_row_form_refuses_a_control_character() -> None:
    line = one_error(run_cli("predict", "--model", LLAMA, "--gpu", "A3\x1b0"))
    assert line == "error: predict: --gpu: holds a control character (U+001B)"


# --- the text check on its own -------------------------------------------------------------------

HEADER_TEXT = st.text(alphabet='abcdefghijklmnopqrstuvwxyz_0123456789,\n\t" ', min_size=2)


@given(text=HEADER_TEXT)
@settings(max_examples=60, derandomize=True, deadline=None)
def test_utf16_ascii_is_recognised_and_utf8_never_is(text: str) -> None:
    assert text_problem(text.encode("utf-8")) is None
    for codec, order in (("utf-16-le", "little-endian"), ("utf-16-be", "big-endian")):
        found = text_problem(text.encode(codec))
        assert found is not None and found.what == f"is UTF-16 text ({order}, no byte-order mark)"


# --- user catalogs -------------------------------------------------------------------------------


def gpu_catalog(*, header: str = "", cell: str = "", nl: str = "\n") -> str:
    """The text of a user ``gpus.csv`` with one new GPU (a copy of the first bundled one): its
    ``source`` column named ``header`` when given, its ``source`` cell ``cell`` when given."""
    bundled = (Path(__file__).resolve().parent.parent / "catalogs" / "gpus.csv").read_text(
        encoding="utf-8"
    )
    names, first = list(csv.reader(io.StringIO(bundled)))[:2]
    row = dict(zip(names, first, strict=True))
    row.update(id="MyGPU-1", aliases="", assumed_aliases="")
    if cell:
        row["source"] = cell
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=nl)
    writer.writerow([header if name == "source" and header else name for name in names])
    writer.writerow(row.values())
    return out.getvalue()


def with_user_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes) -> Path:
    user = tmp_path / "user"
    user.mkdir()
    (user / "gpus.csv").write_bytes(data)
    monkeypatch.setenv("WATTGPU_USER_CATALOG", str(user))
    return user / "gpus.csv"


@pytest.mark.parametrize(
    ("encode", "what", "fix"),
    [
        (
            lambda t: t.encode("utf-16"),
            "is UTF-16 text (byte-order mark FF FE)",
            "save it as UTF-8",
        ),
        (
            lambda t: t.encode("utf-16-be"),
            "is UTF-16 text (big-endian, no byte-order mark)",
            "save it as UTF-8",
        ),
        (
            lambda t: t.replace("\n", "\r").encode(),
            "lines end with a bare carriage return (CR)",
            "save it with LF or CRLF line ends",
        ),
    ],
    ids=["utf16le_bom", "utf16be", "bare_cr"],
)
def test_user_catalog_text_problems_are_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    encode: Callable[[str], bytes],
    what: str,
    fix: str,
) -> None:
    path = with_user_catalog(tmp_path, monkeypatch, encode(gpu_catalog()))
    assert one_error(run_cli("catalog", "gpus")) == f"error: {path}: {what}; fix: {fix}"


def test_user_catalog_with_utf8_bom_and_crlf_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = gpu_catalog(nl="\r\n")
    with_user_catalog(tmp_path, monkeypatch, b"\xef\xbb\xbf" + text.encode())
    result = run_cli("catalog", "show", "MyGPU-1", "--format", "json")
    assert result.code == 0, result.err
    assert "MyGPU-1" in result.out


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x9b"])
def test_user_catalog_control_character_in_a_cell_names_row_and_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, char: str
) -> None:
    text = gpu_catalog(cell=f"datasheet{char}page 3")
    path = with_user_catalog(tmp_path, monkeypatch, text.encode())
    line = one_error(run_cli("catalog", "gpus"))
    assert line == (
        f"error: {path} row 2, column 'source': holds a control character "
        f"(U+{ord(char):04X}); fix: remove it"
    )


def test_user_catalog_control_character_in_the_header_refuses_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = with_user_catalog(tmp_path, monkeypatch, gpu_catalog(header="sou\x00rce").encode())
    line = one_error(run_cli("catalog", "gpus"))
    assert line == (
        f"error: {path} row 1: header column 'sou\\x00rce' holds a control character (U+0000); "
        "fix: remove it"
    )


CONFIG = (
    '{"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, '
    '"num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, '
    '"vocab_size": 128256, "max_position_embeddings": 131072, "tie_word_embeddings": false, '
    '"torch_dtype": "bfloat16"}'
)


@pytest.mark.parametrize(
    ("encode", "what"),
    [
        (lambda t: t.encode("utf-16"), "is UTF-16 text (byte-order mark FF FE); save it as UTF-8"),
        (
            lambda t: t.encode("utf-16-le"),
            "is UTF-16 text (little-endian, no byte-order mark); save it as UTF-8",
        ),
        (
            lambda t: t.replace("\n", "\r").encode(),
            "lines end with a bare carriage return (CR); save it with LF or CRLF line ends",
        ),
    ],
    ids=["utf16le_bom", "utf16le", "bare_cr"],
)
def test_import_hf_into_a_wide_or_cr_llms_csv_names_it(
    tmp_path: Path, encode: Callable[[str], bytes], what: str
) -> None:
    config, user = tmp_path / "config.json", tmp_path / "user"
    config.write_text(CONFIG, encoding="utf-8")
    args = ("catalog", "import-hf", str(config), "--user-catalog", str(user))
    assert run_cli(*args, "--id", "acme/first-8b").code == 0
    target = user / "llms.csv"
    target.write_bytes(encode(target.read_text(encoding="utf-8")))
    kept = target.read_bytes()
    line = one_error(run_cli(*args, "--id", "acme/second-8b"))
    assert line == f"error: {target}: {what}, then import again"
    assert target.read_bytes() == kept
