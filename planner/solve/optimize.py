"""The fleet optimiser: :class:`PlanningInputs` -> solver -> checked :class:`Plan`.

The optimisation model: integer replicas per candidate, the load of every model split freely
across its deployments per period (even over a deployment's replicas) at the exact least watts
on the candidates' piecewise-linear power curves as they are (:mod:`planner.solve.routing`; the
serving model's curves are not concave; hand-built candidates are linear). Before any solver,
cheap bounds (:mod:`planner.solve.bounds`: least facility power, least GPUs) prove infeasibility in
milliseconds. :func:`solve` then picks how to solve it, by what links the models:

* nothing links them (no power cap, no budget, no inventory that can bind): every model is
  solved on its own (:mod:`planner.solve.decompose`: branch and bound over replica vectors with
  exact routing, :mod:`planner.solve.search`) — exact with a valid bound, gap 0 unless the
  search is cut short;
* linked and small (at most :data:`MONOLITHIC_MAX_MODELS` models) with linear candidates only:
  the full MILP with SCIP (:mod:`planner.solve.milp`). With power curves, column generation
  always (below); on small instances its master MILP gets every replica vector, so its proven
  optimum is exact (:data:`planner.solve.columns.EXHAUSTIVE_MAX_COLUMNS`);
* a power cap the only linking row: first the least-peak column generation
  (:mod:`planner.solve.peak`), which proves the cap infeasible (with the smallest cap that could
  restore a plan) or hands its power-frugal columns to the cost phase below;
* linked and larger: column generation with an exact pricing problem per model and the
  master solved as a MILP (:mod:`planner.solve.colgen`); the bound is the Lagrangian bound, so the
  gap is honest. When its gap is above the target, the full MILP runs for the time left
  with that plan as its hint (better plan and larger bound kept; linear candidates only); when
  it finds no plan the full MILP runs with the time that is left (and proves/explains
  infeasibility; with curves it is a relaxation whose plan is re-priced on the curves).
  Before it: cheap proofs, then column generation widened (:mod:`planner.solve.fallback`).

Why these solvers (measured on benchmarks/bench_solver.py, 2 cores, one thread): the full MILP
with SCIP needed 5-17 s for 50 × 30 × 24 and found no bound within 60 s for 500 × 30 × 24;
HiGHS was slower than SCIP on the full MILP (15 s vs 6 s on the 50-model seed 0); CP-SAT would
need the continuous loads scaled to integers and is not used. Decomposition and column
generation meet both targets with room to spare (figures in the benchmark's docstring):
50 × 30 × 24 with binding inventory is proven within 0.01 % in ~0.2 s, 500 × 30 × 24 within
0.25 % in ~2 s. The pricing subproblem is an exact DP rather than a MILP, so thousands of
pricing calls cost well under a second.

Every solver path runs one thread with a fixed seed and a deterministic LP, but SCIP's master
MILP is not reproducible run to run: on identical columns, weights and hint it returned
objectives up to 0.06 % apart (benchmarks/bench_solver.py, 500 models, power cap, seed 1; all
within the target gap), and the time limit can change an answer. After every solve
:func:`planner.result.check_invariants` runs and the objective is recomputed from the plan's
accounting (a mismatch: status ``error``); :mod:`planner.solve.explain` explains infeasibility.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

from planner.inputs import Candidate, PlanningInputs
from planner.result import BaselineResult, Plan, PlanStatus, SolveInfo
from planner.solve.accounting import plan_from, relative_gap
from planner.solve.advice import raise_to
from planner.solve.baselines import BaselineSpec, baseline_specs
from planner.solve.budget import budget_outcome
from planner.solve.cap_curves import curve_cap_messages
from planner.solve.coefficients import objective_weights
from planner.solve.colgen import RELAXED_NO_PLAN, relaxation_infeasible, solve_by_model
from planner.solve.columns import Decomposition
from planner.solve.decomposed import DecomposedSolution
from planner.solve.explain import REPLICA_LIMIT_LEAD, loosen_limit, no_candidate_messages, unmet
from planner.solve.explain import explain_infeasible as explain_linear
from planner.solve.inventory_regions import infeasibility_messages
from planner.solve.milp import SOLVER_ID, RawSolution, build_model, run_solver, set_hint
from planner.solve.presolve import prune_dominated
from planner.solve.proofs import least_facility_kw
from planner.solve.regions import REGION_PROOF, regional_cap_proof
from planner.solve.rescue import rescued

POLISH_MIN_S = 1.0
"""Least time left for the full-MILP polish after column generation (s)."""
POLISH_MARGIN_S = 0.5
"""Time kept back from the polish for building the model and accounting the plan (s)."""
MONOLITHIC_MAX_MODELS = 12
PROOF_FIRST_MIN = 2000
"""Candidates above which a capped plan tries the exact power-cap proof before solving."""
"""Linked instances with at most this many models go to the full MILP (linear candidates)."""
BOUNDS_SOLVER = "bounds (least power and GPUs; no solver run)"
DECOMPOSED_SOLVER = "decomposed (exact per-model search, free routing)"
COLGEN_SOLVER = "column generation (GLOP master, exact pricing, SCIP master MILP)"

__all__ = ["objective_weights", "plan_baselines", "solve"]


@dataclass
class _Share:
    """The plan's decomposition (*built*, the search data of the baselines' candidates kept:
    *keep*) is the baselines' *parent* (:mod:`planner.solve.restrict`)."""

    parent: Decomposition | None = None
    keep: frozenset[int] = frozenset()
    built: Decomposition | None = None
    widen: bool = False


def plan_baselines(
    inputs: PlanningInputs,
    parent: Decomposition | None = None,
    specs: list[BaselineSpec] | None = None,
) -> tuple[BaselineResult, ...]:
    """Solve every baseline of :mod:`planner.solve.baselines` (*specs*: made already) with the
    same constraints (*parent*: the plan's decomposition, whose blocks the baselines' restrict)."""
    out = []
    for spec in baseline_specs(inputs) if specs is None else specs:
        if spec.candidates is None:
            out.append(
                BaselineResult(spec.name, spec.description, False, "infeasible", spec.reason)
            )
            continue
        plan = _solve(inputs.with_candidates(spec.candidates), _Share(parent))
        feasible = plan.has_solution
        reason = "" if feasible else "; ".join(plan.solve.messages)
        out.append(
            BaselineResult(
                spec.name,
                spec.description,
                feasible,
                plan.status.value,
                reason,
                plan.totals if feasible else None,
            )
        )
    return tuple(out)


def _solve_full_milp(inputs: PlanningInputs, spent_s: float, *, relaxed: bool = False) -> Plan:
    """The full MILP (SCIP) with the time left; infeasibility explained. *relaxed*: the
    candidates have power curves, so the MILP is a relaxation (:func:`_plan_from`)."""
    left = replace(inputs, time_limit_s=max(1.0, inputs.time_limit_s - spent_s))
    mm = build_model(left)
    raw = run_solver(mm)
    raw = replace(raw, seconds=raw.seconds + spent_s)
    if raw.status in (PlanStatus.OPTIMAL, PlanStatus.FEASIBLE):
        solver = (
            f"{SOLVER_ID} (linear relaxation, re-priced on the curves)" if relaxed else SOLVER_ID
        )
        return plan_from(inputs, mm.candidates, raw, solver, relaxed=relaxed)
    if raw.status == PlanStatus.INFEASIBLE:
        messages = tuple(explain_infeasible(inputs))
        info = SolveInfo(raw.seconds, None, None, None, SOLVER_ID, messages)
        return Plan(inputs, PlanStatus.INFEASIBLE, info)
    message = (
        f"no plan found within the time limit of {inputs.time_limit_s:g} s, and none proven "
        "impossible (raise time_limit_s or loosen a limit)"
    )
    return Plan(
        inputs,
        PlanStatus.TIME_LIMIT,
        SolveInfo(raw.seconds, None, None, None, SOLVER_ID, (message,)),
    )


def _polish(
    inputs: PlanningInputs, by_model: DecomposedSolution, spent_s: float
) -> tuple[list[Candidate], RawSolution]:
    """Column generation left a gap above the target: run the full MILP with its plan as the
    hint for the time left; keep the better plan and the larger of the two bounds."""
    raw = RawSolution(
        by_model.status,
        by_model.seconds,
        by_model.objective,
        by_model.bound,
        by_model.replicas,
        by_model.loads,
    )
    left_s = inputs.time_limit_s - spent_s
    curved = any(c.power_curve_w_per_replica for c in by_model.candidates)
    if (
        curved
        or inputs.regions
        or by_model.status == PlanStatus.OPTIMAL
        or left_s - POLISH_MARGIN_S < POLISH_MIN_S
    ):
        return by_model.candidates, raw
    mm = build_model(replace(inputs, time_limit_s=left_s - POLISH_MARGIN_S))
    set_hint(
        mm,
        {c.key: n for c, n in zip(by_model.candidates, by_model.replicas, strict=True)},
        {c.key: x for c, x in zip(by_model.candidates, by_model.loads, strict=True)},
    )
    full = run_solver(mm)
    seconds = by_model.seconds + full.seconds
    bound = max(by_model.bound, full.bound if full.bound is not None else -math.inf)
    if full.objective is not None and full.objective < by_model.objective * (1 - 1e-9):
        candidates, raw = mm.candidates, full
    else:
        candidates = by_model.candidates
    assert raw.objective is not None
    bound = min(bound, raw.objective)
    gap = relative_gap(raw.objective, bound)
    ok = gap is not None and gap <= inputs.relative_gap
    status = PlanStatus.OPTIMAL if ok else PlanStatus.FEASIBLE
    return candidates, replace(raw, status=status, seconds=seconds, bound=bound)


def _pooled_proof(inputs: PlanningInputs, start: float) -> Plan | None:
    """No plan found with regions: the same entries on one site with every region's GPUs
    pooled, no power caps and no budget (each entry may use any candidate of its allowed
    regions: a relaxation of placing it in one region within that region's limits). When that
    has no plan either, neither has the scenario; None when it proves nothing."""
    unique: dict[tuple, Candidate] = {}
    for c in inputs.candidates:
        pooled = replace(c, region="")
        unique.setdefault(pooled.key, pooled)
    left = max(1.0, inputs.time_limit_s - (time.perf_counter() - start))
    relaxed = replace(
        inputs,
        candidates=tuple(unique.values()),
        regions=(),
        power_cap_kw=None,
        budget_usd=None,
        time_limit_s=left,
    )
    pooled_plan = solve(relaxed, baselines=False, widen=False)
    if pooled_plan.status != PlanStatus.INFEASIBLE:
        return None
    why = "; ".join(pooled_plan.solve.messages) or "no combination of replicas fits"
    message = (
        "no plan exists even with every region's GPUs pooled into one site, without power caps "
        f"or a budget: {why}"
    )
    seconds = time.perf_counter() - start
    info = SolveInfo(seconds, None, None, None, COLGEN_SOLVER, (message,))
    return Plan(inputs, PlanStatus.INFEASIBLE, info)


def _power_cap_proof(
    inputs: PlanningInputs, candidates: list[Candidate], start: float
) -> Plan | None:
    """No plan found under a power cap: the exact least facility power of the busiest period
    (:mod:`planner.solve.proofs`). Above the cap it proves infeasibility; None otherwise."""
    assert inputs.power_cap_kw is not None
    least = least_facility_kw(inputs, candidates)
    if least is None or least[1] <= inputs.power_cap_kw * (1 + 1e-9):
        return None
    period, kw = least
    enough, cap = raise_to(kw, inputs.power_cap_kw)
    message = (
        f"power cap: in period {period} every plan draws at least {kw:,.6g} kW facility power "
        f"(a valid lower bound: each model's least power, exact on its curves), above the cap "
        f"of {cap} kW (raise power_cap_kw to at least {enough})"
    )
    seconds = time.perf_counter() - start
    return Plan(
        inputs,
        PlanStatus.INFEASIBLE,
        SolveInfo(seconds, None, None, None, COLGEN_SOLVER, (message,)),
    )


def _cap_proof(
    inputs: PlanningInputs, candidates: list[Candidate], dec: Decomposition | None, start: float
) -> Plan | None:
    """Infeasible plans proven before any solver: every region's cap below its least power
    (*dec*: the regions' decomposition), or, for a large capped instance on one site, the
    exact least power of its busiest period above the cap (1.6 s on the 500-entry example,
    against 4 s for the least-peak column generation's proof). None otherwise."""
    if dec is not None:
        proof = regional_cap_proof(dec)  # the entries confined to capped regions
        if not proof:
            return None
        info = SolveInfo(time.perf_counter() - start, None, None, None, REGION_PROOF, tuple(proof))
        return Plan(inputs, PlanStatus.INFEASIBLE, info)
    if inputs.power_cap_kw is None or len(candidates) <= PROOF_FIRST_MIN:
        return None
    return _power_cap_proof(inputs, candidates, start)


def solve(inputs: PlanningInputs, *, baselines: bool = True, widen: bool = True) -> Plan:
    """Plan the fleet: choose the method (module docstring), solve, check invariants,
    explain infeasibility, add baselines. *widen*: column generation may widen its search
    when nothing else finds a plan (the proofs' relaxations do not: they are meant cheap)."""
    specs = baseline_specs(inputs) if baselines else []
    share = _Share(keep=frozenset(id(c) for s in specs for c in s.candidates or ()), widen=widen)
    start = time.perf_counter()
    plan = _solve(inputs, share)
    if widen:  # a plan found for another objective is one of this one (planner.solve.rescue)
        plan = rescued(inputs, plan, start, lambda o: solve(o, baselines=False, widen=False))
    if baselines and plan.has_solution:
        plan = replace(plan, baselines=plan_baselines(inputs, share.built, specs))
    return plan


def explain_infeasible(inputs: PlanningInputs) -> list[str]:
    """:func:`planner.solve.explain.explain_infeasible`, a budget's least cost on the curves, a
    power cap's least power on them (:mod:`planner.solve.cap_curves`)."""
    found = explain_linear(inputs, lambda least: solve(least, baselines=False, widen=False))
    return curve_cap_messages(inputs, found) or found


def _by_model_plan(inputs: PlanningInputs, by_model: DecomposedSolution, start: float) -> Plan:
    """The plan (or the proof that none exists) of the by-model solvers' outcome."""
    if by_model.status == PlanStatus.INFEASIBLE:
        messages = list(by_model.messages) or explain_infeasible(inputs) or [unmet(inputs)]
        info = SolveInfo(by_model.seconds, None, None, None, COLGEN_SOLVER, tuple(messages))
        return Plan(inputs, PlanStatus.INFEASIBLE, info)
    found, raw = _polish(inputs, by_model, time.perf_counter() - start)
    solver = DECOMPOSED_SOLVER if by_model.method == "decomposed" else COLGEN_SOLVER
    if found is not by_model.candidates:
        solver = f"{COLGEN_SOLVER}, improved by the full MILP ({SOLVER_ID})"
    plan = plan_from(inputs, found, raw, solver)
    if by_model.messages and plan.status == PlanStatus.FEASIBLE:  # why it is not proven
        plan = replace(
            plan, solve=replace(plan.solve, messages=(*plan.solve.messages, *by_model.messages))
        )
    return plan


def _solve(inputs: PlanningInputs, share: _Share) -> Plan:
    start = time.perf_counter()
    no_sla = no_candidate_messages(inputs)
    if no_sla:
        info = SolveInfo(time.perf_counter() - start, None, None, None, SOLVER_ID, tuple(no_sla))
        return Plan(inputs, PlanStatus.INFEASIBLE, info)
    quick = infeasibility_messages(inputs)  # with regions, per region
    if quick and len(inputs.models) <= MONOLITHIC_MAX_MODELS and not inputs.regions:
        # small: the elastic re-solves give the exact relaxation needed (fast at this size)
        explained = explain_infeasible(inputs)
        generic = all(e.startswith(("infeasible", REPLICA_LIMIT_LEAD)) for e in explained)
        quick = (explained + quick) if generic else (explained or quick)
    if quick:
        info = SolveInfo(time.perf_counter() - start, None, None, None, BOUNDS_SOLVER, tuple(quick))
        return Plan(inputs, PlanStatus.INFEASIBLE, info)
    candidates = prune_dominated(inputs, inputs.feasible_candidates())
    dec = Decomposition(inputs, candidates, share.parent, share.keep) if inputs.regions else None
    proved = _cap_proof(inputs, candidates, dec, start)
    if proved is not None:
        return proved
    curved = any(c.power_curve_w_per_replica for c in candidates)
    plan: Plan | None = None
    # regions: always by model (a model is placed in one region; the full MILP has no regions)
    regional = bool(inputs.regions)
    if curved or regional or not inputs.linked or len(inputs.models) > MONOLITHIC_MAX_MODELS:
        built = time.perf_counter()
        dec = share.built = dec or Decomposition(inputs, candidates, share.parent, share.keep)
        spent = time.perf_counter() - (start if regional else built)  # the limit counts it
        by_model = solve_by_model(inputs, candidates, dec=dec, spent_s=spent)
        plan = None if by_model is None else _by_model_plan(inputs, by_model, start)
        if plan is not None and plan.status == PlanStatus.INFEASIBLE:
            return plan
    if plan is None and (curved or regional) and inputs.budget_usd is not None:
        plan = budget_outcome(
            inputs, start, lambda least: solve(least, baselines=False, widen=False)
        )
    if plan is None and curved and inputs.power_cap_kw is not None:
        plan = _power_cap_proof(inputs, candidates, start)
    if plan is None and regional:
        plan = _pooled_proof(inputs, start)
    if (
        plan is None
        and share.widen
        and dec is not None
        and time.perf_counter() - start < inputs.time_limit_s
    ):
        # no cheap proof either: the relaxation's proof (elastic rows), then column
        # generation again, widened (planner.solve.fallback)
        if relaxation_infeasible(dec, time.perf_counter() - start):
            why = explain_infeasible(inputs)
            info = SolveInfo(
                time.perf_counter() - start,
                None,
                None,
                None,
                COLGEN_SOLVER,
                tuple(why or [RELAXED_NO_PLAN]),
            )
            return Plan(inputs, PlanStatus.INFEASIBLE, info)
        spent = time.perf_counter() - start
        wide = solve_by_model(inputs, candidates, dec=dec, spent_s=spent, widen=True)
        plan = None if wide is None else _by_model_plan(inputs, wide, start)
    if plan is None and (regional or curved and len(inputs.models) > MONOLITHIC_MAX_MODELS):
        # the full MILP of a large curve instance only relaxes, at a large cost in time and
        # memory: say honestly that nothing was found
        seconds = time.perf_counter() - start
        message = (
            f"no plan found within the time limit of {inputs.time_limit_s:g} s, and none "
            "proven impossible: column generation found no combination within the limits "
            "(raise time_limit_s or loosen a limit)"
        )
        if seconds < 0.5 * inputs.time_limit_s:  # it stopped on its own: more time is no help
            message = (
                "no plan found, and none proven impossible: column generation stopped on its "
                f"own within half the {inputs.time_limit_s:g} s time limit without a "
                f"combination within the limits — {loosen_limit(inputs)}"
            )
        info = SolveInfo(seconds, None, None, None, COLGEN_SOLVER, (message,))
        plan = Plan(inputs, PlanStatus.TIME_LIMIT, info)
    if plan is None:
        plan = _solve_full_milp(inputs, time.perf_counter() - start, relaxed=curved)
    return plan
