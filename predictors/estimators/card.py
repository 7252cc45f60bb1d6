"""The model card of the trained predictors as a typed, frozen document.

``predictors/trained/model_card.json`` is written by :func:`predictors.estimators.artifacts.save`
(sorted
keys). :class:`ModelCard` types the keys a reader relies on (name, units, training data,
selection, intervals, metrics, domain, versions) and keeps any other key (``extra="allow"``),
so the card can grow without breaking readers. :func:`load_card` reads the card alone (no
booster, no catalog): enough for a report from a saved plan.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from predictors.core.document_kinds import check_kind
from predictors.core.errors import WattgpuError
from predictors.core.paths import MODELS_ENV, models_dir
from predictors.estimators.artifacts import CARD_NAME, CARD_SCHEMA
from predictors.estimators.card_checks import not_utf8

#: The sections of a card the report reads (method, provenance, intervals, accuracy, domain):
#: ``wattgpu train`` writes every one, so a card lacking one is damaged or hand-made.
REPORT_SECTIONS = (
    "name",
    "units",
    "reference_source",
    "selection",
    "training_data",
    "domain",
    "intervals",
    "metrics",
    "library_versions",
    "targets",
)


class TrainingData(BaseModel):
    """What the predictors were trained on."""

    model_config = ConfigDict(frozen=True, extra="allow", use_attribute_docstrings=True)

    sha256: str | None = None
    """Hash of the training table (identifies the card)."""
    rows: dict[str, int] | int | None = None
    """Rows per target (or in total)."""
    sources: list[str] = Field(default_factory=list)
    """Measurement source ids."""
    rows_by_source: dict[str, int] = Field(default_factory=dict)
    layout: dict[str, Any] | None = None
    """How each row's parallel layout was read (measured, or the engines' usual layout) and
    the rows of each reading (absent on cards trained before issue 18's measured layouts)."""


class ModelCard(BaseModel):
    """The model card: identity, training data, selection, accuracy and domain of the predictors."""

    model_config = ConfigDict(frozen=True, extra="allow", use_attribute_docstrings=True)

    name: str = "wattgpu predictors"
    schema_version: int | None = Field(None, alias="schema")
    """Card format version (:data:`predictors.estimators.artifacts.CARD_SCHEMA`)."""
    units: dict[str, str] = Field(default_factory=dict)
    reference_source: str | None = None
    selection: dict[str, Any] = Field(default_factory=dict)
    """Per target: the chosen recipe and its inner leave-one-GPU-out scores (or why skipped)."""
    training_data: TrainingData = Field(default_factory=TrainingData)
    domain: dict[str, Any] = Field(default_factory=dict)
    """The training domain (engines, precisions, GPUs, architectures, ranges)."""
    intervals: str | None = None
    """How the prediction intervals are made."""
    metrics: list[dict[str, Any]] | dict[str, Any] = Field(default_factory=dict)
    """Held-out evaluation records (``wattgpu evaluate --metrics-to``), empty when not run."""
    library_versions: dict[str, str] = Field(default_factory=dict)
    targets: dict[str, Any] = Field(default_factory=dict)
    """Per target: booster file, transform, features, parameters and interval."""

    def as_dict(self) -> dict[str, Any]:
        """The card as the JSON object it was read from (original key names)."""
        return self.model_dump(mode="json", by_alias=True)

    def interval_level(self, target: str = "power") -> float | None:
        """The interval level of *target* (None when the card does not state it)."""
        spec = self.targets.get(target)
        try:
            return float(spec["interval"]["level"])  # type: ignore[index]
        except (KeyError, TypeError, ValueError):
            return None


def card_of(card: dict[str, Any] | ModelCard) -> ModelCard:
    """*card* as a :class:`ModelCard` (a dict is validated)."""
    return card if isinstance(card, ModelCard) else ModelCard.model_validate(card)


def load_card(path: Path | None = None) -> ModelCard:
    """The model card at *path* (a card file or the directory holding it; default:
    ``$WATTGPU_MODELS``, else the shipped card), with every section of
    :data:`REPORT_SECTIONS`; one WattgpuError line naming the file (and the key) otherwise,
    and ``$WATTGPU_MODELS`` when the card came from there."""
    if path is None and os.environ.get(MODELS_ENV):
        try:
            return _read_card(models_dir())
        except WattgpuError as exc:
            raise WattgpuError(f"${MODELS_ENV}: {exc}") from None
    return _read_card(path or models_dir())


def _read_card(path: Path) -> ModelCard:
    file = path / CARD_NAME if path.is_dir() else path
    fix = "give a model_card.json written by `wattgpu train`"
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise WattgpuError(f"{file}: cannot read the model card ({exc.strerror}); {fix}") from None
    except json.JSONDecodeError as exc:
        raise WattgpuError(
            f"{file}: not valid JSON (line {exc.lineno}: {exc.msg}); {fix}"
        ) from None
    except UnicodeDecodeError as exc:
        raise WattgpuError(f"{file}: {not_utf8(exc)}; {fix}") from None
    if not isinstance(data, dict) or data.get("schema") != CARD_SCHEMA:
        check_kind(data, file, "model card", "model card", fix)  # a plan, a sweep, …
        found = data.get("schema") if isinstance(data, dict) else None
        raise WattgpuError(f"{file}: card schema {found!r}, expected {CARD_SCHEMA}; {fix}")
    try:
        card = ModelCard.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise WattgpuError(
            f"{file}: not a valid model card: {where}: {err['msg']}; {fix}"
        ) from None
    for key in REPORT_SECTIONS:
        if data.get(key) is None:
            said = "is null" if key in data else "is missing"
            raise WattgpuError(
                f"{file}: not a valid model card: section {key!r} {said} (the report reads "
                f"it); {fix}"
            )
    return card
