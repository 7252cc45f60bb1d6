"""Cheap inventory proofs with regions, run before any solver: each entry in one region.

With regions (docs/method.md, "Regions") every model entry is placed in one of its regions, all
its replicas there, and its GPUs count against that region's inventory only. The fleet-wide
bounds of :mod:`planner.solve.bounds` would add up the GPUs of every region an entry may use;
here they count per region:

* **an entry**: in region r, with the candidates it has there, it serves at most ``most_r``
  req/s (:func:`planner.solve.bounds.inventory_most` on region r's GPUs of its usable types)
  against the peak it needs there (:func:`planner.solve.bounds.capacity_need`). When that is
  short in every region it may use (and every usable type of each is limited), no plan exists;
  the message names each region and what the entry serves there at most.
  Within a region the bound counts whole aggregated replicas: a type's GPUs serve at most the
  best unbounded knapsack of its aggregated replicas (``Σ n_c·cap_c`` with ``Σ n_c·GPUs_c <=
  k``), the rest of its GPUs at the best req/s per GPU of the disaggregated units that use it
  (counted per GPU: the search's elastic explanation names each of their types' need by region,
  :mod:`planner.solve.milp_regions`); a type with more than :data:`KNAPSACK_MAX_CELLS` cells
  of that knapsack is bounded per GPU only (each bound is valid, so their sum over types is).
  The knapsack runs only where it could prove more: whole replicas lose less than one replica
  per type.
* **entries together**: an entry placed in region r takes at least ``g_mr`` of r's GPUs: the
  ceiling of :func:`planner.solve.bounds.gpus_needed` (GPUs are whole), and with a load at least
  its smallest replica there. For a set S of regions, the entries that may use only regions of
  S take at least ``Σ_m min_{r in S} g_mr`` GPUs of S; above the GPUs S holds of their usable
  types, no plan exists. Every region alone is tried, and every set of regions when there are
  at most :data:`SUBSETS_MAX_REGIONS` (else only all of them); only the smallest violated sets
  are named, each with its regions' GPUs one by one, and entries already proven unservable
  above are left out.
"""

from __future__ import annotations

import itertools
import math

from planner.inputs import Candidate, ModelDemand, PlanningInputs
from planner.solve.bounds import (
    capacity_need,
    gpu_messages,
    gpus_needed,
    inventory_most,
    power_messages,
)
from planner.solve.regions import regional_power_messages

SUBSETS_MAX_REGIONS = 6
"""Regions up to which every set of them is tried (above: each region alone, and all)."""
KNAPSACK_MAX_CELLS = 100_000
"""Largest GPUs × candidates of one type whose whole-replica knapsack is solved."""


def infeasibility_messages(inputs: PlanningInputs) -> list[str]:
    """Every cheap bound the scenario violates ([] when none proves it infeasible): GPUs (per
    region with regions) and power (the site's cap, or the regions' caps)."""
    gpus = regional_gpu_messages(inputs) if inputs.regions else gpu_messages(inputs)
    return gpus + power_messages(inputs) + regional_power_messages(inputs)


def _by_place(inputs: PlanningInputs) -> dict[str, dict[str, list[Candidate]]]:
    """Entry -> region -> its feasible candidates there (regions in the scenario's order)."""
    order = {r.name: i for i, r in enumerate(inputs.regions)}
    out: dict[str, dict[str, list[Candidate]]] = {m.name: {} for m in inputs.models}
    for c in sorted(inputs.feasible_candidates(), key=lambda c: order.get(c.region, len(order))):
        out[c.name].setdefault(c.region, []).append(c)
    return out


def _whole(stock: int, replicas: list[tuple[float, int]]) -> list[float]:
    """best[k]: the most req/s of whole *replicas* ((req/s, GPUs) each, any number of each) on
    at most k GPUs, k = 0..stock (an unbounded knapsack)."""
    best = [0.0] * (stock + 1)
    for k in range(1, stock + 1):
        best[k] = max([best[k - 1]] + [best[k - n] + cap for cap, n in replicas if n <= k])
    return best


def most_in_region(inputs: PlanningInputs, cands: list[Candidate], peak: float) -> float | None:
    """The most req/s *cands* (one entry's, in one region) serve on that region's GPUs, whole
    replicas counted (module docstring); None when a type they use is unlimited. The per-GPU
    bound alone when whole replicas cannot bring it below *peak* (each type loses less than one
    of its replicas' req/s to whole replicas)."""
    fractional = inventory_most(inputs, cands)
    if fractional is None:
        return None
    alone: dict[str, list[tuple[float, int]]] = {}  # inventory key -> its aggregated replicas
    mixed: dict[str, float] = {}  # inventory key -> best req/s per GPU of a unit using it
    for c in cands:
        cap = c.max_requests_per_s_per_replica
        if not c.disaggregated:
            key, n = c.stock_use[0]
            alone.setdefault(key, []).append((cap, n))
        else:
            for key, _ in c.stock_use:
                mixed[key] = max(mixed.get(key, 0.0), cap / c.gpus_per_replica)
    lost = sum(max(cap for cap, _ in replicas) for replicas in alone.values())
    if fractional - lost >= peak:
        return fractional
    total = 0.0
    for key in sorted(set(alone) | set(mixed)):
        stock, replicas = inputs.stock[key] or 0, alone.get(key, [])
        per_gpu = max([mixed.get(key, 0.0)] + [cap / n for cap, n in replicas])
        if not replicas or stock * len(replicas) > KNAPSACK_MAX_CELLS:
            total += stock * per_gpu
            continue
        best, rest = _whole(stock, replicas), mixed.get(key, 0.0)
        total += max(best[k] + (stock - k) * rest for k in range(stock + 1))
    return min(total, fractional)


def _digits(pairs: list[tuple[float, float]]) -> int:
    """Significant digits (3 or more) at which each (need, most) pair reads apart."""
    digits = 3
    while digits < 9 and any(a != b and f"{a:.{digits}g}" == f"{b:.{digits}g}" for a, b in pairs):
        digits += 1
    return digits


def _listed(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _unservable(m: ModelDemand, places: dict[str, list[Candidate]], inputs: PlanningInputs) -> str:
    """Why entry *m* can be served in none of its regions ('' when one of them may serve it)."""
    short: list[tuple[str, float, float]] = []  # (region, peak there, most there)
    for region, cands in places.items():
        peak = capacity_need(m, cands)
        most = most_in_region(inputs, cands, peak)
        if most is None or most >= peak * (1 - 1e-9):
            return ""
        short.append((region, peak, most))
    if not short:
        return ""
    d = _digits([(peak, most) for _, peak, most in short])
    spare = " with its failover" if m.failover is not None else ""
    if len({f"{peak:.{d}g}" for _, peak, _ in short}) == 1:
        need = f"needs {short[0][1]:.{d}g} req/s at its peak{spare}"
    else:  # failover: the smallest replicas it could lose differ by region
        need = f"needs at its peak{spare} " + _listed(
            [f"{peak:.{d}g} req/s in region {r}" for r, peak, _ in short]
        )
    serves = _listed([f"{most:.{d}g} req/s in region {r}" for r, _, most in short])
    one = ", and it is placed in one region" if len(short) > 1 else ""
    return (
        f"inventory: {m.name} {need}, the available GPUs of its usable types serve at most "
        f"{serves}{one}"
    )


def regional_gpu_messages(inputs: PlanningInputs) -> list[str]:
    """The proofs of the module docstring ([] when they prove nothing)."""
    by_place = _by_place(inputs)
    messages: list[str] = []
    needs: dict[str, dict[str, int]] = {}  # entry -> region -> GPUs it takes there at least
    kinds: dict[str, dict[str, set[str]]] = {}  # entry -> region -> inventory keys it may use
    for m in inputs.models:
        places = by_place[m.name]
        if not places:
            continue
        why = _unservable(m, places, inputs)
        if why:
            messages.append(why)
            continue
        needs[m.name] = {r: _gpus_in(m, cands) for r, cands in places.items()}
        kinds[m.name] = {
            r: {g for c in cands for g, _ in c.stock_use} for r, cands in places.items()
        }
    return messages + _together(inputs, needs, kinds)


def _gpus_in(m: ModelDemand, cands: list[Candidate]) -> int:
    """The whole GPUs entry *m* takes at least on *cands* (one region's): its fractional need,
    and one replica when it has a load."""
    peak = capacity_need(m, cands)
    one = min(c.gpus_per_replica for c in cands) if peak > 0 else 0
    return max(math.ceil(gpus_needed(m, cands, peak) - 1e-9), one)


def _region_sets(names: list[str]) -> list[tuple[str, ...]]:
    """The sets of regions tried, smallest first (module docstring)."""
    if len(names) <= SUBSETS_MAX_REGIONS:
        return [s for k in range(1, len(names) + 1) for s in itertools.combinations(names, k)]
    alone: list[tuple[str, ...]] = [(r,) for r in names]
    return alone + [tuple(names)]


def _together(
    inputs: PlanningInputs, needs: dict[str, dict[str, int]], kinds: dict[str, dict[str, set[str]]]
) -> list[str]:
    """The smallest sets of regions whose entries need more GPUs than the sets hold."""
    messages: list[str] = []
    proven: list[set[str]] = []
    for regions in _region_sets([r.name for r in inputs.regions]):
        inside = set(regions)
        if any(p <= inside for p in proven):
            continue
        entries = [name for name, need in needs.items() if need and set(need) <= inside]
        need = sum(min(needs[name].values()) for name in entries)
        if not entries or need <= 0:
            continue
        keys = {r: set().union(*(kinds[name].get(r, set()) for name in entries)) for r in regions}
        held = {r: [inputs.stock.get(k) for k in sorted(ks)] for r, ks in keys.items()}
        if any(v is None for counts in held.values() for v in counts):
            continue  # an unlimited type: no bound
        have = {r: sum(v or 0 for v in counts) for r, counts in held.items()}
        if need <= sum(have.values()):
            continue
        proven.append(inside)
        messages.append(_together_message(regions, need, have))
    return messages


def _together_message(regions: tuple[str, ...], need: int, have: dict[str, int]) -> str:
    if len(regions) == 1:
        (r,) = regions
        return (
            f"inventory: the loads that may use only region {r} need at least {need} GPUs "
            f"there, {have[r]} {'is' if have[r] == 1 else 'are'} available"
        )
    each = _listed([f"{have[r]} in region {r}" for r in regions])
    return (
        f"inventory: the loads that may use only regions {_listed(list(regions))} need at least "
        f"{need} GPUs there (each entry in one region, its GPUs whole), {each} are available"
    )
