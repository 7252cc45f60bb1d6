"""Why a scenario under a power cap has no plan, proven on the power curves.

The elastic re-solves of :mod:`planner.solve.explain` price power on each candidate's
least-slope line, below its curve. Under a power cap they can then find a plan within every
limit on that line when none exists on the curves ("no limit can be named … add inventory or
loosen the power cap"), or name the inventory, whose relaxation alone meets the cap on the line,
when no inventory is enough on the curves. With candidates that have power curves, one site
with a power cap and no budget (the budget's own message is priced on the curves),
:func:`curve_cap_messages` replaces such an explanation with what the least-peak bound of
:mod:`planner.solve.peak` proves (each entry's replica vectors within its own rules: minimum
replicas, failover):

1. with the inventory unlimited: above the cap, the cap binds whatever the inventory — the
   message of the same scenario with unlimited inventory — and the inventory is named as well
   only when it binds on its own (no plan within it even without the cap:
   :func:`planner.solve.explain.inventory_alone`);
2. else, when the inventory cuts some entry's replica bounds, with each entry's replicas within
   the GPUs available (a relaxation of the inventory row): above the cap, the cap and the
   inventory bind together (raise the cap to that bound, or add inventory). Only an explanation
   that named no limit is replaced by it.

An explanation that names the cap alone (its elastic line) or the replica limit is kept. Each
bound is one least-peak column generation (a few exact searches per entry; about 4 s on the
500-entry example), both within :data:`~planner.solve.colgen.CG_TIME_FRACTION` of the
explanation's :data:`~planner.solve.explain.EXPLAIN_BUDGET_S` (or of the time limit when
shorter), the inventory's elastic re-solve within the rest; the inventory's only where it cuts
an entry's replica bounds or can bind. They run only once a scenario is proven infeasible.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

from planner.inputs import PlanningInputs
from planner.solve.colgen import CG_TIME_FRACTION, first_columns
from planner.solve.columns import Decomposition
from planner.solve.explain import (
    CAP_ALONE_LEAD,
    EXPLAIN_BUDGET_S,
    NO_LIMIT_LEAD,
    REPLICA_LIMIT_LEAD,
    inventory_alone,
    no_candidate_messages,
)
from planner.solve.peak import least_peak, peak_message
from planner.solve.presolve import prune_dominated


def _least_peak_kw(inputs: PlanningInputs, dec: Decomposition, deadline: float) -> float:
    """The least-peak bound of *dec* (kW; -inf when none is proven above the cap)."""
    assert inputs.power_cap_kw is not None
    first = first_columns(dec)
    found = None if first is None else least_peak(dec, first, inputs.power_cap_kw, deadline)
    return -math.inf if found is None else found.bound_kw


def _decomposition(inputs: PlanningInputs) -> Decomposition:
    return Decomposition(inputs, prune_dominated(inputs, inputs.feasible_candidates()))


def _joint_message(bound_kw: float, free_kw: float, cap_kw: float) -> str:
    """Step 2 of the module docstring in words (*free_kw*: the bound with unlimited GPUs)."""
    free = f": with unlimited GPUs the bound is {free_kw:,.6g} kW" if math.isfinite(free_kw) else ""
    return (
        f"power cap: within the inventory every plan draws at least {bound_kw:,.6g} kW facility "
        f"power in its busiest period (a valid lower bound: the least power of each model on its "
        f"curves with its replicas within the GPUs available, the periods weighted by the column "
        f"generation's duals), above the cap of {cap_kw:g} kW (raise power_cap_kw to at least "
        f"{bound_kw:,.6g}, or add inventory{free})"
    )


def _replica_rules(inputs: PlanningInputs) -> str:
    """``; the bound counts min_replicas (chat) and failover (code): lowering them may give a
    plan too`` where entries' own replica rules enter the bound (empty where none do)."""
    floors = [m.name for m in inputs.models if m.min_replicas > 0]
    spares = [m.name for m in inputs.models if m.failover is not None]
    rules = [
        f"{rule} ({', '.join(names)})"
        for rule, names in (("min_replicas", floors), ("failover", spares))
        if names
    ]
    if not rules:
        return ""
    return (
        f"; the bound counts {' and '.join(rules)}: lowering "
        f"{'it' if len(rules) == 1 else 'them'} may give a plan too"
    )


def curve_cap_messages(inputs: PlanningInputs, explained: list[str]) -> list[str] | None:
    """The explanation of infeasible *inputs* proven on the power curves (module docstring) in
    place of the elastic one, *explained*; None when it is kept."""
    cap_kw = inputs.power_cap_kw
    if (
        cap_kw is None
        or inputs.regions
        or inputs.budget_usd is not None
        or not any(c.power_curve_w_per_replica for c in inputs.feasible_candidates())
        or all(line.startswith(CAP_ALONE_LEAD) for line in explained)
        or any(line.startswith(REPLICA_LIMIT_LEAD) for line in explained)
        or no_candidate_messages(inputs)
    ):
        return None
    budget_s = min(EXPLAIN_BUDGET_S, inputs.time_limit_s)
    deadline = time.perf_counter() + CG_TIME_FRACTION * budget_s  # both bounds together
    unlimited = replace(inputs, inventory=dict.fromkeys(inputs.inventory))
    free, within = _decomposition(unlimited), _decomposition(inputs)
    # the inventory matters only where it cuts an entry's replica bounds or can bind together
    cut = len(within.blocks) != len(free.blocks) or any(
        len(a.ub) != len(b.ub) or bool((a.ub != b.ub).any())
        for a, b in zip(within.blocks, free.blocks, strict=False)
    )
    free_kw = _least_peak_kw(unlimited, free, deadline)
    if free_kw > cap_kw * (1 + 1e-9):  # the cap binds whatever the inventory
        matters = cut or bool(within.gpus)
        short = inventory_alone(inputs, (1 - CG_TIME_FRACTION) * budget_s) if matters else []
        return [peak_message(free_kw, cap_kw) + _replica_rules(inputs), *short]
    if not cut or not explained or not explained[0].startswith(NO_LIMIT_LEAD):
        return None  # the bound within the inventory is the one above
    within_kw = _least_peak_kw(inputs, within, deadline)
    if within_kw > cap_kw * (1 + 1e-9):
        return [_joint_message(within_kw, free_kw, cap_kw) + _replica_rules(inputs)]
    return None
