"""Fuzz round 30: terminals and standard output.

Each test failed before its fix: a closed standard output (``>&-``: Python's ``sys.stdout`` is
None) was ``error: internal error AttributeError …`` and exit 2, even for a plan written to
``-o`` (which should exit 0); ``plan``'s table on a terminal of 40 to 80 columns cut its numbers
and ids (``22,…``, ``323…``, ``H100-SXM5…``), where ``compare`` shows them whole and runs past
the edge; ``catalog gpus|llms|regions|show`` written to a pipe or file changed with ``$COLUMNS``
where every other command's tables take the fixed width of
:func:`planner.cli.printing.print_width`. Numbers are never asserted exactly (the predictors are
retrained): the tests check structure and text.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from planner.cli.app import main
from planner.text import Section, sections_to_text
from tests.cli_runner import Result, run_cli
from tests.test_fuzz_round22_cli import _as_terminal

pytestmark = pytest.mark.usefixtures("cached_predictor")

REPO = Path(__file__).resolve().parent.parent
_ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")
_BOX = "┏┃┡│├└┗"


def _table_lines(text: str) -> list[str]:
    return [line for line in _ANSI.sub("", text).splitlines() if line[:1] in _BOX]


def _closed_stdout(monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    """``wattgpu ARGS >&-`` in-process: ``sys.stdout`` is None, as Python sets it."""
    monkeypatch.setattr(sys, "stdout", None)
    err = io.StringIO()
    code = 0
    with contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return Result(code, "", err.getvalue())


# --- 1. a closed standard output ------------------------------------------------------------------

CLOSED = "error: cannot write the output (standard output is closed) — write it elsewhere"


def test_closed_stdout_is_one_clean_line_and_exit_1_for_what_prints_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for args in (("--version",), ("schema", "plan"), ("catalog", "regions", "-f", "json")):
        result = _closed_stdout(monkeypatch, *args)
        assert result.code == 1, (args, result)
        assert "internal error" not in result.err and "Traceback" not in result.err, result.err
        assert result.err.splitlines() == [f"{CLOSED} with --output"], (args, result.err)


@pytest.mark.slow
def test_closed_stdout_does_not_fail_a_plan_written_to_output(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out = tmp_path / "plan.json"
    args = ("plan", "paper-llama8b-low-load", "--format", "json", "-o", str(out))
    result = _closed_stdout(monkeypatch, *args)
    assert result.code == 0, result.err
    assert "internal error" not in result.err and "error:" not in result.err, result.err
    assert f"wrote json plan to {out}" in result.err
    assert json.loads(out.read_text(encoding="utf-8"))["status"] == "optimal"


@pytest.mark.slow
def test_closed_stdout_descriptor_in_a_real_process(tmp_path: Path) -> None:
    """fd 1 really closed (``>&-``): one line and exit 1, nothing from the interpreter at exit."""
    proc = subprocess.run(
        [sys.executable, "-c", "from planner.cli.app import main; main()", "--version"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        preexec_fn=lambda: os.close(1),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == [f"{CLOSED} with --output"], proc.stderr


# --- 2. plan never cuts a number on a terminal ----------------------------------------------------


def _wanted(plan: dict[str, object]) -> set[str]:
    """The plan's energy and cost per allocation and in total, as the table writes them."""
    from planner.text import num

    allocations = plan["allocations"]
    totals = plan["totals"]
    assert isinstance(allocations, list) and isinstance(totals, dict)
    cells = {num(a[k]) for a in allocations for k in ("energy_kwh", "cost_usd")}
    return cells | {num(totals["energy_kwh"]), num(totals["cost_usd"])}


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["paper-llama8b-low-load", "enterprise-fleet"])
def test_plan_table_on_a_narrow_terminal_keeps_every_number_and_id_whole(
    monkeypatch: pytest.MonkeyPatch, scenario: str
) -> None:
    data = run_cli("plan", scenario, "--format", "json")
    assert data.code == 0, data.err
    plan = json.loads(data.out)
    wanted = _wanted(plan)
    gpus = {a["gpu"] for a in plan["allocations"]}
    for columns in (40, 60, 80):
        for wide in ((), ("--wide",)):
            _as_terminal(monkeypatch, columns)
            result = run_cli("plan", scenario, *wide)
            assert result.code == 0, result.err
            lines = _table_lines(result.out)
            assert lines, result.out
            assert not any("…" in line for line in lines), (columns, wide, result.out)
            cells = {c.strip().removesuffix(" †") for line in lines for c in line.split("│")}
            assert wanted <= cells, (columns, wide, wanted - cells, result.out)
            assert gpus <= cells, (columns, wide, gpus - cells, result.out)


@pytest.mark.slow
def test_plan_table_to_a_pipe_is_the_fixed_width_table_whatever_columns_says(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """What a pipe or file gets is unchanged: the -o table, at 100 (--wide 140) columns."""
    for wide in ((), ("--wide",)):
        out = tmp_path / "plan.txt"
        written = run_cli("plan", "enterprise-fleet", *wide, "-o", str(out))
        assert written.code == 0, written.err
        table = re.sub(r"solve +[0-9.]+ s", "solve", out.read_text(encoding="utf-8"))
        for columns in (20, 400):
            monkeypatch.setenv("COLUMNS", str(columns))
            piped = run_cli("plan", "enterprise-fleet", *wide)
            assert piped.code == 0, piped.err
            assert re.sub(r"solve +[0-9.]+ s", "solve", piped.out) == table, (columns, wide)


def test_narrow_table_with_two_wrapping_columns_cuts_no_word() -> None:
    """rich narrows the widest wrapping columns level, below their longest word: a plan's
    model entry name (``multilingual-c…``) and a GPU id in the flags' prose were cut."""
    from planner.text import least_width, numbers_whole

    section = Section(
        "flags",
        ("model entry", "GPU", "TP", "cost $", "robust: true instead"),
        (
            ("multilingual-chat-assistant", "H100-SXM5-80GB", "P 1×4 → D 1×8", "323,423", "x"),
            ("router", "L4", "1", "52,950", "no plan: misses the ITL SLA on H100-SXM5-80GB " * 3),
        ),
        numeric=frozenset({2, 3}),
        footer=("total", "", "", "1,376,373", ""),
    )
    whole = numbers_whole(section, ("TP",))
    assert whole.whole == frozenset({3})
    least = least_width(whole)
    for width in (least, least + 7, 80, 100):
        text = sections_to_text([whole], max(width, least))
        lines = _table_lines(text)
        assert not any("…" in line for line in lines), (width, text)
        assert max(len(line) for line in lines) <= max(width, least), (width, text)
        for word in ("multilingual-chat-assistant", "H100-SXM5-80GB", "323,423", "1,376,373"):
            assert word in text, (width, word, text)


# --- 3. catalog listings to a pipe or file take the fixed width ----------------------------------


@pytest.mark.parametrize(
    "args",
    [("gpus",), ("llms",), ("regions",), ("show", "H100"), ("show", "FR")],
)
@pytest.mark.slow
def test_catalog_table_to_a_pipe_does_not_follow_columns(
    monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    _as_terminal(monkeypatch, None)
    monkeypatch.delenv("COLUMNS")
    plain = run_cli("catalog", *args)
    assert plain.code == 0, plain.err
    assert max(len(line) for line in _table_lines(plain.out)) <= 100, plain.out
    for columns in ("20", "400"):
        monkeypatch.setenv("COLUMNS", columns)
        result = run_cli("catalog", *args)
        assert result.code == 0, result.err
        assert result.out == plain.out, (columns, result.out)
