"""Resolve the names in a raw scenario mapping against the catalogs.

:func:`canonicalize` replaces GPU, model and region names (aliases, quantised checkpoints) by
catalog ids before validation, so that names are checked even when other fields are broken;
an unknown name is kept and becomes a one-line problem with a did-you-mean suggestion.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from planner.scenario.errors import Problem, format_path
from predictors.catalog import quantised
from predictors.catalog.unknown_names import close_names, unknown_name
from predictors.core.errors import UnknownIdError

if TYPE_CHECKING:
    from predictors.catalog.store import Catalog


def _unknown(kind: str, name: str, catalog: Catalog, index: str, fix: str) -> str:
    """The problem of an unknown name: GPU and model suggestions are ids (each once, not an id
    and its aliases); a region's are its names and ids (``Germany`` says more than ``DE``). The
    name is shortened, and a value far longer than any catalog name gets no did-you-mean
    (:mod:`predictors.catalog.unknown_names`)."""
    if index == "region":
        choices = catalog.regions["region_id"].to_list()
        choices += catalog.regions["aliases"].explode().drop_nulls().to_list()
        return f"{unknown_name(kind, name)}{close_names(name, choices)} — {fix}"
    return f"{unknown_name(kind, name)}{catalog.suggest(index, name)} — {fix}"


_GPU_FIX = "use a catalog GPU id or alias (`wattgpu catalog gpus` lists them)"
_LLM_FIX = (
    "use a catalog model id or alias, or add it to a user catalog (`wattgpu catalog import-hf`)"
)
_REGION_FIX = (
    "use a region `wattgpu catalog regions` lists (catalogs/grid_carbon.csv), or give "
    "grid_g_co2_per_kwh instead"
)


def canonicalize(data: dict[str, Any], catalog: Catalog) -> tuple[dict[str, Any], list[Problem]]:
    """Replace GPU, model and region names by catalog ids; unknown names become problems.

    Works on the raw mapping (before pydantic) so that names are checked even when other fields
    are broken; values of the wrong type are left for pydantic to report.
    """
    data = copy.deepcopy(data)
    problems: list[Problem] = loader_set_problems(data)
    gpus = data.get("gpus")
    if isinstance(gpus, dict):
        data["gpus"] = _canonical_gpus(gpus, catalog, problems)
    models = data.get("models")
    for i, entry in enumerate(models if isinstance(models, list) else ()):
        if isinstance(entry, dict):
            _canonicalize_model_entry(i, entry, catalog, problems, data.get("precision"))
    _canonical_region(data, "region", catalog, problems)
    regions = data.get("regions")
    for name, spec in (regions if isinstance(regions, dict) else {}).items():
        if not isinstance(spec, dict):
            continue
        _canonical_region(spec, "region", catalog, problems, format_path(["regions", name]))
        offers = spec.get("gpus")
        if isinstance(offers, dict):
            found = _by_gpu_id(offers, ["regions", name, "gpus"], catalog, problems)
            spec["gpus"] = {gpu: value for gpu, (_, value) in found.items()}
    return data, problems


def _by_gpu_id(
    offers: dict[Any, Any], prefix: list[Any], catalog: Catalog, problems: list[Problem]
) -> dict[Any, tuple[Any, Any]]:
    """*offers* (``gpus`` at *prefix*) keyed by catalog id, each with the name it was given; a
    GPU named twice (an alias) is a problem, never a silent overwrite."""
    out: dict[Any, tuple[Any, Any]] = {}
    for key, value in offers.items():
        where = format_path([*prefix, key])
        new = _gpu_id(key, where, catalog, problems)
        if new in out:
            earlier = format_path([*prefix, out[new][0]])
            problems.append((where, f"names the same GPU as {earlier} ({new}) — list it once"))
            continue
        out[new] = (key, value)
    return out


def loader_set_problems(data: dict[str, Any]) -> list[Problem]:
    """Fields the loader sets that a file gives where the loader would overwrite them: an
    offer's ``price_basis`` (the basis its price came from; the scenario's ``price_basis``
    chooses it) and a ``pue_source`` without its ``pue``."""
    problems: list[Problem] = []
    gpus = data.get("gpus")
    for key, offer in (gpus if isinstance(gpus, dict) else {}).items():
        if isinstance(offer, dict) and "price_basis" in offer:
            problems.append(
                (
                    format_path(["gpus", key, "price_basis"]),
                    "is set by wattgpu (where the price came from) — remove it; the scenario's "
                    "price_basis chooses the basis, usd_per_hour sets a price",
                )
            )
    if "pue_source" in data and data.get("pue") is None:
        problems.append(
            ("pue_source", "given without pue, whose source it names — set pue too, or remove it")
        )
    return problems


def gpu_name_notes(data: Any, catalog: Catalog) -> list[str]:
    """The note of each bare GPU family name (``H100``) in the raw scenario mapping *data*
    (``gpus``, each region's ``gpus``, each entry's ``allowed_gpus``/``forbidden_gpus``): which
    variant it was taken for, as ``predict`` says (:meth:`Catalog.gpu_name_note`), once each."""
    if not isinstance(data, dict):
        return []
    names: list[Any] = list(data.get("gpus") or ()) if isinstance(data.get("gpus"), dict) else []
    regions = data.get("regions")
    for spec in regions.values() if isinstance(regions, dict) else ():
        offers = spec.get("gpus") if isinstance(spec, dict) else None
        names += list(offers) if isinstance(offers, dict) else []
    models = data.get("models")
    for entry in models if isinstance(models, list) else ():
        for field in ("allowed_gpus", "forbidden_gpus"):
            values = entry.get(field) if isinstance(entry, dict) else None
            names += values if isinstance(values, list) else []
    notes = (catalog.gpu_name_note(n) for n in dict.fromkeys(names) if isinstance(n, str))
    return list(dict.fromkeys(n for n in notes if n))


def _canonical_region(
    data: dict[str, Any], key: str, catalog: Catalog, problems: list[Problem], where: str = ""
) -> None:
    """Replace ``data[key]`` (a grid region name) by its catalog id; unknown: a problem."""
    region = data.get(key)
    if not isinstance(region, str):
        return
    try:
        data[key] = catalog.resolve_region(region)
    except UnknownIdError:
        msg = _unknown("region", region, catalog, "region", _REGION_FIX)
        problems.append((f"{where}.{key}" if where else key, msg))


def _gpu_id(name: Any, where: str, catalog: Catalog, problems: list[Problem]) -> Any:
    """Catalog id of a GPU name; an unknown name is kept and becomes a problem at *where*."""
    if not isinstance(name, str):
        return name
    found = catalog.try_resolve_gpu(name)
    if found is None:
        problems.append((where, _unknown("GPU", name, catalog, "gpu", _GPU_FIX)))
        return name
    return found


def _canonical_gpus(
    gpus: dict[Any, Any], catalog: Catalog, problems: list[Problem]
) -> dict[Any, Any]:
    """The ``gpus`` offers keyed by catalog id; duplicates and unpriced GPUs become problems."""
    resolved: dict[Any, Any] = {}
    for new, (key, offer) in _by_gpu_id(gpus, ["gpus"], catalog, problems).items():
        offer = {} if offer is None else offer  # `L4:` with nothing = catalog defaults
        resolved[new] = offer
        known = isinstance(key, str) and catalog.try_resolve_gpu(key) is not None
        no_price = isinstance(offer, dict) and offer.get("usd_per_hour") is None
        row = catalog.gpu(new) if known else {}
        priceless = row.get("usd_per_hour") is None and row.get("list_price_usd") is None
        if known and no_price and priceless and offer.get("purchase_price_usd") is None:
            problems.append(no_price_problem(key, new))
    return resolved


def no_price_problem(key: Any, gpu_id: str, basis: str | None = None) -> Problem:
    """The problem of GPU offer ``gpus.<key>`` (catalog id *gpu_id*) that has no price (on
    price basis *basis*: ``tco`` needs a purchase price, a rental one is not enough)."""
    if basis == "tco":
        return (
            format_path(["gpus", key, "purchase_price_usd"]),
            f"price_basis tco needs a purchase price and the catalog has no list price for "
            f"{gpu_id} — set purchase_price_usd (or usd_per_hour to price it as rented)",
        )
    return (
        format_path(["gpus", key, "usd_per_hour"]),
        f"the catalog has no price for {gpu_id} (neither a rental nor a list price) — set "
        "usd_per_hour or purchase_price_usd",
    )


def _canonicalize_model_entry(
    i: int,
    entry: dict[str, Any],
    catalog: Catalog,
    problems: list[Problem],
    stated: Any = None,
) -> None:
    """Resolve ``models[i]``'s model (quantised checkpoint -> base) and GPU lists in place. A
    checkpoint's implied precision becomes the entry's only when neither the entry nor the
    scenario (*stated*: its top-level ``precision``) states one: a stated precision wins, as in
    ``predict`` and ``compare``."""
    name = entry.get("model")
    if isinstance(name, str):
        checkpoint = quantised.try_resolve_checkpoint(catalog, name)  # FP8/AWQ/… -> base
        if checkpoint is None:
            where = f"models[{i}].model"
            problems.append((where, _unknown("model", name, catalog, "llm", _LLM_FIX)))
        else:
            entry["model"] = checkpoint.model_id
            implied = checkpoint.precision
            if implied is not None and entry.get("precision") is None and stated is None:
                entry["precision"] = implied
    for field in ("allowed_gpus", "forbidden_gpus"):
        values = entry.get(field)
        if isinstance(values, list):
            entry[field] = [
                _gpu_id(v, f"models[{i}].{field}[{j}]", catalog, problems)
                for j, v in enumerate(values)
            ]
