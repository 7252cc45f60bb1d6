"""The candidates of a scenario's model entries by their ``deployment`` (docs/scenarios.md,
"Deployment"): ``aggregated`` (the default) keeps the aggregated replicas alone, ``both`` adds
the entry's disaggregated units (:mod:`planner.disagg.units`), ``disaggregated`` keeps the units
alone. The aggregated ladder is evaluated in every case: it gives the units' worker layouts (its
every group for these entries, wherever the layout rule ends their aggregated candidates)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from planner.disagg.evaluate import evaluate_units, kept_units
from planner.disagg.units import EntryFacts, unit_specs
from planner.inputs import Candidate, Exclusion
from planner.scenario.engines import disaggregated_reason
from planner.scenario.model import Scenario
from planner.scenario.sections import DeploymentChoice, ModelEntry
from predictors.api import Predictor


def deployment_of(entry: ModelEntry, scenario: Scenario) -> DeploymentChoice:
    """The entry's ``deployment``, else the scenario's."""
    return entry.deployment or scenario.deployment


def _facts(entry: ModelEntry, scenario: Scenario, precision: str) -> EntryFacts:
    return EntryFacts(
        engine=scenario.engine,
        precision=precision,
        input_tokens=entry.load.input_tokens,
        output_tokens=entry.load.output_tokens,
        itl_sla_s=entry.sla.itl_s,
        ttft_sla_s=entry.sla.ttft_s,
        percentile=entry.sla.percentile,
    )


def with_units(
    scenario: Scenario,
    predictor: Predictor,
    aggregated: Sequence[Candidate],
    precision: Callable[[ModelEntry], str],
    ladders: Sequence[Candidate] | None = None,
) -> list[Candidate]:
    """The *aggregated* candidates of the entries that keep them, then the disaggregated units
    of the entries that ask for them (module doc); *precision* gives an entry's precision,
    *ladders* the units' worker layouts: every evaluated layout of those entries' whole ladders
    (default: *aggregated*)."""
    layouts = aggregated if ladders is None else ladders
    chosen = {e.name: deployment_of(e, scenario) for e in scenario.models}
    specs = [
        spec
        for e in scenario.models
        if chosen[e.name] != "aggregated"
        for spec in unit_specs(
            e.name,
            e.model,
            _facts(e, scenario, precision(e)),
            [c for c in layouts if c.name == e.name],
        )
    ]
    units = kept_units(evaluate_units(specs, predictor, robust=scenario.robust)) if specs else []
    with_units = {c.name for c in units}
    # an entry of disaggregated units alone with none at all keeps its replicas the predictors
    # refused or whose weights do not fit, infeasible, so that the plan says why (an engine
    # that does not run on the GPU, a model that no worker layout holds)
    why_none = [
        c
        for c in aggregated
        if chosen[c.name] == "disaggregated"
        and c.name not in with_units
        and c.exclusion in (Exclusion.MEMORY, Exclusion.PREDICTION)
    ]
    kept = [c for c in aggregated if chosen[c.name] != "disaggregated"] + units + why_none
    return [
        c if chosen[c.name] == "aggregated" else _unit_engines(c, scenario, predictor) for c in kept
    ]


def _unit_engines(c: Candidate, scenario: Scenario, predictor: Predictor) -> Candidate:
    """*c* of an entry with units: the engines its refusal suggests are those of units
    (:func:`planner.scenario.engines.disaggregated_reason`)."""
    if c.exclusion != Exclusion.PREDICTION or not c.reason:
        return c
    reason = disaggregated_reason(c.reason, scenario.engine, predictor.catalog.gpu(c.gpu))
    return c if reason == c.reason else replace(c, reason=reason)
