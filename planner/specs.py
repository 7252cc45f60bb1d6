"""The capacity model's input for one (model entry, GPU type, layout): its :class:`CandidateSpec`.

:func:`spec` builds it from the scenario; the facts shared by all layouts of a pair (price,
exclusion by the entry's GPU rules, precision) are looked up once per pair
(:func:`model_precision`: the precision an entry is planned at).
"""

from __future__ import annotations

from planner.capacity import CandidateSpec
from planner.layouts import LayoutError, Shape, stated_shape
from planner.scenario.layout_checks import may_place as may_place
from planner.scenario.model import PRICE_BASIS_COLUMN, Scenario
from planner.scenario.sections import ModelEntry
from predictors.api import Predictor
from predictors.catalog import engine_support, quantised
from predictors.catalog.store import Catalog


def model_precision(entry: ModelEntry, scenario: Scenario, catalog: Catalog) -> str:
    """The precision a model entry is planned at: its own, else the scenario's, else its
    checkpoint's (:func:`predictors.catalog.quantised.checkpoint_precision`), the same default
    as ``wattgpu predict`` and ``wattgpu compare``."""
    return str(
        entry.precision
        or scenario.precision
        or quantised.checkpoint_precision(catalog, entry.model)
    )


def spec(
    scenario: Scenario,
    entry: ModelEntry,
    gpu: str,
    shape: Shape,
    predictor: Predictor,
    memo: dict[tuple[str, str], tuple[float | None, str, str]],
) -> CandidateSpec:
    """The spec of (*entry*, *gpu*) at layout *shape*; *memo* keeps each pair's price,
    exclusion and precision, the same for all its layouts."""
    key = (entry.name, gpu)
    if key not in memo:
        memo[key] = _pair_facts(scenario, entry, gpu, predictor)
    price, excluded, precision = memo[key]
    return CandidateSpec(
        name=entry.name,
        model=entry.model,
        gpu=gpu,
        tp=shape.tp,
        engine=scenario.engine,
        precision=precision,
        input_tokens=entry.load.input_tokens,
        output_tokens=entry.load.output_tokens,
        itl_sla_s=entry.sla.itl_s,
        ttft_sla_s=entry.sla.ttft_s,
        usd_per_hour_per_gpu=price,
        excluded_reason=excluded,
        percentile=entry.sla.percentile,
        pp=shape.pp,
        dp=shape.dp,
        ep=shape.ep,
        held_gpus=shape.held,
        nodes=shape.nodes,
    )


def _pair_facts(
    scenario: Scenario, entry: ModelEntry, gpu: str, predictor: Predictor
) -> tuple[float | None, str, str]:
    """(*gpu*'s $/GPU-hour, why *entry* may not use it or '', the entry's precision)."""
    offer = scenario.gpu_offers[gpu]
    price = offer.usd_per_hour
    if price is None:
        column = PRICE_BASIS_COLUMN[scenario.price_basis]
        catalog_price = predictor.catalog.gpu(gpu).get(column)
        price = float(catalog_price) if catalog_price is not None else None
    excluded = ""
    if not may_use(entry, gpu):
        excluded = (
            f"in {entry.name}.forbidden_gpus"
            if gpu in entry.forbidden_gpus
            else f"not in {entry.name}.allowed_gpus"
        )
    return price, excluded, model_precision(entry, scenario, predictor.catalog)


def may_use(entry: ModelEntry, gpu: str) -> bool:
    """True when *entry*'s allowed and forbidden GPUs let it use *gpu*."""
    allowed = entry.allowed_gpus is None or gpu in entry.allowed_gpus
    return allowed and gpu not in entry.forbidden_gpus


def layout_problems(scenario: Scenario, catalog: Catalog) -> list[str]:
    """Every stated layout (``gpus.<type>.layouts``) the validity rules refuse for a model
    entry that may use the type (its allowed GPUs and a region it may be placed in that offers
    the type), one line each (``gpus.GB200.layouts[0]: …``): what ``wattgpu
    plan`` would stop on, all at once for ``wattgpu validate``. Models without the head facts
    the rules read are left to the predictors, as the plan's candidate build leaves them."""
    lines: list[str] = []
    for gpu, offer in scenario.gpu_offers.items():
        if not offer.layouts:
            continue
        row = catalog.gpu(gpu)
        if not engine_support.runs_on(scenario.engine, row):
            continue  # every layout of it is excluded with the reason, stated or not
        for entry in scenario.models:
            llm = catalog.llm(entry.model)
            if not may_place(scenario, entry, gpu) or not llm.get("num_attention_heads"):
                continue
            if not llm.get("num_kv_heads"):
                continue
            for i, option in enumerate(offer.layouts):
                try:
                    stated_shape(llm, row, option, f"gpus.{gpu}.layouts[{i}]", scenario.engine)
                except LayoutError as exc:
                    text = str(exc)
                    line = f"{text[:-1]}, entry {entry.name})" if text.endswith(")") else text
                    if line not in lines:
                        lines.append(line)
    return lines
