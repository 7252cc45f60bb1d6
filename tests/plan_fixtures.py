"""Plan JSON documents for the suites that edit saved plans (each module wraps
:func:`planned` in its own module-scoped fixtures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_runner import planned_json

from predictors.api import Predictor

#: The two-region scenario of the test fixtures.
REGIONS_SCENARIO = str(Path(__file__).resolve().parent / "fixtures" / "regions.yaml")


def planned(factory: pytest.TempPathFactory, predictor: Predictor, scenario: str) -> dict[str, Any]:
    """The plan JSON of ``wattgpu plan SCENARIO --format json`` with *predictor* loaded."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Predictor, "load", classmethod(lambda cls, *a, **k: predictor))
        return planned_json(factory.mktemp("plan") / "plan.json", scenario)
