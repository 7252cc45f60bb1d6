"""A tensor-parallel group that leaves its NVLink domain pays the network, through ``predict``.

Property over the catalog: every bundled GPU whose NVLink domain is smaller than 16 GPUs is
copied into a user catalog with a 16-GPU domain (everything else equal). TP 16 of the largest
catalog LLMs (``pipeline_parallel`` 1) on the real GPU crosses nodes; on the copy it stays on
NVLink. Where both rows are predicted, the cross-node ITL is never below the in-domain one, and
it is above it (the scale-out network is slower than NVLink and adds its latency): a GPU at
least as strong in interconnect is never slower, and the network is charged. ``predict`` once
pruned the column that says a layout was stated, and then read every TP group as one domain.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from predictors.api import Predictor
from predictors.catalog.store import catalogs_dir, load_catalog

COPY_SUFFIX = "-NVL16-COPY"


def test_tp_across_nodes_is_slower_than_inside_one_domain(tmp_path: Path) -> None:
    bundled = pl.read_csv(catalogs_dir() / "gpus.csv", infer_schema_length=0)
    small = bundled.filter(pl.col("nvlink_domain_gpus").cast(pl.Int64) < 16)
    copies = small.with_columns(
        (pl.col("id") + COPY_SUFFIX).alias("id"),
        pl.lit("16").alias("nvlink_domain_gpus"),
        pl.lit("").alias("aliases"),
        pl.lit("").alias("assumed_aliases"),
    )
    copies.write_csv(tmp_path / "gpus.csv")
    predictor = Predictor.load(catalog=load_catalog(tmp_path))
    llms = predictor.catalog.llms.sort("total_params_b", descending=True)["id"].to_list()[:8]
    gpus = small["id"].to_list()
    rows = pl.DataFrame(
        [
            {"model": m, "gpu": g + suffix, "gpu_count": 16, "pipeline_parallel": 1}
            | {"batch_size": b, "input_tokens": 1024, "output_tokens": 512}
            for m in llms
            for g in gpus
            for b in (1, 64)
            for suffix in ("", COPY_SUFFIX)
        ]
    )
    out = predictor.predict(rows)
    real, copy = out[0::2], out[1::2]
    both = ((real["error"] == "") & (copy["error"] == "")).to_numpy()
    assert both.sum() >= 10, "too few configurations predicted on both GPUs"
    assert (real["tensor_parallel"].to_numpy()[both] == 16).all()
    cross = real["itl_s"].to_numpy()[both]
    inside = copy["itl_s"].to_numpy()[both]
    assert (cross > inside).all(), list(
        zip(
            real["model"].to_numpy()[both], real["gpu"].to_numpy()[both], cross, inside, strict=True
        )
    )
