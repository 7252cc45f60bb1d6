"""The ITL of a disaggregated run, read on one of its decode workers (issue 17, item 4).

aiconfigurator's ``mode == disagg`` rows measure a unit of prefill and decode workers: its TPOT
is the step time of a decode worker, which runs no prefill; its TTFT is the prefill worker's
time plus the KV transfer. The measurement table keeps such a row as one unit (GPUs of both pools
summed, no layout: :mod:`predictors.measurements.aiconfigurator`). Read as one tensor-parallel
replica over all those GPUs, the decode step the physics sees is on the wrong GPUs at the wrong
batch. Training and evaluation therefore split each such row in two:

* the **unit** row, unchanged, with its TPOT removed (the TTFT target reads it as before);
* the **decode** row: the TPOT of one decode worker, with its stated TP × PP × attention DP
  (``gpu_count`` their product), EP, and the unit's concurrency shared among the stated decode
  workers (``batch_size / decode_workers``; an unstated count is read as 1), the layout read as
  :func:`predictors.measurements.disagg_rows.read_side` reads the serving check's units (the
  wide-EP reading; the smallest fitting worker where every degree 1 is stated without worker
  counts and the weights do not fit one GPU). ``itl_on_decode_workers`` is True on it: a
  decode-only step, where the aggregated rows' TPOT also carries the prefill chunks of arriving
  requests (the ITL trees see it as the GPU-invariant flag ``decode_workers_only``; the serving
  model sets it for the decode pool of a disaggregated unit,
  :func:`predictors.serving.disagg_build.on_decode_workers`; every other prediction has it 0).

The measurement table, its row counts and the memory rule's judged rows (which skip
disaggregated rows) are unchanged.
"""

from __future__ import annotations

import polars as pl

from predictors.catalog.store import Catalog
from predictors.features import DECODE_WORKERS_COLUMN
from predictors.measurements.disagg_rows import read_side
from predictors.measurements.schema import DECODE_COLUMNS

#: True on the decode rows of :func:`split_disaggregated`.
DECODE_FLAG = DECODE_WORKERS_COLUMN
_SIDE = {
    "decode_tensor_parallel": "decode_tp",
    "decode_pipeline_parallel": "decode_pp",
    "decode_data_parallel": "decode_dp",
    "decode_expert_parallel": "decode_ep",
}


def split_disaggregated(table: pl.DataFrame, catalog: Catalog) -> pl.DataFrame:
    """*table* (resolved measurement rows) with every disaggregated row with a TPOT split into
    its unit row (TPOT removed) and its decode row (module docstring), the decode rows last;
    :data:`DECODE_FLAG` marks them. A table without the decode columns gets the flag only."""
    if not set(DECODE_COLUMNS) <= set(table.columns):
        return table.with_columns(pl.lit(False).alias(DECODE_FLAG))
    pooled = pl.col("decode_tensor_parallel").is_not_null() & pl.col("itl_s").is_not_null()
    marked = table.with_columns(pl.lit(False).alias(DECODE_FLAG))
    units = marked.with_columns(
        pl.when(pooled).then(None).otherwise(pl.col("itl_s")).alias("itl_s")
    )
    pools = table.filter(pooled)
    if pools.height == 0:
        return units
    sides = read_side(
        pools.rename(_SIDE).rename({"decode_workers_stated": "workers_stated"}),
        "decode",
        catalog,
    )
    workers = pl.col("decode_workers").fill_null(1).clip(lower_bound=1).cast(pl.Float64)
    decode = pools.with_columns(
        (sides["decode_tp"] * sides["decode_pp"] * sides["decode_dp"]).alias("gpu_count"),
        (pools["batch_size"] / sides.select(workers).to_series()).alias("batch_size"),
        sides["decode_tp"].alias("tensor_parallel"),
        sides["decode_pp"].alias("pipeline_parallel"),
        sides["decode_dp"].alias("data_parallel"),
        sides["decode_ep"].alias("expert_parallel"),
        pl.lit(None, dtype=pl.Float64).alias("ttft_s"),
        pl.lit(None, dtype=pl.Float64).alias("output_throughput_tok_s"),
        pl.lit(True).alias(DECODE_FLAG),
    )
    return pl.concat([units, decode.select(units.columns)], how="vertical_relaxed")
