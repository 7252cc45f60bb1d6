"""Locally adaptive conformal intervals (issue 17, item 5).

* over the whole GPU catalog, every shipped interval holds its point prediction
  (lo ≤ point ≤ hi for power, ITL and TTFT);
* the width never shrinks when the model's evidence does: the same row, predicted by the
  shipped model as if its GPU, then also its architecture, had no measurements, has a
  difficulty at least as high and a band at least as wide (ratio hi / lo);
* the calibration recovers a known heteroscedastic residual scale and covers held-out rows of
  each difficulty at about its level, narrower than the plain band where the residuals are small;
* the calibration round-trips through the model card.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.estimators import artifacts
from predictors.estimators.intervals import (
    DIFFICULTY_FEATURES,
    AdaptiveInterval,
    Evidence,
    conformal_quantiles,
    difficulty,
    difficulty_features,
)
from predictors.features import add_features, join_specs
from predictors.training.metrics import coverage

MODELS = ("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-30B-A3B")
TARGETS = ("power", "itl", "ttft")


@pytest.fixture(scope="module")
def grid(predictor: Predictor) -> pl.DataFrame:
    """Every catalog GPU × 2 LLMs × TP × batch × engine, featurised like a prediction."""
    gpus = predictor.catalog.gpus["id"].to_list()
    rows = list(itertools.product(MODELS, gpus, (1, 4), ("vllm", "sglang"), (1, 16, 128)))
    frame = pl.DataFrame(
        rows, schema=["model", "gpu", "gpu_count", "engine", "batch_size"], orient="row"
    ).with_columns(
        pl.lit("bf16").alias("precision"),
        pl.lit(1024).alias("input_tokens"),
        pl.lit(256).alias("output_tokens"),
    )
    return add_features(join_specs(frame, predictor.catalog))


def _bounds(predictor: Predictor, target: str, feats: pl.DataFrame, interval: object) -> tuple:
    est = predictor.models.targets[target].estimator
    point = est.predict(feats)
    lo, hi = est.bounds(feats, point, interval)
    return point, lo, hi


def test_shipped_intervals_are_adaptive(predictor: Predictor) -> None:
    for target in TARGETS:
        interval = predictor.models.targets[target].interval
        assert isinstance(interval, AdaptiveInterval), target
        assert set(interval.weights) == set(DIFFICULTY_FEATURES)
        assert all(w >= 0 for w in interval.weights.values())
        assert interval.q_lo <= 0 <= interval.q_hi


@pytest.mark.parametrize("target", TARGETS)
def test_every_band_holds_its_point_over_the_catalog(
    predictor: Predictor, grid: pl.DataFrame, target: str
) -> None:
    point, lo, hi = _bounds(predictor, target, grid, predictor.models.targets[target].interval)
    ok = np.isfinite(point)
    assert ok.sum() > 0.5 * grid.height
    assert np.all(lo[ok] <= point[ok] * (1 + 1e-9)), target
    assert np.all(point[ok] <= hi[ok] * (1 + 1e-9)), target
    assert np.all(lo[ok] > 0)


@pytest.mark.parametrize("target", TARGETS)
def test_width_is_non_decreasing_in_difficulty(
    predictor: Predictor, grid: pl.DataFrame, target: str
) -> None:
    shipped = predictor.models.targets[target].interval
    assert isinstance(shipped, AdaptiveInterval)
    ev = shipped.evidence
    measured = grid.filter(pl.col("gpu").is_in(sorted(ev.gpus)))
    assert measured.height > 0
    less = [
        dataclasses.replace(ev, gpus=frozenset()),
        dataclasses.replace(ev, gpus=frozenset(), architectures=frozenset()),
        dataclasses.replace(
            ev, gpus=frozenset(), architectures=frozenset(), newest_release_year=2015.0
        ),
    ]
    previous_d = difficulty(measured, ev, shipped.weights)
    point, lo, hi = _bounds(predictor, target, measured, shipped)
    previous_w = hi / lo
    grew = False
    for evidence in less:
        interval = dataclasses.replace(shipped, evidence=evidence)
        d = difficulty(measured, evidence, shipped.weights)
        _, lo2, hi2 = _bounds(predictor, target, measured, interval)
        width = hi2 / lo2
        assert np.all(d >= previous_d - 1e-12)
        assert np.all(width >= previous_w * (1 - 1e-9)), target
        grew |= bool(np.any(width > previous_w * 1.001))
        previous_d, previous_w = d, width
    assert grew, f"{target}: less evidence never widened a band"


def test_difficulty_counts_what_the_model_lacks(predictor: Predictor, grid: pl.DataFrame) -> None:
    interval = predictor.models.targets["itl"].interval
    assert isinstance(interval, AdaptiveInterval)
    x = difficulty_features(grid, interval.evidence)
    col = {k: i for i, k in enumerate(DIFFICULTY_FEATURES)}
    unseen = ~grid["gpu"].is_in(sorted(interval.evidence.gpus)).to_numpy()
    assert np.array_equal(x[:, col["gpu_unseen"]] == 1.0, unseen)
    assert np.all(x[:, col["source_unseen"]] == 0.0)  # a prediction is in the reference source
    assert np.all(x[:, col["log2_gpu_count"]] == np.log2(grid["gpu_count"].to_numpy()))
    assert np.all(x >= 0)


def test_calibration_adapts_to_a_known_residual_scale() -> None:
    rng = np.random.default_rng(0)
    n = 6000
    hard = rng.random(n) < 0.5
    kinds = np.where(rng.random(n) < 0.5, "gpu", "rows")
    features = np.zeros((n, len(DIFFICULTY_FEATURES)))
    features[:, 0] = hard
    residuals = rng.normal(0.0, np.where(hard, 0.4, 0.1))
    evidence = Evidence(*(frozenset(),) * 6, 2024.0)
    band = AdaptiveInterval.calibrate(residuals, features, kinds, evidence)
    # the hard rows' residuals are 4 times wider: a clearly positive weight, at most ln 4
    assert 0.9 < band.weights["gpu_unseen"] < np.log(4.0) + 0.1
    assert all(band.weights[k] == 0.0 for k in DIFFICULTY_FEATURES[1:])
    held = rng.normal(0.0, np.where(hard, 0.4, 0.1))
    d = features @ np.array([band.weights[k] for k in DIFFICULTY_FEATURES])
    lo, hi = band.offsets_at(d)
    truth = np.exp(held)
    for mask in (hard, ~hard):
        assert 86.0 <= coverage(truth[mask], np.exp(lo[mask]), np.exp(hi[mask])) <= 95.0
    plain_lo, plain_hi = conformal_quantiles(residuals)
    assert np.median(hi[~hard] - lo[~hard]) < 0.5 * (plain_hi - plain_lo)


def test_calibration_round_trips_through_the_card(predictor: Predictor, tmp_path: Path) -> None:
    artifacts.save(predictor.models, tmp_path)
    again = artifacts.load(tmp_path)
    for target in TARGETS:
        assert again.targets[target].interval == predictor.models.targets[target].interval


def test_calibration_holds_out_one_gpu_and_one_architecture_at_a_time() -> None:
    """The unmeasured-GPU kind of calibration fold is one GPU against all the others (the
    situation of a prediction), and likewise one architecture; past MAX_ONE_OUT_GROUPS values
    the groups are dealt into that many folds, and every value is held out exactly once."""
    from predictors.training.calibration import MAX_ONE_OUT_GROUPS, calibration_folds

    gpus = [f"G{i}" for i in range(5)]
    frame = pl.DataFrame(
        {
            "gpu": [g for g in gpus for _ in range(4)],
            "architecture": [("A" if g in ("G0", "G1") else "B") for g in gpus for _ in range(4)],
            "model": [f"m{j}" for _ in gpus for j in range(4)],
            "release_year": [2020.0 + int(g[1]) for g in gpus for _ in range(4)],
        }
    )
    folds = calibration_folds(frame)
    held = {
        kind: [
            tuple(sorted(set(frame[column][test].to_list()))) for k, _, test in folds if k == kind
        ]
        for kind, column in (("gpu", "gpu"), ("architecture", "architecture"))
    }
    assert sorted(held["gpu"]) == [(g,) for g in gpus]
    assert sorted(held["architecture"]) == [("A",), ("B",)]
    for kind, train, test in folds:
        assert np.intersect1d(train, test).size == 0, kind

    many = pl.DataFrame(
        {
            "gpu": [f"G{i:02d}" for i in range(MAX_ONE_OUT_GROUPS + 5)],
            "architecture": ["A"] * (MAX_ONE_OUT_GROUPS + 5),
            "model": ["m"] * (MAX_ONE_OUT_GROUPS + 5),
            "release_year": [2020.0] * (MAX_ONE_OUT_GROUPS + 5),
        }
    )
    gpu_folds = [test for k, _, test in calibration_folds(many) if k == "gpu"]
    assert len(gpu_folds) == MAX_ONE_OUT_GROUPS
    assert np.sort(np.concatenate(gpu_folds)).tolist() == list(range(many.height))
