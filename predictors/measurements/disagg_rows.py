"""The measured disaggregated (prefill/decode) runs, resolved and read as serving units.

aiconfigurator's ``mode == disagg`` rows (:func:`predictors.measurements.aiconfigurator.
read_aiconfigurator_disagg`) found under a data directory (the adapters' discovery of
:mod:`predictors.measurements.load`), with model and GPU names resolved through the catalog
exactly as the aggregated rows are, and each side's layout read like the aggregated rows'
(:mod:`predictors.measurements.layouts`): a MoE side with attention DP 1 whose stated TP does
not fit the attention heads is the world size of a wide-EP deployment, read as TP 1 × attention
DP ``tp`` × EP ``tp``. These rows are not part of the training table (which keeps reading them
with the GPU counts summed, unchanged); they are the held-out check of
:mod:`predictors.serving.disagg` (docs/serving-accuracy.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from predictors.measurements.aiconfigurator import read_aiconfigurator_disagg
from predictors.measurements.layouts import _is_wide_ep
from predictors.measurements.load import Resolver, _resolve_gpu, discover

SIDES: tuple[str, str] = ("prefill", "decode")


class Catalog(Resolver):
    """The part of the catalog this module uses."""

    def llm(self, name_or_id: str) -> dict[str, Any]:
        """Catalog row of an LLM."""


def _wide(frame: pl.DataFrame, side: str, catalog: Catalog) -> pl.DataFrame:
    tp, dp, ep = (pl.col(f"{side}_{c}") for c in ("tp", "dp", "ep"))
    pairs = frame.filter(pl.col("model").is_not_null()).select("model", f"{side}_tp").unique()
    wide = {
        (m, t)
        for m, t in pairs.rows()
        if t is not None and t > 1 and _is_wide_ep(catalog.llm(m), int(t))
    }
    flag = pl.Series(
        [
            (m, t) in wide and d == 1
            for m, t, d in zip(
                frame["model"], frame[f"{side}_tp"], frame[f"{side}_dp"], strict=True
            )
        ],
        dtype=pl.Boolean,
    )
    return (
        frame.with_columns(flag.alias("_w"))
        .with_columns(
            pl.when("_w").then(pl.lit(1, pl.Int64)).otherwise(tp).alias(f"{side}_tp"),
            pl.when("_w").then(tp).otherwise(dp).alias(f"{side}_dp"),
            pl.when("_w").then(tp).otherwise(ep).alias(f"{side}_ep"),
        )
        .drop("_w")
    )


def load_disagg_rows(data_dir: Path, catalog: Catalog) -> pl.DataFrame:
    """Every measured disaggregated row under *data_dir*, resolved (``model``, ``gpu``: catalog
    ids, null where the catalog lacks the name) with each side's layout read (module doc)."""
    files = [s.path for s in discover(data_dir) if s.format == "aiconfigurator"]
    frames = [read_aiconfigurator_disagg(f) for f in files]
    frames = [f for f in frames if f.height]
    if not frames:
        return pl.DataFrame()
    raw = pl.concat(frames)
    root = str(data_dir).rstrip("/\\") + "/"
    gpu_map = {
        (h, r): _resolve_gpu(catalog, h, r)
        for h, r in raw.select("gpu_hint", "gpu_raw").unique().rows()
    }
    model_map = {m: catalog.try_resolve_llm(m) for m in raw["model_raw"].unique().to_list()}
    frame = raw.with_columns(
        pl.col("file").str.strip_prefix(root),
        pl.Series(
            "gpu",
            [gpu_map[(h, r)] for h, r in zip(raw["gpu_hint"], raw["gpu_raw"], strict=True)],
            dtype=pl.String,
        ),
        pl.col("model_raw").replace_strict(model_map, return_dtype=pl.String).alias("model"),
    )
    for side in SIDES:
        frame = _wide(frame, side, catalog)
    return frame


def as_units(rows: pl.DataFrame) -> pl.DataFrame:
    """Resolved measured rows as units of :mod:`predictors.serving.disagg_build` (both pools on
    the row's GPU; GPUs per worker = TP × PP × DP)."""
    side_cols = []
    for s in SIDES:
        tp, pp, dp = (pl.col(f"{s}_{c}") for c in ("tp", "pp", "dp"))
        side_cols += [
            pl.col("gpu").alias(f"{s}_gpu"),
            (tp * pp * dp).alias(f"{s}_gpu_count"),
            pl.col(f"{s}_workers"),
            tp.alias(f"{s}_tp"),
            pp.alias(f"{s}_pp"),
            dp.alias(f"{s}_dp"),
            pl.col(f"{s}_ep"),
        ]
    return rows.select("model", "engine", "precision", "input_tokens", "output_tokens", *side_cols)
