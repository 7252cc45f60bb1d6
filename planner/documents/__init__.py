"""Typed output documents: the JSON contracts of plan, report, forecast, Pareto front, card,
sweep and plan diff.

Each is a frozen pydantic model (:mod:`planner.documents.plan`, ``.report``, ``.forecast``,
``.pareto``, ``.uncertainty``, ``.sweep``, ``.diff``; the model card is
:class:`predictors.estimators.card.ModelCard`).
:data:`SCHEMA_NAMES` are the names of ``wattgpu schema NAME``; :func:`schema_text` gives the
JSON Schema committed as docs/schemas/NAME.schema.json (a test keeps the files current).
"""

from __future__ import annotations

import json
from typing import Any

from predictors.core.errors import WattgpuError, did_you_mean

#: ``wattgpu schema`` names -> (module, class) of the document.
_MODELS: dict[str, tuple[str, str]] = {
    "plan": ("planner.documents.plan", "PlanDocument"),
    "report": ("planner.documents.report", "ReportDocument"),
    "forecast": ("planner.documents.forecast", "ForecastDocument"),
    "pareto": ("planner.documents.pareto", "ParetoDocument"),
    "model-card": ("predictors.estimators.card", "ModelCard"),
    "sweep": ("planner.documents.sweep", "SweepDocument"),
    "diff": ("planner.documents.diff", "DiffDocument"),
}
SCHEMA_NAMES: tuple[str, ...] = tuple(_MODELS)


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of output *name* (one of :data:`SCHEMA_NAMES`)."""
    import importlib

    if name not in _MODELS:
        hint = did_you_mean(name, SCHEMA_NAMES)
        raise WattgpuError(
            f"schema {name!r}: unknown output{hint}; use one of {', '.join(SCHEMA_NAMES)}"
        )
    module, cls = _MODELS[name]
    model = getattr(importlib.import_module(module), cls)
    body = model.model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **body}


def schema_text(name: str) -> str:
    """:func:`schema` as the indented JSON text of docs/schemas/NAME.schema.json."""
    return json.dumps(schema(name), indent=2, ensure_ascii=False) + "\n"
