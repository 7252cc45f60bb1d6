"""The objective of a plan: what the optimiser minimises and the weights of a weighted sum."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from planner.inputs.validation import fail, non_negative

ObjectiveKind = Literal["energy", "cost", "carbon", "weighted"]
#: What a plan may minimise (the scenario schema and the optimiser share this list).
OBJECTIVE_KINDS: tuple[str, ...] = get_args(ObjectiveKind)
#: The objective when a scenario or a caller does not say.
DEFAULT_OBJECTIVE: ObjectiveKind = "energy"
WEIGHT_KEYS: tuple[str, ...] = ("energy_kwh", "cost_usd", "carbon_kg")


@dataclass(frozen=True)
class Objective:
    """What to minimise. ``weights`` apply only to ``minimize='weighted'``.

    Weighted objective = energy_kwh·(facility kWh) + cost_usd·($) + carbon_kg·(kg CO2e): the
    weight keys name the unit they multiply, so a weight is a price in a common currency
    (e.g. carbon_kg = 0.05 means 50 $/t). No hidden, instance-dependent normalisation.
    """

    minimize: ObjectiveKind = DEFAULT_OBJECTIVE
    weights: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.minimize not in OBJECTIVE_KINDS:
            raise fail("objective", f"minimize must be one of {', '.join(OBJECTIVE_KINDS)}")
        unknown = sorted(set(self.weights) - set(WEIGHT_KEYS))
        if unknown:
            raise fail("objective", f"unknown weight(s) {unknown}; use {', '.join(WEIGHT_KEYS)}")
        for key, value in self.weights.items():
            non_negative("objective.weights", **{key: value})
        if self.minimize == "weighted" and not any(v > 0 for v in self.weights.values()):
            raise fail("objective", "weighted objective needs at least one weight > 0")

    def weight(self, key: str) -> float:
        """The weight of *key* (0 when not given)."""
        return float(self.weights.get(key, 0.0))
