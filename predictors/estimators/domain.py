"""The training domain of the shipped predictors: is a feature row inside what they were
trained on?

The model card's ``domain`` records the precisions, engines, GPU vendors and architectures with
training rows, whether mixture-of-experts models were trained on, the trained range of each
numeric feature and the measured GPUs. :func:`domain_reasons` says per feature row why it lies
outside ('' when inside); :func:`gpu_measured` says whether its GPU had training rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from predictors.catalog.row_checks import Check, failing_lines
from predictors.catalog.validity import DEFAULT_NODE_GPUS
from predictors.estimators.layout_comm import (
    DEFAULT_SCALE_OUT_GBIT_S,
    DEFAULT_SCALE_OUT_LATENCY_US,
)
from predictors.estimators.step import DEFAULT_INTERCONNECT_GB_S

#: Categorical feature columns checked against the card: (column, domain key, shown as).
CATEGORIES: tuple[tuple[str, str, str], ...] = (
    ("precision", "precisions", "precision"),
    ("engine", "engines", "engine"),
    ("vendor", "vendors", "GPU vendor"),
    ("architecture", "architectures", "GPU architecture"),
)


def _range_check(col: str, lo: float, hi: float) -> Check:
    """A message where feature *col* lies outside [lo, hi], shown in natural units."""
    value = pl.col(col)
    shown = value.exp() if col.startswith("log_") else value
    name = col.removeprefix("log_")
    lo_s, hi_s = (math.exp(lo), math.exp(hi)) if col.startswith("log_") else (lo, hi)
    scale = 1e-9 if name == "params" else 1.0
    unit = " B" if name == "params" else ""
    return Check(
        ~value.is_between(lo, hi).fill_null(False),
        pl.format(
            f"{name} {{}}{unit} outside the trained range "
            f"[{lo_s * scale:.6g}, {hi_s * scale:.6g}]{unit}",
            (shown * scale).round_sig_figs(6),  # 4 made 18,023 read 18,020, inside the range
        ),
    )


def _category_check(feats: pl.DataFrame, col: str, trained: list[str], what: str) -> Check:
    """A message where categorical feature *col* has no training rows, decided once per
    distinct value (a missing value passes)."""
    values = feats[col].cast(pl.String).unique().drop_nulls().to_list()
    seen = set(trained)
    unseen = [v for v in values if v not in seen]
    lines = {v: f"{what} '{v}' has no training rows" for v in unseen}
    value = pl.col(col).cast(pl.String)
    return Check(
        value.is_in(unseen).fill_null(False),
        value.replace_strict(lines, default=None, return_dtype=pl.String),
    )


#: GPU specs checked against the measured GPUs' range: (column, shown as, unit).
GPU_SPECS: tuple[tuple[str, str, str], ...] = (
    ("memory_bandwidth_gb_s", "memory bandwidth", "GB/s"),
    ("fp16_tflops_dense", "16-bit dense compute", "TFLOPS"),
    ("memory_gb", "memory", "GB"),
    ("tdp_w", "board power (TDP)", "W"),
)
#: How far beyond the measured GPUs' specs a GPU may lie and still be in the domain (a factor
#: on the largest and the smallest): physics carries the transfer between measured GPUs and a
#: little beyond them, not to a GPU of another order of magnitude.
GPU_SPEC_MARGIN = 2.0


#: The catalog specs each measured GPU is recorded with in the model card (``domain.gpu_specs``,
#: :func:`recorded_specs`): a catalog that gives a measured GPU's id other values (a user catalog
#: row for a power-capped or re-rated board) describes a GPU nobody measured.
MEASURED_SPEC_COLUMNS: tuple[str, ...] = (
    "memory_bandwidth_gb_s",
    "fp16_tflops_dense",
    "fp8_tflops_dense",
    "fp4_tflops_dense",
    "memory_gb",
    "tdp_w",
    "idle_power_w",
    "interconnect_gb_s",
    "int8_tops_dense",
    "nvlink_domain_gpus",
    "node_gpus",
    "scale_out_gbit_s",
    "scale_out_latency_us",
)
#: Relative difference below which a spec counts as the recorded one (CSV round trips).
SPEC_REL_TOL = 1e-6
#: What the predictors take for an empty fabric cell (docs/cli.md, "User catalogs"; the catalog
#: fills an empty ``node_gpus`` by form factor, so 8 applies to a model card's empty cell only):
#: a spec is compared as resolved, so a measured
#: PCIe card whose row leaves its fabric empty keeps the specs it was measured with.
FABRIC_DEFAULTS: dict[str, float] = {
    "interconnect_gb_s": DEFAULT_INTERCONNECT_GB_S,
    "nvlink_domain_gpus": 1.0,
    "node_gpus": float(DEFAULT_NODE_GPUS),
    "scale_out_gbit_s": DEFAULT_SCALE_OUT_GBIT_S,
    "scale_out_latency_us": DEFAULT_SCALE_OUT_LATENCY_US,
}


def recorded_specs(frame: pl.DataFrame) -> dict[str, dict[str, float | None]]:
    """Per GPU of *frame* (rows with catalog specs joined), its :data:`MEASURED_SPEC_COLUMNS`
    values (None where the catalog gives none), for the model card."""
    cols = [c for c in MEASURED_SPEC_COLUMNS if c in frame.columns]
    first = frame.group_by("gpu").agg(pl.col(c).cast(pl.Float64).first() for c in cols)
    return {
        str(r["gpu"]): {c: (None if r[c] is None else float(r[c])) for c in cols}
        for r in first.sort("gpu").iter_rows(named=True)
    }


def measured_spec_ranges(card: Mapping[str, Any], gpus: pl.DataFrame) -> dict[str, tuple]:
    """Per spec of :data:`GPU_SPECS`, the (smallest, largest) value over the card's measured
    GPUs: the values the card recorded them with (``domain.gpu_specs``), else (a card from
    before they were recorded) read from the catalog table *gpus*; empty when none is known."""
    recorded = card.get("domain", {}).get("gpu_specs")
    if recorded:
        out_recorded: dict[str, tuple] = {}
        for col, _, _ in GPU_SPECS:
            known = [float(v[col]) for v in recorded.values() if v.get(col) is not None]
            if known:
                out_recorded[col] = (min(known), max(known))
        return out_recorded
    measured = gpus.filter(pl.col("id").is_in(card.get("domain", {}).get("gpus", [])))
    out: dict[str, tuple] = {}
    for col, _, _ in GPU_SPECS:
        if col in measured.columns:
            values = measured[col].cast(pl.Float64).drop_nulls().drop_nans()
            if values.len():
                out[col] = (float(values.min()), float(values.max()))  # type: ignore[arg-type]
    return out


def _spec_checks(feats: pl.DataFrame, ranges: Mapping[str, tuple]) -> list[Check]:
    """A message where a GPU spec lies beyond :data:`GPU_SPEC_MARGIN` × the measured range,
    the value written once per distinct value (4 significant digits, never a float's tail)."""
    checks = []
    for col, shown, unit in GPU_SPECS:
        if col not in ranges or col not in feats.columns:
            continue
        lo, hi = ranges[col]
        value = pl.col(col).cast(pl.Float64)
        for beyond, text in (
            (
                value > hi * GPU_SPEC_MARGIN,
                f"beyond {GPU_SPEC_MARGIN:g} × the largest measured ({_spec(hi)} {unit})",
            ),
            (
                value < lo / GPU_SPEC_MARGIN,
                f"below 1/{GPU_SPEC_MARGIN:g} of the smallest measured ({_spec(lo)} {unit})",
            ),
        ):
            values = feats.filter(beyond)[col].cast(pl.Float64).unique().drop_nulls().to_list()
            lines = {v: f"GPU {shown} {_spec(v)} {unit} {text}" for v in values}
            checks.append(
                Check(
                    beyond.fill_null(False),
                    value.replace_strict(lines, default=None, return_dtype=pl.String),
                )
            )
    return checks


def _spec(value: float) -> str:
    """*value* to 4 significant digits with thousands separators, never a float's tail
    (``85,900,000,000``, ``0.5``, ``3,351``)."""
    if not math.isfinite(value) or abs(value) >= 1e15:
        return f"{value:.4g}"
    rounded = float(f"{value:.4g}")
    return f"{int(rounded):,}" if rounded.is_integer() else f"{rounded:,}"


def domain_reasons(
    card: Mapping[str, Any], feats: pl.DataFrame, gpus: pl.DataFrame | None = None
) -> list[str]:
    """Why each row of *feats* lies outside the training domain of *card* ('' when inside),
    '; '-joined; with the catalog table *gpus*, also GPU specs far beyond the measured GPUs'
    (:func:`measured_spec_ranges`)."""
    return domain_reason_series(card, feats, gpus).to_list()


#: The GPU categories each target's own training rows are checked on (``domain.targets``):
#: (column, key, shown as). A GPU whose vendor has ITL rows but no power rows (AMD, Intel) has
#: its power extrapolated from other vendors' GPUs.
TARGET_CATEGORIES: tuple[tuple[str, str, str], ...] = (
    ("vendor", "vendors", "GPU vendor"),
    ("architecture", "architectures", "GPU architecture"),
)
#: How each target is named in a domain line.
TARGET_NAMES = {"power": "power", "itl": "ITL", "ttft": "TTFT"}
#: The targets every prediction row carries (TTFT only where asked for).
ROW_TARGETS: tuple[str, ...] = ("power", "itl")


def _target_checks(
    feats: pl.DataFrame, dom: Mapping[str, Any], targets: Sequence[str]
) -> list[Check]:
    """A line per row whose GPU vendor or architecture has training rows, but none of a target
    it is predicted for (``domain.targets``; a card without them checks nothing here). A value
    with no training rows at all is the category check's line, not repeated here."""
    checks: list[Check] = []
    per_target = dom.get("targets") or {}
    for target in targets:
        record = per_target.get(target)
        if not record:
            continue
        for col, key, what in TARGET_CATEGORIES:
            values = feats[col].cast(pl.String).unique().drop_nulls().to_list()
            unseen = [v for v in values if v in set(dom[key]) - set(record[key])]
            if not unseen:
                continue
            name = TARGET_NAMES.get(target, target)
            lines = {v: f"{what} '{v}' has no {name} training rows" for v in unseen}
            value = pl.col(col).cast(pl.String)
            checks.append(
                Check(
                    value.is_in(unseen).fill_null(False),
                    value.replace_strict(lines, default=None, return_dtype=pl.String),
                )
            )
    return checks


def domain_reason_series(
    card: Mapping[str, Any],
    feats: pl.DataFrame,
    gpus: pl.DataFrame | None = None,
    targets: Sequence[str] = ROW_TARGETS,
) -> pl.Series:
    """:func:`domain_reasons` as a String series (no Python string per row); *targets*: the
    targets the rows are predicted for, each checked on its own training rows' GPU vendors and
    architectures (:func:`_target_checks`)."""
    dom = card.get("domain", {})
    if feats.is_empty():
        return pl.Series("reason", [], dtype=pl.String)
    if not dom:
        return pl.Series("reason", ["the model card records no training domain"] * feats.height)
    checks: list[Check] = [
        _category_check(feats, col, dom[key], what) for col, key, what in CATEGORIES
    ]
    if not dom["moe_trained"]:
        checks.append(
            Check(
                pl.col("is_moe").fill_null(False),
                pl.lit("mixture-of-experts LLMs have no training rows"),
            )
        )
    checks.extend(_target_checks(feats, dom, targets))
    checks.extend(_range_check(col, lo, hi) for col, (lo, hi) in dom["ranges"].items())
    if gpus is not None:
        checks.extend(_spec_checks(feats, measured_spec_ranges(card, gpus)))
    return failing_lines(feats, checks).alias("reason")


def gpu_measured(card: Mapping[str, Any], feats: pl.DataFrame) -> list[bool]:
    """True where the row's GPU had training rows in *card* (its predictions are not
    extrapolated)."""
    return gpu_measured_series(card, feats).to_list()


def gpu_measured_series(card: Mapping[str, Any], feats: pl.DataFrame) -> pl.Series:
    """:func:`gpu_measured` as a Boolean series: the GPU had training rows and the row's catalog
    gives it the specs it was measured with (``domain.gpu_specs``, where the card records them;
    an empty fabric cell on either side as :data:`FABRIC_DEFAULTS`)."""
    measured = card.get("domain", {}).get("gpus", [])
    same = pl.col("gpu").is_in(measured).fill_null(False)
    recorded = card.get("domain", {}).get("gpu_specs") or {}
    for col in MEASURED_SPEC_COLUMNS:
        # a card written before a spec was recorded does not judge it
        if col not in feats.columns or not any(col in s for s in recorded.values()):
            continue
        mapping = {g: specs.get(col) for g, specs in recorded.items()}
        expected = pl.col("gpu").replace_strict(mapping, default=None, return_dtype=pl.Float64)
        value = pl.col(col).cast(pl.Float64)
        if col in FABRIC_DEFAULTS:  # an empty cell is the value the predictors take
            value = value.fill_null(FABRIC_DEFAULTS[col])
            expected = expected.fill_null(FABRIC_DEFAULTS[col])
        close = (value - expected).abs() <= SPEC_REL_TOL * expected.abs()
        both_missing = value.is_null() & expected.is_null()
        same = same & (close.fill_null(False) | both_missing)
    return feats.select(same.alias("gpu_measured")).to_series()
