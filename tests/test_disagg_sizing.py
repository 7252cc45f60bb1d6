"""Worker counts of measured disaggregated runs that leave them empty
(:func:`predictors.serving.disagg_sizing.size_unstated`), over catalog GPUs × dense and MoE LLMs ×
closed loops of 1 to 8,192 users:

* decode workers: the fewest that hold the loop's users at the worker's batch limit;
* prefill workers: the fewest whose pool keeps up with the decode pool (utilisation ≤ 1 at the
  loop's rate with a prefill pool that never queues);
* units that state their counts, and refused units, keep theirs; servers per worker unchanged;
* the sized unit never predicts a longer TTFT than one worker on each side (its TPOT may be
  longer: the decode pool then gets the users a lone prefill worker held back), and its decode
  workers never fall as the loop grows.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.serving.disagg import (
    DEFAULT_SETTINGS,
    DisaggTable,
    closed_loop_point,
    take_units,
    with_settings,
)
from predictors.serving.disagg_build import disagg_curves
from predictors.serving.disagg_sizing import size_unstated

LLMS = ("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-30B-A3B", "deepseek-ai/DeepSeek-V3")
GPUS = ("H100-SXM5-80GB", "B200", "GB200", "A100-SXM4-80GB", "MI300X")
USERS = (1.0, 8.0, 64.0, 512.0, 2048.0, 8192.0)


def _units(predictor: Predictor) -> pl.DataFrame:
    known = set(predictor.catalog.gpus["id"].to_list())
    rows = [
        {
            "model": llm,
            "engine": "tensorrt-llm",
            "precision": "fp8",
            "input_tokens": 1024.0 if i % 2 else 8192.0,
            "output_tokens": 1024.0,
            "prefill_gpu": gpu,
            "prefill_gpu_count": 8,
            "prefill_workers": 1,
            "prefill_dp": dp,
            "prefill_ep": 8 if dp > 1 else None,
            "prefill_tp": 8 // dp,
            "decode_gpu": gpu,
            "decode_gpu_count": 8,
            "decode_workers": 1,
            "users": users,
        }
        for i, (llm, gpu, dp, users) in enumerate(
            itertools.product(LLMS, sorted(known & set(GPUS)), (1, 8), USERS)
        )
        if dp == 1 or llm != "meta-llama/Llama-3.1-8B-Instruct"
    ]
    return pl.DataFrame(rows)


@pytest.fixture(scope="module")
def case(predictor: Predictor) -> tuple[pl.DataFrame, DisaggTable, DisaggTable, np.ndarray]:
    units = _units(predictor)
    one = with_settings(disagg_curves(predictor, units.drop("users")), DEFAULT_SETTINGS)
    assert one.ok.sum() >= 60
    # every other unit states its counts (one each): those must stay as they are
    unstated = np.arange(units.height) % 2 == 0
    users = units["users"].to_numpy()
    sized = size_unstated(one, users, unstated, DEFAULT_SETTINGS.waves)
    return units, one, sized, unstated


def test_stated_and_refused_units_keep_their_counts(case):
    _, one, sized, unstated = case
    keep = ~unstated | ~one.ok
    assert keep.any()
    assert np.array_equal(sized.prefill.workers[keep], one.prefill.workers[keep])
    assert np.array_equal(sized.decode_workers[keep], one.decode_workers[keep])
    per_one = one.prefill.servers / one.prefill.workers
    per_sized = sized.prefill.servers / sized.prefill.workers
    assert np.allclose(per_one, per_sized, rtol=1e-12)


def test_decode_workers_are_the_fewest_that_hold_the_loop(case):
    units, one, sized, unstated = case
    pick = unstated & one.ok
    n = units["users"].to_numpy()[pick]
    limit = np.maximum(one.decode.max_batch[pick], 1.0)
    y = sized.decode_workers[pick]
    assert (y >= 1).all() and (y * limit >= n).all()
    assert ((y == 1) | ((y - 1) * limit < n)).all()
    assert (y > 1).any(), "no loop needed a second decode worker: the grid is too small"


@pytest.mark.slow
def test_prefill_workers_are_the_fewest_that_keep_up(case):
    units, one, sized, unstated = case
    pick = np.flatnonzero(unstated & one.ok)
    n = units["users"].to_numpy()[pick]
    t = take_units(sized, pick)
    per_worker = t.prefill.servers / t.prefill.workers
    every_user = np.ceil(n / per_worker)
    pool = replace(t.prefill, workers=every_user, servers=per_worker * every_user)
    free = replace(t, prefill=pool)
    lam = closed_loop_point(free, n, DEFAULT_SETTINGS.waves)[0].requests_per_s
    x = t.prefill.workers
    load = lam * t.prefill.service_s / per_worker
    assert (x >= 1).all()
    assert (load <= x * (1 + 1e-9)).all()
    assert ((x == 1) | (load > (x - 1))).all()
    assert (x > 1).any(), "no loop needed a second prefill worker: the grid is too small"


def test_sizing_never_lengthens_ttft(case):
    units, one, sized, unstated = case
    pick = np.flatnonzero(unstated & one.ok)
    n = units["users"].to_numpy()[pick]
    _, ttft1 = closed_loop_point(take_units(one, pick), n, DEFAULT_SETTINGS.waves)
    _, ttft2 = closed_loop_point(take_units(sized, pick), n, DEFAULT_SETTINGS.waves)
    both = np.isfinite(ttft1) & np.isfinite(ttft2)
    assert both.mean() > 0.9
    assert (ttft2[both] <= ttft1[both] * (1 + 1e-9)).all()
    # somewhere the single prefill worker was the bottleneck and the sized pool is not
    assert (ttft2[both] < 0.5 * ttft1[both]).any()


def test_decode_workers_never_fall_as_the_loop_grows(case):
    units, one, sized, unstated = case
    frame = units.with_columns(
        pl.Series("y", sized.decode_workers),
        pl.Series("pick", unstated & one.ok),
    ).filter("pick")
    for _, g in frame.group_by(["model", "prefill_gpu", "prefill_dp", "input_tokens"]):
        y = g.sort("users")["y"].to_numpy()
        assert (np.diff(y) >= 0).all()
