"""Why a scenario has no plan: models no GPU can serve, or the binding limit.

Models that no candidate can serve are found without a solver, every one of them, each with
every reason that applies (memory, ITL SLA, TTFT SLA, scenario rules, price), built from the
candidates' structured :class:`~planner.inputs.Exclusion` codes and numbers. Otherwise each
active constraint family (inventory, power cap, budget, minimum replicas, failover) is made
elastic in turn in the MILP of :mod:`planner.solve.milp` and the smallest relative relaxation
that restores feasibility is reported with its numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from planner.inputs import (
    MAX_REPLICAS_PER_CANDIDATE,
    Candidate,
    Exclusion,
    ModelDemand,
    Objective,
    PlanningInputs,
    ms_over,
    ms_text,
)
from planner.inputs.candidate import STOCK_SEPARATOR
from planner.layouts import held_note
from planner.result import Plan, PlanStatus
from planner.solve.milp import FAMILIES, MilpModel, RawSolution, build_model, run_solver
from planner.solve.milp_regions import REGION_CAP
from planner.text import apart

EXPLAIN_BUDGET_S = 20.0
"""Most seconds all elastic re-solves of one explanation may take together."""


def _gpu_list(cands: list[Candidate]) -> str:
    return ", ".join(dict.fromkeys(c.gpu for c in cands))


def _memory_message(cands: list[Candidate]) -> str | None:
    """GPU types on which no tried TP degree holds the weights (None when there are none)."""
    by_gpu: dict[str, list[Candidate]] = {}
    for c in cands:
        by_gpu.setdefault(c.gpu, []).append(c)
    full = [g for g, cs in by_gpu.items() if all(c.exclusion == Exclusion.MEMORY for c in cs)]
    if not full:
        return None
    tried = [c for c in cands if c.gpu in full]
    largest = max(tried, key=lambda c: (c.memory_usable_gb or 0.0, -c.tp, c.gpu))
    needed, usable = largest.memory_needed_gb, largest.memory_usable_gb
    gpus = largest.tp * largest.pipeline_parallel * largest.data_parallel
    where = f"{gpus}× {largest.gpu}" + ("" if gpus == largest.tp else f", TP {largest.layout}")
    if needed is None or usable is None:
        return f"does not fit in memory on {', '.join(full)} (largest TP option {where})"
    need, has = apart(needed, usable)  # 140.0 and 140.0 would say nothing
    return (
        f"does not fit in memory on {', '.join(full)}: needs {need} GB for the weights "
        f"(plus KV cache), has {has} GB usable on the largest TP option ({where})"
    )


def _sla_messages(m: ModelDemand, cands: list[Candidate]) -> list[str]:
    out = []
    itl = [c for c in cands if c.exclusion == Exclusion.ITL_SLA]
    if itl:
        best = min(itl, key=lambda c: (c.itl_s_at_capacity, c.gpu, c.tp))
        sla = f"SLA {ms_text(m.itl_sla_s)} ms"
        if math.isfinite(best.itl_s_at_capacity):
            achieved, limit = ms_over(best.itl_s_at_capacity, m.itl_sla_s)
            why = f"best ITL achievable {achieved} ms ({best.option_text}) > SLA {limit} ms"
            why += _unit_hint(m.itl_sla_s, "itl_ms") + _layouts_hint(best)
        else:
            why = f"no ITL prediction to compare with the {sla}"
        out.append(f"misses the ITL SLA on {_gpu_list(itl)}: {why}")
    ttft = [c for c in cands if c.exclusion == Exclusion.TTFT_SLA and c.ttft_s is not None]
    if ttft and m.ttft_sla_s is not None:
        best = min(ttft, key=lambda c: (c.ttft_s or 0.0, c.gpu, c.tp))
        shown, limit = ms_over(best.ttft_s or 0.0, m.ttft_sla_s)
        out.append(
            f"misses the TTFT SLA on {_gpu_list(ttft)}: best TTFT (lightest load) "
            f"{shown} ms ({best.option_text}) > SLA {limit} ms{_unit_hint(m.ttft_sla_s, 'ttft_ms')}"
        )
    return out


def _layouts_hint(best: Candidate) -> str:
    """For a best ITL on a replica over several nodes: that it is the best of the layouts tried
    (beyond one NVLink domain the planner tries pipeline stages and attention DP, not TP:
    docs/method.md, "Layouts in the planner"), and how to state others, TP across the nodes
    among them."""
    if best.nodes <= 1 or best.pools:
        return ""
    gpus = best.tp * best.pipeline_parallel * best.data_parallel
    tp = (
        f"{{gpu_count: {gpus}, pipeline_parallel: 1}} for TP {gpus} across its {best.nodes} nodes"
        if best.data_parallel == 1 and best.pipeline_parallel > 1
        else "gpu_count with pipeline_parallel, data_parallel, expert_parallel"
    )
    return (
        " among the layouts tried (beyond one NVLink domain the planner tries pipeline stages "
        f"and attention DP, not TP); state others under gpus.{best.gpu}.layouts (e.g. {tp}, "
        "where the layout rules allow it)"
    )


def _unit_hint(sla_s: float, field: str) -> str:
    """A hint when an SLA below a millisecond looks like seconds written in milliseconds."""
    if sla_s * 1000.0 >= 1.0:
        return ""
    return (
        f" (sla.{field} is in milliseconds: {sla_s * 1000.0:g} ms; did you mean "
        f"{sla_s * 1e6:g}, i.e. {sla_s * 1000.0:g} s?)"
    )


def _other_messages(m: ModelDemand, cands: list[Candidate]) -> list[str]:
    out = []
    rule = [c for c in cands if c.exclusion == Exclusion.RULE]
    if rule:
        out.append("excluded: " + ", ".join(dict.fromkeys(f"{c.gpu} {c.reason}" for c in rule)))
    price = [c for c in cands if c.exclusion == Exclusion.NO_PRICE]
    if price:
        gpus = _gpu_list(price)
        out.append(f"no $/hour for {gpus}: set gpus.<GPU>.usd_per_hour")
    refused: dict[tuple[str, str], list[str]] = {}  # one line per GPU and reason
    for c in cands:
        if c.exclusion == Exclusion.PREDICTION:
            refused.setdefault((c.gpu, c.reason), []).append(c.option_text)
    for (_, reason), options in refused.items():
        out.append(f"cannot predict {', '.join(dict.fromkeys(options))}: {reason}")
    uncoded = [c for c in cands if not c.feasible and c.exclusion == Exclusion.NONE]
    if uncoded:
        out.append(
            "not usable: "
            + ", ".join(f"{c.option_text} ({c.reason or 'no reason'})" for c in uncoded)
        )
    return out


def unserved_reasons(m: ModelDemand, cands: list[Candidate]) -> list[str]:
    """Why no candidate of model *m* is feasible, one reason per kind, from the candidates'
    :class:`~planner.inputs.Exclusion` codes: memory, ITL SLA, TTFT SLA, scenario rules, price,
    prediction errors; the aggregated replicas' reasons, then the disaggregated units'."""
    if not cands:
        return ["no candidate GPU at all (check allowed GPUs and inventory)"]
    units = [c for c in cands if c.pools]
    if units and len(units) < len(cands):  # both deployments: each with its own reasons
        aggregated = unserved_reasons(m, [c for c in cands if not c.pools])
        return aggregated + [f"disaggregated: {r}" for r in unserved_reasons(m, units)]
    memory = _memory_message(cands)
    return ([memory] if memory else []) + _sla_messages(m, cands) + _other_messages(m, cands)


def no_candidate_messages(inputs: PlanningInputs) -> list[str]:
    """Every model with load (or minimum replicas) and no feasible candidate, with every reason:
    ``NAME: reason`` lines, all lines of one model together, models in input order."""
    messages: list[str] = []
    by_name: dict[str, list[Candidate]] = {}
    for c in inputs.candidates:
        by_name.setdefault(c.name, []).append(c)
    for m in inputs.models:
        if max(m.requests_per_s_by_period) <= 0 and m.min_replicas == 0:
            continue
        cands = by_name.get(m.name, [])
        if any(c.feasible for c in cands):
            continue
        messages.extend(f"{m.name}: {reason}" for reason in unserved_reasons(m, cands))
    return messages


def _slack_messages(mm: MilpModel, raw: RawSolution, *, joint: bool = False) -> list[str]:
    """Name the relaxed constraints and the numbers of the smallest relaxation (*joint*: all
    limits relaxed together, so no number is "within the other limits")."""
    inputs, messages = mm.inputs, []
    within = "in the loosened plan" if joint else "within the other limits"
    for family, entries in mm.slacks.items():
        for what, limit, var in entries:
            value = var.solution_value()
            if value <= 1e-6 * max(1.0, limit):
                continue
            if family == "inventory":
                gpu, _, region = what.partition(STOCK_SEPARATOR)  # gpu@region with regions
                where = f"{gpu} in region {region}" if region else gpu
                messages.append(
                    f"inventory: {where} needs {round(limit + value)} GPUs, has {round(limit)}"
                    + _held_note(mm, raw, what)
                )
            elif family == "power_cap":
                need = "the loosened plan draws" if joint else "the load needs at least"
                drawn, cap = apart(limit + value, limit)
                region = what.removeprefix(REGION_CAP) if what.startswith(REGION_CAP) else ""
                messages.append(
                    f"power cap{f' of region {region}' if region else ''}: {need} {drawn} kW "
                    f"facility power in its peak period, cap is {cap} kW"
                )
            elif family == "budget":
                plan = "the loosened plan" if joint else f"the cheapest plan {within}"
                cost, budget = apart(limit + value, limit, 2)
                messages.append(f"budget: {plan} costs {cost} $, budget is {budget} $")
            elif family == "failover":
                failover = inputs.model(what).failover
                lost = failover.text if failover is not None else "its failover units"
                kept = limit - value if limit - value > 1e-9 * max(1.0, limit) else 0.0
                messages.append(
                    f"failover: {within} {what} keeps at most {kept:.4g} req/s "
                    f"after losing {lost}, its peak is {limit:.4g} req/s (lower or drop its "
                    "failover, or loosen a limit)"
                )
            else:
                messages.append(
                    f"min replicas: {what} fits only {math.floor(limit - value + 1e-6)} of "
                    f"{round(limit)} replicas {within}"
                )
    return messages


def _held_note(mm: MilpModel, raw: RawSolution, stock: str) -> str:
    """``: …`` why a replica of the loosened plan on inventory *stock* holds more GPUs than it
    runs on (:func:`planner.layouts.held_reason`), the one that holds the most beyond its own;
    '' when none does."""
    used = [
        c
        for c, n in zip(mm.candidates, raw.replicas, strict=False)
        if n > 0
        and not c.pools
        and c.gpus_per_replica > c.tp * c.pipeline_parallel * c.data_parallel
        and any(key == stock for key, _ in c.stock_use)
    ]
    if not used:
        return ""
    c = max(used, key=lambda c: c.gpus_per_replica - c.tp * c.pipeline_parallel * c.data_parallel)
    running = c.tp * c.pipeline_parallel * c.data_parallel
    why = held_note(c.gpu, mm.inputs.provenance.user_catalog, running, c.gpus_per_replica)
    return f": a replica of {c.name} on {c.option_text} {why}"


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
    shown, budget = apart(cost, inputs.budget_usd, 2)
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
    raw = run_solver(mm)
    return _slack_messages(mm, raw) if raw.status == PlanStatus.OPTIMAL else []


def explain_infeasible(inputs: PlanningInputs, solve: Solver | None = None) -> list[str]:
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
    share = min(EXPLAIN_BUDGET_S, inputs.time_limit_s) / (len(active) + 1)
    inputs = replace(inputs, time_limit_s=max(share, 0.5))
    undecided = []  # a family whose elastic re-solve ran out of its time share undecided
    for family in active:
        exact = _budget_message(inputs, solve) if family == "budget" and solve else None
        if exact is not None:
            messages.append(exact)  # on the power curves, not the least-slope model
            continue
        mm = build_model(inputs, frozenset([family]))
        raw = run_solver(mm)
        if raw.status in (PlanStatus.OPTIMAL, PlanStatus.FEASIBLE):
            messages.extend(_slack_messages(mm, raw))
        elif raw.status != PlanStatus.INFEASIBLE:
            undecided.append(family.replace("_", " "))
    if messages or not active:
        return messages or ["infeasible for an unknown reason (no limit is set)"]
    mm = build_model(inputs, frozenset(active))
    raw = run_solver(mm)
    if raw.status == PlanStatus.INFEASIBLE:  # every limit elastic: only replica counts bind
        return [
            f"{REPLICA_LIMIT_LEAD}: even with every limit relaxed the loads need more replicas "
            f"of an option than the {MAX_REPLICAS_PER_CANDIDATE} a plan may use — split an "
            "entry's load over several entries, or loosen its SLA"
        ]
    if raw.status not in (PlanStatus.OPTIMAL, PlanStatus.FEASIBLE):
        return ["infeasible; relaxing all limits did not find a plan within the time limit"]
    found = _slack_messages(mm, raw, joint=True)
    if not found:  # the limits hold on the linear power model: the curves break them
        return [
            f"{NO_LIMIT_LEAD}: loosened together the limits give a plan within every one of "
            "them on the linear (least-slope) power model, which the power curves break — "
            + " or ".join(LOOSEN[f] for f in active)
        ]
    if undecided:
        lead = (
            "loosening these limits together (least total share of each limit) gives a plan; "
            f"whether loosening {' or '.join(undecided)} alone would was not decided in the "
            f"{inputs.time_limit_s:.2g} s given to each"
        )
    else:
        lead = (
            "more than one limit must be loosened: loosening any one alone leaves no plan; "
            "loosening these together (least total share of each limit) gives one"
        )
    return [lead, *found]
