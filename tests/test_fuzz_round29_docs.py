"""Fuzz round 29 (documentation as a user reads it): what the docs quote holds.

docs/cli.md ("every command and its options", README) left out `--overlay`, `report --accuracy`,
`sweep --seed/--address/--force`, `data summary --include-doubtful` and `wattgpu --version`;
docs/sweep.md quoted a calibration gap other than the page it cites; docs/contracts.md named three
of the six optional keys that end a plan's `assumptions`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer

from planner.cli.app import app
from planner.documents.plan_parts import AssumptionsDocument

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _options(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(command path, long option) of *command* and every subcommand, ``--help`` left out
    (typer's own click: a group is what has ``list_commands``)."""
    found = [
        (" ".join(path), opt)
        for param in command.params
        for opt in (*param.opts, *param.secondary_opts)
        if opt.startswith("--") and opt != "--help"
    ]
    if hasattr(command, "list_commands"):
        ctx = command.context_class(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            found += _options(sub, (*path, name))
    return found


def test_cli_md_names_every_option_of_every_command() -> None:
    doc = (DOCS / "cli.md").read_text(encoding="utf-8")
    options = _options(typer.main.get_command(app))
    assert ("", "--version") in options and ("data summary", "--include-doubtful") in options
    missing = [
        f"wattgpu {path} {opt}".replace("  ", " ") for path, opt in options if opt not in doc
    ]
    assert missing == [], f"docs/cli.md does not document: {missing}"


def test_sweep_pages_quote_the_calibration_page_gap() -> None:
    page = (DOCS / "sweep-calibration.md").read_text(encoding="utf-8")
    match = re.search(r"Largest gap over all held-out rows: ([\d.]+) percentage points", page)
    assert match, "docs/sweep-calibration.md no longer states its largest gap"
    gap = match.group(1)
    for name in ("sweep.md", "accuracy-summary.md"):
        text = " ".join((DOCS / name).read_text(encoding="utf-8").split())
        quoted = re.findall(r"([\d.]+) percentage points", text)
        assert quoted and set(quoted) == {gap}, (name, quoted, gap)


def test_contracts_md_names_the_optional_keys_that_end_assumptions_in_order() -> None:
    fields = list(AssumptionsDocument.model_fields)
    trailing = fields[fields.index("capacity_headroom") + 1 :]
    assert {"disclosure", "price_basis_by_gpu", "catalog_sha256"} <= set(trailing)
    doc = (DOCS / "contracts.md").read_text(encoding="utf-8")
    section = doc.split("## Plan JSON contract", 1)[1]
    start = section.index("`assumptions` ends with")
    listed = re.findall(r"^- `([a-z0-9_]+)`:", section[start:].split("\n\n", 2)[1], re.M)
    assert listed == trailing
