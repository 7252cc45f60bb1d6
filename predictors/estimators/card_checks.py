"""What a model card must hold for the predictors to use it, checked when it is loaded.

:func:`predictors.estimators.artifacts.load` refuses, in one line naming the card, a card that
:func:`predictors.estimators.artifacts.save` could not have written and that would otherwise
fail inside a prediction (an internal error, or a file read from elsewhere):

- a booster ``file`` that is not a path inside the model directory (absolute, or through
  ``..``): :func:`booster_file_problem`;
- a target whose ``features`` are not names of the feature columns wattgpu computes, or whose
  booster was trained on another number of columns (a booster copied over another, a feature
  list edited): :func:`feature_problem`;
- a ``domain`` that is not the object ``train`` writes (lists of names, the trained ranges, the
  measured GPUs' specs): :func:`domain_problem`;
- a card that is not UTF-8 text (:func:`not_utf8`; so does
  :func:`predictors.estimators.card.load_card`).
"""

from __future__ import annotations

import math
from pathlib import PurePath
from typing import Any

from predictors.feature_sets import (
    ITL_RESIDUAL_FEATURES,
    OUR_FEATURES,
    PAPER_FEATURES,
    POWER_FEATURES,
    TRANSFER_FEATURES,
    TTFT_FEATURES,
    TTFT_V3_FEATURES,
)

#: The targets every prediction reads (``ttft`` is optional: a card trained without it serves).
REQUIRED_TARGETS: tuple[str, ...] = ("power", "itl")
#: Every feature column an estimator of this wattgpu is trained on.
KNOWN_FEATURES: frozenset[str] = frozenset(
    (
        *PAPER_FEATURES,
        *OUR_FEATURES,
        *TRANSFER_FEATURES,
        *TTFT_FEATURES,
        *TTFT_V3_FEATURES,
        *ITL_RESIDUAL_FEATURES,
        *POWER_FEATURES,
    )
)
_JSON_TYPES = {str: "string", list: "list", int: "number", float: "number", bool: "boolean"}
#: Name lists of ``domain`` (the categorical checks read the first four).
_DOMAIN_NAMES = ("precisions", "engines", "vendors", "architectures")


def not_utf8(exc: UnicodeDecodeError) -> str:
    """What a card that is not UTF-8 text holds where it stops being text."""
    byte = exc.object[exc.start] if exc.start < len(exc.object) else None
    shown = f"byte 0x{byte:02x} at offset {exc.start}" if byte is not None else "a cut character"
    return f"not UTF-8 text ({shown}; a model card is the UTF-8 JSON train writes)"


def booster_file_problem(file: object) -> str | None:
    """Why a target's ``file`` names no file inside the model directory (None when it does):
    not a string, empty, absolute, or climbing out through ``..``."""
    if not isinstance(file, str) or not file.strip():
        return f"booster file {file!r} is not a file name"
    path = PurePath(file)
    if path.is_absolute() or path.anchor or ".." in path.parts:
        return (
            f"booster file {file!r} lies outside the model directory (a booster is a file "
            "there, such as power.ubj)"
        )
    return None


def feature_problem(features: object, booster: Any) -> str | None:
    """Why a target's ``features`` cannot feed its *booster* (None when they can): not a list of
    names, a name wattgpu computes no column for, or another count than the booster's."""
    if not isinstance(features, list | tuple) or not all(isinstance(f, str) for f in features):
        return "features must be a list of feature names"
    unknown = [f for f in features if f not in KNOWN_FEATURES]
    if unknown:
        return f"feature {unknown[0]!r} is not one wattgpu computes"
    if booster is not None and booster.num_features() != len(features):
        return (
            f"its booster takes {booster.num_features()} features and the card lists "
            f"{len(features)} (a booster of another target or another training)"
        )
    return None


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _names(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def domain_problem(domain: object) -> str | None:
    """Why the card's ``domain`` is not what ``train`` writes (None when it is, or when it is
    absent or empty: such a card is out of its domain everywhere): ``where: what`` naming the
    key."""
    if not isinstance(domain, dict):
        found = "null" if domain is None else f"a JSON {_JSON_TYPES.get(type(domain), 'value')}"
        return f"domain: {found} where an object is expected"
    if not domain:
        return None
    for key in _DOMAIN_NAMES:
        if not _names(domain.get(key)):
            return f"domain.{key}: must be a list of names"
    if not isinstance(domain.get("moe_trained"), bool):
        return "domain.moe_trained: must be true or false"
    if "gpus" in domain and not _names(domain["gpus"]):
        return "domain.gpus: must be a list of GPU ids"
    ranges = domain.get("ranges")
    if not isinstance(ranges, dict):
        return "domain.ranges: must be an object of [lowest, highest] per feature"
    for col, span in ranges.items():
        if not (isinstance(span, list) and len(span) == 2 and all(map(_number, span))):
            return f"domain.ranges.{col}: must be [lowest, highest], two numbers"
    return _gpu_specs_problem(domain.get("gpu_specs")) or _targets_problem(domain.get("targets"))


def _targets_problem(targets: object) -> str | None:
    """Why ``domain.targets`` is not per target an object of vendor and architecture names
    (None when it is, or absent: a card from before they were recorded)."""
    if targets is None:
        return None
    if not isinstance(targets, dict):
        return "domain.targets: must be an object of the GPU vendors and architectures per target"
    for name, record in targets.items():
        if not isinstance(record, dict):
            return f"domain.targets.{name}: must be an object with vendors and architectures"
        for key in ("vendors", "architectures"):
            if not _names(record.get(key)):
                return f"domain.targets.{name}.{key}: must be a list of names"
    return None


def _gpu_specs_problem(specs: object) -> str | None:
    """Why ``domain.gpu_specs`` is not per GPU an object of numbers (None when it is, or
    absent: a card from before they were recorded)."""
    if specs is None:
        return None
    if not isinstance(specs, dict):
        return "domain.gpu_specs: must be an object of the specs per measured GPU"
    for gpu, values in specs.items():
        if not isinstance(values, dict):
            return f"domain.gpu_specs.{gpu}: must be an object of spec values"
        for col, value in values.items():
            if value is not None and not _number(value):
                return f"domain.gpu_specs.{gpu}.{col}: must be a number or null"
    return None
