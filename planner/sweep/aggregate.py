"""From the per-draw records to the sweep's summary: quantiles, SLA probabilities, regret,
plan stability, the fan and tornado data and the robust choice (docs/method.md, "Sweep")."""

from __future__ import annotations

import json
import math
from collections import Counter
from fractions import Fraction
from typing import Any

import numpy as np

from planner.documents.verify_sweep import all_met as all_met
from planner.documents.verify_sweep import quantiles as quantiles
from planner.documents.verify_sweep import rounded as rnd
from planner.documents.verify_sweep import share as _share
from planner.inputs import PlanningInputs
from planner.sweep.draws import TARGETS
from planner.sweep.evaluate import Fleet
from planner.sweep.split import planned_split
from planner.sweep.table import CandidateTable

FIGURES: tuple[str, ...] = (
    "energy_kwh",
    "facility_energy_kwh",
    "cost_usd",
    "carbon_kg",
    "objective",
)
MAX_ALTERNATIVES = 10
MAX_TORNADO = 12
MAX_ROBUST_FLEETS = 16
"""Most distinct re-optimised fleets (most frequent first) the robust choice evaluates."""
TAIL_Z = 0.8416212335729143
"""The normal's 80 % quantile: the tornado's 'low' and 'high' are the fifths beyond ±it."""


def mix_text(gpus: dict[str, int]) -> str:
    """``GPU×n, ...`` of a GPU mix."""
    return ", ".join(f"{g}×{n}" for g, n in gpus.items())


def _stability(with_plan: list[dict[str, Any]], base: Fleet) -> dict[str, Any]:
    fleets = Counter(r["fleet"].identity for r in with_plan)
    first: dict[Any, Fleet] = {}
    for r in with_plan:
        first.setdefault(r["fleet"].identity, r["fleet"])
    mixes = Counter(tuple(r["fleet"].gpu_mix().items()) for r in with_plan)
    n = len(with_plan)
    order = sorted(fleets.items(), key=lambda kv: (-kv[1], first[kv[0]].label()))
    return {
        "same_fleet_share": rnd(fleets.get(base.identity, 0) / n) if n else None,
        "same_gpu_mix_share": rnd(mixes.get(tuple(base.gpu_mix().items()), 0) / n) if n else None,
        "alternatives": [
            {"fleet": first[k].label(), "gpus": first[k].gpu_mix(), "share": rnd(c / n)}
            for k, c in order[:MAX_ALTERNATIVES]
        ],
        "gpu_mix_frequency": [
            {"fleet": mix_text(dict(k)), "gpus": dict(k), "share": rnd(c / n)}
            for k, c in sorted(mixes.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
    }


def _fan(records: list[dict[str, Any]], hours: tuple[float, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"period_hours": [rnd(h) for h in hours]}
    for which in ("base", "optimal"):
        rows = [r[which]["facility_energy_kwh_by_period"] for r in records if which in r]
        arr = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(hours))
        for q in (10, 50, 90):
            values = np.percentile(arr, q, axis=0) if rows else np.zeros(len(hours))
            out[f"{which}_p{q}"] = [rnd(v) for v in values]
    return out


def _live(sd: np.ndarray, used: np.ndarray, count: int) -> list[int]:
    """Indexes below *count* whose sd is above 0 and that some table row uses."""
    rows = set(used.tolist())
    return [i for i in range(count) if sd[i] > 0 and i in rows]


def factor_names(table: CandidateTable) -> list[tuple[str, int]]:
    """(name, column) of every draw factor that can move a draw: left out are a factor whose
    sd is 0, a GPU or LLM effect no feasible candidate uses, a TTFT effect of candidates none
    of which has a TTFT SLA (or a TTFT estimate), an arrival factor of a model entry without
    load and an idle factor of a GPU type no feasible candidate uses (docs/sweep.md)."""
    lay = table.layout
    n_g = len(lay.gpus)
    names = []
    for target in TARGETS:
        off, sd = lay.offset(target), table.sd[target]
        rows = np.ones(len(table.index), dtype=bool)
        if target == "ttft":  # a TTFT factor acts only through a TTFT SLA
            rows = np.isfinite(table.ttft_sla_s) & (table.ttft_s > 0)
        gpus, llms = table.gpu_of_row[rows], table.llm_of_row[rows]
        if target != "itl":  # a unit's prefill pool takes its own GPU's power and TTFT effects
            gpus = np.concatenate((gpus, table.prefill_gpu[rows]))
        names += [(f"{target} error, GPU {lay.gpus[i]}", off + i) for i in _live(sd, gpus, n_g)]
        names += [
            (f"{target} error, LLM {lay.llms[i]}", off + n_g + i)
            for i in _live(sd[n_g:], llms, len(lay.llms))
        ]
    if table.arrival_sd > 0:
        names += [
            (f"arrival rate, {m.name}", lay.arrival + j)
            for j, m in enumerate(table.inputs.models)
            if max(m.requests_per_s_by_period, default=0.0) > 0
        ]
    if table.idle_sd > 0:
        idle = np.full(n_g, table.idle_sd)
        names += [
            (f"idle power, {lay.gpus[i]}", lay.idle + i)
            for i in _live(idle, np.concatenate((table.gpu_of_row, table.prefill_gpu)), n_g)
        ]
    return names


def _bar(
    factor: str, source: str, lo: float, hi: float, left_out: int | None = None
) -> dict[str, Any]:
    bar = {
        "factor": factor,
        "source": source,
        "low_cost_usd": rnd(lo),
        "high_cost_usd": rnd(hi),
        "swing_usd": rnd(hi - lo),
    }
    return bar if left_out is None else {**bar, "points_left_out": left_out}


def tornado_draws(
    records: list[dict[str, Any]], z: np.ndarray, table: CandidateTable
) -> list[dict[str, Any]]:
    """Per draw factor that can move a draw (:func:`factor_names`): mean re-optimised cost in
    its lowest and highest fifth; the :data:`MAX_TORNADO` largest swings."""
    rows = [(r["index"], r["optimal"]["cost_usd"]) for r in records if "optimal" in r]
    if len(rows) < 10:
        return []
    idx = np.array([i for i, _ in rows])
    cost = np.array([c for _, c in rows])
    bars = []
    for name, col in factor_names(table):
        values = z[idx, col]
        low, high = cost[values <= -TAIL_Z], cost[values >= TAIL_Z]
        if low.size and high.size and np.ptp(values) > 0:
            lo, hi = float(low.mean()), float(high.mean())
            bars.append((abs(hi - lo), name, lo, hi))
    bars.sort(key=lambda b: (-b[0], b[1]))
    return [_bar(n, "draws", lo, hi) for _, n, lo, hi in bars[:MAX_TORNADO]]


def _elsewhere(point: dict[str, Any], key: str, sub: str) -> str:
    """The values of grid point *point* on every axis but ``key.sub`` (JSON text): the points
    at an axis's two ends that share it differ in that axis only."""
    rest = {k: dict(v) if isinstance(v, dict) else v for k, v in point.items()}
    if sub:
        rest[key].pop(sub)
    else:
        rest.pop(key)
    return json.dumps(rest, sort_keys=True)


def tornado_grid(
    axes: list[str], points: list[dict[str, Any]], records: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per grid axis: the mean re-optimised cost at its first and at its last value over the
    matched pairs of grid points (a point at the first value and the one at the last with the
    same values on every other axis, both with a plan), so that a point with no plan at one end
    does not put the other axes' effect into the bar; ``points_left_out`` counts the grid
    points at the two ends outside such pairs. A point given more than once (the sweep refuses
    such an axis, :func:`planner.sweep.spec.grid_points`) is one point: paired once, weighed
    once, left out only without a plan on every copy or a pair. No matched pair: no bar."""
    bars: list[dict[str, Any]] = []
    for label in axes:
        key, _, sub = label.partition(".")
        values = [p[key][sub] if sub else p[key] for p in points]
        lo_v, hi_v = min(values), max(values)
        if lo_v == hi_v:
            continue
        # the values on every other axis -> (the point at the first value, at the last value)
        ends: dict[str, list[dict[str, Any] | None]] = {}
        for r, p, v in zip(records, points, values, strict=True):
            if v in (lo_v, hi_v):
                end = ends.setdefault(_elsewhere(p, key, sub), [None, None])
                had = end[v == hi_v]
                if had is None or ("optimal" in r and "optimal" not in had):
                    end[v == hi_v] = r  # a copy of the point with a plan, if one has it
        pairs = [
            (lo["optimal"]["cost_usd"], hi["optimal"]["cost_usd"])
            for lo, hi in ends.values()
            if lo is not None and hi is not None and "optimal" in lo and "optimal" in hi
        ]
        at_ends = sum(r is not None for end in ends.values() for r in end)
        if pairs:
            a, b = (float(np.mean(end)) for end in zip(*pairs, strict=True))
            factor = f"grid {label} {lo_v:g} → {hi_v:g}"
            bars.append(_bar(factor, "grid", a, b, at_ends - 2 * len(pairs)))
    return bars


def tornado(*bars: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every bar of *bars* (the grid's and the draws') in one list, the largest swing (its
    absolute value) first, then by factor."""
    out = [b for group in bars for b in group]
    out.sort(key=lambda b: (-abs(float(b["swing_usd"])), str(b["factor"])))
    return out


def summary(
    records: list[dict[str, Any]], base: Fleet, hours: tuple[float, ...], model_names: list[str]
) -> dict[str, Any]:
    """The summary of the draws' records (:class:`planner.documents.sweep.SummaryDocument`)."""
    with_plan = [r for r in records if "optimal" in r]
    evaluated = [r for r in records if "base" in r]
    # Regret only where the base plan is a valid plan for the draw (every SLA, cap, budget):
    # elsewhere it is cheaper than the optimum because it under-serves.
    valid = [r for r in with_plan if all_met(r["base"])]
    regret = [r["base"]["objective"] - r["optimal"]["objective"] for r in valid]
    relative = [
        (r["base"]["objective"] - r["optimal"]["objective"]) / r["optimal"]["objective"]
        for r in valid
        if r["optimal"]["objective"] > 0
    ]
    return {
        "draws": len(records),
        "draws_with_plan": len(with_plan),
        "draws_infeasible": sum(r["status"] == "infeasible" for r in records),
        "draws_failed": sum(r["status"] == "failed" for r in records),
        "optimal": {f: quantiles([r["optimal"][f] for r in with_plan]) for f in FIGURES},
        "base": {f: quantiles([r["base"][f] for r in evaluated]) for f in FIGURES},
        "sla_probability": {
            m: _share([r["base"]["sla_met"][m] for r in evaluated]) for m in model_names
        },
        "power_cap_probability": _share([r["base"]["power_cap_met"] for r in evaluated]),
        "budget_probability": _share([r["base"]["budget_met"] for r in evaluated]),
        "all_met_probability": _share([all_met(r["base"]) for r in evaluated]),
        "regret_objective": quantiles(regret),
        "regret_relative": quantiles(relative),
        "stability": _stability(with_plan, base),
        "fan": _fan(records, hours),
        "tornado": [],
        "draws_time_limit": sum(
            r["status"] == "time_limit" and "optimal" not in r for r in records
        ),
    }


def robust_fleets(
    records: list[dict[str, Any]], base: Fleet, inputs: PlanningInputs
) -> tuple[list[Fleet], list[float]]:
    """The base fleet and the most frequent re-optimised fleets, with their seen shares; each
    re-optimised fleet with the load split the plan would give it at the point estimate
    *inputs* (:func:`planner.sweep.split.planned_split`), not that of the first draw that chose
    it: a fleet's SLA probability is the fleet's, whatever the draw order."""
    with_plan = [r for r in records if "fleet" in r]
    counts = Counter(r["fleet"].identity for r in with_plan)
    first: dict[Any, Fleet] = {}
    for r in with_plan:
        first.setdefault(r["fleet"].identity, r["fleet"])
    n = max(len(with_plan), 1)
    order = sorted(counts.items(), key=lambda kv: (-kv[1], first[kv[0]].label()))
    others = [first[k] for k, _ in order if k != base.identity][: MAX_ROBUST_FLEETS - 1]
    fleets = [base] + [planned_split(f, inputs) for f in others]
    return fleets, [counts.get(f.identity, 0) / n for f in fleets]


def robust_choice(
    fleets: list[Fleet],
    seen: list[float],
    records: list[dict[str, Any]],
    p: float,
    model_names: list[str],
) -> dict[str, Any]:
    """The robust choice among *fleets* from the second pass's *records* (each with
    ``fleets``: one outcome per fleet per draw): the least expected objective among the fleets
    that meet every SLA, the cap and the budget together (in the same draw) in at least *p* of
    the draws."""
    ok = [r for r in records if "fleets" in r]
    n = max(len(ok), 1)
    least = least_draws(p, len(ok))
    considered = []
    for j, (fleet, share) in enumerate(zip(fleets, seen, strict=True)):
        outs = [r["fleets"][j] for r in ok]
        sla = {m: sum(o["sla_met"][m] for o in outs) / n for m in model_names}
        met = sum(all_met(o) for o in outs)
        together = met / n
        considered.append(
            {
                "fleet": fleet.label(),
                "gpus": fleet.gpu_mix(),
                "seen_share": rnd(share),
                "is_base": j == 0,
                "expected_objective": rnd(_mean([o["objective"] for o in outs])),
                "expected_cost_usd": rnd(_mean([o["cost_usd"] for o in outs])),
                "sla_probability": {m: rnd(v) for m, v in sla.items()},
                "power_cap_probability": rnd(sum(o["power_cap_met"] for o in outs) / n),
                "budget_probability": rnd(sum(o["budget_met"] for o in outs) / n),
                "qualifies": bool(ok) and met >= least,
                "all_met_probability": rnd(together),
            }
        )
    good = [c for c in considered if c["qualifies"]]
    chosen = min(good, key=lambda c: (c["expected_objective"], c["fleet"])) if good else None
    together_text = "every SLA, the cap and the budget at once (in the same draw)"
    stated = f"{percent_text(p)} of {'the ' if chosen is None else ''}{len(ok)} draws"
    if ok:
        stated += f" ({'all' if least == len(ok) else f'{least} or more'} of them)"
    if chosen is None:
        reason = (
            f"none of the {len(considered)} fleets seen meets {together_text} in at least "
            f"{stated}; lower --sla-probability or loosen the scenario"
        )
    else:
        reason = (
            f"least expected objective among the {len(good)} of {len(considered)} fleets seen "
            f"that meet {together_text} in at least {stated}"
        )
    return {"sla_probability": p, "chosen": chosen, "reason": reason, "considered": considered}


def least_draws(p: float, n: int) -> int:
    """The least whole number of *n* draws that is at least the share *p* (0 < p <= 1) of
    them, and at least 1: a count, not a float share with a tolerance, which would let a tiny
    *p* pass with no draw at all. *p* is taken as the decimal it prints as (``0.9`` is 9/10,
    not the binary float just above it), so 27 of 30 draws is 90 %."""
    return max(1, math.ceil(Fraction(str(float(p))) * n))


def percent_text(p: float) -> str:
    """The share *p* as a percentage with every digit it was given (``95.1 %``, ``0.4 %``,
    ``99.99 %``): a rounded threshold would misstate which fleets qualify."""
    return f"{100 * p:.10g} %"


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else 0.0
