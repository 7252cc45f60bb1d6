"""The measured disaggregated (prefill/decode) runs, resolved and read as serving units.

aiconfigurator's ``mode == disagg`` rows (:func:`predictors.measurements.aiconfigurator.
read_aiconfigurator_disagg`) found under a data directory (the adapters' discovery of
:mod:`predictors.measurements.load`), with model and GPU names resolved through the catalog
exactly as the aggregated rows are, and each side's layout read like the aggregated rows'
(:mod:`predictors.measurements.layouts`): a MoE side with attention DP 1 whose stated TP does
not fit the attention heads is the world size of a wide-EP deployment, read as TP 1 × attention
DP ``tp`` × EP ``tp``. A side that states every degree as 1 without worker counts (GB200
DeepSeek-R1 SGLang rows: the source's defaults, not a layout) and whose weights cannot fit one
GPU is read as not stated: the smallest power-of-two GPU count per worker, within the NVLink
domain, whose weights and one sequence fit in the engine's memory (the engines' usual layout
there); ``{side}_layout_read`` says which reading a row got.

The training table keeps reading the same rows as before (:func:`predictors.measurements.
aiconfigurator.read_aiconfigurator`: GPU counts summed, no layout; unchanged); read here as units
they are the held-out check of :mod:`predictors.serving.disagg` (docs/serving-accuracy.md).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from predictors import memory_rule
from predictors.catalog.store import Catalog
from predictors.catalog.validity import tp_domain_gpus
from predictors.features import join_specs, with_layout
from predictors.measurements.aiconfigurator import read_aiconfigurator_disagg
from predictors.measurements.layouts import _is_wide_ep
from predictors.measurements.load import _resolve_gpu, discover

SIDES: tuple[str, str] = ("prefill", "decode")


#: ``{side}_layout_read`` values.
STATED = "stated"
SMALLEST_FITTING = "smallest fitting (every degree 1 stated, the weights do not fit one GPU)"


def _fits(frame: pl.DataFrame, side: str, count: int, catalog: Catalog) -> pl.Series:
    """Whether the weights and one sequence fit a worker of *count* GPUs (usual layout)."""
    rows = frame.select(
        "model",
        "gpu",
        "engine",
        "precision",
        "input_tokens",
        "output_tokens",
        pl.lit(float(count)).alias("gpu_count"),
        pl.lit(1.0).alias("batch_size"),
        *(pl.lit(None, pl.Float64).alias(c) for c in ("pipeline_parallel", "data_parallel")),
    )
    j = with_layout(join_specs(rows, catalog))
    return j.select(memory_rule.fits_in_memory().fill_null(False)).to_series()


def _unstated(frame: pl.DataFrame, side: str, catalog: Catalog) -> pl.DataFrame:
    """The smallest-fitting reading of the module docstring for *side*."""
    ones = (
        pl.all_horizontal(pl.col(f"{side}_{c}") == 1 for c in ("tp", "pp", "dp"))
        & pl.col(f"{side}_ep").fill_null(1).eq(1)
        & ~pl.col("workers_stated")
    )
    frame = frame.with_columns(pl.lit(STATED).alias(f"{side}_layout_read"))
    cand = ones & pl.col("model").is_not_null() & pl.col("gpu").is_not_null()
    idx = frame.with_row_index("_i").filter(cand)["_i"]
    if idx.len() == 0:
        return frame
    sub = frame[idx]
    domain = max(tp_domain_gpus(catalog.gpu(g)) for g in sub["gpu"].unique().to_list())
    count = pl.Series([None] * sub.height, dtype=pl.Int64)
    g = 1
    while g <= domain and count.is_null().any():
        fit = _fits(sub, side, g, catalog)
        count = pl.select(
            pl.when(count.is_null() & fit).then(pl.lit(g)).otherwise(count)
        ).to_series()
        g *= 2
    read = count.fill_null(1)
    changed = read > 1
    tp = frame[f"{side}_tp"].scatter(idx, read)
    label = frame[f"{side}_layout_read"].scatter(
        idx,
        pl.select(
            pl.when(changed).then(pl.lit(SMALLEST_FITTING)).otherwise(pl.lit(STATED))
        ).to_series(),
    )
    ep = frame[f"{side}_ep"].scatter(idx.filter(changed), None)
    return frame.with_columns(tp, label, ep)


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
        frame = read_side(frame, side, catalog)
    return frame


def read_side(frame: pl.DataFrame, side: str, catalog: Catalog) -> pl.DataFrame:
    """*frame* (resolved ``model`` and ``gpu``; ``{side}_tp``, ``_pp``, ``_dp``, ``_ep`` as the
    source states them, ``workers_stated``) with *side*'s layout read as the module docstring
    says: the wide-EP reading, then the smallest fitting GPU count where every degree 1 is
    stated without worker counts and the weights do not fit one GPU."""
    return _unstated(_wide(frame, side, catalog), side, catalog)


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
