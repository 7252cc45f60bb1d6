"""The ITL residual trees learn what is shared across GPUs: each measured GPU's own level is taken
out of their label (:func:`predictors.estimators.itl.gpu_level`), and the one-model ranking
diagnostic of the evaluation (:mod:`predictors.training.unseen_rank`)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from predictors.estimators.itl import gpu_level
from predictors.training.unseen_rank import GROUP, _fold_taus


def _frame(gpus: list[str], sources: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"gpu": gpus, "source": sources})


def test_level_is_each_gpus_median_less_the_sources_median_over_gpus() -> None:
    frame = _frame(["A", "A", "B", "B", "C", "D"], ["s"] * 5 + ["t"])
    z = np.array([0.1, 0.3, 0.5, 0.7, -0.4, 2.0])
    # per-GPU medians in s: A 0.2, B 0.6, C -0.4 -> median over GPUs 0.2; t holds D alone
    np.testing.assert_allclose(gpu_level(frame, z), [0.0, 0.0, 0.4, 0.4, -0.6, 0.0])


def test_a_gpus_own_offset_moves_only_its_own_level() -> None:
    frame = _frame(["A", "B", "C", "D", "E"], ["s"] * 5)
    z = np.array([0.0, 0.1, 0.2, 0.3, 0.4])
    before = gpu_level(frame, z)
    z_shifted = z.copy()
    z_shifted[4] += 1.5  # E, away from the median GPU
    after = gpu_level(frame, z_shifted)
    np.testing.assert_allclose(after[:4], before[:4])
    assert after[4] == pytest.approx(before[4] + 1.5)
    # the label the trees learn, z - level, is the source's median GPU level on every GPU
    np.testing.assert_allclose(z_shifted - after, np.full(5, 0.2))


def test_level_ignores_non_finite_residuals_and_needs_gpu_and_source() -> None:
    frame = _frame(["A", "A", "B"], ["s", "s", "s"])
    z = np.array([0.2, np.nan, 0.6])
    level = gpu_level(frame, z)
    assert np.isfinite(level).all()
    np.testing.assert_allclose(level, [-0.2, -0.2, 0.2])
    np.testing.assert_array_equal(gpu_level(pl.DataFrame({"gpu": ["A"]}), np.zeros(1)), [0.0])


def _group_rows(gpus: list[str], measured: list[float], model: str = "m") -> pl.DataFrame:
    base = {c: [1] * len(gpus) for c in GROUP if c != "model"}
    return pl.DataFrame({"model": [model] * len(gpus), **base, "gpu": gpus, "itl_s": measured})


def test_one_model_tau_ranks_only_the_held_out_gpus_groups() -> None:
    rows = pl.concat(
        [
            _group_rows(["X", "A", "B"], [3.0, 2.0, 1.0], model="m1"),
            _group_rows(["A", "B"], [2.0, 1.0], model="m2"),  # no X: not X's fold's group
        ]
    )
    right = np.array([3.1, 2.1, 0.9, 5.0, 9.0])  # m2 ranked wrongly, but X is not in it
    assert _fold_taus(rows, "itl_s", "X", right) == [pytest.approx(1.0)]
    x_swapped = np.array([1.5, 2.1, 0.9, 5.0, 9.0])  # X between A and B
    assert _fold_taus(rows, "itl_s", "X", x_swapped) == [pytest.approx(1.0 / 3.0)]
    assert _fold_taus(rows, "itl_s", "A", right) == [
        pytest.approx(1.0),
        pytest.approx(-1.0),
    ]  # m1, m2
