"""The plan JSON check (:mod:`planner.documents.verify`) of candidate records the optimiser cannot
take.

A report rebuilds every candidate of the plan (:func:`planner.documents.records.candidate_of`)
and the planning inputs around them; a candidate :class:`planner.inputs.Candidate` refuses (a
layout degree below 1, fewer GPUs than the layout runs on, a negative batch, a negative figure,
a feasible candidate without capacity or ITL, curves of different lengths, rates that do not
start at 0 and ascend, a power curve that falls) or one that the planning inputs refuse (a model
entry, GPU type or region the plan does not have) stopped it with ``planning inputs: candidate
support-bot,L40S,2: …``, naming neither the file nor the field, even with ``--trust``; a curve
shortened on an allocated candidate ended the check itself in an internal error. Each is now one
line naming the field (``candidates[3].load_curve_requests_per_s: 4 knots, but its
power_curve_w_per_replica has 6``), found on the plain JSON mapping before anything is
recomputed or built from it. A vectorised pass
over all the records (:func:`_suspects`) leaves the field-by-field checks to the few it cannot
clear: the 9,198 candidates of the 18 MB plan of ``benchmarks/bench_large.py`` check in about
22 ms, where building them costs 0.2 s.

:func:`.verify_periods.period_problems` checks the per-period lists the same way.
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np

from planner.documents.json_values import is_non_negative, is_number, is_whole
from planner.documents.verify_intervals import interval_problems
from predictors.core.escape import short_repr

#: Whole numbers of a candidate, at least 1.
COUNTS = ("tp", "gpus_per_replica")
#: Layout degrees a plan written before layouts leaves null (1); otherwise at least 1.
DEGREES = ("pipeline_parallel", "data_parallel", "expert_parallel", "nodes")
#: A candidate's figures: finite numbers >= 0.
FIGURES = (
    "max_requests_per_s_per_replica",
    "idle_power_w_per_replica",
    "energy_j_per_request",
    "usd_per_hour_per_replica",
    "power_w_per_gpu_at_capacity",
)
#: The knots of a candidate's curve, then the values at them.
LOAD, POWER, ITL = "load_curve_requests_per_s", "power_curve_w_per_replica", "itl_curve_s"


def _shown(value: Any) -> str:
    """*value* as the JSON has it (``null``, ``true``), short."""
    return "null" if value is None else short_repr(value)


def _curve(c: dict[str, Any], key: str) -> list[Any]:
    value = c.get(key)
    return value if isinstance(value, list) else []


def curve_knots(c: dict[str, Any]) -> tuple[int, str]:
    """(knots, the curve that has them) of candidate record *c*: the length most of its curves
    share (the load and power curves, the ITL curve when it has one), the load curve's on a
    tie, so that the one curve an edit shortened is the one named."""
    lengths = {LOAD: len(_curve(c, LOAD)), POWER: len(_curve(c, POWER))}
    if _curve(c, ITL):
        lengths[ITL] = len(_curve(c, ITL))
    votes = Counter(lengths.values())
    knots = max(votes, key=lambda n: (votes[n], n == lengths[LOAD]))
    return knots, next(k for k, n in lengths.items() if n == knots)


def _numbers(where: str, c: dict[str, Any]) -> Iterator[str]:
    """The layout, the batch and the figures, as :class:`planner.inputs.Candidate` checks them."""
    for key in COUNTS:
        if not is_whole(c.get(key), 1):
            yield f"{where}.{key}: {_shown(c.get(key))} is impossible (at least 1)"
    for key in DEGREES:
        if c.get(key) is not None and not is_whole(c.get(key), 1):
            yield f"{where}.{key}: {_shown(c.get(key))} is impossible (at least 1)"
    degrees = [c.get(k) for k in ("tp", "pipeline_parallel", "data_parallel")]
    if all(d is None or is_whole(d, 1) for d in degrees) and is_whole(c.get("gpus_per_replica"), 1):
        running = math.prod(d or 1 for d in degrees)
        if c["gpus_per_replica"] < running:
            yield (
                f"{where}.gpus_per_replica: {c['gpus_per_replica']} is impossible (fewer than "
                f"the tp × pipeline_parallel × data_parallel = {running} GPUs a replica runs on)"
            )
    if not is_whole(c.get("batch_size"), 0):
        yield f"{where}.batch_size: {_shown(c.get('batch_size'))} is impossible (at least 0)"
    for key in FIGURES:
        if not is_non_negative(c.get(key)):
            yield f"{where}.{key}: {_shown(c.get(key))} is impossible (negative or not finite)"
    yield from _power_bounds(where, c)
    if c.get("feasible") is not False:
        rate, itl = c.get("max_requests_per_s_per_replica"), c.get("itl_s_at_capacity")
        if is_non_negative(rate) and rate == 0:  # a finite number >= 0 that is not above 0
            yield (
                f"{where}.max_requests_per_s_per_replica: {_shown(rate)} is impossible for a "
                "feasible candidate (above 0)"
            )
        if not is_number(itl):
            yield (
                f"{where}.itl_s_at_capacity: {_shown(itl)} is impossible for a feasible "
                "candidate (a finite ITL)"
            )


#: Per-GPU powers of a candidate that lie in [idle, TDP], as the predictors give them (the
#: interval's ends too, checked with the interval: :mod:`.verify_intervals`).
POWER_PER_GPU = ("power_w_per_gpu_at_capacity", "power_w_per_gpu_predicted")


def _power_bounds(where: str, c: dict[str, Any]) -> Iterator[str]:
    """A GPU draws at least its idle and at most its TDP: the candidate's idle below its TDP and
    its per-GPU powers inside [idle, TDP] (relative 1e-6)."""
    idle, tdp = c.get("idle_power_w_per_gpu"), c.get("tdp_w_per_gpu")
    if not (is_non_negative(idle) and is_non_negative(tdp)):
        return
    assert idle is not None and tdp is not None
    if idle >= tdp:
        yield f"{where}.idle_power_w_per_gpu: {_shown(idle)} W is not below tdp_w_per_gpu {tdp:g} W"
        return
    slack = 1e-6 * tdp
    for key in POWER_PER_GPU:
        value = c.get(key)  # a negative one is named once, as impossible (_numbers)
        if is_non_negative(value) and not idle - slack <= value <= tdp + slack:
            yield (
                f"{where}.{key}: {_shown(value)} W is outside the GPU's [idle, TDP] = "
                f"[{idle:g}, {tdp:g}] W"
            )


def _within_power_bounds(records: list[dict[str, Any]]) -> np.ndarray:
    """:func:`_power_bounds` on every record at once: True where it has nothing to say."""
    keys = ("idle_power_w_per_gpu", "tdp_w_per_gpu", *POWER_PER_GPU)
    table = np.array([[r.get(k) for k in keys] for r in records], dtype=np.float64)
    table = table.reshape(len(records), len(keys))
    idle, tdp, powers = table[:, 0], table[:, 1], table[:, 2:]
    slack = 1e-6 * tdp
    with np.errstate(invalid="ignore"):
        known = np.isfinite(idle) & np.isfinite(tdp) & (idle >= 0) & (tdp >= 0)
        inside = np.isnan(powers) | (
            (powers >= (idle - slack)[:, None]) & (powers <= (tdp + slack)[:, None])
        )
        good: np.ndarray = ~known | ((idle < tdp) & inside.all(axis=1))
    return good


def _curves(where: str, c: dict[str, Any]) -> Iterator[str]:
    """Curves of one length (an empty ITL curve is none) and of the shape of a replica's."""
    knots, by = curve_knots(c)
    for key in (LOAD, POWER, ITL):
        n = len(_curve(c, key))
        if n != knots and (n or key != ITL):
            yield f"{where}.{key}: {n} knots, but its {by} has {knots}"
    try:
        yield from _shapes(where, _curve(c, LOAD), _curve(c, POWER))
    except TypeError:  # a value that is no number (the plan document's types rule it out)
        yield f"{where}.{LOAD}: not a list of numbers"


def _shapes(where: str, xs: list[Any], ps: list[Any]) -> Iterator[str]:
    """Rates from 0 strictly up, power that does not fall with load."""
    if xs and xs[0] != 0:
        yield f"{where}.{LOAD}[0]: {_shown(xs[0])} is impossible (the curve starts at 0 req/s)"
    elif not all(map(operator.lt, xs, xs[1:])):
        j = next(j for j in range(1, len(xs)) if not xs[j - 1] < xs[j])
        yield (
            f"{where}.{LOAD}[{j}]: {_shown(xs[j])} is impossible (not above the knot before it, "
            f"{_shown(xs[j - 1])}: the rates ascend)"
        )
    if not all(map(operator.le, ps, ps[1:])):
        j = next(j for j in range(1, len(ps)) if not ps[j - 1] <= ps[j])
        yield (
            f"{where}.{POWER}[{j}]: {_shown(ps[j])} W is impossible (below the knot before it, "
            f"{_shown(ps[j - 1])} W: a replica's power does not fall as its load grows)"
        )


def _placement(
    where: str, c: dict[str, Any], names: set[Any], inventory: Any, stock: dict[Any, Any] | None
) -> Iterator[str]:
    """Its model entry, its GPU type (and each pool's) in the plan's inventory and its region's
    (*stock*: region name -> inventory in a plan with regions, None without)."""
    name, gpu, region = c.get("name"), c.get("gpu"), c.get("region")
    if not (isinstance(name, str) and name in names):
        yield f"{where}.name: {_shown(name)} is not a model entry of the plan"
    if isinstance(inventory, dict) and not (isinstance(gpu, str) and gpu in inventory):
        yield f"{where}.gpu: {_shown(gpu)} is not in the plan's inventory"
    if stock is None:
        if region:
            yield f"{where}.region: {_shown(region)}, but the plan has no regions"
    elif not (isinstance(region, str) and region in stock):
        yield f"{where}.region: {_shown(region)} is not a region of the plan"
    elif isinstance(stock[region], dict) and not (isinstance(gpu, str) and gpu in stock[region]):
        yield f"{where}.gpu: {_shown(gpu)} is not in the inventory of its region {_shown(region)}"
    pools = c.get("pools")
    for j, pool in enumerate(pools if isinstance(pools, list) else ()):
        other = pool.get("gpu") if isinstance(pool, dict) else None
        if not isinstance(other, str) or other == gpu:
            continue  # a malformed pool is named by the pool checks; the unit's own type above
        at = f"{where}.pools[{j}].gpu"
        if isinstance(inventory, dict) and other not in inventory:
            yield f"{at}: {_shown(other)} is not in the plan's inventory"
        elif stock is not None and isinstance(region, str) and isinstance(stock.get(region), dict):
            if other not in stock[region]:
                yield f"{at}: {_shown(other)} is not in the inventory of its region " + _shown(
                    region
                )


#: Integer fields of a candidate (the layout degrees may be null), then its number fields.
INTEGERS = (*COUNTS, *DEGREES, "batch_size")
NUMBERS = (*FIGURES, "itl_s_at_capacity")


def _suspects(
    records: list[Any], names: set[Any], inventory: Any, stock: dict[Any, Any] | None
) -> Iterable[int]:
    """The indices of the candidate *records* that may fail a check of :func:`_numbers`,
    :func:`_curves` or :func:`_placement`: those a vectorised pass over all of them cannot clear
    (every one when the records are not of the plan document's types). The checks one by one
    cost 10 µs a candidate (90 ms on the 9,198 of the 18 MB plan), this pass 2.4 µs (22 ms)."""
    try:
        return _flagged(records, names, inventory, stock)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return range(len(records))  # not a plan document's records: each is checked


def _column_types(rows: list[tuple[Any, ...]]) -> set[type]:
    return set(map(type, chain.from_iterable(rows)))


def _flagged(
    records: list[dict[str, Any]], names: set[Any], inventory: Any, stock: dict[Any, Any] | None
) -> list[int]:
    """:func:`_suspects` on records of the plan document's types (TypeError on others): the
    numbers as arrays (null as NaN), the curves' lengths as arrays, the curves' shapes and the
    placements (model entry, GPU and its pools' GPUs, region) once per distinct one."""
    n = len(records)
    integers = list(map(itemgetter(*INTEGERS), records))
    numbers = list(map(itemgetter(*NUMBERS), records))
    feasible = list(map(itemgetter("feasible"), records))
    if not (
        _column_types(integers) <= {int, type(None)}
        and _column_types(numbers) <= {int, float, type(None)}
        and set(map(type, feasible)) <= {bool}
    ):
        raise TypeError("not the plan document's types")
    ints = np.fromiter(chain.from_iterable(integers), np.float64, n * len(INTEGERS))
    ints = ints.reshape(n, len(INTEGERS))  # null (a degree of an older plan, or none): NaN
    nums = np.fromiter(chain.from_iterable(numbers), np.float64, n * len(NUMBERS))
    nums = nums.reshape(n, len(NUMBERS))
    tp, gpus, batch = ints[:, 0], ints[:, 1], ints[:, -1]
    degrees = ints[:, 2 : 2 + len(DEGREES)]
    pp, dp = (np.where(np.isnan(d), 1.0, d) for d in (degrees[:, 0], degrees[:, 1]))
    with np.errstate(invalid="ignore"):
        ok = (tp >= 1) & (gpus >= 1) & (batch >= 0) & (gpus >= tp * pp * dp)
        ok &= (np.isnan(degrees) | (degrees >= 1)).all(axis=1)
        ok &= ((nums[:, :-1] >= 0) & (nums[:, :-1] < np.inf)).all(axis=1)
        rate, itl = nums[:, 0], nums[:, -1]
        ok &= ~np.asarray(feasible, dtype=bool) | ((rate > 0) & np.isfinite(itl))
    loads = list(map(itemgetter(LOAD), records))
    powers = list(map(itemgetter(POWER), records))
    knots = np.fromiter(map(len, loads), np.int64, n)
    itls = np.fromiter(map(len, map(itemgetter(ITL), records)), np.int64, n)
    ok &= (knots == np.fromiter(map(len, powers), np.int64, n)) & ((itls == 0) | (itls == knots))
    shaped = [  # rates from 0 strictly up, power that does not fall (sorted: 2x the speed)
        not xs or (xs[0] == 0 and all(map(operator.lt, xs, xs[1:])) and ps == sorted(ps))
        for xs, ps in zip(loads, powers, strict=True)
    ]
    ok &= np.asarray(shaped, dtype=bool)
    ok &= _within_power_bounds(records)
    flagged = set(np.flatnonzero(~ok).tolist())
    region_of = operator.methodcaller("get", "region")
    names_of, gpus_of = map(itemgetter("name"), records), map(itemgetter("gpu"), records)
    types = [frozenset(p["gpu"] for p in r.get("pools") or ()) for r in records]
    keys = list(zip(names_of, gpus_of, map(region_of, records), types, strict=True))
    sites = {None, ""} if stock is None else stock
    unplaced = set()
    for key in set(keys):
        name, gpu, region, pool_gpus = key
        listed = isinstance(inventory, dict) and region in sites
        for g in {gpu} | pool_gpus:
            listed = listed and g in inventory
            if listed and stock is not None and isinstance(stock[region], dict):
                listed = g in stock[region]
        if name not in names or not listed:
            unplaced.add(key)
    if unplaced:
        flagged.update(i for i, key in enumerate(keys) if key in unplaced)
    return sorted(flagged)


def candidate_problems(data: dict[str, Any]) -> list[str]:
    """Every candidate record of the plan JSON *data* that the optimiser refuses (module doc),
    then every interval that does not hold its point (:mod:`.verify_intervals`), one line per
    field."""
    names = {m.get("name") for m in data.get("models") or [] if isinstance(m, dict)}
    regions = data.get("regions")
    stock = (
        {r.get("name"): r.get("inventory") for r in regions if isinstance(r, dict)}
        if isinstance(regions, list) and regions
        else None
    )
    records = data.get("candidates")
    if not isinstance(records, list):
        return []
    inventory = data.get("inventory")
    out: list[str] = []
    for i in _suspects(records, names, inventory, stock):
        c = records[i]
        if not isinstance(c, dict):
            continue
        where = f"candidates[{i}]"
        out.extend(_numbers(where, c))
        out.extend(_curves(where, c))
        out.extend(_placement(where, c, names, inventory, stock))
    return out + interval_problems(records)
