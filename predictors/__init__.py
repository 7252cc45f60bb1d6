"""wattgpu predictors: public metadata -> GPU power and inter-token latency predictions.

This package never imports :mod:`planner`. The public Python API is imported lazily::

    from predictors import Predictor, load_catalog
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from predictors.core.version import __version__

_EXPORTS = {"Predictor": "predictors.api", "load_catalog": "predictors.catalog.store"}
__all__ = ["Predictor", "__version__", "load_catalog"]

if TYPE_CHECKING:
    from predictors.api import Predictor
    from predictors.catalog.store import load_catalog


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'predictors' has no attribute {name!r}")
