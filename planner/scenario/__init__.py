"""The scenario stage: the pydantic models (:mod:`.model`, its sections in :mod:`.sections`, its
bounds in :mod:`.limits`), loading with overlays and ``--set`` (:mod:`.load`, :mod:`.overrides`)
and catalog names (:mod:`.names`), the planning periods (:mod:`.periods`), one-line problem
messages (:mod:`.errors`) and the generated reference (:mod:`.doc`).

The names below are imported on first use (PEP 562), so a submodule such as :mod:`.limits` can be
imported without building the pydantic models (``wattgpu predict`` never needs them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planner.scenario.load import load_scenario, scenario_from_dict
    from planner.scenario.model import Scenario

__all__ = ["Scenario", "load_scenario", "scenario_from_dict"]

_WHERE = {
    "Scenario": "planner.scenario.model",
    "load_scenario": "planner.scenario.load",
    "scenario_from_dict": "planner.scenario.load",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
