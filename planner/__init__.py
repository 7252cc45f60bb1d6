"""wattgpu planner: scenario YAML -> optimal GPU fleet (imports predictors, not the reverse).

The public Python API, imported lazily so that ``import planner`` stays cheap::

    from planner import load_scenario, plan_file, plan_scenario, Plan, Predictor

Stages, in the order data flows: :mod:`planner.scenario` (YAML -> ``Scenario``),
:mod:`planner.build` and :mod:`planner.capacity` (-> ``PlanningInputs``), :mod:`planner.solve`
(-> ``Plan``, :mod:`planner.result`; its typed JSON document in :mod:`planner.documents`), then
:mod:`planner.analysis` and :mod:`planner.report`, pure functions of that document.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from predictors.core.version import __version__

_EXPORTS = {
    "load_scenario": "planner.scenario.load",
    "plan_file": "planner.pipeline",
    "plan_scenario": "planner.pipeline",
    "Plan": "planner.result",
    "Predictor": "predictors.api",
}
__all__ = ["Plan", "Predictor", "__version__", "load_scenario", "plan_file", "plan_scenario"]

if TYPE_CHECKING:
    from planner.pipeline import plan_file, plan_scenario
    from planner.result import Plan
    from planner.scenario.load import load_scenario
    from predictors.api import Predictor


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'planner' has no attribute {name!r}")
