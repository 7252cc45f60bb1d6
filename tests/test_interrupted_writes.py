"""A Ctrl-C during a write never leaves a temporary file or a missing target (fuzz round 30).

One Ctrl-C during polars' ``write_csv`` raises KeyboardInterrupt twice: polars' own, then
Python's, which landed in :func:`atomic_write`'s clean-up and left ``.pred.csv.XXXXXXXX`` (tens of
MB) beside the target in 3 of about 30 interrupted ``wattgpu predict --output`` runs. The
second interrupt is simulated here where it struck: during the clean-up's ``unlink``, and
between the two renames of a directory swap.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from predictors.core import atomic_dir, output
from predictors.core.atomic_dir import replace_directory
from predictors.core.output import atomic_write


def _interrupt_once(real: Any, calls: list[int], at: int) -> Any:
    def wrapped(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == at:
            raise KeyboardInterrupt
        return real(*args)

    return wrapped


def test_a_second_interrupt_during_the_clean_up_still_removes_the_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "pred.csv"
    target.write_text("old\n")

    def interrupted(fh: Any) -> None:
        fh.write(b"partial,rows\n" * 1000)
        raise KeyboardInterrupt  # polars' own

    monkeypatch.setattr(output.os, "unlink", _interrupt_once(os.unlink, [], 1))  # Python's
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, interrupted)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pred.csv"]
    assert target.read_text() == "old\n"


def test_an_interrupt_between_the_renames_of_a_directory_swap_puts_the_old_one_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "card.json").write_text("old")
    # the first rename moves the old directory aside, the second would move the new one in
    monkeypatch.setattr(atomic_dir.os, "rename", _interrupt_once(os.rename, [], 2))
    with pytest.raises(KeyboardInterrupt):
        replace_directory(models, {"card.json": b"new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models"]
    assert (models / "card.json").read_text() == "old"


def test_a_swap_that_completes_leaves_only_the_new_directory(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "card.json").write_text("old")
    (models / "evaluation_summary.json").write_text("{}")
    replace_directory(models, {"card.json": b"new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models"]
    assert (models / "card.json").read_text() == "new"
    assert (models / "evaluation_summary.json").read_text() == "{}"
