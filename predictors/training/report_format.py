"""Markdown pieces shared by the generated accuracy reports: split titles and order, number
formatting, tables."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

SPLIT_TITLES = {
    "cv5": "5-fold CV",
    "logo": "leave-one-GPU-out (LOGO)",
    "logo-nvidia-dc": "LOGO, NVIDIA datacenter GPUs only",
    "logo-nvidia-dc-seen-protocol": "LOGO, NVIDIA DC, source also measured on another GPU",
    "lolo": "leave-LLMs-out (LOLO, 10 folds)",
    "loao": "leave-one-architecture-out (LOAO)",
    "newer2022": "newer than training (train < 2022, test ≥ 2022)",
    "newer2025": "newer than training (train < 2025, test ≥ 2025)",
}
SPLIT_ORDER = list(SPLIT_TITLES)


def fmt(value: Any, digits: int = 1) -> str:
    """*value* with *digits* decimals ('–' for None or a non-finite float)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, float):
        text = f"{value:.{digits}f}"
        # a value that rounds to zero is written without a sign ("-0.000" for a tau of -1e-17)
        return text[1:] if text.startswith("-") and float(text) == 0 else text
    return str(value)


def table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table."""
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def split_key(split: str) -> int:
    """Position of *split* in :data:`SPLIT_ORDER` (unknown splits last)."""
    return SPLIT_ORDER.index(split) if split in SPLIT_ORDER else len(SPLIT_ORDER)


def sorted_by_split(frame: pl.DataFrame) -> pl.DataFrame:
    """*frame* sorted by target, then split in report order (column ``_k``)."""
    return frame.with_columns(
        pl.col("split").map_elements(split_key, return_dtype=pl.Int64).alias("_k")
    ).sort(["target", "_k"])
