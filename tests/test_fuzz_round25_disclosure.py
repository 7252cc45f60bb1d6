"""Fuzz round 25 (outputs, finding D2): the disclosure's prefill / decode energy split names the
method each allocation's share was computed by. A disaggregated unit's prefill is its prefill
pool's energy (the pools' own power); the source said the split was by a request's time
(TTFT / (TTFT + output tokens × ITL)), which a unit does not use."""

from __future__ import annotations

import pytest

from planner.analysis.forecast import forecast
from planner.analysis.uncertainty import bands as plan_bands
from planner.disclosure.build import build_disclosure
from planner.disclosure.energy import SPLIT_BY_POOL, SPLIT_BY_TIME
from planner.disclosure.ranges import ranges_from_bands
from planner.documents.disclosure import DisclosureDocument
from planner.documents.plan import PlanDocument, as_document
from planner.paths import scenarios_dir
from planner.pipeline import plan_file
from planner.result import Plan
from predictors.catalog.store import load_catalog
from tests.bundled_runs import BundledRuns

J_PER_KWH = 3.6e6


def _disclose(doc: PlanDocument) -> DisclosureDocument:
    return build_disclosure(
        doc, forecast(doc), ranges_from_bands(plan_bands(doc, 0.9)), load_catalog()
    )


@pytest.fixture(scope="module")
def units_only(module_cached_predictor: None, tmp_path_factory: pytest.TempPathFactory) -> Plan:
    """The bundled disagg-tight-sla with its tight entry on disaggregated units only (since the
    retrain of 2026-12-07 the bundled plan mixes an aggregated replica into that entry)."""
    path = tmp_path_factory.mktemp("units") / "disagg-tight-sla.yaml"
    path.write_text((scenarios_dir() / "disagg-tight-sla.yaml").read_text(encoding="utf-8"))
    run = plan_file(path, ["models[0].deployment=disaggregated"], baselines=False)
    tight = [a for a in as_document(run.plan).allocations if a.name == "rag-tight-itl"]
    assert tight and all(a.pools for a in tight)
    return run.plan


@pytest.mark.slow  # one plan of a few seconds
def test_a_unit_entrys_prefill_energy_is_its_prefill_pools_and_the_source_says_so(
    units_only: Plan,
) -> None:
    doc = as_document(units_only)
    disclosure = _disclose(doc)
    hours = doc.assumptions.period_hours
    checked = 0
    for entry in disclosure.models:
        mine = [a for a in doc.allocations if a.name == entry.name]
        field = entry.fields["energy_prefill_j_per_output_token"]
        units = [a for a in mine if a.pools]
        if units and len(units) == len(mine):
            assert SPLIT_BY_POOL in field.source and SPLIT_BY_TIME not in field.source
            pre_kwh = (
                sum(
                    sum(p * h for p, h in zip(a.pools[0].power_w_by_period, hours, strict=True))
                    for a in units
                )
                / 1000.0
            )
            tokens = entry.fields["energy_j_per_output_token"]
            gpu_kwh = (
                sum(
                    sum(p * h for p, h in zip(a.power_w_by_period, hours, strict=True))
                    for a in mine
                )
                / 1000.0
            )
            # the same token count as the entry's energy per token
            n_tokens = gpu_kwh * J_PER_KWH / tokens.value
            assert abs(field.value - pre_kwh * J_PER_KWH / n_tokens) <= 1e-9 * field.value
            checked += 1
        elif not units:
            assert field.source.startswith(SPLIT_BY_TIME)
            assert SPLIT_BY_POOL not in field.source
    assert checked >= 1
    fleet = disclosure.fields["energy_prefill_j_per_output_token"].source
    kinds = {bool(a.pools) for a in doc.allocations}
    assert (SPLIT_BY_POOL in fleet or "prefill pool" in fleet) == (True in kinds)
    assert (SPLIT_BY_TIME in fleet) == (False in kinds)


@pytest.mark.slow  # over 2 s on 2 cores: run by .ci/run
def test_an_entry_mixing_replicas_and_units_names_both_methods(bundled: BundledRuns) -> None:
    doc = as_document(bundled["disagg-tight-sla"].plan)
    disclosure = _disclose(doc)
    mixed = 0
    for entry in disclosure.models:
        kinds = {bool(a.pools) for a in doc.allocations if a.name == entry.name}
        source = entry.fields["energy_prefill_j_per_output_token"].source
        if kinds == {True, False}:
            assert source.startswith(f"aggregated replicas: {SPLIT_BY_TIME}; "), source
            assert "disaggregated units: prefill = their prefill pool's energy" in source
            mixed += 1
    assert mixed >= 1


def test_an_aggregated_plans_split_is_by_time(bundled: BundledRuns) -> None:
    doc = as_document(bundled["paper-llama8b-low-load"].plan)
    assert not any(a.pools for a in doc.allocations)
    source = _disclose(doc).fields["energy_prefill_j_per_output_token"].source
    assert source == f"{SPLIT_BY_TIME}, per output token"
