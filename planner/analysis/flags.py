"""The uncertainty flags of a plan, with what ``robust: true`` deploys instead (issue 20, item 7).

:func:`uncertainty_flags` flags the allocations of a solved :class:`~planner.pipeline.PlanRun`
by the rule of :mod:`planner.documents.flags` and, only when one is flagged, plans the scenario
again with ``robust: true`` (capacity sized on the upper ITL bound) to say what it deploys for
each flagged model entry:

* when nothing links the model entries (no power cap, no budget, no inventory limit), the
  solver plans every entry on its own (:func:`planner.solve.colgen.solve_by_model`: an exact,
  deterministic search per entry, no shared time budget) and the candidates of an entry are
  predicted from that entry alone. So the flagged entries are re-solved alone: each gets the
  deployment the whole scenario's ``robust: true`` plan gives it, at a fraction of the cost.
  When they have no robust plan together, each is re-solved on its own (one entry without a
  robust plan says nothing of the others);
* otherwise the entries share limits and the whole scenario is re-solved;
* a re-solve of more than :data:`MAX_ROBUST_ENTRIES` entries is not run: it costs about as
  much as the plan itself (``large-generated``: 455 of 500 entries flagged, a robust re-solve
  of 34 s against the plan's 25 s). The flags then say so and name the command that gives it
  (``--set robust=true``).

:func:`with_sla_probability` adds a sweep's per-entry SLA probabilities;
:func:`saved_plan_flags` flags a saved plan written before the flags existed (no predictor:
the robust alternative is not computed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from planner.documents.flags import (
    NOT_COMPUTED,
    RULE,
    DeploymentDocument,
    FlagDocument,
    RobustResolve,
    UncertaintyFlagsDocument,
    flag_reasons,
)
from planner.documents.plan import PlanDocument
from planner.documents.sweep import SweepDocument
from planner.inputs import deployment_text
from planner.result import Plan, PlanStatus
from predictors.core.errors import WattgpuError

if TYPE_CHECKING:  # the pipeline loads the predictors: imported where a re-solve needs it
    from planner.pipeline import PlanRun

MAX_ROBUST_ENTRIES = 100
"""Most model entries a ``robust: true`` re-solve for the flags covers (module doc)."""


#: The flag and deployment fields of a candidate key's PP, DP and EP (``key[3:6]``).
DEGREE_FIELDS = ("pipeline_parallel", "data_parallel", "expert_parallel")


def _deployments(plan: Plan, name: str) -> list[DeploymentDocument]:
    return [
        DeploymentDocument(
            gpu=a.candidate.gpu,
            tp=a.candidate.tp,
            replicas=a.replicas,
            **dict(zip(DEGREE_FIELDS, a.candidate.key[3:6], strict=True)),
            pools=a.candidate.option_text if a.candidate.pools else None,
        )
        for a in plan.allocations
        if a.candidate.name == name
    ]


def _text(plan: Plan, name: str) -> str:
    """``GPU tpLAYOUT xREPLICAS`` per deployment of entry *name* in *plan*; a disaggregated
    unit shows its pools (``[1× B200 TP4 → 3× GB200 TP4] x1``), whose ``tp`` alone would
    read as an aggregated replica of the prefill type."""
    parts = []
    for a in plan.allocations:
        if a.candidate.name != name:
            continue
        c = a.candidate
        shown = c.option_text if c.pools else f"{c.gpu} tp{c.layout.replace(' ', '')}"
        parts.append(f"{shown} x{a.replicas}")
    return "; ".join(parts) or "nothing (no deployment)"


def _replan(run: PlanRun, names: list[str]) -> Plan | str:
    """The robust plan of the entries *names* of *run*'s scenario, or why it could not be made."""
    chosen = set(names)
    scenario = run.scenario
    robust = scenario.model_copy(
        update={"robust": True, "models": [e for e in scenario.models if e.name in chosen]}
    )
    from planner.pipeline import plan_scenario

    try:
        return plan_scenario(
            robust, run.predictor, time_limit_s=run.inputs.time_limit_s, baselines=False
        ).plan
    except WattgpuError as exc:  # the plan stands; only its robust alternative is unknown
        return f"robust: true could not be planned: {str(exc).splitlines()[0]}"


def _solve_alone(together: Plan, name: str) -> Plan:
    """The robust plan of entry *name* alone: the together plan's inputs (its candidates are
    already predicted on the upper ITL curves; nothing links unlinked entries) restricted to
    that entry, solved again."""
    from dataclasses import replace

    from planner.solve.optimize import solve

    inputs = together.inputs
    only = replace(
        inputs, models=(inputs.model(name),), candidates=tuple(inputs.candidates_of(name))
    )
    return solve(only, baselines=False)


def _robust(
    run: PlanRun, flagged: list[str], step: Callable[[str], None]
) -> tuple[dict[str, Plan | None], RobustResolve, str]:
    """Per *flagged* entry the robust plan that answers for it, how it was found, and a note."""
    if run.scenario.robust:
        plans: dict[str, Plan | None] = dict.fromkeys(flagged, run.plan)
        return plans, "already_robust", "the plan is itself planned with robust: true"
    together = run.inputs.linked
    names = [m.name for m in run.inputs.models] if together else flagged
    if len(names) > MAX_ROBUST_ENTRIES:
        return (
            dict.fromkeys(flagged),
            "not_computed",
            f"not re-solved: it would re-plan {len(names)} model entries, more than "
            f"{MAX_ROBUST_ENTRIES} (about the cost of this plan again); `wattgpu plan SCENARIO "
            "--set robust=true` gives it",
        )
    entries = "entry" if len(names) == 1 else "entries"
    step(f"flags: planning {len(names)} model {entries} again with robust: true")
    plan = _replan(run, names)
    if isinstance(plan, str):
        return dict.fromkeys(flagged), "not_computed", plan
    if together:
        note = (
            "the whole scenario re-solved (a power cap, budget or inventory limit links the "
            "model entries)"
        )
        return dict.fromkeys(flagged, plan), "all_entries", note
    if not plan.has_solution and len(names) > 1:
        # unlinked entries plan independently: one without a robust plan says nothing of another
        step(f"flags: solving each of {len(names)} model entries alone with robust: true")
        each: dict[str, Plan | None] = {name: _solve_alone(plan, name) for name in names}
        note = (
            "re-solved for each flagged model entry alone (together they have no robust plan, "
            "and nothing links the entries: no power cap, budget or inventory limit)"
        )
        return each, "flagged_entries", note
    note = (
        f"re-solved for the {len(names)} flagged model {entries} alone, which gives each the "
        "deployment of the whole scenario's robust plan: nothing links the entries (no power "
        "cap, budget or inventory limit)"
    )
    return dict.fromkeys(flagged, plan), "flagged_entries", note


def _instead(
    robust: Plan | None, resolve: RobustResolve, name: str
) -> tuple[str, list[DeploymentDocument] | None]:
    if robust is None:
        return NOT_COMPUTED, None
    if not robust.has_solution:
        why = "; ".join(robust.solve.messages)  # whole: its last words are the number to set
        return f"no plan (robust: true is {robust.status.value}: {why})", None
    deployments = _deployments(robust, name)
    suffix = " (the plan itself)" if resolve == "already_robust" else ""
    return _text(robust, name) + suffix + _unproven(robust), deployments


def _unproven(robust: Plan) -> str:
    """`` (…)`` where the robust plan was not proven optimal (its search stopped at the time
    limit or a gap: a busy machine can stop it elsewhere; fuzz round 30), else ''."""
    if robust.status == PlanStatus.OPTIMAL:
        return ""
    gap = robust.solve.gap
    within = f"within {gap:.2%} of the best" if gap is not None else "without a bound"
    return f" (robust: true found this plan {within}, not proven optimal)"


def _flag(
    key: tuple[Any, ...], replicas: int, hi: float | None, sla: float, in_domain: bool
) -> FlagDocument | None:
    """The flag of the allocation of candidate *key* (entry, GPU or a unit's pools, TP, PP, DP,
    EP, ...) with its robust alternative not computed yet; None when the rule does not flag
    it."""
    name, gpu, tp = str(key[0]), str(key[1]), int(key[2])
    reasons = flag_reasons(gpu, hi, sla, in_domain)
    if not reasons:
        return None
    return FlagDocument(
        name=name,
        gpu=gpu,
        tp=tp,
        replicas=replicas,
        **dict(zip(DEGREE_FIELDS, key[3:6], strict=True)),
        itl_s_hi_at_capacity=hi,
        itl_sla_s=sla,
        in_domain=in_domain,
        reasons=reasons,
        robust_instead=NOT_COMPUTED,
        sla_probability=None,
    )


def _document(
    flags: list[FlagDocument], resolve: RobustResolve, note: str, draws: int | None = None
) -> UncertaintyFlagsDocument:
    return UncertaintyFlagsDocument(
        rule=RULE,
        robust_resolve=resolve if flags else "not_needed",
        robust_note=note if flags else "no allocation is flagged",
        sla_probability_draws=draws,
        flags=flags,
    )


def uncertainty_flags(
    run: PlanRun,
    sla_probability: Mapping[str, float | None] | None = None,
    *,
    draws: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> UncertaintyFlagsDocument:
    """The flags of *run*'s plan (module doc); *sla_probability* per entry from a sweep of
    *draws* draws."""
    found = [
        _flag(
            a.candidate.key,  # its GPU, or a disaggregated unit's pools, and its layout
            a.replicas,
            a.candidate.itl_s_hi,
            run.inputs.model(a.candidate.name).itl_sla_s,
            a.candidate.in_domain,
        )
        for a in run.plan.allocations
    ]
    flags = [f for f in found if f is not None]
    if not flags:
        return _document([], "not_needed", "", draws)
    flagged = list(dict.fromkeys(f.name for f in flags))
    robust, resolve, note = _robust(run, flagged, progress or (lambda text: None))
    probs = sla_probability or {}
    done = []
    for f in flags:
        instead, deployments = _instead(robust[f.name], resolve, f.name)
        done.append(
            f.model_copy(
                update={
                    "robust_instead": instead,
                    "robust_deployments": deployments,
                    "sla_probability": probs.get(f.name),
                }
            )
        )
    return _document(done, resolve, note, draws)


def with_sla_probability(
    doc: UncertaintyFlagsDocument, sla_probability: Mapping[str, float | None], draws: int
) -> UncertaintyFlagsDocument:
    """*doc* with each flag's SLA probability from a sweep of *draws* draws."""
    flags = [
        f.model_copy(update={"sla_probability": sla_probability.get(f.name)}) for f in doc.flags
    ]
    return doc.model_copy(update={"flags": flags, "sla_probability_draws": draws})


def sweep_sla_probability(
    sweep: SweepDocument, plan: PlanDocument
) -> tuple[dict[str, float | None], int] | None:
    """A sweep's per-entry SLA probabilities and its draws, for the flags of *plan*: None when
    the sweep has no draws or its base plan is another plan (other deployments, or the same ones
    whose totals differ: :func:`sweep_plan_mismatch`; the sweep's
    ``base.fleet`` reads ``entry GPU tpLAYOUT xR; ...`` in plan order, as
    :func:`planner.inputs.deployment_text` writes it)."""
    if sweep.summary is None:
        return None
    mine = "; ".join(deployment_text(a.key, a.replicas) for a in plan.allocations)
    if sweep.base.fleet != mine or sweep_plan_mismatch(sweep, plan) is not None:
        return None  # another plan, or the same fleet under another load or price
    return dict(sweep.summary.sla_probability), sweep.summary.draws


def saved_plan_flags(doc: PlanDocument) -> UncertaintyFlagsDocument:
    """The flags of a saved plan: its own, or (a plan written before them) the rule applied to
    its allocations, without the robust alternative (that needs the predictors)."""
    if doc.uncertainty_flags is not None:
        return doc.uncertainty_flags
    found = [
        _flag(
            a.key,
            a.replicas,
            doc.candidate(a.key).itl_s_hi,
            doc.model(a.name).itl_sla_s,
            doc.candidate(a.key).in_domain,
        )
        for a in doc.allocations
    ]
    note = (
        "the saved plan was written without flags, and the robust alternative needs the "
        "predictors: plan the scenario again (`wattgpu plan SCENARIO --format json`)"
    )
    return _document([f for f in found if f is not None], "not_computed", note)


def sweep_plan_mismatch(sweep: SweepDocument, plan: PlanDocument) -> str | None:
    """Why *sweep* is not a sweep of *plan* although the scenario names match: its base outcome
    (the plan it re-planned around) differs from *plan*'s totals in facility energy or cost (a
    ``--set`` load or price): None when they agree to 1e-6."""
    totals = plan.totals
    if totals is None:
        return None
    base = sweep.base_outcome
    for name, theirs, mine in (
        ("facility energy", base.facility_energy_kwh, totals.facility_energy_kwh),
        ("cost", base.cost_usd, totals.cost_usd),
    ):
        if abs(theirs - mine) > 1e-6 * max(1.0, abs(mine)):
            return f"the sweep's base plan has a {name} of {theirs:,.6g}, this plan {mine:,.6g}"
    return None
