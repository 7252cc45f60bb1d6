"""Why a scenario has no plan: models no GPU can serve, or the binding limit.

Models that no candidate can serve are found without a solver, every one of them, each with
every reason that applies (memory, ITL SLA, TTFT SLA, scenario rules, price:
:mod:`planner.solve.unserved`, whose :func:`no_candidate_messages` and
:func:`unserved_reasons` this module re-exports). Otherwise each
active constraint family (inventory, power cap, budget, minimum replicas, failover) is made
elastic in turn in the MILP of :mod:`planner.solve.milp` and the smallest relative relaxation
that restores feasibility is reported with its numbers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace

from planner.inputs import MAX_REPLICAS_PER_CANDIDATE, Objective, PlanningInputs
from planner.inputs.candidate import STOCK_SEPARATOR
from planner.layouts import held_note
from planner.result import Plan, PlanStatus
from planner.solve.advice import apart_up
from planner.solve.milp import FAMILIES, MilpModel, RawSolution, build_model, run_solver
from planner.solve.milp_regions import REGION_CAP
from planner.solve.unserved import no_candidate_messages, unserved_reasons
from planner.text import kw_apart

__all__ = ["no_candidate_messages", "unserved_reasons"]  # re-exported (module doc)

EXPLAIN_BUDGET_S = 20.0
"""Most seconds all elastic re-solves of one explanation may take together."""


def _slack_messages(
    mm: MilpModel, raw: RawSolution, budget_s: float, *, joint: bool = False
) -> list[str]:
    """Name the relaxed constraints and the numbers of the smallest relaxation (*joint*: all
    limits relaxed together, so no number is "within the other limits"). A relaxation the
    solver found but did not prove smallest in its time share (status feasible) is worded as
    what it is, an upper bound on the need (fuzz round 28: "needs 136 GPUs" where 12 do)."""
    inputs, messages = mm.inputs, []
    within = "in the loosened plan" if joint else "within the other limits"
    proven = raw.status == PlanStatus.OPTIMAL
    took = f"was not proven in the explanation's {budget_s:.2g} s"
    least = "" if proven else f" (the least {took})"
    most = "" if proven else f" (the most {took})"
    for family, entries in mm.slacks.items():
        for what, limit, var in entries:
            value = var.solution_value()
            if value <= 1e-6 * max(1.0, limit):
                continue
            if family == "inventory":
                gpu, _, region = what.partition(STOCK_SEPARATOR)  # gpu@region with regions
                where = f"{gpu} in region {region}" if region else gpu
                need = "needs" if proven else "needs at most"
                messages.append(
                    f"inventory: {where} {need} {round(limit + value)} GPUs, has {round(limit)}"
                    + least
                    + _held_note(mm, raw, what)
                )
            elif family == "power_cap":
                need = "the loosened plan draws" if joint else "the load needs at least"
                if not proven and not joint:
                    need = "a plan found draws"
                drawn, cap = kw_apart(limit + value, limit)
                region = what.removeprefix(REGION_CAP) if what.startswith(REGION_CAP) else ""
                messages.append(
                    f"power cap{f' of region {region}' if region else ''}: {need} {drawn} kW "
                    f"facility power in its peak period, cap is {cap} kW{'' if joint else least}"
                )
            elif family == "budget":
                plan = "the loosened plan" if joint else f"the cheapest plan {within}"
                if not proven and not joint:
                    plan = f"the cheapest plan found {within}"
                cost, budget = apart_up(limit + value, limit, 2)
                messages.append(
                    f"budget: {plan} costs {cost} $, budget is {budget} ${'' if joint else least}"
                )
            elif family == "failover":
                failover = inputs.model(what).failover
                lost = failover.text if failover is not None else "its failover units"
                kept = limit - value if limit - value > 1e-9 * max(1.0, limit) else 0.0
                keeps = "keeps at most" if proven else "keeps at least"
                messages.append(
                    f"failover: {within} {what} {keeps} {kept:.4g} req/s "
                    f"after losing {lost}{most}, its peak is {limit:.4g} req/s (lower or drop "
                    "its failover, or loosen a limit)"
                )
            else:
                fits = "fits only" if proven else "fits at least"
                messages.append(
                    f"min replicas: {what} {fits} {math.floor(limit - value + 1e-6)} of "
                    f"{round(limit)} replicas {within}{most}"
                )
    return messages


def _held_note(mm: MilpModel, raw: RawSolution, stock: str) -> str:
    """``: …`` why a replica, or a worker of a disaggregated unit's pool, of the loosened plan
    on inventory *stock* holds more GPUs than it runs on (:func:`planner.layouts.held_reason`),
    the one that holds the most beyond its own; '' when none does."""
    held: list[tuple[int, int, int, str, str, str]] = []  # beyond, running, held, gpu, who, what
    for c, n in zip(mm.candidates, raw.replicas, strict=False):
        if n <= 0:
            continue
        if not c.pools and any(key == stock for key, _ in c.stock_use):
            running, holds = c.tp * c.pipeline_parallel * c.data_parallel, c.gpus_per_replica
            who = f"a replica of {c.name} on {c.option_text}"
            held.append((holds - running, running, holds, c.gpu, who, "replica"))
        where = f"{STOCK_SEPARATOR}{c.region}" if c.region else ""
        for p in c.pools:
            if f"{p.gpu}{where}" == stock:
                running, holds = p.running_gpus_per_worker, p.held_gpus_per_worker
                who = f"a {p.role} worker of {c.name}'s unit {c.option_text}"
                held.append((holds - running, running, holds, p.gpu, who, "worker"))
    beyond, running, holds, gpu, who, what = max(held, default=(0, 0, 0, "", "", ""))
    if beyond <= 0:
        return ""
    why = held_note(gpu, mm.inputs.provenance.user_catalog, running, holds, what)
    return f": {who} {why}"


def set_limits(inputs: PlanningInputs) -> list[str]:
    """The fleet limits *inputs* set, of the inventory, power cap and budget (none it does not)."""
    return [
        name
        for name, on in (
            ("inventory", any(v is not None for v in inputs.stock.values())),
            ("power cap", inputs.has_power_cap),
            ("budget", inputs.budget_usd is not None),
        )
        if on
    ]


def unmet(inputs: PlanningInputs) -> str:
    """No plan, every combination tried: within the limits the inputs set."""
    limits = set_limits(inputs)
    within = f" within the {' and the '.join(limits)}" if limits else ""
    return f"no combination of replicas serves the loads{within} on the power curves (every " + (
        "combination tried)"
    )


def loosen_limit(inputs: PlanningInputs) -> str:
    """``loosen a limit (power cap, budget)``: the fix of a search that found no plan."""
    limits = set_limits(inputs)
    return f"loosen a limit ({', '.join(limits)})" if limits else "loosen a limit"


#: How to loosen each constraint family (the fix of a message that names no limit).
LOOSEN: dict[str, str] = {
    "inventory": "add inventory",
    "power_cap": "loosen the power cap",
    "budget": "raise the budget",
    "min_replicas": "lower min_replicas",
    "failover": "lower a failover",
}


def _budget_message(inputs: PlanningInputs, solve: Solver) -> str | None:
    """The budget's message from the least cost of a plan within the other limits, solved on
    the power curves with the cost objective by *solve* (the elastic re-solve prices energy on
    the least-slope line, below the curves: it quoted a cheapest plan 0.3 % under the true one);
    None when that plan is within the budget, or none is found within the time share."""
    assert inputs.budget_usd is not None
    cheapest = solve(replace(inputs, objective=Objective("cost"), budget_usd=None))
    if cheapest.totals is None or cheapest.status not in (PlanStatus.OPTIMAL, PlanStatus.FEASIBLE):
        return None
    cost = cheapest.totals.cost_usd
    if cost <= inputs.budget_usd * (1 + 1e-9):
        return None
    proven = cheapest.status == PlanStatus.OPTIMAL
    shown, budget = apart_up(cost, inputs.budget_usd, 2)
    what = "costs" if proven else "found costs"
    bound = cheapest.solve.bound
    floor = "" if proven or bound is None else f" (every one costs at least {bound:,.2f} $)"
    return (
        f"budget: the cheapest plan within the other limits {what} {shown} ${floor}, "
        f"budget is {budget} $"
    )


#: Solves planning inputs on the power curves (:func:`planner.solve.optimize.solve`, passed in:
#: the optimiser imports this module).
Solver = Callable[[PlanningInputs], Plan]


#: How the message of a plan the replica limit alone makes impossible starts.
REPLICA_LIMIT_LEAD = "replica limit"
#: How the message starts when the limits loosened together hold on the least-slope power model.
NO_LIMIT_LEAD = "no limit can be named"
#: How the line of a power cap whose relaxation alone gives a plan starts (one site).
CAP_ALONE_LEAD = "power cap: the load needs at least"


def inventory_alone(inputs: PlanningInputs, time_limit_s: float) -> list[str]:
    """The GPUs the loads need beyond the inventory with no power cap and no budget, one
    ``inventory:`` line per short type (the inventory alone elastic): exact on the power curves
    too, since without a cap and a budget which replicas fit does not depend on their power.
    [] when the inventory alone leaves a plan, or when that is not decided within
    *time_limit_s* (at least 0.5 s)."""
    if not any(v is not None for v in inputs.stock.values()):
        return []
    free = replace(inputs, power_cap_kw=None, budget_usd=None, time_limit_s=max(0.5, time_limit_s))
    mm = build_model(free, frozenset(["inventory"]))
    raw = run_solver(mm, cpu_clock=True)
    return _slack_messages(mm, raw, time_limit_s) if raw.status == PlanStatus.OPTIMAL else []


def explain_infeasible(inputs: PlanningInputs, solve: Solver | None = None) -> list[str]:
    """Why no plan exists: SLA-less models first, else the binding constraint family.

    Each active family is relaxed alone (elastic, smallest relaxation); every family whose
    relaxation alone restores feasibility is reported with its numbers. When none does, all
    are relaxed together. The re-solves share at most :data:`EXPLAIN_BUDGET_S` CPU seconds
    (and no more than the inputs' time limit): each gets what is left split over the re-solves
    still to run, so the time a quick one leaves goes to the next, the joint one last (it took
    3.4 of its even 4 s share in a sweep's draw, and a slower CI machine stopped it early).
    """
    messages = no_candidate_messages(inputs)
    if messages:
        return messages
    active = [
        f
        for f, on in zip(
            FAMILIES,
            (
                any(v is not None for v in inputs.stock.values()),  # per region with regions
                inputs.has_power_cap,
                inputs.budget_usd is not None,
                any(m.min_replicas > 0 for m in inputs.models),
                any(m.failover is not None for m in inputs.models),
            ),
            strict=True,
        )
        if on
    ]
    budget = min(EXPLAIN_BUDGET_S, inputs.time_limit_s)
    started = time.process_time()

    def share(solves_left: int) -> PlanningInputs:
        left = budget - (time.process_time() - started)
        return replace(inputs, time_limit_s=max(left / solves_left, 0.5))

    undecided = []  # a family whose elastic re-solve ran out of its time share undecided
    for i, family in enumerate(active):
        given = share(len(active) - i + 1)
        exact = _budget_message(given, solve) if family == "budget" and solve else None
        if exact is not None:
            messages.append(exact)  # on the power curves, not the least-slope model
            continue
        mm = build_model(given, frozenset([family]))
        raw = run_solver(mm, cpu_clock=True)
        if raw.status in (PlanStatus.OPTIMAL, PlanStatus.FEASIBLE):
            messages.extend(_slack_messages(mm, raw, budget))
        elif raw.status != PlanStatus.INFEASIBLE:
            undecided.append(family.replace("_", " "))
    if messages or not active:
        return messages or ["infeasible for an unknown reason (no limit is set)"]
    mm = build_model(share(1), frozenset(active))
    raw = run_solver(mm, cpu_clock=True)
    if raw.status == PlanStatus.INFEASIBLE:  # every limit elastic: only replica counts bind
        return [
            f"{REPLICA_LIMIT_LEAD}: even with every limit relaxed the loads need more replicas "
            f"of an option than the {MAX_REPLICAS_PER_CANDIDATE} a plan may use — split an "
            "entry's load over several entries, or loosen its SLA"
        ]
    if raw.status not in (PlanStatus.OPTIMAL, PlanStatus.FEASIBLE):
        return ["infeasible; relaxing all limits did not find a plan within the time limit"]
    found = _slack_messages(mm, raw, budget, joint=True)
    if not found:  # the limits hold on the linear power model: the curves break them
        return [
            f"{NO_LIMIT_LEAD}: loosened together the limits give a plan within every one of "
            "them on the linear (least-slope) power model, which the power curves break — "
            + " or ".join(LOOSEN[f] for f in active)
        ]
    if undecided:
        lead = (
            "loosening these limits together (least total share of each limit) gives a plan; "
            f"whether loosening {' or '.join(undecided)} alone would was not decided in its "
            f"share of the explanation's {budget:.2g} s"
        )
    else:
        lead = (
            "more than one limit must be loosened: loosening any one alone leaves no plan; "
            "loosening these together (least total share of each limit) gives one"
        )
    return [lead, *found]
