"""The GPU offers' layout fields checked against the catalog (model heads, NVLink domains).

Two rules that need the catalog, so the loader checks them after the schema
(:func:`planner.scenario.load.scenario_from_dict`), one problem line each:

* a written ``tp_degrees`` entry wider than the GPU's NVLink domain is refused with the two
  layouts it could mean (``{gpu_count: 16, pipeline_parallel: 1}``, TP 16 over two 8-GPU nodes,
  or ``{gpu_count: 16}``, TP 8 × PP 2: the engines' usual layout, which the degree used to be
  read as); one that is not a power of two (TP 5, 6, 12, 40: degrees for a model whose heads the
  powers of two do not divide) must fit the attention heads of a model entry that may use the
  GPU type; a power of two the heads do not allow is left out for that model, as the default
  degrees are (:func:`usable_degrees`, docs/scenarios.md, "GPUs"), but degrees that leave a
  model entry that may use the type and needs serving no degree at all (and no stated
  ``layouts``) are refused, naming the entries and the degrees their heads allow (fuzz round 29:
  validate said ok and the plan found "no candidate GPU at all"). The heads bound no degree of
  an engine that splits the layers (:data:`~predictors.core.vocab.LAYER_SPLIT_ENGINES`): there a
  degree is the GPU count of a layer split, TP 1 × PP degree, as ``layouts`` reads it;
* two ``layouts`` entries written differently that resolve to the same layout
  (:func:`predictors.catalog.validity.resolve_layout`: ``{gpu_count: 16}`` and ``{gpu_count: 16,
  pipeline_parallel: 2}`` on 8-GPU nodes) for every model entry that may use the GPU type are
  the same layout listed twice (a literal repeat is refused by the schema);
* a ``layouts`` entry the predictors' validity rules refuse for a model entry that may use the
  GPU type (:func:`predictors.catalog.validity.layout_problems`), one problem per layout and
  entry ending ``(model …, entry …)``: the rule :func:`planner.specs.layout_problems` applies
  where a plan is built. Checked here, a problem names where the layout was set, the scenario
  file, an ``--overlay`` or ``FILE --set PATH=VALUE``, as every field problem does (fuzz round
  26: it always named the scenario file).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from planner.scenario.model import Scenario
from planner.scenario.sections import ModelEntry
from planner.scenario.serving import needs_serving
from predictors.catalog import engine_support, validity
from predictors.core.vocab import LAYER_SPLIT_ENGINES

if TYPE_CHECKING:
    from predictors.catalog.store import Catalog

Problem = tuple[str, str]


def may_place(scenario: Scenario, entry: ModelEntry, gpu: str) -> bool:
    """True when *entry* may use *gpu* (its allowed and forbidden GPUs) in a region it may be
    placed in (always without regions): a region without its own ``gpus`` offers every type of
    the scenario's. The planner's rule too (:func:`planner.specs.may_place`)."""
    if entry.allowed_gpus is not None and gpu not in entry.allowed_gpus:
        return False
    if gpu in entry.forbidden_gpus:
        return False
    if not scenario.regions:
        return True
    names = entry.regions if entry.regions is not None else list(scenario.regions)
    for name in names:
        spec = scenario.regions.get(name)
        if spec is not None and (spec.gpus is None or gpu in spec.gpus):
            return True
    return False


def _models(scenario: Scenario, gpu: str, catalog: Catalog) -> list[dict[str, Any]]:
    """The catalog rows of the models (once each) of the entries that may use *gpu*."""
    ids = dict.fromkeys(e.model for e in scenario.models if may_place(scenario, e, gpu))
    return [catalog.llm(model) for model in ids if catalog.try_resolve_llm(model) is not None]


def _heads(llm: Mapping[str, Any]) -> tuple[int, int] | None:
    heads, kv = llm.get("num_attention_heads"), llm.get("num_kv_heads")
    return (int(heads), int(kv)) if heads and kv else None


def _wider_than_domain(gpu: str, degree: int, domain: int) -> Problem:
    """A written degree above the NVLink domain: which layout it means is asked for under
    ``layouts`` (pure TP over whole domains, or TP over the domain × PP across domains)."""
    where = f"gpus.{gpu}.layouts"
    if degree % domain:
        pp = min(k for k in range(2, degree + 1) if not degree % k and degree // k <= domain)
        return (
            f"gpus.{gpu}.tp_degrees",
            f"{degree} is larger than the {domain}-GPU NVLink domain of {gpu} and no whole "
            f"number of domains — use at most {domain}, or state a layout under {where} (e.g. "
            f"{{gpu_count: {degree}, pipeline_parallel: {pp}}} for TP {degree // pp} × PP {pp})",
        )
    k = degree // domain
    return (
        f"gpus.{gpu}.tp_degrees",
        f"{degree} is larger than the {domain}-GPU NVLink domain of {gpu}, so it does not say "
        f"the layout — state it under {where}: {{gpu_count: {degree}, pipeline_parallel: 1}} "
        f"for TP {degree} over {k} domains, or {{gpu_count: {degree}}} for TP {domain} × PP {k}",
    )


def usable_degrees(degrees: Iterable[int], llm: Mapping[str, Any], engine: str | None) -> list[int]:
    """The ``tp_degrees`` *degrees* a replica of model *llm* may use with *engine*, ascending:
    those its attention heads allow (vLLM's rule; an engine that shards the heads refuses the
    others), every degree for an engine that splits the layers (a GPU count of a layer split,
    :data:`~predictors.core.vocab.LAYER_SPLIT_ENGINES`) or for a model without head facts (the
    predictors say why they cannot predict it). The planner's rule too (:mod:`planner.build`)."""
    heads = _heads(llm)
    if heads is None or engine in LAYER_SPLIT_ENGINES:
        return sorted(degrees)
    return sorted(d for d in degrees if validity.tp_fits_heads(d, *heads))


def _allowed_text(llm: Mapping[str, Any], domain: int) -> str:
    """``Qwen/Qwen2.5-7B-Instruct: 28 heads and 4 KV heads allow tensor parallelism 1, 2, 4 in
    its 8-GPU NVLink domain``."""
    facts = _heads(llm)
    assert facts is not None
    heads, kv = facts
    valid = validity.valid_tp_degrees(heads, kv, domain)
    return (
        f"{llm.get('id')}: {heads} heads and {kv} KV heads allow tensor parallelism "
        f"{', '.join(map(str, valid))} in its {domain}-GPU NVLink domain"
    )


_LAYOUT_FIX = "(gpu_count with pipeline_parallel, data_parallel, expert_parallel)"


def _degree_problems(
    scenario: Scenario,
    gpu: str,
    llms: list[dict[str, Any]],
    row: Mapping[str, Any],
    catalog: Catalog,
) -> list[Problem]:
    """The written ``tp_degrees`` of *gpu* wider than its NVLink domain, those other than a
    power of two that no model of *llms* can run, and those that leave a model entry none
    (:func:`_unusable`)."""
    degrees = scenario.gpu_offers[gpu].tp_degrees
    domain = validity.tp_domain_gpus(row)
    out = [_wider_than_domain(gpu, d, domain) for d in degrees if d > domain]
    if scenario.engine in LAYER_SPLIT_ENGINES:
        return out  # a degree is the GPU count of a layer split: the heads do not bound it
    facts = [h for h in map(_heads, llms) if h is not None]
    bad = [
        d
        for d in degrees
        if d <= domain and d & (d - 1) and not any(validity.tp_fits_heads(d, *h) for h in facts)
    ]
    # not when no entry uses the type, or the predictors say why a model cannot be read
    refused = bad if facts and len(facts) == len(llms) else []
    if refused:
        out.append(
            (
                f"gpus.{gpu}.tp_degrees",
                f"{refused} fit the attention heads of no model entry that may use {gpu} "
                f"({_allowed_text(llms[0], domain)}) — use those degrees, or state any valid "
                f"layout under gpus.{gpu}.layouts {_LAYOUT_FIX}",
            )
        )
    kept = [d for d in degrees if d <= domain and d not in refused]
    return out + _unusable(scenario, gpu, kept, row, catalog)


#: Models (with their entries) named in one problem at most.
SHOWN_MODELS = 3


def _unusable(
    scenario: Scenario, gpu: str, kept: list[int], row: Mapping[str, Any], catalog: Catalog
) -> list[Problem]:
    """The degrees *kept* (those the other degree rules leave) when they leave a model entry
    that may use *gpu* and needs serving no degree its heads allow, and *gpu* states no
    ``layouts``: the plan would have no candidate of the entry on *gpu*. Skipped where the
    engine does not run on *gpu* (the plan excludes the pair with the reason)."""
    if (
        not kept
        or scenario.gpu_offers[gpu].layouts
        or not engine_support.runs_on(scenario.engine, row)
    ):
        return []
    models: dict[str, tuple[dict[str, Any], list[str]]] = {}
    for entry in scenario.models:
        if not may_place(scenario, entry, gpu) or not needs_serving(entry):
            continue
        if catalog.try_resolve_llm(entry.model) is None:
            continue  # the unknown name is reported
        llm = catalog.llm(entry.model)
        if _heads(llm) is not None and not usable_degrees(kept, llm, scenario.engine):
            models.setdefault(entry.model, (llm, []))[1].append(entry.name)
    if not models:
        return []
    count, domain = sum(len(names) for _, names in models.values()), validity.tp_domain_gpus(row)
    parts = [
        f"{', '.join(names)} ({_allowed_text(llm, domain)})"
        for llm, names in list(models.values())[:SHOWN_MODELS]
    ]
    more = len(models) - SHOWN_MODELS
    named = " and ".join(parts) + (f" and those of {more} more models" if more > 0 else "")
    one = count == 1
    return [
        (
            f"gpus.{gpu}.tp_degrees",
            f"{kept} leave model {'entry' if one else 'entries'} {named} no degree on {gpu} that "
            f"{'its' if one else 'their'} attention heads allow — add one of those degrees, "
            f"state any valid layout under gpus.{gpu}.layouts {_LAYOUT_FIX}, or forbid {gpu} "
            f"for {'the entry' if one else 'them'} (forbidden_gpus)",
        )
    ]


def _shape_text(layout: validity.Layout) -> str:
    text = f"TP {layout.tp}"
    text += f" × PP {layout.pp}" if layout.pp > 1 else ""
    text += f" × DP {layout.dp}" if layout.dp > 1 else ""
    return text + (f", EP {layout.ep}" if layout.ep > 1 else "")


def _repeat_problems(
    scenario: Scenario, gpu: str, llms: list[dict[str, Any]], row: Mapping[str, Any]
) -> list[Problem]:
    """The ``layouts`` of *gpu* that resolve to an earlier entry's layout for every model of
    *llms*, naming both entries."""
    layouts = scenario.gpu_offers[gpu].layouts
    seen: dict[tuple[validity.Layout | None, ...], int] = {}
    out: list[Problem] = []
    for i, option in enumerate(layouts if layouts and llms else ()):
        key = tuple(
            validity.resolve_layout(
                llm,
                row,
                option.gpu_count,
                option.pipeline_parallel,
                option.data_parallel,
                option.expert_parallel,
                engine=scenario.engine,
            )
            for llm in llms
        )
        if any(layout is None for layout in key):
            continue  # does not split: the layout rules name it
        if key in seen:
            first = key[0]
            assert first is not None
            out.append(
                (
                    f"gpus.{gpu}.layouts[{i}]",
                    f"the same layout as layouts[{seen[key]}] once resolved ({_shape_text(first)}"
                    f" on {gpu} for {llms[0].get('id')}"
                    + (" and every other model entry that may use it" if len(llms) > 1 else "")
                    + ") — list it once",
                )
            )
        else:
            seen[key] = i
    return out


def _rule_problems(
    scenario: Scenario, gpu: str, row: Mapping[str, Any], catalog: Catalog
) -> list[Problem]:
    """The ``layouts`` of *gpu* the validity rules refuse for a model entry that may use it, one
    problem per layout and entry (the first rule each breaks). Skipped as the plan skips them:
    an engine that runs on no layout of the type (every candidate is excluded with the reason),
    a model without the head facts the rules read (the predictors say why)."""
    layouts = scenario.gpu_offers[gpu].layouts
    if not layouts or not engine_support.runs_on(scenario.engine, row):
        return []
    out: list[Problem] = []
    for entry in scenario.models:
        if not may_place(scenario, entry, gpu) or catalog.try_resolve_llm(entry.model) is None:
            continue
        llm = catalog.llm(entry.model)
        if not llm.get("num_attention_heads") or not llm.get("num_kv_heads"):
            continue
        for i, option in enumerate(layouts):
            layout, problems = validity.layout_problems(
                llm,
                row,
                option.gpu_count,
                option.pipeline_parallel,
                option.data_parallel,
                option.expert_parallel,
                engine=scenario.engine,
            )
            if layout is None or problems:
                rule = problems[0] if problems else "the layout rules refuse it"
                where = f"(model {llm.get('id')}, entry {entry.name})"
                out.append((f"gpus.{gpu}.layouts[{i}]", f"{rule} {where}"))
    return out


def offer_problems(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    """Every GPU offer's ``tp_degrees`` no model entry can run, ``layouts`` the layout rules
    refuse for a model entry and ``layouts`` repeated once resolved (module doc), one problem
    each."""
    out: list[Problem] = []
    if scenario.gpus is None:
        return out
    for gpu, offer in scenario.gpus.items():
        written = "tp_degrees" in offer.model_fields_set
        if not written and not offer.layouts:
            continue
        if catalog.try_resolve_gpu(gpu) is None:
            continue  # the unknown name is reported
        row = catalog.gpu(gpu)
        llms = _models(scenario, gpu, catalog)
        if written:
            out += _degree_problems(scenario, gpu, llms, row, catalog)
        out += _rule_problems(scenario, gpu, row, catalog) + _repeat_problems(
            scenario, gpu, llms, row
        )
    return out
