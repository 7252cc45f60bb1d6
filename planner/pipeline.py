"""Scenario file -> plan, end to end: load, predict candidates, build inputs, solve.

The one function every command that needs a plan calls (``plan``, ``compare``, ``report``,
``pareto``), so they all use the same capacity model and solver. A scenario that names a
``user_catalog`` is loaded and predicted against the bundled catalogs plus that overlay; the
predictor bound to that catalog is :attr:`PlanRun.predictor`. *progress*, when given, is called
with a short description of each step (the CLI shows it on stderr).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from planner.build import FleetSizeError, planning_inputs
from planner.inputs import PlanningInputs
from planner.layouts import LayoutError
from planner.result import Plan, PlanStatus
from planner.scenario.bundled import find_scenario
from planner.scenario.load import load_scenario, user_catalog_path
from planner.scenario.model import Scenario
from planner.solve.optimize import solve
from planner.specs import layout_problems
from predictors.api import Predictor


@dataclass(frozen=True)
class PlanRun:
    """A solved scenario with everything that produced it."""

    scenario: Scenario
    inputs: PlanningInputs
    plan: Plan
    predictor_card: dict[str, Any]
    predictor: Predictor
    """The predictor the plan used (bound to the scenario's catalog)."""


Progress = Callable[[str], None]


def _no_progress(text: str) -> None:
    del text


def plan_scenario(
    scenario: Scenario,
    predictor: Predictor | None = None,
    *,
    time_limit_s: float | None = None,
    baselines: bool = True,
    progress: Progress | None = None,
) -> PlanRun:
    """Predict every candidate of *scenario*, then solve it."""
    step = progress or _no_progress
    predictor = predictor or Predictor.load()
    step(f"predicting the candidates of {len(scenario.models)} model entries")
    inputs = planning_inputs(scenario, predictor, time_limit_s=time_limit_s)
    step(
        f"solving {len(inputs.models)} models × {len(inputs.candidates)} candidates "
        f"(time limit {inputs.time_limit_s:g} s)"
    )
    plan = solve(inputs, baselines=baselines)
    if scenario.robust and plan.status == PlanStatus.INFEASIBLE:  # say what drives the numbers
        messages = (*plan.solve.messages, ROBUST_INFEASIBLE)
        plan = replace(plan, solve=replace(plan.solve, messages=messages))
    return PlanRun(scenario, inputs, plan, predictor.card, predictor)


#: The last reason of an infeasible ``robust: true`` plan (fuzz round 31: Qwen3-235B on B300
#: asked for 176 GPUs where the point predictions need 12, and nothing said why).
ROBUST_INFEASIBLE = (
    "robust: true: every capacity above is on the upper end of the predicted ITL interval, not "
    "the point prediction, so it can need several times the GPUs (--set robust=false plans on "
    "the point predictions)"
)


def plan_file(
    path: str | Path,
    overrides: Sequence[str] = (),
    overlays: Sequence[str | Path] = (),
    *,
    time_limit_s: float | None = None,
    predictor: Predictor | None = None,
    baselines: bool = True,
    progress: Progress | None = None,
) -> PlanRun:
    """Load the scenario file (with ``--set`` overrides and overlay files) and plan it.

    *path* may also name a bundled example (:func:`planner.scenario.bundled.find_scenario`).
    """
    step = progress or _no_progress
    path = find_scenario(path)
    step("loading the predictors")
    predictor = predictor or Predictor.load()
    step(f"reading {path}")
    scenario = load_scenario(path, overrides, catalog=predictor.catalog, overlays=overlays)
    if scenario.user_catalog is not None:
        from predictors.catalog.store import load_catalog

        user_dir = user_catalog_path(scenario.user_catalog, Path(path).parent)
        predictor = replace(predictor, catalog=load_catalog(user_dir))
    try:
        return plan_scenario(
            scenario, predictor, time_limit_s=time_limit_s, baselines=baselines, progress=progress
        )
    except (FleetSizeError, LayoutError) as exc:
        raise type(exc)("\n".join(f"{path}: {line}" for line in str(exc).splitlines())) from None


def scenario_catalog(scenario: Scenario, path: str | Path) -> Any:
    """The catalog a plan of *scenario* (read from *path*) uses: its ``user_catalog`` overlay
    included."""
    from predictors.catalog.store import load_catalog

    user_dir = None
    if scenario.user_catalog is not None:
        user_dir = user_catalog_path(scenario.user_catalog, Path(path).parent)
    return load_catalog(user_dir)


def stated_layout_problems(scenario: Scenario, path: str | Path) -> list[str]:
    """The stated layouts of *scenario* (read from *path*) that ``wattgpu plan`` would refuse
    (:func:`planner.specs.layout_problems`), against the catalog the plan uses (its
    ``user_catalog`` overlay included)."""
    return layout_problems(scenario, scenario_catalog(scenario, path))
