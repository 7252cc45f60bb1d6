"""Watt Counts CSV (the WattGPU paper's measurements) -> canonical measurement table.

Schema (SOURCES.md): ``"", model, gpu_type, lambda_qps, generation_tokens_total,
measurement_duration, gpu_energy, gpu_0_power_draw_watts_{mean,min,max,std},
time_to_first_token_seconds_events, e2e_request_latency_seconds_events,
request_generation_tokens, request_prompt_tokens`` -- the last four are JSON lists per request,
parsed with :func:`json.loads` (never eval). A line is unreadable (dropped with its reason,
naming its line and the file's column) when the lists that are not empty differ in length (one
value per request each), when a list cell is not one flat JSON list of numbers (nested lists too
deep for the decoder included), or when its ``model`` or ``gpu_type`` cell is empty.

- power per GPU = ``gpu_0_power_draw_watts_mean`` (one GPU);
- offline (``lambda_qps`` empty or 0): ITL = measurement_duration / generation_tokens_total,
  ``arrival_rate_rps`` null;
- server (``lambda_qps`` > 0): ITL = mean over requests with >= 2 generated tokens of
  (e2e - ttft) / (tokens - 1), ``arrival_rate_rps = lambda_qps``;
- batch size = estimated mean concurrency by Little's law: lambda x mean e2e latency, with
  lambda = lambda_qps for server rows and (number of requests / measurement_duration) for offline
  rows; when the e2e list is empty, the number of requests (all in flight at once) is used;
- TTFT = mean of the TTFT events; input/output tokens = mean prompt / generation tokens per
  request; output throughput = generation_tokens_total / measurement_duration;
- engine vLLM; precision "auto" (the model's default dtype, resolved in load.py); gpu_count from
  an optional ``gpu_count``/``tensor_parallel_size`` column, else 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from predictors.core.errors import DataError
from predictors.measurements.schema import (
    CELL_ERRORS,
    conform,
    empty_frame,
    frame_from_rows,
    unreadable_row,
)
from predictors.measurements.text_csv import read_text_csv, text_lines

SOURCE = "watt-counts"
REQUIRED = (
    "model",
    "gpu_type",
    "lambda_qps",
    "generation_tokens_total",
    "measurement_duration",
    "gpu_0_power_draw_watts_mean",
    "time_to_first_token_seconds_events",
    "e2e_request_latency_seconds_events",
    "request_generation_tokens",
    "request_prompt_tokens",
)


def is_watt_counts_header(columns: list[str]) -> bool:
    """True when a CSV header has the Watt Counts columns."""
    return set(REQUIRED) <= {c.strip() for c in columns}


def _list(cell: Any, path: Path, line: int, col: str) -> list[float]:
    if cell is None or str(cell).strip() == "":
        return []
    try:
        val = json.loads(str(cell))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: line {line}, column {col}: not a JSON list ({exc.msg})") from exc
    except RecursionError:  # '[' * 1100: Python's JSON decoder recurses once per level
        raise DataError(
            f"{path}: line {line}, column {col}: not a JSON list of numbers (lists nested too "
            "deeply); write one flat list of numbers per request"
        ) from None
    numbers = isinstance(val, list) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in val
    )
    if not numbers:
        raise DataError(f"{path}: line {line}, column {col}: expected a JSON list of numbers")
    return [float(v) for v in val]


def _num(cell: Any, col: str = "") -> float | None:
    """A number cell (None when empty); ValueError naming *col* when it is not a finite
    number."""
    if cell is None or str(cell).strip() == "":
        return None
    try:
        value = float(cell)
    except ValueError:
        raise ValueError(f"{col}: {str(cell)[:40]!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{col}: {str(cell)[:40]!r} is not a finite number")
    return value


def _gpu_count(r: dict[str, Any]) -> int:
    for col in ("gpu_count", "tensor_parallel_size"):
        value = _num(r.get(col), col)
        if value is not None:
            if value < 1 or value != int(value):
                raise ValueError(f"{col}: {r.get(col)!r} is not a whole number of GPUs (>= 1)")
            return int(value)
    return 1


def _same_lengths(lists: dict[str, list[float]]) -> None:
    """DataError unless the per-request lists that are not empty have one value per request
    each (the longer ones were silently cut to the shortest before)."""
    lengths = {name: len(v) for name, v in lists.items() if v}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name} {n}" for name, n in lengths.items())
        raise DataError(f"per-request lists of different lengths ({shown}): one value per request")


def server_itl_s(e2e: list[float], ttft: list[float], tokens: list[float]) -> float | None:
    """Mean over requests with >= 2 tokens of (e2e - ttft) / (tokens - 1); None if none."""
    vals = [(e - t) / (n - 1) for e, t, n in zip(e2e, ttft, tokens, strict=False) if n >= 2]
    return sum(vals) / len(vals) if vals else None


def read_watt_counts(path: Path) -> pl.DataFrame:
    """Read one Watt Counts CSV."""
    raw = read_text_csv(path)
    names = [c.strip() for c in raw.columns]
    twice = [c for i, c in enumerate(names) if c in names[:i]]
    if twice:  # 'model' and ' model '
        raise DataError(
            f"{path}: column {twice[0]!r} appears more than once in the header (with spaces "
            "around it); keep one"
        )
    raw = raw.rename(dict(zip(raw.columns, names, strict=True)))
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise DataError(f"{path}: not a Watt Counts CSV (lacks {', '.join(missing)})")
    rows = [_read_line(r, path, line, problem) for line, r, problem in text_lines(raw)]
    if not rows:
        return empty_frame()
    return conform(frame_from_rows(rows), origin=path)


def _read_line(r: dict[str, Any], path: Path, line: int, problem: str | None) -> dict[str, Any]:
    """The row of one CSV line, or its :func:`unreadable_row` (a bad line, *problem* when it
    could not be read as CSV, never stops the others)."""
    try:
        if problem is not None:
            raise DataError(problem)
        return _row(r, path, line)
    except CELL_ERRORS as exc:
        return unreadable_row(SOURCE, path, f"line {line}", exc, r.get("model"), r.get("gpu_type"))


def _row(r: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    for name in ("model", "gpu_type"):  # named with its line, not later without one
        if r.get(name) is None or str(r[name]).strip() == "":
            raise DataError(f"{name} is empty (required)")
    ttft = _list(
        r["time_to_first_token_seconds_events"], path, line, "time_to_first_token_seconds_events"
    )
    e2e = _list(
        r["e2e_request_latency_seconds_events"], path, line, "e2e_request_latency_seconds_events"
    )
    gen = _list(r["request_generation_tokens"], path, line, "request_generation_tokens")
    prompt = _list(r["request_prompt_tokens"], path, line, "request_prompt_tokens")
    duration = _num(r["measurement_duration"], "measurement_duration")
    gen_total = _num(r["generation_tokens_total"], "generation_tokens_total")
    if not duration or not gen_total or duration < 0 or gen_total < 0:
        raise DataError(
            f"{path}: line {line}: measurement_duration and generation_tokens_total must be > 0"
        )
    if not prompt:
        raise DataError(f"{path}: line {line}: request_prompt_tokens is empty (no input length)")
    if min(prompt) <= 0 or min(gen, default=1.0) < 0:
        raise DataError(f"{path}: line {line}: token counts must be positive")
    _same_lengths({"ttft": ttft, "e2e": e2e, "generation tokens": gen, "prompt tokens": prompt})
    lam = _num(r["lambda_qps"], "lambda_qps")
    if lam is not None and lam < 0:
        raise DataError(f"{path}: line {line}: lambda_qps must be empty, 0 (offline) or > 0")
    server = lam is not None and lam > 0
    n_req = max(len(gen), len(e2e), len(prompt))
    mean_e2e = sum(e2e) / len(e2e) if e2e else None
    if server:
        itl = server_itl_s(e2e, ttft, gen)
        rate = lam
    else:
        itl = duration / gen_total
        rate = n_req / duration if n_req else None
    if mean_e2e is not None and rate is not None:
        batch = rate * mean_e2e
    else:
        batch = float(max(n_req, 1))
    n_gpu = _gpu_count(r)
    return {
        "source": SOURCE,
        "model": r["model"],
        "gpu": r["gpu_type"],
        "gpu_count": n_gpu,
        "engine": "vllm",
        "precision": "auto",
        "batch_size": batch,
        "arrival_rate_rps": lam if server else None,
        "input_tokens": sum(prompt) / len(prompt),
        "output_tokens": sum(gen) / len(gen) if gen else gen_total / max(n_req, 1),
        "power_w_per_gpu": _num(r["gpu_0_power_draw_watts_mean"], "gpu_0_power_draw_watts_mean"),
        "itl_s": itl,
        "ttft_s": sum(ttft) / len(ttft) if ttft else None,
        "output_throughput_tok_s": gen_total / duration,
        "itl_includes_prefill": False,
        "quality": "ok",
        "model_raw": r["model"],
        "gpu_raw": r["gpu_type"],
        "file": str(path),
        "gpu_hint": None,
        "task": "server" if server else "offline",
        "input_tokens_assumed": False,
        "note": None,
    }
