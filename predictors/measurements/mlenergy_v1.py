"""ML.ENERGY v1 (2023 leaderboard) legacy CSVs -> canonical measurement table.

Files ``{GPU}_{task}_benchmark.csv`` with columns ``model, throughput (tok/s), response_length
(tokens), latency (s per response), energy (J per response)``. Physics (SOURCES.md):

- power per GPU = energy / latency (ratio of means), one GPU, batch size 1;
- per-token latency = latency / response_length, which includes the prefill, so
  ``itl_includes_prefill = True``;
- engine PyTorch + FastChat (``hf-transformers``), fp16;
- the four task files per GPU (chat, chat-concise, instruct, instruct-concise) are kept apart in
  the ``task`` column;
- a line with a cell that is not a number, or an empty ``model`` or ``response_length`` cell, is
  unreadable (dropped with its line and the column named); the other lines are read.

Input length is not in the files: the prompts are ShareGPT first turns (plus the task's system
prompt); we assume :data:`ASSUMED_INPUT_TOKENS` tokens and set ``input_tokens_assumed = True``.

GPU variants (SOURCES.md): "A100" is the A100 PCIe 80 GB (Chameleon ``gpu_a100_pcie``); "V100" is
unconfirmed -- CloudLab ``r7525`` nodes, assumed a V100S/V100 PCIe 32 GB. These are given as
``gpu_hint`` candidates ("|"-separated, tried in order before the raw name).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from predictors.core.errors import DataError
from predictors.measurements.schema import UNREADABLE, conform, empty_frame

SOURCE = "mlenergy-v1"
#: Assumed mean prompt length (tokens) of the ShareGPT prompts incl. system prompt.
ASSUMED_INPUT_TOKENS = 250.0
HEADER = ["model", "throughput", "response_length", "latency", "energy"]
#: Number columns a row cannot do without (the output length); the others may be empty.
REQUIRED_NUMBERS = ("response_length",)
_NAME = re.compile(r"^(?P<gpu>[^_]+)_(?P<task>[^_]+)_benchmark\.csv$")
GPU_HINTS = {
    "A100": "A100 PCIe 80GB|A100-PCIe-80GB|A100 80GB PCIe",
    "V100": "V100S PCIe 32GB|V100 PCIe 32GB|V100-PCIe-32GB",
}


def is_v1_file(path: Path) -> bool:
    """True when *path* is named like a v1 task file and starts with the v1 header."""
    if not _NAME.match(path.name) or not path.is_file():
        return False
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        first = fh.readline().strip()
    return [c.strip() for c in first.split(",")] == HEADER


def read_mlenergy_v1(path: Path) -> pl.DataFrame:
    """Read one v1 task CSV, or every ``*_benchmark.csv`` in a directory."""
    if path.is_dir():
        files = sorted(f for f in path.glob("*_benchmark.csv") if f.is_file())
    else:
        files = [path]
    frames = [_read_file(f) for f in files if is_v1_file(f)]
    if not frames:
        return empty_frame()
    return conform(pl.concat(frames), origin=path)


def _read_file(path: Path) -> pl.DataFrame:
    m = _NAME.match(path.name)
    if m is None:  # pragma: no cover - guarded by is_v1_file
        raise DataError(f"{path}: file name is not {{GPU}}_{{task}}_benchmark.csv")
    gpu, task = m.group("gpu"), m.group("task")
    try:
        text = pl.read_csv(path, infer_schema_length=0)
    except (pl.exceptions.PolarsError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(
            f"{path}: not a readable ML.ENERGY v1 table ({first}) — fix or remove the file"
        ) from None
    numbers = [c for c in HEADER[1:] if c in text.columns]
    raw = text.with_columns(pl.col(c).cast(pl.Float64, strict=False) for c in numbers)
    # a cell that is not a number, or an empty required one, makes its line unreadable, never
    # the file (the first problem in column order is named)
    problem = pl.lit(None, dtype=pl.String)
    for c in reversed(numbers):
        cell = text[c].str.strip_chars()
        bad = raw[c].is_null() & cell.is_not_null() & (cell != "")
        problem = (
            pl.when(pl.Series(bad))
            .then(pl.lit(f"{c}: ") + pl.Series(cell).str.slice(0, 40) + " is not a number")
            .otherwise(problem)
        )
        if c in REQUIRED_NUMBERS:
            empty = cell.fill_null("") == ""
            problem = (
                pl.when(pl.Series(empty))
                .then(pl.lit(f"{c} is empty (required)"))
                .otherwise(problem)
            )
    if "model" in text.columns:  # named with its line, not later without one
        empty = text["model"].str.strip_chars().fill_null("") == ""
        problem = (
            pl.when(pl.Series(empty)).then(pl.lit("model is empty (required)")).otherwise(problem)
        )
        raw = raw.with_columns(
            pl.col("model").fill_null("?")
        )  # the placeholder unreadable rows use
    line = pl.int_range(2, raw.height + 2).cast(pl.String)
    quality = (
        pl.when(problem.is_not_null())
        .then(pl.lit(f"{UNREADABLE}{path.name} line ") + line + ": " + problem)
        .otherwise(pl.lit("ok"))
    )
    return raw.select(
        pl.lit(SOURCE).alias("source"),
        pl.col("model").alias("model"),
        pl.lit(gpu).alias("gpu"),
        pl.lit(1).alias("gpu_count"),
        pl.lit("hf-transformers").alias("engine"),
        pl.lit("fp16").alias("precision"),
        pl.lit(1.0).alias("batch_size"),
        pl.lit(None, dtype=pl.Float64).alias("arrival_rate_rps"),
        pl.lit(ASSUMED_INPUT_TOKENS).alias("input_tokens"),
        pl.col("response_length").alias("output_tokens"),
        (pl.col("energy") / pl.col("latency")).alias("power_w_per_gpu"),
        (pl.col("latency") / pl.col("response_length")).alias("itl_s"),
        pl.lit(None, dtype=pl.Float64).alias("ttft_s"),
        pl.col("throughput").alias("output_throughput_tok_s"),
        pl.lit(True).alias("itl_includes_prefill"),
        quality.alias("quality"),
        pl.col("model").alias("model_raw"),
        pl.lit(gpu).alias("gpu_raw"),
        pl.lit(str(path)).alias("file"),
        pl.lit(GPU_HINTS.get(gpu), dtype=pl.String).alias("gpu_hint"),
        pl.lit(task).alias("task"),
        pl.lit(True).alias("input_tokens_assumed"),
    )
