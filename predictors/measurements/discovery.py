"""Find the measurement files of a data directory: which adapter reads which file or folder.

:func:`discover` finds every supported format under a data directory -- by the shared layout's
folder names and by sniffing CSV headers, so a Watt Counts CSV anywhere is picked up -- walking
linked folders once each (never a link back above the data) and reading a file reached through
several paths once. Files that no format recognises are left alone, except a ``.csv`` inside an
Argonne folder (:mod:`predictors.measurements.load` states the rules).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from predictors.core.errors import DataError
from predictors.measurements.aiconfigurator import is_aiconfigurator_header
from predictors.measurements.amd_mi300x import is_amd_dir
from predictors.measurements.argonne import FOLDER as ARGONNE_FOLDER
from predictors.measurements.argonne import is_argonne_file, not_argonne_error
from predictors.measurements.mlenergy_v1 import is_v1_file
from predictors.measurements.mlenergy_v2 import FILE_PATTERN as V2_FILE
from predictors.measurements.mlenergy_v3 import is_v3_dir
from predictors.measurements.text_csv import text_problem
from predictors.measurements.watt_counts import is_watt_counts_header


@dataclass(frozen=True)
class SourceFile:
    """One adapter call: a format name and the file or directory it reads."""

    format: str
    path: Path


def _first_line(path: Path) -> str:
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        for line in fh:
            if line.strip():
                return line.strip()
    return ""


def _header_format(line: str) -> str | None:
    cols = [c.strip().strip('"') for c in line.split(",")]
    if is_aiconfigurator_header(cols):
        return "aiconfigurator"
    if is_watt_counts_header(cols):
        return "watt_counts"
    return None


#: Byte-order marks of the wide encodings, the four-byte ones first (``FF FE 00 00``, UTF-32
#: little-endian, starts with UTF-16 little-endian's ``FF FE``).
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def _wide_encoding(path: Path) -> str | None:
    """``UTF-16`` or ``UTF-32`` when *path* starts with that encoding's byte-order mark and holds
    a line that is not blank, else None."""
    with contextlib.suppress(OSError), path.open("rb") as fh:
        head = fh.read(65536)
        for bom, name in _WIDE_BOMS:
            if head.startswith(bom):
                text = head[: len(head) // 4 * 4] if name == "UTF-32" else head
                return name if text.decode(name.lower(), errors="replace").strip() else None
    return None


def _csv_format(f: Path) -> str | None:
    """The format a CSV's name and header identify, or None. A CSV saved as UTF-16 or UTF-32 is
    an error naming the encoding (read as UTF-8 its header would match no format), and so is a
    recognised one whose lines end with a bare carriage return (read as one line)."""
    wide = _wide_encoding(f)
    if wide:
        raise DataError(
            f"{f}: the file is {wide} encoded; save it as UTF-8 (e.g. iconv -f {wide} -t UTF-8)"
        )
    if is_v1_file(f):
        fmt: str | None = "mlenergy_v1"
    elif is_argonne_file(f):
        fmt = "argonne"
    else:
        fmt = _header_format(_first_line(f))
    refused = text_problem(f) if fmt is not None else None
    if refused is not None:
        raise refused
    return fmt


def _tree(data_dir: Path) -> tuple[list[Path], list[Path]]:
    """The directories (*data_dir* first) and files under *data_dir*, sorted, following
    symbolic links to directories once each (a link loop is not walked twice) and reading a
    file reached through several paths (a symbolic or hard link beside its target) once: by its
    own path where it has one, else by the first link's (hard links: the first path in sorted
    order). A link to *data_dir* or a directory above it is not
    followed."""
    dirs: list[Path] = []
    seen: set[str] = set()
    root = os.path.realpath(data_dir)
    stack = [data_dir]
    while stack:
        d = stack.pop()
        real = os.path.realpath(d)
        # a link back to the directory or one above it would read what lies beside it
        if real in seen or root.startswith(real.rstrip(os.sep) + os.sep):
            continue
        seen.add(real)
        dirs.append(d)
        with contextlib.suppress(OSError):
            stack.extend(p for p in d.iterdir() if p.is_dir())
    by_target: dict[tuple[int, int] | str, Path] = {}
    for d in sorted(dirs):
        with contextlib.suppress(OSError):
            for f in sorted(d.iterdir()):
                if not f.is_file():
                    continue
                try:  # one file whatever its names: symbolic and hard links alike
                    st = f.stat()
                    target: tuple[int, int] | str = (st.st_dev, st.st_ino)
                except OSError:
                    target = os.path.realpath(f)
                kept = by_target.get(target)
                if kept is None or (kept.is_symlink() and not f.is_symlink()):
                    by_target[target] = f
    return sorted(dirs), sorted(by_target.values())


def discover(data_dir: Path) -> list[SourceFile]:
    """Every adapter input under *data_dir*, in a deterministic order."""
    if not data_dir.is_dir():
        raise DataError(f"{data_dir}: data directory not found (pass --data DIR)")
    found: list[SourceFile] = []
    dirs_seen: set[tuple[str, Path]] = set()
    claimed: list[Path] = []
    unknown_csv: list[Path] = []

    def add_dir(fmt: str, d: Path) -> None:
        if (fmt, d) not in dirs_seen:
            dirs_seen.add((fmt, d))
            found.append(SourceFile(fmt, d))

    dirs, files = _tree(data_dir)
    for d in dirs:
        if is_v3_dir(d):
            add_dir("mlenergy_v3", d)
            claimed.append(d)
        elif is_amd_dir(d):
            add_dir("amd_mi300x", d)
            claimed.append(d)
    for f in files:
        if any(c in f.parents for c in claimed):
            continue
        if V2_FILE.match(f.name):
            root = f.parents[4] if len(f.relative_to(data_dir).parts) >= 5 else f.parent
            add_dir("mlenergy_v2", root)
        elif f.suffix.lower() == ".csv":
            fmt = _csv_format(f)
            if fmt in ("mlenergy_v1", "argonne"):
                add_dir(fmt, f.parent)
            elif fmt is not None:
                found.append(SourceFile(fmt, f))
            else:
                unknown_csv.append(f)
    argonne_dirs = {s.path for s in found if s.format == "argonne"}
    for f in unknown_csv:
        if f.parent in argonne_dirs or f.parent.name == ARGONNE_FOLDER:
            raise not_argonne_error(f)
    return sorted(found, key=lambda s: (s.format, str(s.path)))
