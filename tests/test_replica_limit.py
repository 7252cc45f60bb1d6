"""The replica bound follows the power curve (planner.solve.coefficients.replica_limit).

``n`` replicas carrying ``x`` req/s draw ``n · P(x / n)``. On a curve whose end is convex, one
replica more than the fewest that carry the peak can draw less; the bound must allow every count
a least-watts plan can use, and the counts above it must never draw less, at any load up to the
peak (every period's load is at most the peak).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.inputs import MAX_REPLICAS_PER_CANDIDATE
from planner.solve.coefficients import relief_rates, replica_limit, single_deployment_replicas


def _curve(idle: float, slopes: list[float], cap: float) -> tuple[np.ndarray, np.ndarray]:
    xs = np.linspace(0.0, cap, len(slopes) + 1)
    ps = idle + np.concatenate(([0.0], np.cumsum(np.asarray(slopes) * np.diff(xs))))
    return xs, ps


def _watts(n: int, x: float, xs: np.ndarray, ps: np.ndarray) -> float:
    return n * float(np.interp(x / n, xs, ps))


curves = st.tuples(
    st.floats(1.0, 2000.0),  # idle W
    st.lists(st.floats(0.0, 400.0), min_size=1, max_size=6),  # W per req/s, per piece
    st.floats(0.5, 50.0),  # capacity req/s
)


@settings(max_examples=300, deadline=None)
@given(curves, st.floats(0.01, 400.0), st.integers(0, 2), st.integers(0, 3))
def test_no_count_above_the_bound_draws_less(
    curve: tuple[float, list[float], float], peak: float, k: int, min_replicas: int
) -> None:
    idle, slopes, cap = curve
    slopes = sorted(slopes)  # convex: the intercepts fall, and may go below 0
    xs, ps = _curve(idle, slopes, cap)
    relief = float(relief_rates(xs, ps, [xs.size])[0])
    limit = replica_limit(peak, cap, relief, k, 1, min_replicas)
    fewest = single_deployment_replicas(peak, cap, k, 1, min_replicas)
    assert limit >= fewest
    if limit > MAX_REPLICAS_PER_CANDIDATE:
        return
    for x in (peak, peak * 0.6, peak * 0.1):
        counts = range(max(fewest, 1), limit + 40)
        best = min(counts, key=lambda n: (_watts(n, x, xs, ps), n))
        assert best <= limit, (best, limit, relief)
        above = [_watts(n, x, xs, ps) for n in range(limit, limit + 40)]
        assert all(b >= a - 1e-9 * max(1.0, a) for a, b in zip(above, above[1:], strict=False))


def test_a_convex_end_allows_the_count_that_draws_less() -> None:
    # 400 W idle, 10 W per req/s to 8 req/s, then 200 W per req/s to the capacity 10 req/s
    xs = np.asarray([0.0, 8.0, 10.0])
    ps = np.asarray([400.0, 480.0, 880.0])
    relief = float(relief_rates(xs, ps, [3])[0])
    assert relief == 8.0  # the last piece's line meets rate 0 at 480 - 200 * 8 < 0
    # 100 req/s: 10 replicas at capacity draw 8,800 W, 13 at 7.7 req/s draw 6,200 W
    assert _watts(13, 100.0, xs, ps) < _watts(10, 100.0, xs, ps)
    assert single_deployment_replicas(100.0, 10.0, 0, 1, 0) == 10
    assert replica_limit(100.0, 10.0, relief, 0, 1, 0) == 13
    # failover adds its loss units to either count
    assert replica_limit(100.0, 10.0, relief, 1, 2, 0) == 15


def test_a_concave_curve_keeps_the_fewest_replicas() -> None:
    xs, ps = _curve(300.0, [90.0, 40.0, 10.0], 12.0)
    assert math.isinf(float(relief_rates(xs, ps, [xs.size])[0]))
    assert replica_limit(100.0, 12.0, math.inf, 0, 1, 0) == 9
    assert replica_limit(100.0, 12.0, math.inf, 0, 1, 11) == 11


def test_relief_rates_of_many_curves_match_one_at_a_time() -> None:
    rng = np.random.default_rng(0)
    curves = [
        _curve(float(rng.uniform(50, 500)), sorted(rng.uniform(0, 300, rng.integers(1, 5))), 9.0)
        for _ in range(30)
    ]
    xs = np.concatenate([c[0] for c in curves])
    ps = np.concatenate([c[1] for c in curves])
    together = relief_rates(xs, ps, [c[0].size for c in curves])
    alone = [float(relief_rates(x, p, [x.size])[0]) for x, p in curves]
    np.testing.assert_array_equal(together, alone)
    assert np.isfinite(together).any() and np.isinf(together).any()
