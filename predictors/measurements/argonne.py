"""Argonne LLM-Inference-Bench CSVs -> canonical measurement table.

Parsing: the CSVs contain repeated header lines, blank lines and, in one power file, blocks with a
*different* header (other column order, or ``Model Name, throughput, latency, Avg Power, ...``).
:func:`read_blocks` treats a line without a numeric cell that starts like a header
(:data:`HEADER_FIRST_CELLS`) as a new header and maps the following rows through it. Any other
line that cannot be read (a failed run's line without numbers, a row without
``Hardware``/``Framework``, a row before any header) is kept in ``bad`` of :func:`read_blocks`'
result with its line number and counted as an unreadable row of the table (dropped with its
reason by load.py), never skipped silently: a failed run's line once became the header of every
row after it (fuzz round 17). A UTF-8 byte-order
mark is accepted; every ``*.csv`` file of an Argonne folder must be an Argonne table -- any other
raises :class:`DataError` naming it and the expected header (never a silent skip).

Physics (SOURCES.md): input = output length L; ``Latency`` is the whole request, so per-token
latency = latency / L *includes the prefill* (``itl_includes_prefill = True``); ``Throughput``
counts input + output tokens (2 L bs / latency) so output throughput = L bs / latency. llama.cpp
rows with batch > 1 do not follow that formula -> ``doubtful``.

Files and double counting (checked on the published copy):

- ``Plots_All_results.csv`` -- the main table. Exact repeats of a configuration are averaged.
- ``power_results_4211f5d_*`` -- avg_power in **mW** (-> W); its latencies equal the main table's
  for the same configuration, so these rows *replace* the matching main rows (power added).
- ``power_results_ae7e7a4_*`` (older commit, deleted upstream) -- separate runs; only
  configurations absent from the 4211f5d file are used (mW -> W).
- ``Plots_Fig_10_*`` -- avg_power above board TDP (wider measurement scope): every row is
  ``doubtful``; the DeciLM series is in mW (values > 5,000 are divided by 1,000); multi-device
  values are taken as totals and divided by the device count; rows whose latency equals the main
  table's keep only their power (ITL/throughput nulled, no double counting).
- ``Plots_Fig_3_*`` -- quantisation runs (distinct runs): weight precision from the
  ``kv_cache_dtype`` label, the KV-cache dtype in ``note``.
- ``Plots_Fig_5_a_*`` -- TP/PP runs: rows identical to the main table are skipped, and the
  1-device baselines listed under both the TP and the PP label are kept once.
- ``Plots_Fig_18_*`` (SN40L) -- identical to main-table rows: skipped.
- ``Plots_Fig_2_a_*`` -- Gaudi2 KV sweep: "With KV Cache" rows duplicate the main table and
  "Without KV Cache" runs recompute attention (not representative): skipped.
- ``Fig_22_*`` -- TTFT (output length 1, batch 16, input 1024): attached as ``ttft_s`` to the
  rows of the same configuration (input = output = 1024); ``Plots_Fig_21_*`` repeats it: skipped.

GPU hints (assumptions, SOURCES.md): A100 = SXM4 40 GB (Polaris), H100 = SXM 80 GB,
Intel "PVC" = "Max 1550".
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from predictors.core.errors import DataError
from predictors.measurements.schema import (
    CELL_ERRORS,
    conform,
    empty_frame,
    frame_from_rows,
    normalize_engine,
    unreadable_row,
)

SOURCE = "argonne"
GPU_HINTS = {
    "Nvidia A100 GPU": "A100 SXM4 40GB|A100-SXM4-40GB",
    "Nvidia H100 GPU": "H100 SXM5 80GB|H100-SXM5-80GB|H100 SXM",
    "Intel PVC GPU": "Intel Data Center GPU Max 1550|Max 1550",
    "Intel Max 1550": "Intel Data Center GPU Max 1550|Max 1550",
}
_MW_THRESHOLD = 5000.0
_KEY = ("hw", "n", "fw", "model", "L", "bs")
HEADER_START = "Hardware,Num of Hardware,"
#: The folder name of the source in the shared data layout.
FOLDER = "argonne-llm-inference-bench"


#: First cells of the header lines of the source's CSVs (every header seen in its files).
HEADER_FIRST_CELLS = frozenset({"Hardware", "Model Name"})


@dataclass
class Blocks:
    """Rows of one CSV as dicts keyed by their block's header, plus the lines that cannot be
    read (``bad``: line number, problem, the line's cells; ``header``: the block header in force
    while reading)."""

    rows: list[dict[str, str]] = field(default_factory=list)
    bad: list[tuple[int, str, list[str]]] = field(default_factory=list)
    header: list[str] | None = None
    line: int = 0

    @property
    def unattributed(self) -> int:
        """Lines that could not be read."""
        return len(self.bad)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def is_argonne_file(path: Path) -> bool:
    """True when *path* is a file whose first non-blank line is an Argonne header
    (``Hardware,Num of Hardware,...``); a UTF-8 byte-order mark is allowed."""
    if not path.is_file():
        return False
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        for line in fh:
            if line.strip():
                return line.startswith(HEADER_START)
    return False


def not_argonne_error(path: Path) -> DataError:
    """The error for a CSV inside an Argonne folder that is not an Argonne table."""
    return DataError(
        f"{path}: not an Argonne LLM-Inference-Bench CSV (the first non-blank line must start "
        f"with '{HEADER_START}'); fix: repair its header or move it out of {path.parent}"
    )


#: Key under which :func:`read_blocks` keeps a data row's line number (no CSV header has it).
_LINE_KEY = "\x00line"


def read_blocks(path: Path) -> Blocks:
    """Parse a CSV with repeated (possibly different) header lines and blank lines."""
    out = Blocks()
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            for cells in csv.reader(fh):
                _add_line(out, [c.strip() for c in cells])
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path}: not UTF-8 text ({exc.reason}); fix: save the CSV as UTF-8"
        ) from exc
    return out


def _add_line(out: Blocks, cells: list[str]) -> None:
    """One CSV line: a header starts a block, a data line becomes a row, any other is bad."""
    out.line += 1
    if not any(cells):
        return
    if not any(_is_number(c) for c in cells):
        if cells[0] in HEADER_FIRST_CELLS:
            out.header = cells
        else:
            out.bad.append((out.line, "no number in the line (a failed run?)", cells))
        return
    if out.header is None:
        out.bad.append((out.line, "a data line before any header line", cells))
        return
    row = {h: v for h, v in zip(out.header, cells, strict=False) if h}
    if not row.get("Hardware") or not row.get("Framework"):
        out.bad.append((out.line, "no Hardware or Framework cell", cells))
        return
    out.rows.append(row | {_LINE_KEY: str(out.line)})


def _f(row: dict[str, str], *names: str) -> float | None:
    for n in names:
        v = row.get(n, "")
        if v != "" and _is_number(v):
            return float(v)
    return None


def _cell(row: dict[str, str], name: str, file: Path) -> str:
    value = (row.get(name) or "").strip()
    if not value:
        raise DataError(f"{file}: a row of a block has no {name!r} — fill in the cell")
    return value


def _count(row: dict[str, str], file: Path) -> int:
    raw = _cell(row, "Num of Hardware", file)
    n = float(raw) if _is_number(raw) else math.nan
    if not math.isfinite(n) or n < 1 or n != int(n):
        raise DataError(
            f"{file}: Num of Hardware {raw!r} is not a whole number of at least 1 — fix the cell"
        )
    return int(n)


def _record(row: dict[str, str], file: Path) -> dict[str, Any]:
    L = _f(row, "Input Output Length", "Input Length")
    return {
        "hw": _cell(row, "Hardware", file),
        "n": _count(row, file),
        "fw": _cell(row, "Framework", file),
        "model": _cell(row, "Model", file),
        "L": L,
        "bs": _f(row, "Batch Size"),
        "latency": _f(row, "Latency", "latency"),
        "power": _f(row, "avg_power"),
        "file": str(file),
        "precision": "fp16",
        "note": None,
        "quality": "ok",
        "ttft": _f(row, "TTFT Latency"),
        "label": row.get("kv_cache_dtype", ""),
        "parallel": row.get("Parallelism Type"),
    }


def _key(r: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(r[k] for k in _KEY)


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def read_argonne(path: Path) -> pl.DataFrame:
    """Read the Argonne CSVs of a directory (or one file) with the dedup rules above.

    Every ``*.csv`` file of the directory must be an Argonne table (a UTF-8 byte-order mark is
    allowed): any other raises :class:`DataError` naming it, never a silent skip. Folders
    named ``*.csv`` are not files and are ignored."""
    files = sorted(f for f in path.glob("*.csv") if f.is_file()) if path.is_dir() else [path]
    for f in files:
        if not is_argonne_file(f):
            raise not_argonne_error(f)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    unreadable: list[dict[str, Any]] = []
    for f in files:
        kind = _kind(f.name)
        if kind is None:
            continue
        blocks = read_blocks(f)
        records = by_kind.setdefault(kind, [])
        for r in blocks.rows:
            try:
                record = _record(r, f)
                normalize_engine(record["fw"])  # an unknown engine is this line's problem
            except CELL_ERRORS as exc:
                names = (r.get("Model"), r.get("Hardware"))
                where = f"line {r.get(_LINE_KEY, '?')}"
                unreadable.append(unreadable_row(SOURCE, f, where, exc, *names))
                continue
            records.append(record)
        for line, problem, cells in blocks.bad:
            names = (cells[3] if len(cells) > 3 else None, cells[0] or None)
            unreadable.append(
                unreadable_row(SOURCE, f, f"line {line}", ValueError(problem), *names)
            )
    rows = [_canonical(r) for r in _combine(by_kind)] + unreadable
    if not rows:
        return empty_frame()
    return conform(frame_from_rows(rows), origin=path)


def _kind(name: str) -> str | None:
    rules = [
        ("Fig_2_a", None),
        ("Fig_21", None),
        ("Fig_22", "ttft"),
        ("Fig_10", "fig10"),
        ("Fig_3_", "quant"),
        ("Fig_5_a", "tppp"),
        ("Fig_18", "dup"),
        ("power_results_4211f5d", "power_new"),
        ("power_results", "power_old"),
        ("All_results", "main"),
    ]
    for pat, kind in rules:
        if pat in name:
            return kind
    return "main" if name.endswith(".csv") else None


def _combine(by_kind: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    main = _average_repeats(by_kind.get("main", []))
    main_by_key: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in main:
        main_by_key.setdefault(_key(r), []).append(r)

    def in_main(r: dict[str, Any]) -> dict[str, Any] | None:
        same = (m for m in main_by_key.get(_key(r), []) if _same(m["latency"], r["latency"]))
        return next(same, None)

    extra: list[dict[str, Any]] = []
    new_power = by_kind.get("power_new", [])
    new_keys = {_key(r) for r in new_power}
    old_power = [r for r in by_kind.get("power_old", []) if _key(r) not in new_keys]
    for r in new_power + old_power:
        r["power"] = r["power"] / 1000.0 if r["power"] is not None else None
        m = in_main(r)
        if m is not None:
            m["drop"] = True
        extra.append(r)
    for r in by_kind.get("fig10", []):
        p = r["power"]
        if p is not None:
            p = p / 1000.0 if p > _MW_THRESHOLD else p
            r["power"] = p / r["n"]
        r["quality"] = "doubtful: Fig_10 avg_power exceeds board TDP (wider measurement scope)"
        if in_main(r) is not None:
            r["latency_dup"] = True
        extra.append(r)
    for r in by_kind.get("quant", []):
        w, kv = _parse_quant(r["label"])
        r["precision"], r["note"] = w, f"kv_cache_dtype={kv}"
        extra.append(r)
    seen: set[tuple[Any, ...]] = set()
    for r in by_kind.get("tppp", []) + by_kind.get("dup", []):
        # Fig_5_a lists each 1-device baseline under both the TP and the PP label: keep one
        ident = (*_key(r), r["latency"])
        if in_main(r) is None and ident not in seen:
            seen.add(ident)
            r["note"] = f"parallelism={r['parallel']}" if r["parallel"] else None
            extra.append(r)
    rows = [r for r in main if not r.get("drop")] + extra
    _attach_ttft(rows, by_kind.get("ttft", []))
    return rows


def _parse_quant(label: str) -> tuple[str, str]:
    """``"Weight = fp8, KV Cache = fp8"`` -> ("fp8", "fp8"); unlabeled rows are fp16."""
    m = re.search(r"Weight\s*=\s*(\w+).*KV Cache\s*=\s*(\w+)", label)
    return (m.group(1), m.group(2)) if m else ("fp16", "fp16")


def _average_repeats(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(_key(r), []).append(r)
    out = []
    for rs in groups.values():
        r = dict(rs[0])
        lats = [x["latency"] for x in rs if x["latency"] is not None]
        r["latency"] = sum(lats) / len(lats) if lats else None
        if len(rs) > 1:
            r["note"] = f"mean of {len(rs)} repeated runs"
        out.append(r)
    return out


def _attach_ttft(rows: list[dict[str, Any]], ttft_rows: list[dict[str, Any]]) -> None:
    for t in ttft_rows:
        lat = t.get("ttft")
        matched = False
        for r in rows:
            if _key(r) == _key(t) and not r.get("label"):  # not the quantised runs
                r["ttft"] = lat
                matched = True
        if not matched:
            t["latency"] = None
            rows.append(t)


def _canonical(r: dict[str, Any]) -> dict[str, Any]:
    L, bs, lat = r["L"], r["bs"], r["latency"]
    engine = normalize_engine(r["fw"])
    itl = lat / L if (lat is not None and L and not r.get("latency_dup")) else None
    tput = L * bs / lat if (itl is not None and bs) else None
    quality = r["quality"]
    if engine == "llama.cpp" and bs is not None and bs > 1 and quality == "ok":
        quality = "doubtful: llama.cpp with batch > 1 does not follow latency/L"
    return {
        "source": SOURCE,
        "model": r["model"],
        "gpu": r["hw"],
        "gpu_count": r["n"],
        "engine": engine,
        "precision": r["precision"],
        "batch_size": bs,
        "arrival_rate_rps": None,
        "input_tokens": L,
        "output_tokens": L,
        "power_w_per_gpu": r["power"],
        "itl_s": itl,
        "ttft_s": r["ttft"],
        "output_throughput_tok_s": tput,
        "itl_includes_prefill": True,
        "quality": quality,
        "model_raw": r["model"],
        "gpu_raw": r["hw"],
        "file": r["file"],
        "gpu_hint": GPU_HINTS.get(r["hw"]),
        "task": None,
        "input_tokens_assumed": False,
        "note": r["note"],
    }
