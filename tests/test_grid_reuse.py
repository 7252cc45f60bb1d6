"""The serving grid's predictions are reused for the same predictor object and the same grid
(:func:`predictors.serving.grid._grid_predictions`): a plan's robust re-plan asks for the plan's
grid again. Another predictor (another catalog) or another grid is predicted afresh, and the
reused numbers are the fresh ones."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.serving import grid as grid_module
from predictors.serving.grid import serving_table

ROWS = pl.DataFrame(
    {
        "model": ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-30B-A3B"],
        "gpu": ["H100-SXM5-80GB", "L40S"],
        "gpu_count": [1, 2],
        "engine": ["vllm", "vllm"],
        "precision": ["bf16", "bf16"],
        "input_tokens": [1024.0, 2048.0],
        "output_tokens": [256.0, 300.0],
    }
)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of rows of every grid :meth:`Predictor.predict` was asked for, in order."""
    calls: list[int] = []
    real = Predictor.predict

    def predict(self: Predictor, rows: pl.DataFrame, **kwargs: bool) -> pl.DataFrame:
        calls.append(rows.height)
        return real(self, rows, **kwargs)

    monkeypatch.setattr(Predictor, "predict", predict)
    monkeypatch.setattr(grid_module, "_RECENT", [])
    return calls


def test_the_same_grid_of_the_same_predictor_is_predicted_once(
    predictor: Predictor, counted: list[int]
) -> None:
    first = serving_table(ROWS, predictor)
    asked = len(counted)
    robust = serving_table(ROWS, predictor, robust=True)
    assert asked >= 1 and len(counted) == asked  # the re-plan's table: no new prediction
    np.testing.assert_array_equal(robust.curves_hi.itl_s, first.curves_hi.itl_s)
    np.testing.assert_array_equal(robust.curves.itl_s, first.curves_hi.itl_s)  # robust: upper


@pytest.mark.slow
def test_another_predictor_or_grid_is_predicted_afresh_with_the_same_numbers(
    predictor: Predictor, counted: list[int]
) -> None:
    first = serving_table(ROWS, predictor)
    asked = len(counted)
    other = dataclasses.replace(predictor)  # equal, but another object: never trusted as same
    again = serving_table(ROWS, other)
    assert len(counted) == 2 * asked
    np.testing.assert_array_equal(again.curves.itl_s, first.curves.itl_s)
    longer = ROWS.with_columns(pl.col("output_tokens") * 2)
    serving_table(longer, predictor)
    assert len(counted) == 3 * asked


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_the_reuse_holds_a_few_grids_only(predictor: Predictor, counted: list[int]) -> None:
    one = ROWS.head(1)
    for tokens in range(100, 100 + 10 * (grid_module._RECENT_SIZE + 1), 10):
        serving_table(one.with_columns(pl.lit(float(tokens)).alias("output_tokens")), predictor)
    assert len(grid_module._RECENT) == grid_module._RECENT_SIZE
