"""The user catalog overlay: add (or replace) an LLM row imported from a Hugging Face config.

``wattgpu catalog import-hf`` writes the row to ``DIR/llms.csv`` (the columns of the bundled
``catalogs/llms.csv``). The merged file is validated as a whole catalog before it is written,
written atomically, and the read-merge-write holds an advisory lock, so concurrent imports into
one directory all keep their rows.
"""

from __future__ import annotations

import contextlib
import csv
import difflib
import io
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from predictors.catalog.hf_config import LLM_COLUMNS, format_csv_cell
from predictors.catalog.name_keys import digit_splits, named_ids
from predictors.catalog.store import load_catalog, normalize_name
from predictors.catalog.validate import BIDI_PATTERN, LLM_SCHEMA, read_table
from predictors.core.csv_text import text_problem
from predictors.core.errors import CatalogError, WattgpuError
from predictors.core.escape import short_repr, terminal_text
from predictors.core.output import locked, write_output
from predictors.core.paths import catalogs_dir
from predictors.core.safe_read import MAX_CATALOG_BYTES, decode_utf8, load_json, read_bytes


def read_config(path: Path) -> dict[str, Any]:
    """Load a config.json file (size and nesting checked), with one-line errors. ``NaN`` and
    ``Infinity`` are read (Hugging Face writes ``"time_step_limit": [0.0, Infinity]`` into
    Nemotron-H configs): every value the importer uses is checked, naming its key."""
    raw = load_json(path, allow_inf_nan=True)
    if not isinstance(raw, dict):
        raise WattgpuError(f"{path}: a Hugging Face config.json must be a JSON object")
    return raw


def _bundled_llm_names() -> dict[str, list[tuple[frozenset[int], str]]]:
    """Normalised id or alias -> (its digit splits, id) of every bundled LLM name."""
    rows, _, _ = read_table(catalogs_dir() / LLM_SCHEMA.file_name, LLM_SCHEMA)
    names: dict[str, list[tuple[frozenset[int], str]]] = {}
    for r in rows:
        for name in [r["id"], *(r.get("aliases") or [])]:
            if name:
                entry = (digit_splits(str(name)), str(r["id"]))
                names.setdefault(normalize_name(str(name)), []).append(entry)
    return names


def check_names(row: dict[str, Any]) -> None:
    """The id and aliases must be new names: not a bundled model's id or alias, no '|', no
    control character or bidirectional override (a catalog cell refuses them too)."""
    bundled = _bundled_llm_names()
    for name, option in [(row["id"], "--id")] + [(a, "--alias") for a in row["aliases"]]:
        shown = short_repr(name, 60)
        if (
            not name.strip()
            or "|" in name
            or terminal_text(name) != name
            or "\n" in name
            or re.search(BIDI_PATTERN, name)
        ):
            raise WattgpuError(
                f"{option} {shown}: give a name without '|', newlines, control characters or "
                "bidirectional overrides"
            )
        # a name the catalog tells apart by its digits is new (opt-1.3b beside opt-13b)
        taken = sorted(named_ids(name, bundled.get(normalize_name(name), [])))
        if taken:
            raise WattgpuError(
                f"{option} {shown}: already names the bundled model {' and '.join(taken)} — "
                "choose another name (import-hf adds models; to replace the bundled row, give "
                "a user llms.csv row with its id, catalogs/README.md)"
            )


def _header_index(target: Path, header: list[str]) -> dict[str, int]:
    """Column name -> position in *target*'s header: any subset of the llms.csv columns in any
    order (optional columns may be left out, catalogs/README.md); an unknown or repeated name,
    or no ``id`` column, is refused naming it."""
    index: dict[str, int] = {}
    for position, name in enumerate(header):
        if name not in LLM_COLUMNS:
            close = difflib.get_close_matches(name, LLM_COLUMNS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise WattgpuError(
                f"{target}: column {short_repr(name, 40)} is not an llms.csv column{hint}; "
                "rename or remove it, then import again"
            )
        if name in index:
            raise WattgpuError(
                f"{target}: column '{name}' appears more than once; keep one, then import again"
            )
        index[name] = position
    if "id" not in index:
        raise WattgpuError(f"{target}: the header has no 'id' column; add it, then import again")
    return index


def _merged_rows(target: Path, row: dict[str, Any]) -> list[list[str]]:
    """The rows of *target* (llms.csv) with *row* added or replacing the row with its id, in the
    full llms.csv column order (a file that leaves optional columns out keeps its values, the
    columns it lacks empty)."""
    cells = [format_csv_cell(row.get(col)) for col in LLM_COLUMNS]
    kept: list[list[str]] = []
    if target.exists():
        data = read_bytes(target, MAX_CATALOG_BYTES)
        not_text = text_problem(data)  # UTF-16 or bare CR line ends: say so, not "bad header"
        if not_text is not None:
            raise WattgpuError(f"{target}: {not_text}, then import again")
        reader = csv.reader(io.StringIO(decode_utf8(data, target)))
        try:
            header = next(reader, None)
            index = _header_index(target, header) if header is not None else {}
            for r in reader:
                if not r or not any(c.strip() for c in r):
                    continue  # a blank line is no row
                if len(r) > len(header or ()):
                    raise WattgpuError(
                        f"{target} row {reader.line_num}: {len(r)} fields for "
                        f"{len(header or ())} columns; remove the extra fields, then import again"
                    )
                values = {name: r[i] if i < len(r) else "" for name, i in index.items()}
                if values["id"] != row["id"]:
                    kept.append([values.get(col, "") for col in LLM_COLUMNS])
        except csv.Error as exc:
            raise WattgpuError(f"{target}: not a readable CSV ({exc}); fix or move it") from None
    return [*kept, cells]


def _csv_text(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LLM_COLUMNS)
    writer.writerows(rows)
    return buffer.getvalue()


def upsert_llm_row(user_dir: Path, row: dict[str, Any]) -> Path:
    """Add *row* to ``user_dir/llms.csv`` (replacing the row with the same id) after checking the
    resulting user catalog with the catalog validator; written atomically, never half-way, and
    under an advisory lock, so concurrent imports into one catalog all keep their rows. A
    directory that does not exist is created (with its parents); an import that fails removes
    what it created, never leaving an empty catalog behind."""
    if user_dir.exists() and not user_dir.is_dir():
        raise WattgpuError(f"--user-catalog {user_dir}: is a file — give a directory")
    target = user_dir / "llms.csv"
    new_dirs = [d for d in (user_dir, *user_dir.parents) if not os.path.lexists(d)]
    try:
        with locked(target):
            return _validated_write(target, _csv_text(_merged_rows(target, row)))
    except OSError as exc:
        raise WattgpuError(
            f"--user-catalog {user_dir}: cannot lock or write ({exc.strerror or exc}) — "
            "check the directory"
        ) from None
    finally:
        if new_dirs and not target.exists():  # failed: remove the lock file and new directories
            with contextlib.suppress(OSError):
                target.with_name(f".{target.name}.lock").unlink()
            for directory in new_dirs:  # deepest first; a directory something else uses stays
                with contextlib.suppress(OSError):
                    directory.rmdir()


def _validated_write(target: Path, text: str) -> Path:
    """Write *text* to *target* once the user catalog it makes passes the catalog validator."""
    with tempfile.TemporaryDirectory(prefix="wattgpu-import-") as staging:
        (Path(staging) / "llms.csv").write_text(text, encoding="utf-8")
        try:
            load_catalog(Path(staging))
        except CatalogError as exc:
            lines = str(exc).replace(str(Path(staging) / "llms.csv"), str(target)).splitlines()
            raise WattgpuError(
                "\n".join(
                    f"the imported row would make the user catalog invalid: {line}"
                    for line in lines
                )
            ) from None
    return write_output(target, text, option="--user-catalog", updates_input=True)
