"""Fuzz round 29 (command line): ``predict --requests-per-s`` out of its range (above 0); since
round 33 refused by the row rule in one line, as docs/cli.md says of predict's row options."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

BASE = ["predict", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "A30"]


@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_rate_of_zero_or_below_is_refused_with_the_range(value: str) -> None:
    """As every row option of predict (docs/cli.md; round 33: it was typer's boxed usage error,
    exit 2, where --batch-size 0 and a CSV row's 0 get one line): the row rule's line, exit 1."""
    result = run_cli(*BASE, f"--requests-per-s={value}")
    assert result.code == 1 and len(result.errors) == 1 and result.out == ""
    assert result.errors[0] == (
        f"error: predict: --requests-per-s: must be a positive number (or empty) (got '{value}')"
    )


def test_a_non_finite_rate_is_one_line() -> None:
    result = run_cli(*BASE, "--requests-per-s=nan")
    assert result.code == 1 and result.errors == [
        "error: --requests-per-s nan: not a finite number; give a number"
    ]


# --- inputs protected from outputs, in a long-lived process ------------------------------------


def test_a_reused_inode_is_not_taken_for_a_deleted_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registry kept the (device, inode) of every input a process read; once an input was
    deleted the file system could give its inode to a new file, which was then refused as "the
    input file" (a flaky ``predict -o out.csv`` in the test workers)."""
    from predictors.core import output

    gone, fresh = tmp_path / "input.csv", tmp_path / "out.csv"
    fresh.write_text("x\n", encoding="utf-8")
    st = os.stat(fresh)
    monkeypatch.setattr(output, "_PROTECTED", set())
    monkeypatch.setattr(output, "_PROTECTED_FILES", {(st.st_dev, st.st_ino): gone})
    output._check_not_protected(fresh, "--output")  # the input that had the inode is gone


def test_a_hard_link_to_a_protected_input_is_still_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from predictors.core import output
    from predictors.core.errors import WattgpuError

    source, link = tmp_path / "gpus.csv", tmp_path / "link.csv"
    source.write_text("id\n", encoding="utf-8")
    os.link(source, link)
    monkeypatch.setattr(output, "_PROTECTED", set())
    monkeypatch.setattr(output, "_PROTECTED_FILES", {})
    output.protect_inputs([source])
    with pytest.raises(WattgpuError, match="is the input file"):
        output._check_not_protected(link, "--output")
