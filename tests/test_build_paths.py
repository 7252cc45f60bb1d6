"""The candidate build's faster paths give the numbers of the plain ones, bit for bit.

Points shared by every row (a broadcast view) are located on the grid once; the per-row
interpolation must equal the plain per-cell formula on the same points materialised, for random
monotone curves with points below, on and beyond the grid. The capacity's flat curves are its
per-row curves end to end.
"""

from __future__ import annotations

import numpy as np
import pytest

from predictors.serving import curves, operating
from predictors.serving.curves import BATCH_GRID, CURVE_B, ServingCurves


def _plain_interp(grid: np.ndarray, values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The per-cell formula with 2-D fancy indexing (the reference)."""
    idx = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, grid.size - 2)
    rows = np.arange(values.shape[0])[:, None]
    x0, x1 = grid[idx], grid[idx + 1]
    v0, v1 = values[rows, idx], values[rows, idx + 1]
    return v0 + (np.maximum(x, grid[0]) - x0) / (x1 - x0) * (v1 - v0)


def _random_curves(rng: np.random.Generator, n: int) -> ServingCurves:
    g = len(BATCH_GRID)
    itl = np.cumsum(rng.uniform(1e-4, 2e-2, (n, g)), axis=1)
    idle = rng.uniform(30.0, 200.0, n)
    power = idle[:, None] + np.cumsum(rng.uniform(0.0, 80.0, (n, g)), axis=1)
    return ServingCurves(
        batch=np.asarray(BATCH_GRID, dtype=np.float64),
        itl_s=itl,
        power_w=power,
        idle_w=idle,
        prefill_s=rng.uniform(0.0, 0.2, n),
        ttft_base_s=rng.uniform(0.01, 0.5, n),
        comm_s_per_token=np.zeros(n),
        output_tokens=rng.uniform(16.0, 2048.0, n),
        max_batch=rng.choice([8.0, 64.0, 256.0, 1024.0, 2048.0], n),
    )


@pytest.mark.parametrize("seed", range(5))
def test_shared_points_interpolate_as_materialised_ones(seed: int) -> None:
    rng = np.random.default_rng(seed)
    c = _random_curves(rng, 64)
    grid = np.asarray(BATCH_GRID, dtype=np.float64)
    points = np.concatenate(([0.0, 0.3, 1.0], grid, rng.uniform(0.0, 4096.0, 30), [5000.0]))
    shared = curves.shared_points(points, c.rows)
    assert shared.strides[0] == 0  # the broadcast view takes the shared path
    materialised = np.array(shared)
    for values in (c.itl_s, c.power_w):
        got = curves.interp_rows(grid, values, shared)
        assert np.array_equal(got, _plain_interp(grid, values, materialised))
        assert np.array_equal(curves.interp_rows(grid, values, materialised), got)
    assert np.array_equal(curves.step_time_s(c, shared), curves.step_time_s(c, materialised))


@pytest.mark.parametrize("percentile", [None, 90.0, 99.0])
def test_capacity_flat_curves_are_its_row_curves(percentile: float | None) -> None:
    rng = np.random.default_rng(7)
    c = curves.rising_throughput(_random_curves(rng, 40))
    sla = rng.uniform(0.005, 0.2, c.rows)
    cap = operating.capacity(c, sla, np.full(c.rows, np.inf), percentile)
    rows = cap.curve_requests_per_s
    assert [r.size for r in rows] == cap.curve_knots.tolist()
    assert np.array_equal(np.concatenate(rows), cap.flat_requests_per_s)
    assert np.array_equal(np.concatenate(cap.curve_power_w_per_gpu), cap.flat_power_w_per_gpu)
    assert np.array_equal(np.concatenate(cap.curve_itl_s), cap.flat_itl_s)
    for xs, lam in zip(rows, cap.max_requests_per_s.tolist(), strict=True):
        assert xs[0] == 0.0 and bool(np.all(np.diff(xs) > 0))
        assert xs[-1] == pytest.approx(lam) or lam == 0.0
    assert len(CURVE_B) + 2 >= int(cap.curve_knots.max())
