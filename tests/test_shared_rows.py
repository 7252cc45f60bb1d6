"""Shared work in the serving model: rows that repeat are evaluated once, with the numbers of the
row-by-row call (predictors.serving.shared_rows, predictors.serving.grid.serving_table).

Disaggregated units of one model entry share their decode workers; the planner's units were
evaluated row by row until 2026-12-06 (42 s for enterprise-fleet with ``deployment: both``).
These tests pin that sharing changes no number: every field equal to relative 1e-12 (numpy's
vectorised sums may round the last bit differently for arrays of other lengths, with or without
sharing) and NaN where the row-by-row call gives NaN.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.serving.curves import take_curves
from predictors.serving.disagg import disagg_at_rate, disagg_capacity, take_units
from predictors.serving.disagg_build import disagg_curves
from predictors.serving.grid import serving_table
from predictors.serving.operating import at_rate, capacity
from predictors.serving.shared_rows import at_rates, capacity_rows, curve_groups


def _unit(model: str, gpu: str, n: int, x: int, y: int, prefill_gpu: str | None = None) -> dict:
    return {
        "model": model,
        "engine": "vllm",
        "precision": "bf16",
        "input_tokens": 2048.0,
        "output_tokens": 256.0,
        "prefill_gpu": prefill_gpu or gpu,
        "prefill_gpu_count": n,
        "prefill_workers": x,
        "decode_gpu": gpu,
        "decode_gpu_count": n,
        "decode_workers": y,
    }


@pytest.fixture(scope="module")
def units() -> pl.DataFrame:
    """Units that share decode workers: worker ratios and prefill sides vary around a few decode
    workers (one repeated verbatim), as the planner's units of one entry do."""
    rows = []
    for model, gpu, n in (
        ("meta-llama/Llama-3.1-8B-Instruct", "H100-SXM5-80GB", 1),
        ("meta-llama/Llama-3.1-70B-Instruct", "A100-SXM4-80GB", 4),
    ):
        for x, y in ((1, 1), (1, 2), (1, 3), (2, 1), (3, 2)):
            rows.append(_unit(model, gpu, n, x, y))
            rows.append(_unit(model, gpu, n, x, y, prefill_gpu="L40S"))
    rows.append(dict(rows[0]))
    return pl.DataFrame(rows)


@pytest.fixture(scope="module")
def predictor() -> Predictor:
    return Predictor.load()


def _equal(x: object, y: object, name: str) -> None:
    np.testing.assert_allclose(
        np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), rtol=1e-12, err_msg=name
    )


def _same(a: object, b: object) -> None:
    for f in dataclasses.fields(a):  # type: ignore[arg-type]
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            _equal(x, y, f.name)
        elif isinstance(x, list) and x and isinstance(x[0], np.ndarray):
            assert len(x) == len(y), f.name
            for u, v in zip(x, y, strict=True):
                _equal(u, v, f.name)
        else:
            assert x == y, f.name


@pytest.mark.slow
def test_groups_join_exactly_the_identical_decode_workers(units, predictor) -> None:
    t = disagg_curves(predictor, units)
    groups = curve_groups(t.decode)
    # the decode side is one of two workers: each group is one of them
    assert groups.first.size == 2
    key = units["model"].to_list()
    for i, g in enumerate(groups.group.tolist()):
        assert key[i] == key[int(groups.first[g])]


@pytest.mark.slow
def test_at_rates_equal_the_row_by_row_call(units, predictor) -> None:
    t = disagg_curves(predictor, units)
    groups = curve_groups(t.decode)
    rates = np.linspace(0.0, 3.0, 7)
    lam = np.broadcast_to(rates, (t.rows, rates.size)) / t.decode_workers[:, None]
    shared = at_rates(t.decode, lam, groups)
    for j in range(rates.size):
        own = at_rate(t.decode, np.ascontiguousarray(lam[:, j]))
        for f in dataclasses.fields(own):
            _equal(getattr(shared, f.name)[:, j], getattr(own, f.name), f.name)


@pytest.mark.slow
def test_capacity_rows_equal_the_row_by_row_call(units, predictor) -> None:
    t = disagg_curves(predictor, units)
    sla = np.where(np.arange(t.rows) % 2 == 0, 0.05, np.inf)
    shared = capacity_rows(t.decode, sla, 90.0, curve_groups(t.decode))
    own = capacity(t.decode, sla, np.full(t.rows, np.inf), 90.0)
    _equal(shared.max_requests_per_s, own.max_requests_per_s, "rate")
    _equal(shared.decoding_at_capacity, own.decoding_at_capacity, "decoding")
    assert shared.limit == own.limit


@pytest.mark.slow
def test_a_unit_gets_the_same_numbers_alone_as_among_units_that_share_its_workers(
    units, predictor
) -> None:
    t = disagg_curves(predictor, units)
    itl = np.full(t.rows, 0.04)
    ttft = np.full(t.rows, 2.0)
    together = disagg_capacity(t, itl, ttft, 90.0)
    for i in (0, 3, t.rows - 1):
        alone_t = take_units(t, np.asarray([i]))
        alone = disagg_capacity(alone_t, itl[:1], ttft[:1], 90.0)
        one = take_units(t, np.asarray([i]))
        assert one.rows == 1
        for f in dataclasses.fields(alone):
            x, y = getattr(alone, f.name), getattr(together, f.name)
            if isinstance(x, list):
                if isinstance(x[0], str):
                    assert x[0] == y[i], f.name
                else:
                    _equal(x[0], y[i], f.name)
            else:
                _equal(x[0], y[i], f.name)
        point = disagg_at_rate(alone_t, alone.max_requests_per_s)
        among = disagg_at_rate(t, together.max_requests_per_s)
        for f in dataclasses.fields(point):
            _equal(getattr(point, f.name)[0], getattr(among, f.name)[i], f.name)


@pytest.mark.slow
def test_disagg_at_rate_takes_several_rates_per_unit(units, predictor) -> None:
    t = disagg_curves(predictor, units)
    rates = np.stack([np.full(t.rows, 0.5), np.full(t.rows, 1.5)], axis=1)
    both = disagg_at_rate(t, rates)
    for j in range(2):
        one = disagg_at_rate(t, np.ascontiguousarray(rates[:, j]))
        for f in dataclasses.fields(one):
            _equal(getattr(both, f.name)[:, j], getattr(one, f.name), f.name)


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_serving_table_predicts_a_repeated_row_once_with_the_same_numbers(predictor) -> None:
    base = {
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "gpu": "H100-SXM5-80GB",
        "gpu_count": 1,
        "engine": "vllm",
        "precision": "bf16",
        "input_tokens": 1024.0,
        "output_tokens": 512.0,
    }
    other = {**base, "gpu": "A100-SXM4-80GB", "gpu_count": 2}
    rows = pl.DataFrame([base, other, base, base, other])
    together = serving_table(rows, predictor)
    for i, row in enumerate(rows.iter_rows(named=True)):
        alone = serving_table(pl.DataFrame([row]), predictor)
        picked = dataclasses.replace(
            together,
            curves=take_curves(together.curves, np.asarray([i])),
            curves_lo=take_curves(together.curves_lo, np.asarray([i])),
            curves_hi=take_curves(together.curves_hi, np.asarray([i])),
            error=[together.error[i]],
            fits=[together.fits[i]],
            in_domain=[together.in_domain[i]],
            weights_gb=[together.weights_gb[i]],
            kv_budget_gb=[together.kv_budget_gb[i]],
            tdp_w=[together.tdp_w[i]],
            pool_prefill_s=together.pool_prefill_s[[i]],
        )
        for name in ("curves", "curves_lo", "curves_hi"):
            _same(getattr(alone, name), getattr(picked, name))
        for name in ("error", "fits", "in_domain"):
            assert getattr(alone, name) == getattr(picked, name), name
        for name in ("weights_gb", "kv_budget_gb", "tdp_w", "pool_prefill_s"):
            _equal(getattr(alone, name), getattr(picked, name), name)
