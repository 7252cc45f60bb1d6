"""Check a plan JSON before anything is reported from it: recompute it and find the impossible.

A plan file may have been edited by hand. :func:`plan_problems` recomputes every figure the
reports use from the allocations and the candidates' curves, the way ``docs/method.md`` §4
states (power per period ``n · interp(x_t / n, load curve, power curve)``, energy, facility
energy, cost, carbon on the grid factor of every period — the grid profile when the plan has
one —, totals, mean GPU power, peak facility power and GPUs per type, the fleet's and each
region's, :mod:`.verify_totals`; the capacity left after the worst failover losses; the
objective, its weights and breakdown, :mod:`.verify_objective`; one allocation's
figures, :mod:`.verify_allocations`; a disaggregated
unit's pools, :mod:`.verify_pools`, after the records nothing can be recomputed or built from:
units that cannot be one, :mod:`.verify_units`, candidates the optimiser refuses,
:mod:`.verify_candidates`, per-period lists off the periods, :mod:`.verify_periods`, inputs
the planning inputs refuse, :mod:`.verify_inputs`, text with a control character,
:mod:`.verify_text`; the grid region and the solve's status, :mod:`.verify_provenance`, and its
bound, :mod:`.verify_bound`; what
the catalogs decide, :mod:`.verify_catalog`; a candidate's power figures off its curve,
:mod:`.verify_power`; savings off the baselines, :mod:`.verify_savings`), and flags
what cannot be: a negative or non-finite number, an allocation whose model entry, GPU or TP is
not among the plan's candidates, a model entry of another model than its candidates or with an
SLA its feasible candidates break (:mod:`.verify_entries`), replicas beyond the inventory, a
status that contradicts the allocations (allocations under a status that found no plan),
uncertainty flags that are not the rule's (:mod:`.verify_flags`). Each
problem is one line naming the JSON field; :func:`checked_plan_json` stops on them
(``report``, ``pareto`` and ``diff``), unless ``--trust`` is given: then they are warnings.
The check works on the plain JSON mapping, so it does not depend on the document types it
guards (the flag rule is a function of plain values).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from planner.documents.verify_allocations import ALLOCATION_FIGURES, allocation_problems
from planner.documents.verify_bound import bound_problems
from planner.documents.verify_candidates import candidate_problems
from planner.documents.verify_catalog import catalog_problems
from planner.documents.verify_entries import model_problems, sla_problems
from planner.documents.verify_flags import flag_problems
from planner.documents.verify_inputs import input_problems
from planner.documents.verify_limits import limit_problems
from planner.documents.verify_objective import objective_problems
from planner.documents.verify_periods import period_problems
from planner.documents.verify_pools import (
    RELATIVE_TOLERANCE,
    differs,
    pool_problems,
    record_identity,
)
from planner.documents.verify_power import power_problems
from planner.documents.verify_provenance import provenance_problems
from planner.documents.verify_regions import inventory_problems
from planner.documents.verify_savings import savings_problems
from planner.documents.verify_text import text_problems
from planner.documents.verify_totals import total_problems
from planner.documents.verify_units import unit_problems
from planner.inputs import (
    DEFAULT_GPUS_PER_NODE,
    Failover,
    surviving_capacity,
    unit_replicas,
)
from planner.inputs.pools import gpu_use, pool_from_record
from predictors.core.errors import WattgpuError

_differs = differs


def _negative(data: dict[str, Any]) -> Iterator[str]:
    """Numbers that cannot be negative or infinite (energy, cost, carbon, power, replicas)."""
    totals = data.get("totals") or {}
    for key, value in totals.items():
        if isinstance(value, int | float) and (value < 0 or not math.isfinite(value)):
            yield f"totals.{key}: {value!r} is impossible (negative or not finite)"
    for i, alloc in enumerate(data.get("allocations") or []):
        for key in (*ALLOCATION_FIGURES, "replicas", "gpus", "power_w_per_gpu"):
            value = alloc.get(key)
            if isinstance(value, int | float) and (value < 0 or not math.isfinite(value)):
                yield f"allocations[{i}].{key}: {value!r} is impossible (negative or not finite)"


#: Statuses of a solve that found no plan (``error``: a plan that broke its own invariants), so
#: a plan with one has no allocation (planner.result.PlanStatus).
NO_PLAN = ("infeasible", "error", "time_limit")


def _status(data: dict[str, Any]) -> Iterator[str]:
    status, allocations = data.get("status"), data.get("allocations") or []
    if status in NO_PLAN and allocations:
        yield f"status: '{status}' but the plan has {len(allocations)} allocation(s)"
    served = [  # entries that need a replica: load in some period, or a minimum
        m
        for m in data.get("models") or []
        if not isinstance(m, dict)
        or m.get("min_replicas")
        or any(r != 0 for r in m.get("requests_per_s_by_period") or [1])
    ]
    if status in ("optimal", "feasible") and not allocations and served:
        yield f"status: '{status}' but the plan has no allocation for its model entries"


_key = record_identity


def _served_load(data: dict[str, Any]) -> Iterator[str]:
    """Each model entry's load per period against what its allocations serve (docs/method.md
    §4: the allocations of a model entry sum to its load in every period) — of a plan that
    has one: an infeasible, erroneous or time-limited plan serves nothing."""
    if data.get("status") not in ("optimal", "feasible"):
        return
    allocations = data.get("allocations") or []
    for i, m in enumerate(data.get("models") or []):
        load = m.get("requests_per_s_by_period") if isinstance(m, dict) else None
        if not isinstance(load, list):
            continue
        mine = [a for a in allocations if a.get("name") == m.get("name")]
        for t, want in enumerate(load):
            served = sum(
                float((a.get("requests_per_s_by_period") or [0.0] * (t + 1))[t]) for a in mine
            )
            if isinstance(want, int | float) and (want or served) and _differs(want, served):
                yield (
                    f"models[{i}].requests_per_s_by_period[{t}]: {want!r} req/s, but its "
                    f"allocations serve {served:.6g} req/s"
                )
                break


def _gpu_use(c: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    """(GPU type, GPUs) one replica of the candidate record *c* takes, per type."""
    if c.get("pools"):
        return gpu_use(pool_from_record(p) for p in c["pools"])
    return ((c["gpu"], int(c["gpus_per_replica"])),)


def _failover(data: dict[str, Any], by_key: dict[Any, dict[str, Any]]) -> Iterator[str]:
    """Each model entry's ``failover_capacity_requests_per_s`` recomputed from its allocations
    (capacity left after losing its largest k replicas or nodes), and at least its peak."""
    node_gpus = (data.get("assumptions") or {}).get("gpus_per_node") or {}
    for i, m in enumerate(data.get("models") or []):
        failover, stored = m.get("failover"), m.get("failover_capacity_requests_per_s")
        if not isinstance(failover, dict) or stored is None:
            continue
        nodes = failover.get("nodes")
        mine = [a for a in data.get("allocations") or [] if a.get("name") == m.get("name")]
        cands = [by_key[_key(a)] for a in mine]
        per_unit = [
            unit_replicas(
                Failover("nodes", 1) if nodes else None,
                ((int(node_gpus.get(g, DEFAULT_GPUS_PER_NODE)), n) for g, n in _gpu_use(c)),
            )
            for c in cands
        ]
        k = int(nodes or failover.get("replicas") or 0)
        again = float(
            surviving_capacity(
                [c["max_requests_per_s_per_replica"] for c in cands],
                per_unit,
                k,
                [a["replicas"] for a in mine],
            )[0]
        )
        where = f"models[{i}].failover_capacity_requests_per_s"
        peak = max(m.get("requests_per_s_by_period") or [0.0])
        if _differs(stored, again):
            yield f"{where}: {stored!r}, but the allocations keep {again:.6g} req/s"
        elif again < peak * (1 - RELATIVE_TOLERANCE):
            yield f"{where}: {again:.6g} req/s is below the peak load {peak:.6g} req/s"


def _grid(data: dict[str, Any]) -> list[str]:
    """The grid profile against the periods (carbon is recomputed on it)."""
    a = data.get("assumptions") or {}
    profile, periods = a.get("grid_g_co2_per_kwh_by_period"), len(a.get("period_hours") or [])
    if profile is None or len(profile) == periods:
        return []
    return [
        f"assumptions.grid_g_co2_per_kwh_by_period: {len(profile)} values for {periods} "
        "periods (one per period)"
    ]


def _candidates_by_key(data: dict[str, Any]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The plan's candidate records by identity (the first of equal identities, as
    :meth:`planner.documents.plan.PlanDocument.candidate` reads them)."""
    return {_key(c): c for c in reversed(data.get("candidates") or [])}


def _repeated_candidates(data: dict[str, Any]) -> list[str]:
    """Candidate records that repeat an earlier record's identity: a plan lists each candidate
    once, so a second record (with other curves, say) is an edit, never what a solve wrote."""
    first: dict[tuple[Any, ...], int] = {}
    out = []
    for j, c in enumerate(data.get("candidates") or []):
        i = first.setdefault(_key(c), j)
        if i != j:
            out.append(
                f"candidates[{j}]: the same candidate as candidates[{i}] (model entry, GPU, "
                "layout and region); a plan lists each candidate once"
            )
    return out


def _broken(data: dict[str, Any]) -> list[str]:
    """Records that nothing can be recomputed or built from: text holding a control character
    (:func:`.verify_text.text_problems`), a disaggregated unit or pool that
    cannot be one (:func:`.verify_units.unit_problems`), a candidate the optimiser refuses
    (:func:`.verify_candidates.candidate_problems`), per-period values off the periods
    (:func:`.verify_periods.period_problems`), assumptions, inventory, model entries, regions or
    solver settings the planning inputs refuse (:func:`.verify_inputs.input_problems`); the text
    alone when some holds such a character (a name that holds one is no name of the others)."""
    text = text_problems(data)
    if text:
        return text
    return (
        unit_problems(data)
        + candidate_problems(data)
        + period_problems(data)
        + input_problems(data)
    )


def _unreportable(
    data: dict[str, Any],
    by_key: dict[tuple[Any, ...], dict[str, Any]] | None = None,
    broken: list[str] | None = None,
) -> list[str]:
    """Records no report can be made of, even as written: the broken ones (:func:`_broken`,
    or *broken* when found already: then only those), a candidate listed twice, an allocation
    whose model entry or candidate (name, GPU, TP) is not in the plan (*by_key*:
    :func:`_candidates_by_key`, when built)."""
    broken = _broken(data) if broken is None else broken
    if broken:
        return broken
    by_key = _candidates_by_key(data) if by_key is None else by_key
    names = {m.get("name") for m in data.get("models") or []}
    out = _repeated_candidates(data)  # the planning inputs of a report refuse a repeat
    out += model_problems(data)  # a report of another model than its candidates are of
    for i, alloc in enumerate(data.get("allocations") or []):
        key = _key(alloc)
        candidate = by_key.get(key)
        if alloc.get("name") not in names:
            out.append(f"allocations[{i}].name: {alloc.get('name')!r} is not a model entry")
        elif candidate is None or not candidate.get("feasible", True):
            out.append(
                f"allocations[{i}]: ({key[0]!r}, {key[1]!r}, TP {key[2]!r}, PP {key[3]!r}, DP "
                f"{key[4]!r}, EP {key[5]!r}) is not a feasible candidate of this plan"
            )
        elif candidate.get("model") != alloc.get("model"):
            out.append(
                f"allocations[{i}].model: {alloc.get('model')!r} is not the model of its "
                f"candidate ({candidate.get('model')!r})"
            )
    return out


def _counts(data: dict[str, Any]) -> list[str]:
    """``candidate_counts`` against the ``candidates`` the JSON carries."""
    counts = data.get("candidate_counts")
    if not isinstance(counts, dict):
        return []
    cands = data.get("candidates") or []
    out = []
    if counts.get("kept") != len(cands):
        out.append(
            f"candidate_counts.kept: {counts.get('kept')!r}, but candidates holds {len(cands)}"
        )
    feasible_kept = sum(bool(c.get("feasible")) for c in cands)
    total, feasible = counts.get("total"), counts.get("feasible")
    if not (isinstance(total, int) and isinstance(feasible, int)) or not (
        len(cands) <= total and feasible_kept <= feasible <= total
    ):
        out.append(
            f"candidate_counts: total {total!r} and feasible {feasible!r} cannot hold the "
            f"{len(cands)} candidates ({feasible_kept} feasible) the plan carries"
        )
    if data.get("candidates_kept") == "all" and counts.get("total") != len(cands):
        out.append(
            f"candidates_kept: 'all', but candidates holds {len(cands)} of {counts.get('total')!r}"
        )
    return out


def plan_problems(data: dict[str, Any]) -> list[str]:
    """Every impossible or inconsistent figure of the plan JSON *data* (empty when it checks);
    only the broken records when there are such (:func:`_broken`: nothing is recomputed from
    them)."""
    broken = _broken(data)
    if broken:
        return _one_per_field(broken)
    by_key = _candidates_by_key(data)
    per_replica = {k: int(c.get("gpus_per_replica") or 1) for k, c in by_key.items()}
    problems = [*_negative(data), *_status(data), *inventory_problems(data, per_replica, _key)]
    problems += _counts(data) + provenance_problems(data) + catalog_problems(data)
    problems += power_problems(data)
    unreportable = _unreportable(data, by_key, broken)
    problems += unreportable
    grid = _grid(data)
    problems += grid
    if not unreportable and not grid:
        allocated = [
            p
            for i, alloc in enumerate(data.get("allocations") or [])
            for p in allocation_problems(data, i, alloc, by_key[_key(alloc)])
        ]
        problems += allocated
        problems.extend(_served_load(data))
        problems.extend(sla_problems(data))
        problems.extend(_failover(data, by_key))
        problems.extend(pool_problems(data, by_key))
        if not allocated:  # the flags repeat the allocations: checked against sound ones
            problems.extend(flag_problems(data, by_key))
    if not problems:
        problems.extend(total_problems(data, lambda a: per_replica.get(_key(a), 1)))
    if not problems:  # the totals are the allocations': are the objective and savings theirs?
        problems.extend(objective_problems(data) + savings_problems(data))
    if not problems:  # are they within the stated limits, and the solve's bound its objective's?
        problems.extend(limit_problems(data))
        problems.extend(bound_problems(data))
    return _one_per_field(problems)


def _one_per_field(problems: list[str]) -> list[str]:
    """The first problem of each field (``allocations[0].energy_kwh: -5.0 is impossible`` also
    fails to recompute: that second line would name the same edit again)."""
    seen: set[str] = set()
    out = []
    for p in problems:
        field = p.split(": ", 1)[0]
        if field not in seen:
            seen.add(field)
            out.append(p)
    return out


#: Most problems printed before the rest are counted.
MAX_SHOWN = 12


def checked_plan_json(
    data: dict[str, Any],
    source: str,
    *,
    trust: bool = False,
    warn: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """*data* when it recomputes to itself; otherwise WattgpuError naming every field (at most
    :data:`MAX_SHOWN`), or with *trust* one warning per field through *warn* (an allocation of
    a model entry or candidate the plan does not have, or a pool that cannot be one, stays an
    error: there is nothing to report it from)."""
    problems = plan_problems(data)
    if not problems:
        return data
    shown = [f"{source}: {p}" for p in problems[:MAX_SHOWN]]
    if len(problems) > MAX_SHOWN:
        shown.append(f"{source}: … and {len(problems) - MAX_SHOWN} more")
    unreportable = _unreportable(data)
    if trust and unreportable:
        raise WattgpuError(
            "\n".join(f"{source}: {p} — not reportable even with --trust" for p in unreportable)
        )
    if trust:
        for line in shown:
            (warn or (lambda _: None))(
                f"warning: {line} (--trust: reported with the figures its allocations recompute to)"
            )
        return data
    shown[-1] += " — the plan was edited or damaged: plan the scenario again" + (
        "" if unreportable else ", or pass --trust to report it anyway"
    )
    raise WattgpuError("\n".join(shown))
