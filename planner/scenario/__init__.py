"""The scenario stage: the pydantic models (:mod:`.model`, its sections in :mod:`.sections`, its
bounds in :mod:`.limits`), loading with overlays and ``--set`` (:mod:`.load`, :mod:`.overrides`)
and catalog names (:mod:`.names`), the planning periods (:mod:`.periods`), one-line problem
messages (:mod:`.errors`) and the generated reference (:mod:`.doc`).
"""

from planner.scenario.load import load_scenario, scenario_from_dict
from planner.scenario.model import Scenario

__all__ = ["Scenario", "load_scenario", "scenario_from_dict"]
