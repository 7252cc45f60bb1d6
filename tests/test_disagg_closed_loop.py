"""The closed-loop measurement model of disaggregated units and the prefill throughput floor
(issue 19), over catalog GPUs × dense and MoE LLMs:

* in waves, a lone prompt per server waits nothing, TTFT rises with the number of users and
  never rises with more prefill workers;
* the closed-loop rate holds the users (Little's law) wherever neither pool is saturated;
* the planner's capacity does not read the arrival setting (it plans open-loop traffic);
* under every setting, a prefill worker never averages a prompt faster than its FLOPs at the
  peak of all its GPUs.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.serving.disagg import (
    SETTING_CANDIDATES,
    DisaggTable,
    at_rate_grid_rates,
    closed_loop_point,
    closed_loop_rate,
    disagg_at_rate,
    disagg_capacity,
    wave_ttft_s,
    with_settings,
)
from predictors.serving.disagg_build import disagg_curves

LLMS = (
    "meta-llama/Llama-3.1-8B-Instruct",
    "Qwen/Qwen3-30B-A3B",
    "deepseek-ai/DeepSeek-V3",
)
GPUS = ("H100-SXM5-80GB", "H200-SXM-141GB", "B200", "GB200", "A100-SXM4-80GB", "MI300X")
USERS = np.asarray([1.0, 4.0, 16.0, 64.0, 256.0, 1024.0])


def _units(predictor: Predictor, prefill_workers: int) -> pl.DataFrame:
    known = set(predictor.catalog.gpus["id"].to_list())
    rows = [
        {
            "model": llm,
            "engine": "sglang",
            "precision": "fp8",
            "input_tokens": 1024.0 * (1 + i % 8),
            "output_tokens": 1024.0,
            "prefill_gpu": gpu,
            "prefill_gpu_count": 8,
            "prefill_workers": prefill_workers,
            "prefill_dp": dp,
            "prefill_ep": 8 if dp > 1 else None,
            "prefill_tp": 8 // dp,
            "decode_gpu": gpu,
            "decode_gpu_count": 8,
            "decode_workers": 2,
        }
        for i, (llm, gpu, dp) in enumerate(
            itertools.product(LLMS, sorted(known & set(GPUS)), (1, 8))
        )
        if dp == 1 or llm != "meta-llama/Llama-3.1-8B-Instruct"
    ]
    return pl.DataFrame(rows)


def _table(predictor: Predictor, workers: int, *, waves: bool) -> DisaggTable:
    t = disagg_curves(predictor, _units(predictor, workers))
    return with_settings(t, replace(SETTING_CANDIDATES[0], per_rank=True, waves=waves))


@pytest.fixture(scope="module")
def tables(predictor: Predictor) -> tuple[DisaggTable, DisaggTable]:
    one, two = _table(predictor, 1, waves=True), _table(predictor, 2, waves=True)
    assert one.ok.sum() >= 20 and np.array_equal(one.ok, two.ok)
    return one, two


@pytest.mark.slow  # about 1 s: the default run stays under 2 minutes
def test_wave_ttft_rises_with_users_and_falls_with_prefill_workers(
    tables: tuple[DisaggTable, DisaggTable],
) -> None:
    one, two = tables
    ok = one.ok
    lone = one.prefill.latency_s + one.kv.seconds
    prev = None
    for n in USERS:
        users = np.full(one.rows, n)
        a, b = wave_ttft_s(one, users), wave_ttft_s(two, users)
        assert np.all(a[ok] >= lone[ok] * (1 - 1e-12))
        fits = users <= one.prefill.servers
        assert np.allclose(a[ok & fits], lone[ok & fits])
        assert np.all(b[ok] <= a[ok] * (1 + 1e-12))
        if prev is not None:
            assert np.all(a[ok] >= prev[ok])
        prev = a
        _, closed_one = closed_loop_point(one, users, waves=True)
        _, closed_two = closed_loop_point(two, users, waves=True)
        assert np.all(closed_one[ok] >= a[ok] * (1 - 1e-9))
        assert np.all(closed_two[ok] <= closed_one[ok] * (1 + 1e-6))
    assert np.any(prev[ok] > 2.0 * lone[ok]), "1,024 users never queue: the check cannot fail"


@pytest.mark.slow
def test_the_closed_loop_rate_holds_the_users(tables: tuple[DisaggTable, DisaggTable]) -> None:
    t = tables[0]
    for n in USERS:
        users = np.full(t.rows, n)
        lam = closed_loop_rate(t, users, waves=True)
        pt = disagg_at_rate(t, lam)
        held = lam * (wave_ttft_s(t, users) + (t.output_tokens - 1.0) * pt.itl_s)
        decode_top = at_rate_grid_rates(t, t.decode.max_batch[:, None])[:, 0]
        top = np.minimum(t.prefill.servers / t.prefill.service_s, decode_top)
        open_ = t.ok & np.isfinite(held) & (lam < top * 0.99)
        assert open_.sum() >= 10
        assert np.allclose(held[open_], n, rtol=1e-6)


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_the_planner_capacity_does_not_read_the_arrival_setting(predictor: Predictor) -> None:
    poisson, waves = (_table(predictor, 1, waves=w) for w in (False, True))
    sla = np.full(poisson.rows, 0.05)
    ttft = np.full(poisson.rows, 2.0)
    a = disagg_capacity(poisson, sla, ttft, 90.0)
    b = disagg_capacity(waves, sla, ttft, 90.0)
    assert np.array_equal(a.max_requests_per_s, b.max_requests_per_s)
    assert a.max_requests_per_s[poisson.ok].max() > 0


def test_no_setting_prefills_faster_than_the_peak_flops(predictor: Predictor) -> None:
    t = disagg_curves(predictor, _units(predictor, 3))
    ok = t.ok & (t.prefill.peak_s > 0)
    assert ok.sum() >= 20
    floor = t.prefill.workers / t.prefill.peak_s
    for s in SETTING_CANDIDATES:
        p = with_settings(t, s).prefill
        rate = p.servers / p.service_s
        assert np.all(rate[ok] <= floor[ok] * (1 + 1e-12)), s
