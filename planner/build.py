"""Scenario -> PlanningInputs: enumerate candidate deployments, run the capacity model.

Layouts: for every (model entry, GPU type) the layouts of :func:`planner.layouts.ladder` (the
scenario's ``tp_degrees``, then rack-scale and multi-node layouts or the offer's stated
``layouts``) are tried in groups of ascending GPU count. Groups below the smallest one whose
weights fit are kept as excluded candidates ("needs … GB"); in a scenario whose ``tp_degrees``
groups fit one predictor call (:data:`ONE_CALL_MAX_SPECS`) every group of ``tp_degrees`` and of
the stated layouts is evaluated (the user listed them; they are evaluated in that call anyway)
and every evaluated group is kept; in larger ones, and
above them, groups are added until one meets the SLA, then while one lowers
the least GPU power or cost of serving the entry's peak of the groups before it, and the first
that lowers neither (a wider replica can be more efficient at a tight SLA, a two-node replica can
beat a one-node one, and a GPU with more memory meets the SLA on fewer GPUs than the layout that
serves best). Automatic layouts wider than a group that improves on neither are not considered:
more GPUs per replica then only add idle power and cost (:mod:`planner.ladder_rule`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from planner.capacity import CAPACITY_HEADROOM, CandidateSpec, evaluate_candidates
from planner.disagg.candidates import deployment_of, with_units
from planner.inputs import (
    MAX_REPLICAS_PER_CANDIDATE,
    Candidate,
    Failover,
    GpuInfo,
    ModelDemand,
    Objective,
    PlanningInputs,
    Provenance,
    fleet_inventory,
)
from planner.ladder_rule import GroupFacts, group_facts, stop_after, watched
from planner.layouts import Shape, base_groups, grouped, more_groups, stated_shape
from planner.scenario.errors import as_error
from planner.scenario.layout_checks import usable_degrees
from planner.scenario.model import PRICE_BASIS_COLUMN, Scenario
from planner.scenario.periods import periods, requests_per_s_by_period
from planner.scenario.placement import placed_candidates, price_bases, region_sites
from planner.scenario.sections import ModelEntry
from planner.specs import may_place, model_precision, spec
from predictors.api import Predictor
from predictors.catalog import engine_support, validity
from predictors.catalog.store import Catalog
from predictors.core.errors import WattgpuError
from predictors.core.safe_read import collector_paused


class FleetSizeError(WattgpuError):
    """A load no plan within the replica limit can carry (one line per model entry)."""


Ladder = list[list[Shape]]


@dataclass
class _Rungs:
    """The layouts of one (model, GPU): the ``tp_degrees`` groups, and the groups above them
    (:func:`planner.layouts.more_groups`) built only when a pair needs them."""

    llm: dict[str, Any]
    gpu: dict[str, Any]
    base: Ladder
    stated: list[Shape] | None
    engine: str | None = None
    _more: Ladder | None = None

    def more(self) -> Ladder:
        if self._more is None:
            self._more = more_groups(self.llm, self.gpu, self.base, self.stated, self.engine)
        return self._more

    def listed(self) -> int:
        """Groups the ladder rule evaluates whatever they give: the ``tp_degrees`` groups and,
        when the offer states its layouts, those too."""
        return len(self.base) + (len(self.more()) if self.stated is not None else 0)


def _rungs(
    scenario: Scenario,
    entry: ModelEntry,
    gpu: str,
    predictor: Predictor,
    memo: dict[tuple[str, str, bool], _Rungs],
) -> _Rungs:
    """The :class:`_Rungs` of (*entry*, *gpu*) for the scenario's engine, once per model and GPU
    in *memo*; a stated layout the validity rules refuse for an entry that may use the GPU is a
    :class:`LayoutError`."""
    key = (entry.model, gpu, may_place(scenario, entry, gpu))
    if key in memo:
        return memo[key]
    offer = scenario.gpu_offers[gpu]
    llm, row = predictor.catalog.llm(entry.model), predictor.catalog.gpu(gpu)
    # a degree the heads do not allow is never a candidate (the engine would refuse it); every
    # degree of an engine that splits the layers is (TP 1 × PP degree)
    degrees = usable_degrees(offer.tp_degrees, llm, scenario.engine)
    if not llm.get("num_attention_heads") or not llm.get("num_kv_heads"):
        # the predictors say why they cannot predict it; no layouts beyond the degrees
        memo[key] = _Rungs(
            llm, row, [[Shape(t, 1, 1, 1, t, 1)] for t in degrees], None, scenario.engine, []
        )
        return memo[key]
    stated = None
    runs = engine_support.runs_on(scenario.engine, row)
    # on a GPU the engine does not run on, the predictors refuse every layout with the reason,
    # stated or not (the pair is excluded, not the scenario refused)
    if offer.layouts is not None and may_place(scenario, entry, gpu) and runs:
        stated = [
            stated_shape(llm, row, option, f"gpus.{gpu}.layouts[{i}]", scenario.engine)
            for i, option in enumerate(offer.layouts)
        ]
    base = base_groups(llm, row, degrees, scenario.engine)
    top = max((s.gpus for group in base for s in group), default=0)
    if stated and any(s.gpus <= top for s in stated):
        # a stated layout of a tp_degrees group's GPU count (or fewer) joins that rung: the
        # rungs above are built only when a pair needs them, so it would never be reached
        base = grouped(
            [*(s for group in base for s in group), *(s for s in stated if s.gpus <= top)], set()
        )
    memo[key] = _Rungs(llm, row, base, stated, scenario.engine)
    return memo[key]


#: Scenarios with at most this many (entry, GPU, layout) specs of ``tp_degrees`` in all are
#: evaluated in one first call, and the layouts above them in one second call (one predictor call
#: instead of one per round); the same candidates are kept.
ONE_CALL_MAX_SPECS = 4000


def candidates(scenario: Scenario, predictor: Predictor) -> list[Candidate]:
    """Every candidate considered, in (model entry, GPU, layout) order; then the entries'
    disaggregated units, by their ``deployment`` (:mod:`planner.disagg.candidates`). Every
    evaluated layout is kept: one that lowers neither power nor cost at the peak can still be
    in the optimum (mixed with another) or be what a limit needs."""
    pairs = [(e, g) for e in scenario.models for g in scenario.gpu_offers]
    memo: dict[tuple[str, str, bool], _Rungs] = {}
    rungs = {(e.name, g): _rungs(scenario, e, g, predictor, memo) for e, g in pairs}
    pending = {key: list(r.base) for key, r in rungs.items()}
    entries = {e.name: e for e in scenario.models}
    watch = watched(scenario)
    count, _ = periods(scenario)
    peaks = {
        e.name: (max(requests_per_s_by_period(e, count), default=0.0), e.min_replicas)
        for e in scenario.models
    }
    # few specs: the tp_degrees' groups all in one first call, and the groups above them of the
    # pairs that need them in one second call (the rule trims the surplus); else group by group
    first = {key: len(groups) for key, groups in pending.items()}
    one_call = sum(first.values()) <= ONE_CALL_MAX_SPECS
    if not one_call:
        first = dict.fromkeys(pending, 1)
    extended: set[tuple[str, str]] = set()
    chosen: dict[tuple[str, str], list[list[Candidate]]] = {key: [] for key in pending}
    facts: dict[tuple[str, str], list[GroupFacts]] = {key: [] for key in pending}
    stops: dict[tuple[str, str], int] = {}  # a pair's groups are final once it stops
    ends: dict[tuple[str, str], int] = {}  # where the rule ends a pair's aggregated candidates
    # the disaggregated units' worker layouts come from the whole ladder: where the rule stops
    # depends on the SLA, and a looser SLA must never remove a unit (planner.disagg.units)
    whole = {(e.name, g) for e, g in pairs if deployment_of(e, scenario) != "aggregated"}
    pair_facts: dict[tuple[str, str], tuple[float | None, str, str]] = {}
    while True:
        specs: list[CandidateSpec] = []
        sizes: list[tuple[tuple[str, str], int]] = []
        for key, groups in pending.items():
            if key in stops:
                continue
            take = max(1, first.pop(key, 1))
            if not groups and key not in extended:
                extended.add(key)
                groups.extend(rungs[key].more())
                take = len(groups) if one_call else take
            if not groups:
                continue
            for group in groups[:take]:
                specs.extend(
                    spec(scenario, entries[key[0]], key[1], s, predictor, pair_facts) for s in group
                )
                sizes.append((key, len(group)))
            del groups[:take]
        if not specs:
            break
        results = iter(evaluate_candidates(specs, predictor, robust=scenario.robust))
        for key, size in sizes:
            evaluated = [next(results) for _ in range(size)]
            chosen[key].append(evaluated)
            facts[key].append(group_facts(evaluated, *peaks[key[0]]))
        for key in dict(sizes):
            stop = stop_after(facts[key], watch, rungs[key].listed() if one_call else 0)
            if stop is not None:
                ends[key] = stop
                if key not in whole:
                    stops[key] = stop
    out: list[Candidate] = []
    ladders: list[Candidate] = []
    for e, g in pairs:
        got = chosen[(e.name, g)]
        out.extend(c for group in got[: ends.get((e.name, g), len(got))] for c in group)
        if (e.name, g) in whole:
            ladders.extend(c for group in got for c in group)
    precision = functools.partial(model_precision, scenario=scenario, catalog=predictor.catalog)
    return with_units(scenario, predictor, out, precision, ladders)


def _gpu_info(scenario: Scenario, predictor: Predictor) -> dict[str, GpuInfo]:
    info = {}
    for gpu, offer in scenario.gpu_offers.items():
        row = predictor.catalog.gpu(gpu)
        price = offer.usd_per_hour
        if price is None:
            price = row.get(PRICE_BASIS_COLUMN[scenario.price_basis])
        info[gpu] = GpuInfo(
            gpu=gpu,
            tflops_per_w=float(row["fp16_tflops_dense"]) / float(row["tdp_w"]),
            usd_per_hour=float(price) if price is not None else 0.0,
        )
    return info


def demands(scenario: Scenario, catalog: Catalog) -> tuple[list[ModelDemand], tuple[float, ...]]:
    """The load of every model entry per period and the hours of each period."""
    count, hours = periods(scenario)
    models = [
        ModelDemand(
            name=e.name,
            model=e.model,
            requests_per_s_by_period=tuple(requests_per_s_by_period(e, count)),
            itl_sla_s=e.sla.itl_s,
            ttft_sla_s=e.sla.ttft_s,
            min_replicas=e.min_replicas,
            input_tokens=e.load.input_tokens,
            output_tokens=e.load.output_tokens,
            precision=model_precision(e, scenario, catalog),
            failover=failover_of(e, scenario),
            sla_percentile=e.sla.percentile,
        )
        for e in scenario.models
    ]
    return models, tuple([hours] * count)


def failover_of(entry: ModelEntry, scenario: Scenario) -> Failover | None:
    """The entry's failover, else the scenario's default; None when it is 0 or unset."""
    chosen = entry.failover if entry.failover is not None else scenario.failover
    if chosen is None or chosen.count == 0:
        return None
    return Failover("replicas" if chosen.unit == "replicas" else "nodes", chosen.count)


def provenance(scenario: Scenario, card: dict[str, Any]) -> Provenance:
    """Where the numbers come from: scenario facts and the model card's identity."""
    versions = card.get("library_versions") or {}
    training = card.get("training_data") or {}
    return Provenance(
        description=scenario.description,
        engine=scenario.engine,
        robust=scenario.robust,
        pue_source=scenario.pue_source,
        grid_region=scenario.region,
        grid_year=scenario.grid_year,
        grid_source=scenario.grid_source,
        capacity_headroom=CAPACITY_HEADROOM,
        predictors=card.get("name"),
        predictors_version=versions.get("wattgpu") if isinstance(versions, dict) else None,
        training_data_sha256=training.get("sha256") if isinstance(training, dict) else None,
        disclosure=scenario.disclosure.model_dump(mode="json") if scenario.disclosure else None,
        price_basis_by_gpu=price_bases(scenario),
    )


def grid_profile(scenario: Scenario) -> tuple[float, ...] | None:
    """The scenario's grid intensity per period (None: flat; the length is checked on load)."""
    d = scenario.disclosure
    if d is None or d.grid_profile_g_co2_per_kwh is None:
        return None
    return tuple(d.grid_profile_g_co2_per_kwh)


def check_fleet_size(
    models: Sequence[ModelDemand],
    cands: Sequence[Candidate],
    fields: Sequence[str] = (),
    stock: dict[str, int | None] | None = None,
    origin: Callable[[str], str] | None = None,
) -> None:
    """WattgpuError naming the entry (its load field, *fields*: ``requests_per_s`` or
    ``requests_per_s_by_period`` per entry) when even its largest replica would be needed more
    than :data:`~planner.inputs.MAX_REPLICAS_PER_CANDIDATE` times to carry its peak load; not
    for an entry whose every GPU type has an inventory (*stock*): that binds first, and the
    plan's infeasibility names it. *origin* (:meth:`Scenario.field_origin`): each line names
    where its load was set, as the loader's problems do (``FILE --set PATH=VALUE``, an overlay)."""
    problems = []
    feasible: dict[str, list[Candidate]] = {}
    for c in cands:  # grouped once: O(candidates), not O(models × candidates)
        if c.feasible:
            feasible.setdefault(c.name, []).append(c)
    for i, m in enumerate(models):
        peak = max(m.requests_per_s_by_period, default=0.0)
        caps = feasible.get(m.name, [])
        if peak <= 0 or not caps:
            continue
        if stock is not None and all(stock.get(g) is not None for c in caps for g, _ in c.gpu_use):
            continue
        best = max(caps, key=lambda c: c.max_requests_per_s_per_replica)
        need = math.ceil(peak / best.max_requests_per_s_per_replica)
        field = fields[i] if i < len(fields) else "requests_per_s"
        if need > MAX_REPLICAS_PER_CANDIDATE:
            problems.append(
                (
                    f"models[{i}].load.{field}",
                    f"peak {peak:,.6g} req/s for {m.name} needs {need:,} replicas even of its "
                    f"highest-capacity option within the SLA ({best.gpu} TP{best.layout}), more "
                    f"than the {MAX_REPLICAS_PER_CANDIDATE:,} a plan may use — split the load "
                    "over several entries",
                )
            )
    if problems and origin is not None:  # named as the loader names a field's problem
        raise as_error(origin, problems)
    if problems:
        raise FleetSizeError("\n".join(f"{f}: {msg}" for f, msg in problems))


def planning_inputs(
    scenario: Scenario,
    predictor: Predictor,
    *,
    time_limit_s: float | None = None,
    extra_candidates: Iterable[Candidate] = (),
    check_size: bool = True,
) -> PlanningInputs:
    """Everything the optimiser needs for *scenario* (*check_size*: refuse an entry that even
    its highest-capacity candidate serves only with too many replicas)."""
    models, period_hours = demands(scenario, predictor.catalog)
    weights = scenario.objective.weights
    objective = Objective(
        minimize=scenario.objective.minimize,
        weights={} if weights is None else weights.model_dump(),
    )
    with collector_paused():  # ~10^5 candidates and curve tuples, no reference cycles
        cands = tuple([*candidates(scenario, predictor), *extra_candidates])
    if check_size:
        fields = [
            "requests_per_s_by_period" if e.load.requests_per_s_by_period is not None else
            "requests_per_s"
            for e in scenario.models
        ]  # fmt: skip
        stock = {g: o.available for g, o in scenario.gpu_offers.items()}
        check_fleet_size(models, cands, fields, stock if not scenario.regions else None,
                         scenario.field_origin())  # fmt: skip
    sites = region_sites(scenario, grid_profile(scenario))
    inventory = {g: o.available for g, o in scenario.gpu_offers.items()}
    if sites:  # every candidate once per region its entry may use (planner.scenario.regions)
        cands = tuple(placed_candidates(scenario, cands, sites))
        inventory = {g: fleet_inventory(sites).get(g, 0) for g in inventory}
    return PlanningInputs(
        scenario=scenario.name,
        models=tuple(models),
        candidates=cands,
        inventory=inventory,
        period_hours=period_hours,
        pue=scenario.pue_value,
        electricity_usd_per_kwh=scenario.electricity_usd_per_kwh,
        grid_g_co2_per_kwh=scenario.grid_value_g_co2_per_kwh,
        carbon_usd_per_kg=(
            None if scenario.carbon_usd_per_tonne is None else scenario.carbon_usd_per_tonne / 1000
        ),
        power_cap_kw=scenario.power_cap_kw,
        budget_usd=scenario.budget_usd,
        objective=objective,
        gpu_info=_gpu_info(scenario, predictor),
        time_limit_s=time_limit_s or scenario.time_limit_s,
        provenance=replace(
            provenance(scenario, predictor.card),
            user_catalog=predictor.catalog.user_dir,
            catalog_sha256=predictor.catalog.fingerprint or None,
        ),
        grid_g_co2_per_kwh_by_period=grid_profile(scenario),
        gpus_per_node=(
            {g: validity.node_gpus(predictor.catalog.gpu(g)) for g in scenario.gpu_offers}
            if any(m.failover and m.failover.unit == "nodes" for m in models)
            else {}
        ),
        regions=sites,
    )
