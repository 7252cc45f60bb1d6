"""AMD MI300X sample (cmontemuino/amd-mi300x-ml-benchmarks) -> canonical measurement table.

Layout ``sample-results/{containerized,logs,monitoring}``; one run = ``{model}_latency_bs{B}_in{I}
_out{O}_{dtype}_mem{U}_{stamp}``: ``containerized/<run>.json`` (vLLM ``benchmark_latency``:
``avg_latency`` s per batch of O output tokens), ``logs/<run>.log`` and
``monitoring/gpu_power_<run>.csv`` (amd-smi, ``timestamp, device, power_watts`` every 5 s, all 8
cards).

- ITL = avg_latency / O (includes the prefill of I tokens -> ``itl_includes_prefill = True``);
  output throughput = B * O / avg_latency; one GPU (TP 1), engine vLLM, fp16.
- Power: the benchmark window is bounded by the vLLM ``INFO MM-DD HH:MM:SS [metrics...]`` lines of
  the run log (UTC, logged every 5 s only while the engine runs); power = mean over the samples of
  the busiest card (highest mean in the window) within [first, last] metrics time. That is 1-2
  samples per ~12 s run, so every row is ``doubtful: low sample count``.
"""

from __future__ import annotations

import csv
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from predictors.core.errors import DataError
from predictors.measurements.schema import (
    CELL_ERRORS,
    conform,
    empty_frame,
    frame_from_rows,
    normalize_precision,
    unreadable_row,
)

SOURCE = "amd-mi300x"
GPU_NAME = "AMD Instinct MI300X"
_RUN = re.compile(
    r"^(?P<model>.+?)_latency_bs(?P<bs>\d+)_in(?P<inp>\d+)_out(?P<out>\d+)_(?P<dtype>[a-z0-9]+)"
    r"_mem(?P<mem>[0-9.]+)_(?P<stamp>\d{8}_\d{6})$"
)
_METRICS = re.compile(r"INFO (\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) \[metrics")
#: The sample's model name -> its Hugging Face id (the log loads Llama-3.1-8B-Instruct).
MODEL_IDS = {"Llama-3.1-8B": "meta-llama/Llama-3.1-8B-Instruct"}


def is_amd_dir(path: Path) -> bool:
    """True when *path* has ``containerized/*.json`` and ``monitoring/gpu_power_*.csv``."""
    return any((path / "containerized").glob("*.json")) and any(
        (path / "monitoring").glob("gpu_power_*.csv")
    )


def read_amd_mi300x(path: Path) -> pl.DataFrame:
    """Read every run of a ``sample-results`` directory."""
    rows: list[dict[str, object]] = []
    for f in sorted((path / "containerized").glob("*.json")):
        try:
            row = _row(f, path)
        except CELL_ERRORS as exc:  # one bad run file never stops the others
            rows.append(unreadable_row(SOURCE, f, "run", exc))
            continue
        if row is not None:
            rows.append(row)
    if not rows:
        return empty_frame()
    return conform(frame_from_rows(rows), origin=path)


def _window(log: Path, year: int) -> tuple[float, float] | None:
    if not log.is_file():
        return None
    stamps = []
    for m in _METRICS.finditer(log.read_text(encoding="utf-8", errors="replace")):
        mo, day, hh, mi, ss = (int(g) for g in m.groups())
        stamps.append(datetime(year, mo, day, hh, mi, ss, tzinfo=UTC).timestamp())
    return (min(stamps), max(stamps)) if stamps else None


def _power(power_csv: Path, window: tuple[float, float]) -> tuple[float, int] | None:
    samples: dict[str, list[float]] = {}
    with power_csv.open(newline="", encoding="utf-8") as fh:
        for rec in csv.DictReader(fh):
            ts, dev, watts = rec.get("timestamp"), rec.get("device"), rec.get("power_watts")
            if not ts or not dev or not watts:
                continue
            if window[0] <= float(ts) <= window[1]:
                samples.setdefault(dev, []).append(float(watts))
    if not samples:
        return None
    busiest = max(samples.values(), key=lambda v: sum(v) / len(v))
    return sum(busiest) / len(busiest), len(busiest)


def _row(result: Path, root: Path) -> dict[str, Any] | None:
    m = _RUN.match(result.stem)
    if m is None:
        return None
    try:
        data = json.loads(result.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{result}: not valid JSON ({exc.msg})") from exc
    if "avg_latency" not in data:
        raise DataError(f"{result}: missing avg_latency")
    lat = float(data["avg_latency"])
    bs, inp, out = int(m["bs"]), float(m["inp"]), float(m["out"])
    window = _window(root / "logs" / f"{result.stem}.log", int(m["stamp"][:4]))
    power_csv = root / "monitoring" / f"gpu_power_{result.stem}.csv"
    pw = _power(power_csv, window) if (window and power_csv.is_file()) else None
    n_samples = pw[1] if pw else 0
    return {
        "source": SOURCE,
        "model": MODEL_IDS.get(m["model"], m["model"]),
        "gpu": GPU_NAME,
        "gpu_count": 1,
        "engine": "vllm",
        "precision": normalize_precision(m["dtype"]),
        "batch_size": float(bs),
        "arrival_rate_rps": None,
        "input_tokens": inp,
        "output_tokens": out,
        "power_w_per_gpu": pw[0] if pw else None,
        "itl_s": lat / out,
        "ttft_s": None,
        "output_throughput_tok_s": bs * out / lat,
        "itl_includes_prefill": True,
        "quality": f"doubtful: low sample count ({n_samples} power samples)",
        "model_raw": m["model"],
        "gpu_raw": GPU_NAME,
        "file": str(result),
        "gpu_hint": "MI300X",
        "task": None,
        "input_tokens_assumed": False,
        "note": f"gpu_memory_utilization={m['mem']}",
    }
