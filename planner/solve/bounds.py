"""Cheap infeasibility proofs run before any solver: least facility power and least GPUs.

Both are valid lower bounds of every plan, so a violated one proves the scenario infeasible in
milliseconds and names the reason:

* **power**: ``n`` replicas of a candidate serving ``x`` req/s draw ``n · curve(x/n)`` watts.
  (a) ``curve(r) >= r · s`` with ``s = min over the curve's knots of curve(r_j) / r_j`` (the
  least watts per req/s anywhere on the piecewise-linear curve, idle included), so a model
  with load L needs at least ``L · min_c s_c`` watts. (b) ``n · curve(x/n) >= n · idle + x · e``
  with ``e`` the curve's least slope above idle (``energy_j_per_request``), and the replicas,
  kept in every period, must cover the peak load P: ``Σ n · idle >= max(P · min_c idle/cap,
  ceil(P / max_c cap) · min_c idle, min_replicas · min_c idle)``; so the model needs at least
  that idle floor + ``L · min_c e_c`` watts. Per period the larger of (a) and (b), summed over
  models; facility kW = PUE × GPU W / 1000 against the power cap.
* **GPUs**: a model's peak load P needs at least ``P · min_c (GPUs per replica / capacity)``
  GPUs (fractional) and ``min_replicas`` times the fewest GPUs per replica; the sum over models
  is compared with the GPUs available when every usable type is limited. Per model, the
  capacity the inventory allows (``Σ_g available_g · max_c on g cap_c / TP_c``) must cover its
  peak. With regions an entry is placed in one region: :mod:`planner.solve.inventory_regions`
  counts each region's GPUs apart instead (:func:`gpu_messages` is the one site's).
"""

from __future__ import annotations

import math
import operator

from planner.inputs import Candidate, ModelDemand, PlanningInputs
from planner.text import kw_apart


def watts_per_request_s(c: Candidate) -> float:
    """Least replica watts per req/s on *c*'s power curve (idle included)."""
    xs, ps = c.curve
    return min(map(operator.truediv, ps[1:], xs[1:]))


def _by_model(inputs: PlanningInputs) -> dict[str, list[Candidate]]:
    out: dict[str, list[Candidate]] = {m.name: [] for m in inputs.models}
    for c in inputs.feasible_candidates():
        out[c.name].append(c)
    return out


def capacity_need(m: ModelDemand, cands: list[Candidate]) -> float:
    """Capacity (req/s) model entry *m* needs at least: its peak, plus with failover k the k
    smallest replicas it could lose (every loss unit holds at least one replica)."""
    peak = max(m.requests_per_s_by_period)
    if m.failover is None or peak <= 0 or not cands:
        return peak
    return peak + m.failover.count * min(c.max_requests_per_s_per_replica for c in cands)


def least_model_w(m: ModelDemand, cands: list[Candidate]) -> list[float]:
    """Per period, the least GPU watts model entry *m* draws on any of *cands* (the module
    docstring's power bound; zeros without candidates)."""
    if not cands:
        return [0.0] * len(m.requests_per_s_by_period)
    per_rps = min(watts_per_request_s(c) for c in cands)
    peak = capacity_need(m, cands)
    min_idle = min(c.idle_power_w_per_replica for c in cands)
    most_cap = max(c.max_requests_per_s_per_replica for c in cands)
    idle_floor = max(
        peak * min(c.idle_power_w_per_replica / c.max_requests_per_s_per_replica for c in cands),
        math.ceil(peak / most_cap - 1e-9) * min_idle,
        m.min_replicas * min_idle,
    )
    slope = min(c.energy_j_per_request for c in cands)
    return [max(load * per_rps, idle_floor + load * slope) for load in m.requests_per_s_by_period]


def power_messages(inputs: PlanningInputs) -> list[str]:
    """The power cap below the least facility power some period needs ([] when not)."""
    cap_kw = inputs.power_cap_kw
    if cap_kw is None:
        return []
    by_model = _by_model(inputs)
    need_w = [0.0] * inputs.periods
    for m in inputs.models:
        for t, w in enumerate(least_model_w(m, by_model[m.name])):
            need_w[t] += w
    t_max = max(range(inputs.periods), key=lambda t: need_w[t])
    need_kw = need_w[t_max] * inputs.pue / 1000.0
    if need_kw <= cap_kw * (1 + 1e-9):
        return []
    need, cap = kw_apart(need_kw, cap_kw)
    return [
        f"power cap: the load needs at least {need} kW facility power in period "
        f"{t_max} (the idle power of the replicas each peak needs plus every request at its "
        f"least watts; PUE {inputs.pue:g}), "
        f"cap is {cap} kW; raise power_cap_kw or lower the load"
    ]


def inventory_most(inputs: PlanningInputs, cands: list[Candidate]) -> float | None:
    """The most req/s *cands* serve on the inventory they count against (each type's GPUs at
    the best req/s per GPU of a candidate using it); None when a type they use is unlimited."""
    if not all(inputs.stock.get(g) is not None for c in cands for g, _ in c.stock_use):
        return None
    # a unit on several types: its req/s per GPU bounds each of its types' share
    best: dict[str, float] = {}
    for c in cands:
        per_gpu = c.max_requests_per_s_per_replica / c.gpus_per_replica
        for g, _ in c.stock_use:
            best[g] = max(best.get(g, 0.0), (inputs.stock[g] or 0) * per_gpu)
    return sum(best.values())


def gpus_needed(m: ModelDemand, cands: list[Candidate], peak: float) -> float:
    """The GPUs (fractional) model entry *m* needs at least on *cands* to serve *peak* req/s
    and its ``min_replicas``."""
    return max(
        peak * min(c.gpus_per_replica / c.max_requests_per_s_per_replica for c in cands),
        m.min_replicas * min(c.gpus_per_replica for c in cands),
    )


def gpu_messages(inputs: PlanningInputs) -> list[str]:
    """Models whose peak the inventory cannot cover, or a fleet that needs more GPUs (one site:
    with regions, :mod:`planner.solve.inventory_regions` counts each region's GPUs)."""
    by_model = _by_model(inputs)
    messages: list[str] = []
    need = 0.0
    for m in inputs.models:
        cands = by_model[m.name]
        peak = capacity_need(m, cands)
        if not cands:
            continue
        most = inventory_most(inputs, cands)
        if most is not None and most < peak * (1 - 1e-9):
            spare = " with its failover" if m.failover is not None else ""
            messages.append(
                f"inventory: {m.name} needs {peak:.3g} req/s at its peak{spare}, all "
                f"available GPUs of its usable types serve at most {most:.3g} req/s"
            )
        need += gpus_needed(m, cands, peak)
    used = {g for c in inputs.feasible_candidates() for g, _ in c.stock_use}
    limits = [inputs.stock.get(g) for g in used]
    if used and all(v is not None for v in limits):
        have = sum(v or 0 for v in limits)
        if math.ceil(need - 1e-9) > have:
            messages.append(
                f"inventory: the loads need at least {math.ceil(need - 1e-9)} GPUs, "
                f"{have} are available"
            )
    return messages
