"""The dominance sweep over the whole catalog: a stronger GPU is never predicted slower."""

from __future__ import annotations

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.training import dominance


@pytest.fixture(scope="module")
def comparisons() -> pl.DataFrame:
    return dominance.sweep(Predictor.load())


def test_sweep_covers_every_dominating_pair_model_and_workload(comparisons: pl.DataFrame) -> None:
    pairs = dominance.dominating_pairs(Predictor.load())
    # e.g. H200 dominates H100-SXM at every precision, B200 dominates both
    for a, b in (("H100-SXM5-80GB", "H200-SXM-141GB"), ("A100-SXM4-80GB", "B200")):
        assert pairs.filter((pl.col("gpu_a") == a) & (pl.col("gpu_b") == b)).height == 3
    assert comparisons.height > 20_000
    seen = comparisons.select(
        pl.col(c).n_unique()
        for c in ("gpu_count", "engine", "precision", "batch_size", "input_tokens")
    )
    assert seen.row(0) == (
        len(dominance.GPU_COUNTS),
        len(dominance.ENGINES),
        len(dominance.PRECISIONS),
        len(dominance.BATCHES),
        len(dominance.TOKENS),
    )
    assert set(comparisons["model"]) == set(dominance.MODELS)


def test_no_stronger_gpu_is_predicted_more_than_5_percent_slower(
    comparisons: pl.DataFrame,
) -> None:
    """Zero violations at TP 1 and wherever B's interconnect is at least A's."""
    bad = dominance.violations(comparisons.filter(~pl.col("weaker_interconnect")))
    worst = bad.sort("ratio", descending=True).head(5).to_dicts()
    assert bad.is_empty(), f"{bad.height} dominance violations, worst: {worst}"
    assert comparisons.filter(pl.col("gpu_count") == 1)["ratio"].max() <= 1.0 + 1e-9  # type: ignore[operator]


def test_slower_interconnect_costs_only_the_all_reduce_time(comparisons: pl.DataFrame) -> None:
    """At TP > 1 a PCIe card may lose to an NVLink card with less bandwidth (e.g. A100-PCIE-80GB
    against A100-SXM4-40GB at TP 8): only by the all-reduce term, so by a bounded margin."""
    weak = comparisons.filter(pl.col("weaker_interconnect"))
    assert (weak["gpu_count"] > 1).all()
    assert weak["ratio"].max() <= 1.25  # type: ignore[operator]


def test_no_stronger_gpu_takes_longer_to_the_first_token(comparisons: pl.DataFrame) -> None:
    """TTFT v3 sees the GPU only through the prefill roofline, a monotone input (and the
    floor): B never takes longer than A, at any TP degree (its model has no interconnect
    term)."""
    worst = comparisons.sort("ttft_ratio", descending=True).head(5).to_dicts()
    assert comparisons["ttft_ratio"].null_count() == 0
    assert comparisons["ttft_ratio"].max() <= 1.0 + 1e-9, worst  # type: ignore[operator]
    strict = comparisons.filter(pl.col("ttft_ratio") < 1.0 / dominance.TOLERANCE)
    assert strict.height > 0, "the sweep must contain pairs where B is clearly faster to TTFT"


def test_violation_detector_flags_a_swapped_prediction(comparisons: pl.DataFrame) -> None:
    """The check can fail: swapping A and B's ITL on a strictly faster pair is a violation."""
    strict = comparisons.filter(pl.col("itl_s_b") < pl.col("itl_s_a") / dominance.TOLERANCE)
    assert strict.height > 0
    swapped = strict.head(1).with_columns((pl.col("itl_s_a") / pl.col("itl_s_b")).alias("ratio"))
    assert dominance.violations(swapped).height == 1
