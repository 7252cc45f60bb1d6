"""The "does not fit" line names a lower bound on the GPUs that hold the row ("at least k of
these GPUs"): no smaller replica of that GPU fits the same batch, over catalog GPUs, engines and
the largest catalog LLMs. Sound because a wider replica never needs less memory (KV copies across
ranks and attention-DP weight copies only add) and never has more usable memory per GPU than
the narrower one (TensorRT-LLM's KV fraction of what the weights leave free only shrinks)."""

from __future__ import annotations

import itertools
import re

import polars as pl

from predictors.api import Predictor

AT_LEAST = re.compile(r"at least (\d+) of these GPUs")
#: Past the GPUs one replica holds the line names that limit instead (fuzz round 24).
LARGEST = re.compile(r"in the largest replica \((\d+) of these GPUs\)")


def _bound(error: str) -> int:
    """The named lower bound: "at least k", or one past the largest replica."""
    found = AT_LEAST.search(error)
    if found is not None:
        return int(found.group(1))
    largest = LARGEST.search(error)
    assert largest is not None, error
    return int(largest.group(1)) + 1


def test_no_smaller_replica_than_the_named_bound_fits(predictor: Predictor) -> None:
    llms = predictor.catalog.llms.sort("total_params_b", descending=True)["id"].head(12)
    gpus = predictor.catalog.gpus["id"].to_list()
    rows = pl.DataFrame(
        list(itertools.product(llms, gpus, ("vllm", "tensorrt-llm"), (1, 64))),
        schema=["model", "gpu", "engine", "batch_size"],
        orient="row",
    ).with_columns(pl.lit(1).alias("gpu_count"))
    out = predictor.predict(rows)
    refused = out.filter(pl.col("error").str.starts_with("does not fit"))
    assert refused.height > 100
    bounds = [_bound(e) for e in refused["error"]]
    assert min(bounds) >= 2
    wider = pl.concat(
        refused.select("model", "gpu", "engine", "batch_size")
        .with_columns(pl.lit(n).alias("gpu_count"), pl.Series("bound", bounds))
        .filter(pl.lit(n) < pl.col("bound"))
        for n in (2, 4, 8, 16, 32, 64)
    )
    assert wider.height > 100
    judged = predictor.predict(wider.drop("bound"), with_fit=True)
    assert not judged["fits_in_memory"].fill_null(False).any()
