"""Why a scenario has no plan: models no GPU can serve, or the binding limit.

SLA-less models are found without a solver. Otherwise each active constraint family
(inventory, power cap, budget, minimum replicas) is made elastic in turn in the MILP of
:mod:`planner.solve.milp` and the smallest relative relaxation that restores feasibility is
reported with its numbers.
"""

from __future__ import annotations

import math
from dataclasses import replace

from planner.inputs import Candidate, PlanningInputs
from planner.result import PlanStatus
from planner.solve.milp import FAMILIES, MilpModel, RawSolution, build_model, run_solver

EXPLAIN_BUDGET_S = 20.0
"""Most seconds all elastic re-solves of one explanation may take together."""


def no_candidate_messages(inputs: PlanningInputs) -> list[str]:
    """Models with load (or minimum replicas) and no candidate that meets the SLA."""
    messages = []
    by_name: dict[str, list[Candidate]] = {}
    for c in inputs.candidates:
        by_name.setdefault(c.name, []).append(c)
    for m in inputs.models:
        if max(m.requests_per_s_by_period) <= 0 and m.min_replicas == 0:
            continue
        cands = by_name.get(m.name, [])
        if any(c.feasible for c in cands):
            continue
        if not cands:
            messages.append(f"{m.name}: no candidate GPU at all (check allowed GPUs and inventory)")
            continue
        best = min(cands, key=lambda c: (c.itl_s_at_capacity, c.gpu, c.tp))
        itl = (
            f"best ITL {1000 * best.itl_s_at_capacity:.1f} ms on {best.gpu} TP{best.tp}"
            if math.isfinite(best.itl_s_at_capacity)
            else f"e.g. {best.gpu} TP{best.tp}"
        )
        messages.append(
            f"{m.name}: no GPU meets the SLA of {1000 * m.itl_sla_s:.1f} ms ITL "
            f"({itl}: {best.reason})"
        )
    return messages


def _slack_messages(mm: MilpModel, raw: RawSolution) -> list[str]:
    """Name the relaxed constraints and the numbers of the smallest relaxation."""
    inputs, messages = mm.inputs, []
    for family, entries in mm.slacks.items():
        for what, limit, var in entries:
            value = var.solution_value()
            if value <= 1e-6 * max(1.0, limit):
                continue
            if family == "inventory":
                messages.append(
                    f"inventory: {what} needs {round(limit + value)} GPUs, has {round(limit)}"
                )
            elif family == "power_cap":
                messages.append(
                    f"power cap: the load needs at least {limit + value:.1f} kW facility power "
                    f"in its peak period, cap is {limit:.1f} kW"
                )
            elif family == "budget":
                messages.append(
                    f"budget: the cheapest plan within the other limits costs "
                    f"{limit + value:,.2f} $, budget is {limit:,.2f} $"
                )
            else:
                messages.append(
                    f"min replicas: {what} fits only {math.floor(limit - value + 1e-6)} of "
                    f"{round(limit)} replicas within the other limits"
                )
    del inputs, raw
    return messages


def explain_infeasible(inputs: PlanningInputs) -> list[str]:
    """Why no plan exists: SLA-less models first, else the binding constraint family.

    Each active family is relaxed alone (elastic, smallest relaxation); every family whose
    relaxation alone restores feasibility is reported with its numbers. When none does, all
    are relaxed together. The re-solves share at most :data:`EXPLAIN_BUDGET_S` seconds (and
    no more than the inputs' time limit), split evenly.
    """
    messages = no_candidate_messages(inputs)
    if messages:
        return messages
    active = [
        f
        for f, on in zip(
            FAMILIES,
            (
                any(v is not None for v in inputs.inventory.values()),
                inputs.power_cap_kw is not None,
                inputs.budget_usd is not None,
                any(m.min_replicas > 0 for m in inputs.models),
            ),
            strict=True,
        )
        if on
    ]
    share = min(EXPLAIN_BUDGET_S, inputs.time_limit_s) / (len(active) + 1)
    inputs = replace(inputs, time_limit_s=max(share, 0.5))
    for family in active:
        mm = build_model(inputs, frozenset([family]))
        raw = run_solver(mm)
        if raw.status in (PlanStatus.OPTIMAL, PlanStatus.FEASIBLE):
            messages.extend(_slack_messages(mm, raw))
    if messages or not active:
        return messages or ["infeasible for an unknown reason (no limit is set)"]
    mm = build_model(inputs, frozenset(active))
    raw = run_solver(mm)
    if raw.status not in (PlanStatus.OPTIMAL, PlanStatus.FEASIBLE):
        return ["infeasible; relaxing all limits did not find a plan within the time limit"]
    return ["no single limit explains it; together:", *_slack_messages(mm, raw)]
