"""Uncertainty flags of the base plan's allocations (issue 20, item 7, in the sweep's output).

An allocation is flagged when the upper end of its candidate's 90 % ITL interval at capacity
misses the SLA, or when its GPU lies outside the predictors' training domain. Each flag says
what the same scenario with ``robust: true`` (capacity sized on the upper ITL bound) deploys for
that model entry instead, and the sweep's probability that the base plan meets the entry's SLA.
"""

from __future__ import annotations

from typing import Any

from planner.inputs import ms_text
from planner.pipeline import PlanRun, plan_scenario
from planner.result import Plan
from planner.sweep.aggregate import rnd


def _deployments(plan: Plan, name: str) -> str:
    parts = [
        f"{a.candidate.gpu} tp{a.candidate.tp} x{a.replicas}"
        for a in plan.allocations
        if a.candidate.name == name
    ]
    return "; ".join(parts)


def robust_plan(run: PlanRun) -> Plan:
    """The plan of *run*'s scenario with ``robust: true`` (the base plan when already robust)."""
    if run.scenario.robust:
        return run.plan
    scenario = run.scenario.model_copy(update={"robust": True})
    return plan_scenario(scenario, run.predictor, baselines=False).plan


def allocation_flags(
    run: PlanRun, robust: Plan, sla_probability: dict[str, float | None] | None
) -> list[dict[str, Any]]:
    """One flag per flagged allocation of the base plan, in plan order."""
    out = []
    for a in run.plan.allocations:
        c = a.candidate
        sla = run.inputs.model(c.name).itl_sla_s
        reasons = []
        if c.itl_s_hi is not None and c.itl_s_hi > sla:
            reasons.append(
                f"ITL upper 90 % bound {ms_text(c.itl_s_hi)} ms > SLA {ms_text(sla)} ms at capacity"
            )
        if not c.in_domain:
            reasons.append(f"{c.gpu} is outside the predictors' training domain")
        if not reasons:
            continue
        if robust.has_solution:
            instead = _deployments(robust, c.name) or "nothing (no deployment)"
        else:
            instead = f"no plan (robust: true is {robust.status.value})"
        out.append(
            {
                "name": c.name,
                "gpu": c.gpu,
                "tp": c.tp,
                "replicas": a.replicas,
                "itl_s_hi_at_capacity": rnd(c.itl_s_hi) if c.itl_s_hi is not None else None,
                "itl_sla_s": rnd(sla),
                "in_domain": c.in_domain,
                "reasons": reasons,
                "robust_instead": instead,
                "sla_probability": (sla_probability or {}).get(c.name),
            }
        )
    return out
