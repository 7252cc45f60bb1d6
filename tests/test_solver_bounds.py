"""The lower bounds that make the exact replica search fast are valid (issue 22/23 solve speed).

Each bound is checked against brute force on random non-concave curves (the wiggly curves of
tests/test_routing_oracle.py), never against the solver's own result:

* the concave minorants (planner.solve.minorant): for every replica vector and load, the least
  minorant over the vector's deployments is at most the exact routing watts, and it grows with
  the replica count;
* screening (planner.solve.screen): every vector costing at most the threshold stays within
  the screened replica bounds;
* the Lagrangian block bound (planner.solve.lagrange) is at most the cheapest vector's cost;
* the least peak (planner.solve.peak): its bound is at most the least peak facility power of
  any plan (brute force), a cap 1 % below that is reported infeasible and one just above it
  gets a plan.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random

import numpy as np
import pytest
from test_routing_oracle import every_vector, instance, wiggly_curve

from planner.result import PlanStatus
from planner.solve import decompose, pricing, search
from planner.solve.columns import Decomposition
from planner.solve.lagrange import lagrangian_bound, relaxation
from planner.solve.minorant import minorants
from planner.solve.optimize import solve
from planner.solve.peak import least_peak
from planner.solve.pricing import price_block
from planner.solve.routing import route


def _curves(rng: random.Random, k: int) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    xs, ds, caps = [], [], []
    for _ in range(k):
        cap = rng.uniform(0.5, 3.0)
        idle = rng.uniform(10, 100)
        x, p = wiggly_curve(rng, cap, idle, idle + rng.uniform(50, 500), rng.choice((3, 5, 9)))
        xs.append(np.asarray(x))
        ds.append(np.asarray(p) - idle)
        caps.append(cap)
    return xs, ds, np.asarray(caps)


@pytest.mark.parametrize("seed", range(40))
def test_minorants_stay_below_exact_routing(seed: int) -> None:
    rng = random.Random(seed)
    k = rng.choice((1, 2, 3))
    xs, ds, caps = _curves(rng, k)
    hats = minorants(tuple(xs), tuple(ds))
    n = np.asarray([rng.choice((0, 1, 2, 3, 5)) for _ in range(k)], dtype=np.int64)
    if n.sum() == 0:
        n[0] = 1
    total = float(n @ caps)
    loads = np.asarray([rng.uniform(0, total) for _ in range(6)] + [total])
    exact = route(tuple(xs), tuple(ds), caps, n, loads).watts
    support = np.flatnonzero(n)
    q = hats.watts(support, n[support].astype(np.float64), loads)
    assert (q.min(axis=0) <= exact * (1 + 1e-9) + 1e-9).all()
    more = hats.watts(support, n[support] + 1.0, loads)
    assert (more >= q - 1e-9).all()


def _block(seed: int) -> tuple[decompose.ModelBlock, np.ndarray, np.ndarray]:
    inputs = instance(random.Random(seed), 1, random.Random(seed).choice((2, 3)), periods=3)
    dec = Decomposition(inputs, list(inputs.candidates))
    price_n, price_t = dec.prices(0, np.zeros(0), np.zeros(inputs.periods), 0.0)
    return dec.blocks[0], price_n, price_t


def _cost(block: decompose.ModelBlock, n: np.ndarray, pn: np.ndarray, pt: np.ndarray) -> float:
    return float(n @ pn + pt @ decompose.load_watts(block, n))


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.slow
def test_screening_keeps_every_vector_within_the_threshold(seed: int) -> None:
    block, pn, pt = _block(300 + seed)
    vectors = every_vector(block)
    costs = [_cost(block, n, pn, pt) for n in vectors]
    threshold = sorted(costs)[len(costs) // 3]
    ub = search.screen(decompose.search_block(block), pn, pt, threshold)
    for n, cost in zip(vectors, costs, strict=True):
        if cost <= threshold:
            assert (n <= ub).all(), (n, ub, cost, threshold)


@pytest.mark.parametrize("seed", range(20))
def test_lagrangian_bound_is_below_the_cheapest_vector(seed: int) -> None:
    block, pn, pt = _block(400 + seed)
    vectors = every_vector(block)
    costs = [_cost(block, n, pn, pt) for n in vectors]
    best = vectors[int(np.argmin(costs))]
    sb = decompose.search_block(block)
    for start in (best, vectors[0]):
        relaxed = relaxation(
            block.curve_x, block.curve_d, sb.knot_x, sb.knot_d, block.loads, pn, pt, start
        )
        assert relaxed is not None
        for n, cost in zip(vectors, costs, strict=True):  # the linear bound, vector by vector
            assert relaxed.constant + float(n @ relaxed.cost) <= cost * (1 + 1e-9) + 1e-9
        need = block.peak - 1e-9 * max(1.0, block.peak)
        bound = lagrangian_bound(relaxed, block.cap, block.ub, need, block.demand.min_replicas)
        assert bound <= min(costs) * (1 + 1e-9) + 1e-9


def _least_peak_kw(inputs: object) -> float:
    """Brute force: the least peak facility power over every combination of vectors."""
    assert hasattr(inputs, "models")
    dec = Decomposition(inputs, list(inputs.candidates))  # type: ignore[attr-defined]
    per_model = []
    for b, block in enumerate(dec.blocks):
        per_model.append([dec.column(b, n).power_kw for n in every_vector(block)])
    return min(float(np.max(np.sum(c, axis=0))) for c in itertools.product(*per_model))


@pytest.mark.parametrize("seed", range(6))
def test_least_peak_bound_is_valid_and_proves_a_cap_below_it(seed: int) -> None:
    inputs = instance(random.Random(600 + seed), 2, 2, periods=3)
    least_kw = _least_peak_kw(inputs)
    dec = Decomposition(inputs, list(inputs.candidates))
    first = [
        dec.column(b, price_block(blk, *dec.prices(b, np.zeros(0), np.zeros(3), 0.0)).n)
        for b, blk in enumerate(dec.blocks)
    ]
    found = least_peak(dec, first, least_kw, math.inf)  # the bound never passes least_kw
    assert found is not None
    assert found.bound_kw <= least_kw * (1 + 1e-9)
    below = dataclasses.replace(inputs, power_cap_kw=least_kw * 0.99)
    plan = solve(below, baselines=False)
    assert plan.status == PlanStatus.INFEASIBLE, plan.solve.messages
    above = dataclasses.replace(inputs, power_cap_kw=least_kw * 1.0001)
    assert solve(above, baselines=False).has_solution


@pytest.mark.parametrize("seed", range(20))
def test_minorant_is_the_curve_on_its_concave_part(seed: int) -> None:
    """Tight where it can be: one deployment below its first convex kink draws exactly q."""
    rng = random.Random(900 + seed)
    xs, ds, caps = _curves(rng, 1)
    hats = minorants(tuple(xs), tuple(ds))
    slopes = np.diff(ds[0]) / np.diff(xs[0])
    rise = np.flatnonzero(slopes[1:] > slopes[:-1] * (1 + 1e-9) + 1e-12)
    concave_to = xs[0][rise[0] + 1] if rise.size else xs[0][-1]
    n = rng.choice((1, 2, 4))
    loads = np.linspace(0.0, n * concave_to, 7)
    q = hats.watts(np.zeros(1, dtype=np.int64), np.asarray([float(n)]), loads)[0]
    exact = n * np.interp(loads / n, xs[0], ds[0])
    assert q == pytest.approx(exact, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_pricing_without_the_search_finds_what_the_search_finds(seed: int) -> None:
    """price_block skips the search when screening leaves only the first vector's candidate
    (planner.solve.pricing._alone): its answer is the brute-force optimum, the same as the
    search's from the same first vector, on one- to three-candidate blocks."""
    rng = random.Random(900 + seed)
    inputs = instance(rng, 1, rng.choice((1, 1, 2, 3)), periods=3)
    dec = Decomposition(inputs, list(inputs.candidates))
    block = dec.blocks[0]
    pn, pt = dec.prices(0, np.zeros(0), np.zeros(inputs.periods), 0.0)
    found = price_block(block, pn, pt)
    vectors = every_vector(block)
    assert found is not None and vectors
    least = min(_cost(block, n, pn, pt) for n in vectors)
    assert found.complete and found.bound == found.cost
    assert found.cost == pytest.approx(least, rel=1e-9, abs=1e-9)
    start = pricing.first_vector(block, pn, pt)
    assert start is not None
    searched = search.cheapest(
        decompose.search_block(block), pn, pt, start, lambda n: decompose.load_watts(block, n)
    )
    assert (searched.cost, searched.n.tolist(), searched.bound, searched.complete) == (
        found.cost,
        found.n.tolist(),
        found.bound,
        found.complete,
    )


@pytest.mark.parametrize("seed", range(20))
def test_a_search_cut_by_its_deadline_keeps_a_valid_bound(seed: int) -> None:
    """Past its deadline the exact search routes nothing more (the time limit of column
    generation): it answers its start vector's cost, a bound no higher than the brute-force
    optimum, and price_block does not keep the cut answer for the same prices."""
    block, pn, pt = _block(1300 + seed)
    vectors = every_vector(block)
    least = min(_cost(block, n, pn, pt) for n in vectors)
    start = pricing.first_vector(block, pn, pt)
    assert start is not None
    sb = decompose.search_block(block)
    watts = lambda n: decompose.load_watts(block, n)  # noqa: E731
    full = search.cheapest(sb, pn, pt, start, watts)
    cut = search.cheapest(sb, pn, pt, start, watts, deadline=0.0)  # long past
    assert cut.cost == pytest.approx(_cost(block, start, pn, pt), rel=1e-12)
    assert cut.bound <= least * (1 + 1e-9) + 1e-9
    assert full.cost <= cut.cost * (1 + 1e-12) + 1e-12
    fresh = dataclasses.replace(block)  # an empty memo
    early = price_block(fresh, pn, pt, deadline=0.0)
    assert early is not None and early.bound <= least * (1 + 1e-9) + 1e-9
    kept = [v for k, v in fresh.memo.items() if isinstance(k, tuple) and k[0] == "price"]
    assert all(v.complete for v in kept)  # only a proven answer outlives its deadline
    priced = price_block(fresh, pn, pt)  # no deadline: the full search
    assert priced is not None and priced.cost == pytest.approx(full.cost, rel=1e-12)
