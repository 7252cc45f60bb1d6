"""Which of wattgpu's files a parsed JSON or YAML document is, by the keys it holds.

A file of one kind given where another is read (a sweep JSON to ``report``, a plan JSON to
``--model-card``, a scenario written as JSON to ``report``) is named in one line by what it is,
instead of a field-level error of the kind that was expected ("not a valid plan JSON: status:
Field required"). Each kind is marked by keys no other kind holds at its top level; the first
match wins, so the output documents come before the scenario (whose ``models`` key a report also
has).
"""

from __future__ import annotations

from typing import Any

from predictors.core.errors import WattgpuError

PLAN = "plan"
SCENARIO = "scenario"

#: (kind, keys that mark it, what it is in words).
KINDS: tuple[tuple[str, frozenset[str], str], ...] = (
    (PLAN, frozenset({"allocations", "totals"}), "a saved plan JSON (wattgpu plan --format json)"),
    (
        PLAN,
        frozenset({"allocations", "candidates"}),
        "a saved plan JSON (wattgpu plan --format json)",
    ),
    ("sweep", frozenset({"base_outcome", "records"}), "a sweep JSON (wattgpu sweep --format json)"),
    (
        "report",
        frozenset({"wattgpu_version", "headline"}),
        "a report JSON (wattgpu report --format json)",
    ),
    (
        "comparison",
        frozenset({"request", "rows"}),
        "a comparison JSON (wattgpu compare --format json)",
    ),
    (
        "pareto",
        frozenset({"points", "chosen"}),
        "a Pareto front JSON (wattgpu pareto --format json)",
    ),
    (
        "model card",
        frozenset({"targets", "training_data", "library_versions"}),
        "a model card (model_card.json, written by wattgpu train)",
    ),
    (SCENARIO, frozenset({"models", "gpus"}), "a scenario (its models and gpus)"),
)


def document_kind(data: Any) -> tuple[str, str] | None:
    """(kind, what it is in words) of the parsed document *data*; None when no kind's keys are
    all at its top level (or it is no mapping)."""
    if not isinstance(data, dict):
        return None
    keys = set(data)
    for kind, marks, what in KINDS:
        if marks <= keys:
            return kind, what
    return None


class WrongDocument(WattgpuError):
    """A file of another kind than the one read; its :attr:`kind` (:data:`KINDS`) lets a
    command that reads either kind take it the other way (``report`` of a JSON scenario)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def check_kind(data: Any, source: object, expected: str, what: str, fix: str) -> None:
    """Raise :class:`WrongDocument` (one line: *source*, what the document is, not *what*, and
    *fix*) when *data* is a document of another kind than *expected*; nothing otherwise."""
    found = document_kind(data)
    if found is not None and found[0] != expected:
        raise WrongDocument(f"{source}: {found[1]}, not a {what}; {fix}", found[0])
