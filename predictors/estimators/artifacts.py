"""Save and load trained predictors: XGBoost UBJ boosters plus a JSON model card (never pickle).

Layout of a model directory (``predictors/trained/`` for the shipped models)::

    model_card.json      per target: kind, features, transform, hyper-parameters, monotone
                         constraints, interval (plain quantiles, and under ``adaptive`` the
                         locally adaptive calibration: difficulty weights, scaled quantiles and
                         the evidence the model was trained on), and for ITL the fitted
                         step-time parameters;
                         training domain, training-data hash and row counts, evaluation
                         metrics, library versions
    power.ubj            XGBoost booster of the power utilisation u (idle + (TDP - idle) * u)
    itl.ubj              XGBoost booster of the ITL residual on the step time (absent when the
                         selected configuration is physics only)
    ttft.ubj             XGBoost booster of the TTFT target
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from predictors.core.atomic_dir import replace_directory
from predictors.core.errors import WattgpuError
from predictors.core.output import protect_inputs
from predictors.core.paths import MODELS_ENV, models_dir
from predictors.estimators.base import XgbEstimator
from predictors.estimators.card_checks import (
    REQUIRED_TARGETS,
    booster_file_problem,
    domain_problem,
    feature_problem,
    not_utf8,
)
from predictors.estimators.intervals import AdaptiveInterval, Interval
from predictors.estimators.itl import PhysicsItlEstimator
from predictors.estimators.power import PowerUtilEstimator, UtilInterval
from predictors.estimators.step import StepParams
from predictors.estimators.ttft import PrefillTtftEstimator

CARD_NAME = "model_card.json"
CARD_SCHEMA = 2
#: ``kind`` of each estimator class in the model card.
KINDS: dict[type, str] = {
    XgbEstimator: "xgb_transformed_target",
    PhysicsItlEstimator: "step_time_times_residual",
    PowerUtilEstimator: "idle_to_tdp_utilisation",
    PrefillTtftEstimator: "ttft_trees_with_floor",
}


def data_hash(frame: pl.DataFrame) -> str:
    """SHA-256 of a frame's CSV serialisation (stable across runs for the same rows and order)."""
    return hashlib.sha256(frame.write_csv().encode()).hexdigest()


def library_versions() -> dict[str, str]:
    """Versions of wattgpu, XGBoost, polars, NumPy and SciPy (the step model's least squares),
    recorded in the model card."""
    import numpy
    import scipy
    import xgboost

    from predictors.core.version import __version__

    return {
        "wattgpu": __version__,
        "xgboost": xgboost.__version__,
        "polars": pl.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
    }


@dataclass
class TrainedTarget:
    """One fitted estimator with its conformal interval."""

    estimator: Any
    """An :class:`XgbEstimator`, :class:`PhysicsItlEstimator`, :class:`PowerUtilEstimator` or
    :class:`PrefillTtftEstimator`."""
    interval: Any
    """:class:`Interval` (multiplicative) or :class:`UtilInterval` (additive in utilisation)."""


@dataclass
class TrainedModels:
    """The power and ITL estimators plus their model card."""

    targets: dict[str, TrainedTarget]
    card: dict[str, Any]


def check_model_output(directory: Path, option: str) -> None:
    """WattgpuError unless *directory* can take trained predictors: new, empty, or a model
    directory (it holds a model card) of plain files only, since the swap keeps its plain files
    and nothing else (:func:`predictors.core.atomic_dir.replace_directory`)."""
    if directory.exists() and not directory.is_dir():
        raise WattgpuError(f"{option} {directory}: is a file — give a directory")
    if not directory.is_dir():
        return
    entries = sorted(directory.iterdir())
    if entries and not (directory / CARD_NAME).is_file():
        raise WattgpuError(
            f"{option} {directory}: holds {entries[0].name!r} and no {CARD_NAME}, so it is not a "
            "model directory; give a new or empty directory (train replaces the directory whole)"
        )
    other = [e for e in entries if e.is_symlink() or not e.is_file()]
    if other:
        raise WattgpuError(
            f"{option} {directory}: holds {other[0].name!r}, which is not a plain file; a model "
            "directory holds only its card, boosters and evaluation summary — move it out first"
        )


def require_model_dir(directory: Path, option: str) -> None:
    """WattgpuError unless *directory* holds a model card (a directory ``train`` wrote)."""
    if not (directory / CARD_NAME).is_file():
        raise WattgpuError(
            f"{option} {directory}: no {CARD_NAME} there — give a model directory written by "
            "`wattgpu train --output DIR`"
        )


def protect_model_dir(directory: Path) -> None:
    """Register the card, the boosters (those its card names, and every ``.ubj`` file there) and
    the ``evaluation_summary.json`` of *directory* as inputs no output of the command may
    replace (``evaluate --metrics-to`` updates the summary itself), before any long work
    (:func:`load` registers the same when it reads them)."""
    card_path = directory / CARD_NAME
    named: list[Path] = []
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
        named = [
            directory / spec["file"] for spec in _files(card if isinstance(card, dict) else {})
        ]
    except (OSError, ValueError):
        pass  # an unreadable card is reported when the models are loaded
    boosters = sorted(directory.glob("*.ubj")) if directory.is_dir() else []
    # the held-out metrics `train` records in the next card (written by evaluate --metrics-to)
    protect_inputs([card_path, *named, *boosters, directory / "evaluation_summary.json"])


def save(models: TrainedModels, directory: Path) -> None:
    """Write boosters (UBJ) and the model card (JSON, sorted keys) to *directory*, all at once
    (:func:`predictors.core.atomic_dir.replace_directory`: a failure or a kill leaves the old
    models whole, never a mix); other files there (``evaluation_summary.json``) are kept."""
    card = dict(models.card)
    card["schema"] = CARD_SCHEMA
    card["targets"] = {}
    files: dict[str, bytes] = {}
    for name, trained in sorted(models.targets.items()):
        est = trained.estimator
        filename = f"{name}.ubj"
        if est.booster is not None:
            files[filename] = bytes(est.booster.save_raw("ubj"))
        spec: dict[str, Any] = {
            "kind": KINDS[type(est)],
            "name": est.name,
            "file": filename if est.booster is not None else None,
            "transform": est.transform,
            "features": list(est.features),
            "params": est.params,
            "num_boost_round": est.num_boost_round,
            "monotone": est.monotone,
            "interval": _interval_json(trained.interval),
        }
        if isinstance(est, PhysicsItlEstimator) and est.step is not None:
            spec["step_params"] = est.step.to_json()
        card["targets"][name] = spec
    text = json.dumps(_finite(card), indent=2, sort_keys=True, allow_nan=False)
    files[CARD_NAME] = (text + "\n").encode("utf-8")
    # a booster of an earlier training that this one does not write is stale
    replace_directory(directory, files, drop=lambda n: n.endswith(".ubj"))


def load_chosen(directory: Path | None = None, option: str = "") -> TrainedModels:
    """The trained predictors in *directory* (given as *option*, e.g. ``--models``), else in
    ``$WATTGPU_MODELS``, else the shipped ones; an error names where the directory came from."""
    chosen = models_dir(directory)
    origin = option if directory is not None else ""
    if directory is None and os.environ.get(MODELS_ENV):
        origin = f"${MODELS_ENV}"
    try:
        if not chosen.is_dir():
            raise WattgpuError(
                f"{chosen}: not a directory; give the directory `wattgpu train --output DIR` wrote"
            )
        return load(chosen)
    except WattgpuError as exc:
        raise WattgpuError(f"{origin}: {exc}" if origin else str(exc)) from None


def load(directory: Path) -> TrainedModels:
    """Load what :func:`save` wrote; a clear error when the directory is incomplete."""

    card_path = directory / CARD_NAME
    if not card_path.is_file():
        raise WattgpuError(
            f"{card_path}: no trained predictors here; run `wattgpu train --data DIR` first"
        )
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise WattgpuError(f"{card_path}: not valid JSON ({exc.msg}); retrain the models") from exc
    except UnicodeDecodeError as exc:
        raise WattgpuError(f"{card_path}: {not_utf8(exc)}; retrain the models") from None
    if not isinstance(card, dict) or not isinstance(card.get("targets"), dict):
        raise WattgpuError(f"{card_path}: not a model card (no 'targets' object); retrain")
    if card.get("schema") != CARD_SCHEMA:
        raise WattgpuError(
            f"{card_path}: schema {card.get('schema')!r}, expected {CARD_SCHEMA}; retrain"
        )
    missing = [t for t in REQUIRED_TARGETS if t not in card["targets"]]
    if missing:
        raise WattgpuError(
            f"{card_path}: no target {missing[0]!r} (every prediction needs "
            f"{' and '.join(REQUIRED_TARGETS)}); retrain the models"
        )
    problem = domain_problem(card.get("domain", {}))
    if problem is not None:
        raise WattgpuError(f"{card_path}: {problem}; retrain the models")
    problem = xgboost_problem(card.get("library_versions"))
    if problem is not None:
        raise WattgpuError(f"{card_path}: {problem}")
    targets: dict[str, TrainedTarget] = {}
    # an output of the command that reads them never replaces the card or a booster
    protect_inputs([card_path, *(directory / spec["file"] for spec in _files(card))])
    for name, spec in card["targets"].items():
        try:
            targets[name] = _target(directory, card_path, name, spec)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"lacks {exc}" if isinstance(exc, KeyError) else f"is not readable ({exc})"
            raise WattgpuError(f"{card_path}: target {name!r} {what}; retrain") from None
    return TrainedModels(targets, card)


#: XGBoost 3.1 writes a booster's ``base_score`` as a vector; an earlier XGBoost reads such a
#: file without error but with its default base score 0.5, so every prediction is silently off
#: (fuzz round 29: an L40S ITL of 52.0 ms instead of 31.1 ms with xgboost 3.0.5).
VECTOR_BASE_SCORE = (3, 1)


def _major_minor(version: str) -> tuple[int, int] | None:
    found = re.match(r"(\d+)\.(\d+)", version)
    return None if found is None else (int(found.group(1)), int(found.group(2)))


def xgboost_problem(versions: Any) -> str | None:
    """Why the running XGBoost cannot read boosters saved by the card's (None when it can)."""
    import xgboost

    saved = versions.get("xgboost") if isinstance(versions, dict) else None
    saved_at, running = _major_minor(str(saved or "")), _major_minor(xgboost.__version__)
    if saved_at is None or running is None:
        return None
    if saved_at < VECTOR_BASE_SCORE or running >= VECTOR_BASE_SCORE:
        return None
    return (
        f"its boosters were saved by xgboost {saved}, which this xgboost {xgboost.__version__} "
        "reads with a default base score (every prediction would be off); install "
        "xgboost-cpu>=3.1 (`pip install -U 'xgboost-cpu>=3.1'`)"
    )


def _booster_problem(exc: Exception) -> str:
    """XGBoost's reason for refusing a booster file, without its log prefix, source location,
    file name and C++ backtrace ("Invalid model format")."""
    first = (str(exc).strip().splitlines() or [""])[0]
    reason = re.sub(r"^\[[\d:]+\] \S+: (Check failed: .*?: )?", "", first)
    reason = re.sub(r" in: `.*`\.?$", "", reason).strip().rstrip(".")
    return reason[:120] or "a file XGBoost cannot load"


def _target(directory: Path, card_path: Path, name: str, spec: dict[str, Any]) -> TrainedTarget:
    """One target of the card: its estimator (with its booster) and interval."""
    import xgboost as xgb

    booster = None
    if spec.get("file"):
        outside = booster_file_problem(spec["file"])
        if outside is not None:
            raise WattgpuError(f"{card_path}: target {name!r}: {outside}; retrain the models")
        booster = xgb.Booster()
        booster_path = directory / spec["file"]
        if not booster_path.is_file():
            raise WattgpuError(f"{booster_path}: missing booster file; retrain the models")
        try:
            booster.load_model(str(booster_path))
        except xgb.core.XGBoostError as exc:
            why = _booster_problem(exc) if booster_path.stat().st_size else "the file is empty"
            raise WattgpuError(
                f"{booster_path}: not a readable XGBoost booster ({why}); retrain the models "
                "(wattgpu train --output DIR) or restore the file from a copy"
            ) from None
        booster.set_param({"nthread": 1})
    unfit = feature_problem(spec["features"], booster)
    if unfit is not None:
        raise WattgpuError(f"{card_path}: target {name!r}: {unfit}; retrain the models")
    common: dict[str, Any] = {
        "name": spec.get("name", "ours"),
        "features": tuple(spec["features"]),
        "params": spec["params"],
        "num_boost_round": spec["num_boost_round"],
        "monotone": spec.get("monotone", {}),
        "booster": booster,
    }
    est: Any
    kind = spec.get("kind")
    if kind == KINDS[PhysicsItlEstimator]:
        est = PhysicsItlEstimator(**common, step=StepParams.from_json(spec["step_params"]))
    elif kind == KINDS[PowerUtilEstimator]:
        est = PowerUtilEstimator(**common)
    elif kind == KINDS[PrefillTtftEstimator]:
        est = PrefillTtftEstimator(transform=spec["transform"], **common)
    elif kind == KINDS[XgbEstimator]:
        est = XgbEstimator(transform=spec["transform"], **common)
    else:
        raise WattgpuError(f"{card_path}: target {name!r} has unknown kind {kind!r}; retrain")
    return TrainedTarget(est, _interval_of(spec["interval"]))


def _finite(value: Any) -> Any:
    """*value* with every non-finite float as None (strict JSON: a score no fold could give,
    e.g. on data of one GPU, is null, not the ``NaN`` that JSON parsers reject)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _files(card: dict[str, Any]) -> list[dict[str, Any]]:
    """The card's target specs that name a booster file inside the model directory (one
    elsewhere is refused when the models are loaded)."""
    targets = card.get("targets")
    if not isinstance(targets, dict):
        return []
    return [
        s
        for s in targets.values()
        if isinstance(s, dict) and booster_file_problem(s.get("file")) is None
    ]


def _interval_json(interval: Interval | UtilInterval | AdaptiveInterval) -> dict[str, Any]:
    """The card's interval: the plain quantiles (``log_lo``/``log_hi`` or ``u_lo``/``u_hi``) and,
    for an adaptive band, its calibration under ``adaptive``."""
    if isinstance(interval, AdaptiveInterval):
        lo, hi = interval.plain
        names = ("u_lo", "u_hi") if interval.residual == "utilisation" else ("log_lo", "log_hi")
        return {
            "level": interval.level,
            names[0]: lo,
            names[1]: hi,
            "adaptive": interval.to_json(),
        }
    if isinstance(interval, UtilInterval):
        return {"level": interval.level, "u_lo": interval.lo, "u_hi": interval.hi}
    return {"level": interval.level, "log_lo": interval.log_lo, "log_hi": interval.log_hi}


def _interval_of(data: dict[str, Any]) -> Interval | UtilInterval | AdaptiveInterval:
    plain = (data["u_lo"], data["u_hi"]) if "u_lo" in data else (data["log_lo"], data["log_hi"])
    if "adaptive" in data:
        return AdaptiveInterval.from_json(data["adaptive"], (float(plain[0]), float(plain[1])))
    if "u_lo" in data:
        return UtilInterval(data["u_lo"], data["u_hi"], data["level"])
    return Interval(data["log_lo"], data["log_hi"], data["level"])
