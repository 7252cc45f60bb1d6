"""The scenario stage: the pydantic models (:mod:`.model`), loading with overlays and
``--set`` (:mod:`.load`), one-line problem messages (:mod:`.errors`) and the generated
reference (:mod:`.doc`).
"""

from planner.scenario.load import load_scenario, scenario_from_dict
from planner.scenario.model import Scenario

__all__ = ["Scenario", "load_scenario", "scenario_from_dict"]
