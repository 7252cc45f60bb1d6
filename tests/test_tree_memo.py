"""The tree-output memo: exactly the outputs of evaluating every row, whatever repeats, hash
collisions, caps and threads do; dropped when rows do not repeat."""

from __future__ import annotations

import threading

import numpy as np
import polars as pl
import pytest

from predictors.estimators import tree_memo
from predictors.estimators.tree_memo import memoised_outputs, remembers


class Trees:
    """A deterministic stand-in for a booster's evaluation: a fixed function of each row, which
    counts the rows it is asked for."""

    def __init__(self) -> None:
        self.evaluated = 0
        self.lock = threading.Lock()

    def __call__(self, x: np.ndarray) -> np.ndarray:
        with self.lock:
            self.evaluated += x.shape[0]
        filled = np.nan_to_num(x.astype(np.float64), nan=-7.0)
        return np.sin(filled @ np.arange(1.0, x.shape[1] + 1.0)) + 0.5


def _hashes(x: np.ndarray) -> np.ndarray:
    return pl.DataFrame(x).hash_rows(seed=0).to_numpy()


def _rows(rng: np.random.Generator, n: int, distinct: int) -> np.ndarray:
    pool = rng.normal(size=(distinct, 5)).astype(np.float32)
    pool[rng.random(pool.shape) < 0.1] = np.nan
    return pool[rng.integers(0, distinct, n)]


def test_outputs_equal_direct_evaluation_across_calls() -> None:
    rng = np.random.default_rng(1)
    trees, key = Trees(), Trees()
    pool = _rows(rng, 3_000, 3_000)
    drawn = []
    for _ in range(4):
        x = pool[rng.integers(0, pool.shape[0], 20_000)]
        drawn.append(x)
        got = memoised_outputs(key, x, _hashes(x), trees)
        assert np.array_equal(got, trees(x))  # bit for bit
        trees.evaluated -= x.shape[0]
    # each distinct row (bit for bit) is evaluated once over the four calls
    distinct = np.unique(np.concatenate(drawn).view(np.uint32), axis=0).shape[0]
    assert trees.evaluated == distinct
    assert remembers(key)


def test_a_hash_collision_never_shares_an_output() -> None:
    rng = np.random.default_rng(2)
    trees, key = Trees(), Trees()
    x = _rows(rng, 100, 100)
    fake = np.zeros(100, dtype=np.uint64)  # every row the same hash: all collide
    assert np.array_equal(memoised_outputs(key, x, fake, trees), trees(x))
    # a remembered hash with other bits: the new row is evaluated, not looked up
    seen = _rows(rng, 50, 50)
    memoised_outputs(key, seen, _hashes(seen), trees)
    other = _rows(np.random.default_rng(3), 50, 50)
    clash = _hashes(seen)  # other rows, the remembered rows' hashes
    assert np.array_equal(memoised_outputs(key, other, clash, trees), trees(other))
    again = memoised_outputs(key, seen, _hashes(seen), trees)
    assert np.array_equal(again, trees(seen))


def test_the_memo_is_dropped_when_rows_do_not_repeat() -> None:
    rng = np.random.default_rng(4)
    trees, key = Trees(), Trees()
    first = _rows(rng, 20_000, 20_000)
    memoised_outputs(key, first, _hashes(first), trees)
    assert remembers(key)  # the first call has nothing to judge by
    fresh = _rows(rng, 20_000, 20_000)
    assert np.array_equal(memoised_outputs(key, fresh, _hashes(fresh), trees), trees(fresh))
    assert not remembers(key)
    assert tree_memo._MEMOS[key].table is None  # its memory is freed


def test_the_memo_keeps_at_most_its_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_memo, "MEMO_ROWS_MAX", 500)
    rng = np.random.default_rng(5)
    trees, key = Trees(), Trees()
    pool = _rows(rng, 2_000, 2_000)
    for _ in range(3):
        x = pool[rng.integers(0, pool.shape[0], 5_000)]
        assert np.array_equal(memoised_outputs(key, x, _hashes(x), trees), trees(x))
    table = tree_memo._MEMOS[key].table
    assert table is not None
    assert table.keys.size == 500
    assert np.all(np.diff(table.keys.astype(np.float64)) >= 0)


def test_threads_sharing_a_memo_get_exact_outputs() -> None:
    rng = np.random.default_rng(6)
    trees, key = Trees(), Trees()
    pool = _rows(rng, 1_500, 1_500)
    inputs = [pool[rng.integers(0, pool.shape[0], 4_000)] for _ in range(8)]
    results: list[np.ndarray | None] = [None] * len(inputs)

    def run(i: int) -> None:
        results[i] = memoised_outputs(key, inputs[i], _hashes(inputs[i]), trees)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, got in zip(inputs, results, strict=True):
        assert got is not None
        assert np.array_equal(got, trees(x))


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_shipped_predictions_equal_with_and_without_the_memo(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from predictors.api import Predictor

    predictor = Predictor.load()
    rng = np.random.default_rng(7)
    models = predictor.catalog.llms.filter(pl.col("total_params_b") < 40)["id"].to_list()[:12]
    gpus = predictor.catalog.gpus["id"].to_list()
    n = 12_000
    rows = pl.DataFrame(
        {
            "model": rng.choice(models, n),
            "gpu": rng.choice(gpus, n),
            "gpu_count": rng.choice([1, 2, 4], n),
            "batch_size": rng.choice([1, 8, 64], n),
            "input_tokens": rng.choice([128, 1024], n),
            "output_tokens": rng.choice([128, 512], n),
        }
    )
    remembered = [predictor.predict(rows.slice(i, 4_000)) for i in range(0, n, 4_000)]
    again = predictor.predict(rows.slice(0, 4_000))  # every tree row now in the memo
    monkeypatch.setattr("predictors.estimators.base.remembers", lambda booster: False)
    direct = [predictor.predict(rows.slice(i, 4_000)) for i in range(0, n, 4_000)]
    for got, want in zip(remembered, direct, strict=True):
        assert got.equals(want)
    assert again.equals(direct[0])
