"""What makes the exact search faster changes no answer: the convex-hull bound
(planner.solve.hull) is valid, the search that uses it finds what brute force finds, the batched
interpolation (planner.solve.interp) is numpy.interp to the last bit, and a block restricted to
some of its candidates (planner.solve.restrict, the baselines' blocks) prices as a block built
from them afresh.

* for random replica vectors on random non-concave curves (tests/test_routing_oracle.py) and
  every load up to the vector's capacity, the hull watts are at most the exact routing watts,
  and equal to them when every curve is convex;
* ``interp_rows`` equals ``numpy.interp`` curve by curve, bit for bit, at random rates, at
  the knots themselves and outside the curve;
* a restricted block's pricing (vector, cost, bound) and single-deployment costs are those of
  the same candidates' own block, bit for bit;
* :func:`planner.solve.search.cheapest` gives the same answer (cost, vector, bound,
  completeness) with and without the hull bound, and that answer is the brute-force optimum.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from test_routing_oracle import every_vector, instance, wiggly_curve

from planner.solve import decompose, pricing, search
from planner.solve.columns import Decomposition
from planner.solve.hull import Hulls, hull_watts
from planner.solve.interp import interp_rows
from planner.solve.pricing import price_block, single_costs
from planner.solve.restrict import keep_rows
from planner.solve.routing import route


def _curves(
    rng: random.Random, k: int, convex: bool = False
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    xs, ds, caps = [], [], []
    for _ in range(k):
        cap = rng.uniform(0.5, 3.0)
        idle = rng.uniform(10, 100)
        x, p = wiggly_curve(rng, cap, idle, idle + rng.uniform(50, 500), rng.choice((3, 5, 9)))
        d = np.asarray(p) - idle
        if convex:  # the same increments, in ascending slope
            slopes = np.sort(np.diff(d) / np.diff(x))
            d = np.concatenate([[0.0], np.cumsum(slopes * np.diff(x))])
        xs.append(np.asarray(x))
        ds.append(d)
        caps.append(cap)  # the last knot, as every candidate's curve (route assumes it)
    return xs, ds, np.asarray(caps)


@pytest.mark.parametrize("convex", [False, True])
@pytest.mark.parametrize("seed", range(40))
def test_hull_watts_stay_below_exact_routing(seed: int, convex: bool) -> None:
    rng = random.Random(seed)
    k = rng.choice((1, 2, 3, 4))
    xs, ds, caps = _curves(rng, k, convex)
    rows = np.asarray(
        [[rng.choice((0, 1, 2, 3, 5)) for _ in range(k)] for _ in range(5)], dtype=np.int64
    )
    rows[rows.sum(axis=1) == 0, 0] = 1
    hulls = Hulls(tuple(xs), tuple(ds), caps)
    for n in rows:
        total = float(n @ caps)
        loads = np.asarray([rng.uniform(0, total) for _ in range(6)] + [0.0, total])
        exact = route(tuple(xs), tuple(ds), caps, n, loads).watts
        bound = hull_watts(hulls, n[None, :], loads)[0]
        assert (bound <= exact * (1 + 1e-9) + 1e-9).all(), (n, bound, exact)
        if convex:
            assert bound == pytest.approx(exact, rel=1e-9, abs=1e-9)


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
@pytest.mark.parametrize("seed", range(30))
def test_search_with_the_hull_bound_finds_the_brute_force_optimum(seed: int) -> None:
    rng = random.Random(1300 + seed)
    inputs = instance(rng, 1, rng.choice((2, 3, 4)), periods=3)
    dec = Decomposition(inputs, list(inputs.candidates))
    block = dec.blocks[0]
    pn, pt = dec.prices(0, np.zeros(0), np.zeros(inputs.periods), 0.0)
    costs = [float(n @ pn + pt @ decompose.load_watts(block, n)) for n in every_vector(block)]
    start = pricing.first_vector(block, pn, pt)
    assert start is not None and costs
    sb = decompose.search_block(block)
    assert sb.hulls is not None
    answers = []
    for used in (sb, dataclasses.replace(sb, hulls=None)):
        found = search.cheapest(used, pn, pt, start, lambda n: decompose.load_watts(block, n))
        answers.append((found.cost, found.n.tolist(), found.bound, found.complete))
    assert answers[0] == answers[1]
    assert answers[0][3] and answers[0][0] == pytest.approx(min(costs), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("seed", range(20))
def test_interp_rows_is_numpy_interp_to_the_last_bit(seed: int) -> None:
    rng = random.Random(1700 + seed)
    xs, ds, _ = _curves(rng, rng.choice((1, 3, 8)))
    most = max(x.size for x in xs)
    xp = np.asarray([np.concatenate([x, np.full(most - x.size, x[-1])]) for x in xs])
    fp = np.asarray([np.concatenate([d, np.full(most - d.size, d[-1])]) for d in ds])
    x = np.asarray(
        [
            np.concatenate([[rng.uniform(-1.0, 4.0) for _ in range(12)], xk, [-1.0, 1e9]])[:14]
            if rng.random() < 0.5
            else np.concatenate([xk, [rng.uniform(0.0, float(xk[-1])) for _ in range(14)]])[:14]
            for xk in xp
        ]
    )
    expected = np.asarray([np.interp(x[k], xs[k], ds[k]) for k in range(len(xs))])
    assert (interp_rows(x, xp, fp) == expected).all()


@pytest.mark.parametrize("seed", range(30))
def test_a_restricted_block_prices_as_a_fresh_one(seed: int) -> None:
    rng = random.Random(2100 + seed)
    inputs = instance(rng, 1, rng.choice((3, 4, 5)), periods=3)
    parent = Decomposition(inputs, list(inputs.candidates))
    zero_gpu, zero_t = np.zeros(len(parent.gpus)), np.zeros(inputs.periods)
    priced = price_block(parent.blocks[0], *parent.prices(0, zero_gpu, zero_t, 0.0))
    subset = [c for c in inputs.candidates if rng.random() < 0.6] or [inputs.candidates[0]]
    small = inputs.with_candidates(tuple(subset))
    if seed % 2 and priced is not None:  # as the plan's decomposition does: kept, then freed
        keep_rows(parent.blocks[0], frozenset(id(c) for c in subset))
        decompose.release(parent.blocks[0], priced.n)
    shared = Decomposition(small, list(small.candidates), parent)
    fresh = Decomposition(small, list(small.candidates))
    assert "search" in shared.blocks[0].memo, "the restricted block takes the parent's rows"
    answers = []
    for dec in (shared, fresh):
        prices = dec.prices(0, zero_gpu, zero_t, 0.0)
        found = price_block(dec.blocks[0], *prices)
        costs, counts = single_costs(dec.blocks[0], *prices)
        answers.append(
            (
                [c.key for c in dec.blocks[0].candidates],
                None if found is None else (found.cost, found.n.tolist(), found.bound),
                costs.tolist(),
                counts.tolist(),
            )
        )
    assert answers[0] == answers[1]
