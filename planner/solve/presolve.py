"""Exact presolve of the fleet MILP: drop the candidates another candidate dominates.

A dominated candidate can be swapped replica for replica for its dominator in any plan without
breaking a constraint or raising the objective, so :func:`prune_dominated` removes it before
:mod:`planner.solve.milp` creates variables. Candidates with power curves are never pruned.
"""

from __future__ import annotations

from planner.inputs import Candidate, PlanningInputs, stock_key


def _dominates(inputs: PlanningInputs, d: Candidate, c: Candidate) -> bool:
    """True when a replica of d can replace a replica of c in any plan without loss.

    Only for linear candidates (no power curve): with curves the routing order decides the
    split and a swap moves load between deployments, so no candidate is pruned. Nor under
    node failover: a swap repacks the replicas into other nodes, and the worst node loss can
    grow (replica failover is safe: a larger replica never leaves less after the losses).
    """
    if d.power_curve_w_per_replica or c.power_curve_w_per_replica:
        return False
    failover = inputs.model(c.name).failover
    if failover is not None and failover.unit == "nodes":
        return False
    return (
        d.max_requests_per_s_per_replica >= c.max_requests_per_s_per_replica
        and d.energy_j_per_request <= c.energy_j_per_request
        and d.idle_power_w_per_replica <= c.idle_power_w_per_replica
        and d.usd_per_hour_per_replica <= c.usd_per_hour_per_replica
        and d.region == c.region
        and (
            all(inputs.stock.get(g) is None for g, _ in d.stock_use)
            or (
                len(d.stock_use) == len(c.stock_use) == 1
                and stock_key(d) == stock_key(c)
                and d.gpus_per_replica <= c.gpus_per_replica
            )
        )
    )


def prune_dominated(inputs: PlanningInputs, candidates: list[Candidate]) -> list[Candidate]:
    """Drop candidates another candidate of the same model dominates (exact presolve).

    d dominates c when d has at least c's capacity and at most its energy per request, idle
    power and $/h, runs in the same region, and d's GPU is unlimited there (or the same type
    with no more GPUs per replica):
    swapping each replica of c for one of d keeps every constraint and does not raise any
    objective. Ties are broken by input order, so one of identical candidates survives.
    """
    if all(c.power_curve_w_per_replica for c in candidates):
        return list(candidates)  # never pruned (see _dominates)
    by_model: dict[str, list[tuple[int, Candidate]]] = {}
    for i, c in enumerate(candidates):
        by_model.setdefault(c.name, []).append((i, c))
    kept = []
    for i, c in enumerate(candidates):
        if c.power_curve_w_per_replica:  # never pruned (see _dominates)
            kept.append(c)
            continue
        dominated = any(
            j != i and _dominates(inputs, d, c) and (j < i or not _dominates(inputs, c, d))
            for j, d in by_model[c.name]
        )
        if not dominated:
            kept.append(c)
    return kept
