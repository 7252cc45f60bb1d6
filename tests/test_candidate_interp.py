"""The candidate curves' interpolation (``planner.inputs.candidate._interp``, found by bisection)
equals the plain left-to-right scan it replaced, bit for bit: repeated knots, points on knots,
beyond both ends, infinities and NaN."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.inputs.candidate import _interp


def _scan(x: float, xs: tuple[float, ...], ys: tuple[float, ...]) -> float:
    if x <= xs[0]:
        return ys[0]
    for i in range(1, len(xs)):
        if x <= xs[i]:
            t = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
            return ys[i - 1] + t * (ys[i] - ys[i - 1])
    return ys[-1]


knot = st.one_of(st.integers(0, 5).map(float), st.floats(0.0, 10.0))
point = st.one_of(
    knot, st.floats(-1.0, 12.0), st.sampled_from([math.nan, math.inf, -math.inf, -0.0])
)


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(knot, st.floats(0.0, 1e4)), min_size=1, max_size=20), point)
def test_bisection_equals_the_scan(pairs: list[tuple[float, float]], x: float) -> None:
    xs = tuple(sorted(k for k, _ in pairs))
    ys = tuple(v for _, v in pairs)
    got, want = _interp(x, xs, ys), _scan(x, xs, ys)
    assert got == want or (math.isnan(got) and math.isnan(want))
