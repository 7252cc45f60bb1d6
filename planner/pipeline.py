"""Scenario file -> plan, end to end: load, predict candidates, build inputs, solve.

The one function every command that needs a plan calls (``plan``, ``compare``, ``report``,
``pareto``), so they all use the same capacity model and solver.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.build import FleetSizeError, planning_inputs
from planner.inputs import PlanningInputs
from planner.result import Plan
from planner.scenario.load import load_scenario
from planner.scenario.model import Scenario
from planner.solve.optimize import solve
from predictors.api import Predictor


@dataclass(frozen=True)
class PlanRun:
    """A solved scenario with everything that produced it."""

    scenario: Scenario
    inputs: PlanningInputs
    plan: Plan
    predictor_card: dict[str, Any]


def plan_scenario(
    scenario: Scenario,
    predictor: Predictor | None = None,
    *,
    time_limit_s: float | None = None,
    baselines: bool = True,
) -> PlanRun:
    """Predict every candidate of *scenario*, then solve it."""
    predictor = predictor or Predictor.load()
    inputs = planning_inputs(scenario, predictor, time_limit_s=time_limit_s)
    return PlanRun(scenario, inputs, solve(inputs, baselines=baselines), predictor.card)


def plan_file(
    path: str | Path,
    overrides: Sequence[str] = (),
    overlays: Sequence[str | Path] = (),
    *,
    time_limit_s: float | None = None,
    predictor: Predictor | None = None,
    baselines: bool = True,
) -> PlanRun:
    """Load the scenario file (with ``--set`` overrides and overlay files) and plan it."""
    predictor = predictor or Predictor.load()
    scenario = load_scenario(path, overrides, catalog=predictor.catalog, overlays=overlays)
    try:
        return plan_scenario(scenario, predictor, time_limit_s=time_limit_s, baselines=baselines)
    except FleetSizeError as exc:
        raise FleetSizeError(
            "\n".join(f"{path}: {line}" for line in str(exc).splitlines())
        ) from None
