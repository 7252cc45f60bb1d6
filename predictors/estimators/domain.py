"""The training domain of the shipped predictors: is a feature row inside what they were
trained on?

The model card's ``domain`` records the precisions, engines, GPU vendors and architectures with
training rows, whether mixture-of-experts models were trained on, the trained range of each
numeric feature and the measured GPUs. :func:`domain_reasons` says per feature row why it lies
outside ('' when inside); :func:`gpu_measured` says whether its GPU had training rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import polars as pl

from predictors.catalog.row_checks import joined_messages

#: Categorical feature columns checked against the card: (column, domain key, shown as).
CATEGORIES: tuple[tuple[str, str, str], ...] = (
    ("precision", "precisions", "precision"),
    ("engine", "engines", "engine"),
    ("vendor", "vendors", "GPU vendor"),
    ("architecture", "architectures", "GPU architecture"),
)


def _range_check(col: str, lo: float, hi: float) -> pl.Expr:
    """A message where feature *col* lies outside [lo, hi], shown in natural units."""
    value = pl.col(col)
    shown = value.exp() if col.startswith("log_") else value
    name = col.removeprefix("log_")
    lo_s, hi_s = (math.exp(lo), math.exp(hi)) if col.startswith("log_") else (lo, hi)
    scale = 1e-9 if name == "params" else 1.0
    unit = " B" if name == "params" else ""
    outside = ~value.is_between(lo, hi).fill_null(False)
    return (
        pl.when(outside.not_())
        .then(pl.lit(""))
        .otherwise(
            pl.format(  # formatted where outside only (null elsewhere: no string work)
                f"{name} {{}}{unit} outside the trained range "
                f"[{lo_s * scale:.4g}, {hi_s * scale:.4g}]{unit}",
                pl.when(outside).then((shown * scale).round_sig_figs(4)),
            )
        )
    )


def _category_check(feats: pl.DataFrame, col: str, trained: list[str], what: str) -> pl.Expr:
    """A message where categorical feature *col* has no training rows, decided once per
    distinct value (null where the value is missing)."""
    values = feats[col].cast(pl.String).unique().drop_nulls().to_list()
    seen = set(trained)
    lines = {v: "" if v in seen else f"{what} '{v}' has no training rows" for v in values}
    return pl.col(col).cast(pl.String).replace_strict(lines, default=None, return_dtype=pl.String)


def domain_reasons(card: Mapping[str, Any], feats: pl.DataFrame) -> list[str]:
    """Why each row of *feats* lies outside the training domain of *card* ('' when inside),
    '; '-joined."""
    dom = card.get("domain", {})
    if feats.is_empty():
        return []
    if not dom:
        return ["the model card records no training domain"] * feats.height
    checks: list[pl.Expr] = [
        _category_check(feats, col, dom[key], what) for col, key, what in CATEGORIES
    ]
    if not dom["moe_trained"]:
        checks.append(
            pl.when(pl.col("is_moe").fill_null(False))
            .then(pl.lit("mixture-of-experts LLMs have no training rows"))
            .otherwise(pl.lit(""))
        )
    checks.extend(_range_check(col, lo, hi) for col, (lo, hi) in dom["ranges"].items())
    return feats.select(joined_messages(checks)).to_series().to_list()


def gpu_measured(card: Mapping[str, Any], feats: pl.DataFrame) -> list[bool]:
    """True where the row's GPU had training rows in *card* (its predictions are not
    extrapolated)."""
    measured = card.get("domain", {}).get("gpus", [])
    return feats.select(pl.col("gpu").is_in(measured).fill_null(False)).to_series().to_list()
