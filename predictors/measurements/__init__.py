"""Public LLM-inference measurements -> one canonical table (see :mod:`.schema`).

One adapter per published format (``read_<format>(path) -> pl.DataFrame``);
:func:`load_measurements` discovers files in a data directory, runs the adapters, resolves
names through the catalog and applies the quality rules stated in :mod:`.load`.
"""

from __future__ import annotations

from predictors.measurements.load import (
    ADAPTERS,
    RULES,
    MeasurementSet,
    SourceFile,
    discover,
    load_measurements,
)
from predictors.measurements.schema import SCHEMA, conform, empty_frame

__all__ = [
    "ADAPTERS",
    "RULES",
    "SCHEMA",
    "MeasurementSet",
    "SourceFile",
    "conform",
    "discover",
    "empty_frame",
    "load_measurements",
]
