"""The engines a refusal may suggest to a model entry, by its ``deployment``.

An engine that does not run on a GPU type excludes the entry's layouts on it, with the
predictors' reason (:func:`predictors.catalog.engine_support.accelerator_problems`), which names
every engine that runs there (``use vllm, sglang, hf-transformers or llama.cpp on MI300X``).
An entry planned with disaggregated units (``deployment: disaggregated`` or ``both``) takes only
an engine that serves prefill and decode apart (:data:`~predictors.core.vocab.DISAGG_ENGINES`):
the scenario refuses any other (:mod:`planner.scenario.model`), so the reason names only those.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from predictors.catalog import engine_support
from predictors.core.vocab import DISAGG_ENGINES


def _use(engines: list[str], gpu: object) -> str:
    return f"use {engine_support.listed(engines, 'or')} on {gpu}"


def disaggregated_reason(reason: str, engine: str | None, gpu: Mapping[str, Any]) -> str:
    """*reason* (a layout's on catalog GPU *gpu*) with the engines it suggests instead of
    *engine* narrowed to those that serve disaggregated units and run on *gpu* (unchanged when
    it holds no such suggestion)."""
    if not engine_support.accelerator_problems(engine, gpu):
        return reason
    runs = [name for name in engine_support.ENGINE_SUPPORT if engine_support.runs_on(name, gpu)]
    said = _use(runs, gpu.get("id")) if runs else ""
    if not said or said not in reason:
        return reason
    fit = [name for name in runs if name in DISAGG_ENGINES]
    if fit:
        narrowed = f"{_use(fit, gpu.get('id'))} (disaggregated units need {listed_disagg()})"
    else:
        narrowed = f"no engine of disaggregated units ({listed_disagg()}) runs on {gpu.get('id')}"
    return reason.replace(said, narrowed)


def listed_disagg() -> str:
    """``vllm, sglang or tensorrt-llm``: the engines of disaggregated units."""
    return engine_support.listed(list(DISAGG_ENGINES), "or")
