"""Fuzz round 20d: the figures a plan shows beside its own.

Each test failed before its fix: at 900 req/s the alternatives table priced an L4 that needs
1,598 replicas at the 256-replica limit, each loaded past its capacity, and showed it 68.6 %
cheaper than the plan; the report's method statement gave a linear energy formula the figures
do not use."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.analysis.alternatives import alternatives
from planner.inputs import MAX_REPLICAS_PER_CANDIDATE
from planner.pipeline import plan_file
from planner.report.card_info import METHOD_TEXT
from predictors.api import Predictor

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.usefixtures("cached_predictor")


@pytest.mark.slow
def test_an_alternative_serves_the_whole_load_within_the_replica_limit(
    predictor: Predictor,
) -> None:
    scenario = REPO / "scenarios" / "paper-llama8b-low-load.yaml"
    run = plan_file(scenario, ["models[0].load.requests_per_s=900"], [], predictor=predictor)
    plan = run.plan
    options = [o for opts in alternatives(plan).values() for o in opts]
    assert options
    for o in options:
        assert o.replicas <= MAX_REPLICAS_PER_CANDIDATE
        cap = o.candidate.max_requests_per_s_per_replica
        assert o.replicas * cap >= 900 * (1 - 1e-9), (o.candidate.key, o.replicas, cap)
        assert o.delta >= -1e-6 * abs(o.objective) or o.breaks, o  # no free lunch


def test_the_reports_method_statement_names_the_power_curves() -> None:
    assert "power curve" in METHOD_TEXT
    assert "energy per request × requests/s" not in METHOD_TEXT
