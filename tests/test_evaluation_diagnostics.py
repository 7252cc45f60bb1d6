"""The evaluation's diagnostics: nominal source inputs, the seen-protocol split, seed stability."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from predictors.catalog.store import load_catalog
from predictors.feature_sets import (
    ITL_RESIDUAL_FEATURES,
    POWER_FEATURES,
    SOURCE_INDICATORS,
    SOURCES,
    TTFT_V3_FEATURES,
    TTFT_V3_MONOTONE,
)
from predictors.features import GPU_COLUMNS, add_features, join_specs
from predictors.training.accuracy import (
    SEEN_PROTOCOL_SPLIT,
    source_seen_in_training,
    unseen_protocol,
)
from predictors.training.evaluate import TARGETS, out_of_fold, target_rows
from predictors.training.metrics import experiment_mape, mdape, median_ratio
from predictors.training.stability import seed_stability
from predictors.training.train import prepare
from tests.test_predictors import _synthetic_table


def _llama_rows(**columns: object) -> pl.DataFrame:
    """Llama-3.1-8B rows on one vLLM GPU at batch 8, 512/256 tokens, with *columns* set."""
    base: dict[str, object] = {
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "gpu_count": 1,
        "engine": "vllm",
        "precision": "bf16",
        "batch_size": 8,
        "input_tokens": 512,
        "output_tokens": 256,
    }
    return pl.DataFrame(columns | base)


def test_v2_estimators_see_sources_as_names_not_as_an_ordinal_code() -> None:
    for features in (ITL_RESIDUAL_FEATURES, POWER_FEATURES):
        assert "source_code" not in features
        assert set(SOURCE_INDICATORS) <= set(features)
    rows = _llama_rows(source=[*SOURCES, "someone-elses-lab", None], gpu="H100-SXM5-80GB")
    onehot = add_features(join_specs(rows, load_catalog())).select(SOURCE_INDICATORS).to_numpy()
    known = len(SOURCES)
    assert (onehot[:known] == np.eye(known, dtype=onehot.dtype)).all()
    assert not onehot[known:].any(), "an unknown or missing source must set no indicator"


def test_ttft_v3_sees_the_gpu_only_through_its_monotone_prefill_roofline() -> None:
    """Dominance of TTFT v3 by construction: every input but ``log_prefill_time_s`` is the same
    for every GPU of a row, and the trees are non-decreasing in that one (a GPU with more FLOPS
    and bandwidth has a shorter roofline)."""
    assert "source_code" not in TTFT_V3_FEATURES and set(SOURCE_INDICATORS) <= set(TTFT_V3_FEATURES)
    assert TTFT_V3_MONOTONE["log_prefill_time_s"] == 1 and TTFT_V3_MONOTONE["log_batch"] == 1
    catalog = load_catalog()
    gpus = catalog.gpus.filter(pl.col("vendor") == "NVIDIA")["id"].to_list()
    feats = add_features(join_specs(_llama_rows(gpu=gpus), catalog))
    varying = [f for f in TTFT_V3_FEATURES if feats[f].n_unique() > 1]
    assert varying == ["log_prefill_time_s"]
    assert not set(TTFT_V3_FEATURES) & set(GPU_COLUMNS)
    assert (feats["disaggregated"] == 0).all(), "a predicted row is one aggregated replica"


def test_seen_protocol_keeps_rows_whose_source_another_gpu_measured() -> None:
    rows = pl.DataFrame(
        {
            "gpu": ["a", "a", "b", "c", "c"],
            "source": ["s1", "s2", "s1", "s3", "s1"],
        }
    )
    held_out, seen = source_seen_in_training(rows, "logo")
    assert held_out.all()
    # s2 only on a and s3 only on c: their rows lose the protocol when their GPU is held out.
    assert seen.tolist() == [True, False, True, False, True]


def test_unseen_protocol_counts_the_rows_left_out_of_the_diagnostic() -> None:
    base = {"target": "power", "method": "ours", "gpu": "h", "row": [0, 1, 2]}
    nvdc = pl.DataFrame({**base, "split": "logo-nvidia-dc", "source": ["v2", "v3", "v3"]})
    seen = nvdc.filter(pl.col("source") == "v2").with_columns(
        pl.lit(SEEN_PROTOCOL_SPLIT).alias("split")
    )
    other = nvdc.with_columns(pl.lit("v1").alias("method"))
    out = unseen_protocol(pl.concat([nvdc, seen, other]))
    assert out.to_dicts() == [{"target": "power", "gpu": "h", "source": "v3", "rows": 2}]


@pytest.mark.slow  # 1.3-2 s: the default run stays under 2 minutes
def test_seed_stability_seed_0_is_the_reported_logo_and_seeds_move_it() -> None:
    frame = prepare(_synthetic_table(n_per_gpu=40), load_catalog())
    table = seed_stability(frame, seeds=(0, 1), targets=("power",))
    assert table["seed"].to_list() == [0, 1]
    rows = target_rows(frame, TARGETS["power"])
    reported = out_of_fold(rows, TARGETS["power"], "logo", "ours", intervals=False)
    y = rows["power_w_per_gpu"].to_numpy()
    assert table["mdape_pct_all"][0] == pytest.approx(mdape(y, reported.predicted), rel=1e-9)
    assert table["mdape_pct_all"][0] != table["mdape_pct_all"][1]


def test_median_hi_over_lo_is_the_width_a_planner_sees() -> None:
    lo = np.array([1.0, 2.0, 1.0, np.nan, 0.0])
    hi = np.array([2.0, 3.0, 4.0, 5.0, 1.0])
    # rows with a missing or zero lower bound do not count: ratios 2.0, 1.5, 4.0
    assert median_ratio(lo, hi) == pytest.approx(2.0)
    assert math.isnan(median_ratio(np.array([np.nan]), np.array([1.0])))


def test_experiment_mape_compares_means_per_experiment_by_hand() -> None:
    frame = pl.DataFrame(
        {
            "gpu": ["A", "A", "B", "B", "B"],
            "measured": [1.0, 3.0, 10.0, 10.0, 10.0],
            "predicted": [2.0, 2.0, 12.0, 9.0, None],
        }
    )
    # A: means 2 vs 2 -> 0 %; B: the row without a prediction is left out, 10 vs 10.5 -> 5 %
    value, experiments = experiment_mape(frame, ["gpu"])
    assert experiments == 2 and value == pytest.approx(2.5)
