"""What the report says about the predictors, from their model card: method, accuracy by
split and the provenance of the training data."""

from __future__ import annotations

from typing import Any

from planner.documents.report import DataProvenance, Method, Source
from planner.report.blocks import NOT_EVALUATED
from predictors.core.version import __version__
from predictors.estimators.card import ModelCard

SOURCE_NAMES: dict[str, str] = {
    "mlenergy-v1": "ML.ENERGY leaderboard 2023 (ml-energy/benchmark, legacy data), Apache-2.0",
    "mlenergy-v2": "ML.ENERGY benchmark 2024 (ml-energy/benchmark, vLLM), Apache-2.0",
    "mlenergy-v3": "ML.ENERGY leaderboard v3 2025-26 (ml-energy/leaderboard, vLLM steady state)",
    "argonne": "Argonne LLM-Inference-Bench (argonne-lcf/LLM-Inference-Bench), BSD-3-Clause",
    "aiconfigurator": "NVIDIA AIConfigurator silicon sample (ai-dynamo/aiconfigurator), Apache-2.0",
    "amd-mi300x": "AMD MI300X sample (cmontemuino/amd-mi300x-ml-benchmarks), Apache-2.0",
}
METRIC_KEYS: tuple[str, ...] = (
    "mdape_pct",
    "pearson_r",
    "kendall_tau_gpu",
    "kendall_tau_llm",
    "coverage_90_pct",
    "rows",
)
SPLIT_NAMES: dict[str, str] = {
    "logo": "unseen_gpus",
    "lolo": "unseen_llms",
    "cv5": "cross_validation",
}


def card_metrics(card: dict[str, Any] | ModelCard) -> dict[str, Any]:
    """Model-card metrics of our method by split (unseen GPUs = leave-one-GPU-out, unseen LLMs =
    leave-one-LLM-out); ``status`` is "not evaluated" when the card holds none."""
    raw = card.metrics if isinstance(card, ModelCard) else card.get("metrics")
    records: list[dict[str, Any]] = []
    if isinstance(raw, list):
        records = [r for r in raw if isinstance(r, dict)]
    elif isinstance(raw, dict):
        for key in ("records", "summary"):
            if isinstance(raw.get(key), list):
                records = [r for r in raw[key] if isinstance(r, dict)]
    records = [r for r in records if r.get("method", "ours") == "ours" and "split" in r]
    out: dict[str, Any] = {
        "status": "evaluated" if records else NOT_EVALUATED,
        **{name: NOT_EVALUATED for name in SPLIT_NAMES.values()},
    }
    for r in records:
        name = SPLIT_NAMES.get(str(r["split"]), str(r["split"]))
        slot = out.get(name)
        if not isinstance(slot, dict):
            slot = {}
            out[name] = slot
        slot[str(r.get("target", "?"))] = {k: r.get(k) for k in METRIC_KEYS if k in r}
    if not records:
        out["note"] = (
            "the model card has no evaluation metrics; run `wattgpu evaluate --data DIR "
            "--metrics-to MODELS` (MODELS: the directory of the predictors, e.g. `wattgpu "
            "train --output MODELS`) to record them"
        )
    return out


METHOD_TEXT = (
    "GPU power per GPU and inter-token latency are predicted by gradient-boosted trees "
    "(XGBoost) on public GPU and model specifications plus roofline physics; a capacity "
    "model picks each deployment's operating batch under the latency SLA; an OR-Tools "
    "MILP chooses GPU types and replicas. Energy = Σ over periods of each deployment's power "
    "at the load per replica it serves (its power curve from idle to capacity, times its "
    "replicas) × the period's hours. Formulas: docs/method.md."
)


def method_of(card: ModelCard) -> Method:
    """The method statement: predictors, versions, recipes, intervals and accuracy."""
    versions = card.library_versions
    return Method(
        predictors=card.name,
        predictors_version=versions.get("wattgpu", __version__),
        library_versions=versions,
        chosen_recipes={
            k: v.get("chosen") for k, v in card.selection.items() if isinstance(v, dict)
        },
        reference_source=card.reference_source,
        intervals=card.intervals,
        units=card.units,
        metrics=card_metrics(card),
        description=METHOD_TEXT,
    )


#: The provenance note of predictors trained on the public data the shipped ones were.
PUBLIC_NOTE = "public measurements only; no measurement of this fleet was used"
#: The note of predictors trained on other data (``wattgpu train --data DIR --output``).
OWN_NOTE = (
    "measurements given to `wattgpu train`, not the public data of the shipped predictors "
    "(another training-data hash): they may include measurements of this fleet"
)


def provenance_of(card: ModelCard) -> DataProvenance:
    """The training data of the predictors: sources, rows and hash; public only when it is the
    data the shipped predictors were trained on (same hash)."""
    td = card.training_data
    return DataProvenance(
        sources=[
            Source(id=s, description=SOURCE_NAMES.get(s, s), rows=td.rows_by_source.get(s))
            for s in td.sources
        ],
        rows=td.rows,
        sha256=td.sha256,
        note=PUBLIC_NOTE if td.sha256 == _shipped_hash() else OWN_NOTE,
    )


def _shipped_hash() -> str | None:
    """The training-data hash of the shipped predictors' card (None when it cannot be read)."""
    import json

    from predictors.core.paths import trained_dir

    try:
        card = json.loads((trained_dir() / "model_card.json").read_text(encoding="utf-8"))
        return str(card["training_data"]["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
