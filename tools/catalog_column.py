"""The command line shared by the tools that write one derived column of ``catalogs/gpus.csv``
(``catalog_embodied.py``, ``catalog_list_prices.py``): print the values, ``--check`` (exit 1
when the file differs from what the tool computes) or ``--write`` (atomically)."""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GPUS_CSV = REPO / "catalogs" / "gpus.csv"


def column_tool(
    description: str, updated_text: Callable[[str], str], describe: Callable[[dict[str, str]], str]
) -> int:
    """Run the tool: *updated_text* maps the CSV text to its updated text; *describe* gives the
    line printed per row without ``--write`` or ``--check``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--write", action="store_true", help="update catalogs/gpus.csv")
    parser.add_argument("--check", action="store_true", help="exit 1 when it is out of date")
    args = parser.parse_args()
    text = GPUS_CSV.read_text(encoding="utf-8")
    new = updated_text(text)
    if args.check:
        return 0 if new == text else 1
    if args.write:
        sys.path.insert(0, str(REPO))
        from predictors.core.output import atomic_write

        atomic_write(GPUS_CSV, new.encode("utf-8"))
        print(f"updated {GPUS_CSV}")
        return 0
    for row in csv.DictReader(io.StringIO(new)):
        print(describe(row))
    return 0
