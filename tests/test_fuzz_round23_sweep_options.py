"""Round-23 findings on ``wattgpu sweep``'s options (docs/cli.md "Exit codes", docs/sweep.md).

Before: ``--draws 100000000000 --force`` was an internal MemoryError (52 TiB of draws), a grid of
1,000,000 points with ``--force`` started a million plans, and a value out of an option's range
or not among its choices (``--draws -3``, ``--sla-probability 1.5``, ``--engine dsk``) was exit
1 where the docs say a malformed command line is exit 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_runner import run_cli

PAPER = "paper-llama8b-low-load"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--draws", "-3"), "--draws"),
        (("--draws", "100000000000", "--force"), "1000000"),
        (("--batch-size", "99999999999999", "--draws", "2"), "--batch-size"),
        (("--sla-probability", "1.5", "--draws", "2"), "--sla-probability"),
        (("--sla-probability", "0", "--draws", "2"), "no share of draws"),
        (("--engine", "dsk", "--draws", "4"), "did you mean: dask?"),
        (("--choose", "rbust", "--draws", "4"), "did you mean: robust?"),
    ],
)
def test_a_malformed_option_is_a_usage_error(
    tmp_path: Path, args: tuple[str, ...], needle: str
) -> None:
    out = tmp_path / "sweep.json"
    result = run_cli("sweep", PAPER, *args, "-f", "json", "-o", str(out))
    assert result.code == 2, result.out + result.err
    assert needle in " ".join(result.err.split()), result.err
    assert "Traceback" not in result.err and "internal error" not in result.err
    assert not out.exists()


@pytest.mark.parametrize(
    ("sets", "needle"),
    [
        (("sweep.draws=2000000",), "sweep.draws: 2000000 is out of range"),
        (
            (
                "sweep.grid.load_growth={start: 1, stop: 2, steps: 1000}",
                "sweep.grid.electricity_usd_per_kwh={start: 0.1, stop: 0.2, steps: 1000}",
            ),
            "1,000,000 grid points is above the most a sweep takes, 100,000 even with --force",
        ),
    ],
)
def test_force_has_a_ceiling_named_in_one_line(
    tmp_path: Path, sets: tuple[str, ...], needle: str
) -> None:
    out = tmp_path / "sweep.json"
    args = [a for s in sets for a in ("--set", s)]
    result = run_cli("sweep", PAPER, *args, "--force", "-f", "json", "-o", str(out))
    assert result.code == 1, result.out + result.err
    assert len(result.errors) == 1 and needle in result.errors[0], result.err
    assert not out.exists()
