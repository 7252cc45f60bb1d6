"""Save and load trained predictors: XGBoost UBJ boosters plus a JSON model card (never pickle).

Layout of a model directory (``predictors/trained/`` for the shipped models)::

    model_card.json      features, transforms, hyper-parameters, intervals, training domain,
                         training-data hash and row counts, evaluation metrics, library versions
    power.ubj            XGBoost booster of the power target
    itl.ubj              XGBoost booster of the ITL target
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from predictors.errors import WattgpuError
from predictors.model import Interval, XgbEstimator

CARD_NAME = "model_card.json"
CARD_SCHEMA = 1


def data_hash(frame: pl.DataFrame) -> str:
    """SHA-256 of a frame's CSV serialisation (stable across runs for the same rows and order)."""
    return hashlib.sha256(frame.write_csv().encode()).hexdigest()


def library_versions() -> dict[str, str]:
    import numpy
    import xgboost

    from predictors import __version__

    return {
        "wattgpu": __version__,
        "xgboost": xgboost.__version__,
        "polars": pl.__version__,
        "numpy": numpy.__version__,
    }


@dataclass
class TrainedTarget:
    """One fitted estimator with its conformal interval."""

    estimator: XgbEstimator
    interval: Interval


@dataclass
class TrainedModels:
    """The power and ITL estimators plus their model card."""

    targets: dict[str, TrainedTarget]
    card: dict[str, Any]


def save(models: TrainedModels, directory: Path) -> None:
    """Write boosters (UBJ) and the model card (JSON, sorted keys) to *directory*."""
    directory.mkdir(parents=True, exist_ok=True)
    card = dict(models.card)
    card["schema"] = CARD_SCHEMA
    card["targets"] = {}
    for name, trained in sorted(models.targets.items()):
        est = trained.estimator
        filename = f"{name}.ubj"
        est.booster.save_model(str(directory / filename))
        card["targets"][name] = {
            "file": filename,
            "transform": est.transform,
            "features": list(est.features),
            "params": est.params,
            "num_boost_round": est.num_boost_round,
            "monotone": est.monotone,
            "interval": {
                "level": trained.interval.level,
                "log_lo": trained.interval.log_lo,
                "log_hi": trained.interval.log_hi,
            },
        }
    text = json.dumps(card, indent=2, sort_keys=True) + "\n"
    (directory / CARD_NAME).write_text(text, encoding="utf-8")


def load(directory: Path) -> TrainedModels:
    """Load what :func:`save` wrote; a clear error when the directory is incomplete."""
    import xgboost as xgb

    card_path = directory / CARD_NAME
    if not card_path.is_file():
        raise WattgpuError(
            f"{card_path}: no trained predictors here; run `wattgpu train --data DIR` first"
        )
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise WattgpuError(f"{card_path}: not valid JSON ({exc.msg}); retrain the models") from exc
    if card.get("schema") != CARD_SCHEMA:
        raise WattgpuError(
            f"{card_path}: schema {card.get('schema')!r}, expected {CARD_SCHEMA}; retrain"
        )
    targets: dict[str, TrainedTarget] = {}
    for name, spec in card["targets"].items():
        booster = xgb.Booster()
        booster_path = directory / spec["file"]
        if not booster_path.is_file():
            raise WattgpuError(f"{booster_path}: missing booster file; retrain the models")
        booster.load_model(str(booster_path))
        booster.set_param({"nthread": 1})
        est = XgbEstimator(
            name="ours",
            transform=spec["transform"],
            features=tuple(spec["features"]),
            params=spec["params"],
            num_boost_round=spec["num_boost_round"],
            monotone=spec.get("monotone", {}),
            booster=booster,
        )
        iv = spec["interval"]
        targets[name] = TrainedTarget(est, Interval(iv["log_lo"], iv["log_hi"], iv["level"]))
    return TrainedModels(targets, card)
