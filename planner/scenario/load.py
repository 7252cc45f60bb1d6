"""Load a scenario file: YAML, overlays, ``--set`` overrides, catalog names, one line per problem.

:func:`load_scenario` reads the YAML (:mod:`planner.scenario.yaml12`: safe, YAML 1.2 scalars,
duplicate keys rejected, size, depth and alias expansion bounded), deep-merges overlay files,
applies ``--set PATH=VALUE`` overrides, resolves GPU/model/region names against the catalogs
(replacing aliases with catalog ids), validates the result with
:class:`planner.scenario.model.Scenario`, checks each entry's tokens against its model's context
window and fills in catalog defaults (PUE, grid intensity, GPU prices, the GPU list when ``gpus``
is omitted). Every problem found on the way is collected and raised together as one
:class:`~predictors.core.errors.WattgpuError`, one line per problem::

    FILE: field.path: what is wrong (did you mean X?) — how to fix
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from planner.scenario.errors import Problem, as_error, format_path, pydantic_problems
from planner.scenario.model import PRICE_BASIS_COLUMN, GpuOffer, Scenario
from planner.scenario.yaml12 import load_yaml_text, yaml_error, yaml_error_text
from predictors.catalog import quantised
from predictors.core.errors import UnknownIdError, WattgpuError, did_you_mean
from predictors.core.escape import short_repr
from predictors.core.paths import user_catalog_dir
from predictors.core.safe_read import MAX_DEPTH, check_depth, read_text

if TYPE_CHECKING:
    from predictors.catalog.store import Catalog

#: PUE scope in catalogs/pue.csv used when a scenario gives no ``pue``.
DEFAULT_PUE_SCOPE = "on-premise"


def load_scenario(
    path: str | Path,
    overrides: Sequence[str] = (),
    catalog: Catalog | None = None,
    overlays: Sequence[str | Path] = (),
) -> Scenario:
    """Read, override, resolve and validate a scenario file; raise one error listing every problem.

    *overrides* are ``PATH=VALUE`` strings (``models[0].load.requests_per_s=5``,
    ``gpus.H100-SXM5-80GB.available=0``; the value is read as a YAML scalar or flow collection).
    *overlays* are YAML files deep-merged over the scenario in order (mappings merge key by key,
    ``models`` entries merge by ``name`` and new names are appended, other lists are replaced).
    *catalog* defaults to ``load_catalog()``; a scenario that names a ``user_catalog`` directory
    is always resolved against the bundled catalogs plus that overlay (see
    :func:`user_catalog_path`).
    """
    path = Path(path)
    data = _read_yaml(path)
    for overlay in overlays:
        data = deep_merge(data, _read_yaml(Path(overlay)))
    problems: list[Problem] = []
    for item in overrides:
        try:
            data = apply_override(data, item)
        except WattgpuError as exc:
            problems.append((f"--set {_shorten(item)}", str(exc)))
    check_depth(data, str(path))
    return scenario_from_dict(data, str(path), catalog, base_dir=path.parent, problems=problems)


def scenario_from_dict(
    data: Any,
    source: str,
    catalog: Catalog | None = None,
    base_dir: Path | None = None,
    problems: list[Problem] | None = None,
) -> Scenario:
    """Validate and resolve an already-parsed scenario mapping; *source* names it in messages."""
    problems = list(problems or [])
    if not isinstance(data, dict):
        problems.append(("(top level)", "expected a mapping of scenario fields — see scenarios/"))
        raise as_error(source, problems)
    # Top-level keys starting with "x-" are free-form extensions (e.g. YAML anchors to share).
    data = {k: v for k, v in data.items() if not (isinstance(k, str) and k.startswith("x-"))}
    if catalog is None or isinstance(data.get("user_catalog"), str):
        catalog = _default_catalog(data, base_dir or Path.cwd(), problems)
    data, catalog_problems = canonicalize(data, catalog)
    problems += catalog_problems + duplicate_names(data)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        reported = {p for p, _ in problems}
        problems += [p for p in pydantic_problems(exc) if p[0] not in reported]
        raise as_error(source, problems) from None
    problems += context_problems(scenario, catalog)
    if not problems:
        scenario = fill_defaults(scenario, catalog, problems)
    if problems:
        raise as_error(source, problems)
    return scenario


# --- reading and overriding --------------------------------------------------------------------


def _read_yaml(path: Path) -> Any:
    text = read_text(path)
    try:
        return load_yaml_text(text)
    except yaml.YAMLError as exc:
        raise yaml_error(str(path), exc) from None


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_TOKEN = re.compile(r'\.?([^.\[\]=]+)|\[(\d+)\]|\["([^"]+)"\]')


def parse_path(path: str) -> list[str | int]:
    """``models[0].load.requests_per_s`` → ``["models", 0, "load", "requests_per_s"]``.

    Keys containing dots are written ``gpus["a.b"]``.
    """
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        match = _TOKEN.match(path, pos)
        if match is None or (match.group(0).startswith(".") and pos == 0):
            raise WattgpuError(
                f"cannot read the path at '{_shorten(path[pos:])}' — "
                "write it like models[0].load.input_tokens"
            )
        name, index, quoted = match.groups()
        parts.append(int(index) if index is not None else (quoted or name).strip())
        pos = match.end()
    if not parts:
        raise WattgpuError("empty path — write PATH=VALUE, e.g. models[0].load.requests_per_s=5")
    return parts


def apply_override(data: Any, item: str) -> Any:
    """Return a copy of *data* with ``PATH=VALUE`` applied (creating missing mappings)."""
    if "=" not in item:
        raise WattgpuError("no '=' — write PATH=VALUE, e.g. models[0].load.requests_per_s=5")
    raw_path, raw_value = item.split("=", 1)
    parts = parse_path(raw_path.strip())
    if len(parts) > MAX_DEPTH:
        raise WattgpuError(
            f"the path has {len(parts)} parts, more than the {MAX_DEPTH} allowed — "
            "write it like models[0].load.input_tokens"
        )
    try:
        value = load_yaml_text(raw_value) if raw_value.strip() else None
    except yaml.YAMLError as exc:
        raise WattgpuError(
            f"cannot read the value {short_repr(raw_value)} as YAML "
            f"({yaml_error_text(exc)}) — quote it"
        ) from None
    data = copy.deepcopy(data) if data is not None else {}
    node = data
    for depth, key in enumerate(parts):
        last = depth == len(parts) - 1
        where = format_path(parts[: depth + 1])
        if isinstance(key, int):
            if not isinstance(node, list):
                raise WattgpuError(f"{format_path(parts[:depth])} is not a list — drop [{key}]")
            if key >= len(node):
                raise WattgpuError(f"{where} does not exist (the list has {len(node)} entries)")
        elif not isinstance(node, dict):
            raise WattgpuError(f"{format_path(parts[:depth])} is not a mapping — check the path")
        if last:
            node[key] = value
        else:
            if isinstance(key, str) and key not in node:
                node[key] = {}
            node = node[key]
    return data


def deep_merge(base: Any, overlay: Any) -> Any:
    """Overlay merged onto base: mappings key by key, ``models`` by name, other values replaced."""
    if isinstance(base, dict) and isinstance(overlay, dict):
        merged = dict(base)
        for key, value in overlay.items():
            if key == "models" and isinstance(value, list) and isinstance(base.get(key), list):
                merged[key] = _merge_models(base[key], value)
            elif key in base:
                merged[key] = deep_merge(base[key], value)
            else:
                merged[key] = copy.deepcopy(value)
        return merged
    return copy.deepcopy(overlay)


def _merge_models(base: list[Any], overlay: list[Any]) -> list[Any]:
    merged = list(base)
    index = {e.get("name"): i for i, e in enumerate(merged) if isinstance(e, dict)}
    for entry in overlay:
        name = entry.get("name") if isinstance(entry, dict) else None
        if name in index:
            merged[index[name]] = deep_merge(merged[index[name]], entry)
        else:
            merged.append(copy.deepcopy(entry))
    return merged


# --- catalog names ------------------------------------------------------------------------------


def user_catalog_path(user_catalog: str, base_dir: Path) -> Path:
    """The directory a scenario's ``user_catalog`` names (relative to the scenario's directory)."""
    return base_dir / Path(user_catalog).expanduser()


def _default_catalog(data: dict[str, Any], base_dir: Path, problems: list[Problem]) -> Catalog:
    from predictors.catalog.store import load_catalog

    user = data.get("user_catalog")
    explicit = user_catalog_path(user, base_dir) if isinstance(user, str) else None
    if explicit is not None and not explicit.is_dir():
        problems.append(("user_catalog", f"directory {explicit} not found — fix the path"))
        explicit = None
    return load_catalog(user_catalog_dir(explicit))


def _names(frame: Any, id_column: str) -> list[str]:
    names = [str(v) for v in frame[id_column].to_list()]
    if "aliases" in frame.columns:
        for aliases in frame["aliases"].to_list():
            names += [str(a) for a in aliases or ()]
    return names


def _unknown(kind: str, name: str, frame: Any, id_column: str, fix: str) -> str:
    return f"unknown {kind} '{name}'{did_you_mean(name, _names(frame, id_column))} — {fix}"


_GPU_FIX = "use a catalog GPU id or alias (`wattgpu catalog gpus` lists them)"
_LLM_FIX = (
    "use a catalog model id or alias, or add it to a user catalog (`wattgpu catalog import-hf`)"
)
_REGION_FIX = "use a region from catalogs/grid_carbon.csv, or give grid_g_co2_per_kwh instead"


def canonicalize(data: dict[str, Any], catalog: Catalog) -> tuple[dict[str, Any], list[Problem]]:
    """Replace GPU, model and region names by catalog ids; unknown names become problems.

    Works on the raw mapping (before pydantic) so that names are checked even when other fields
    are broken; values of the wrong type are left for pydantic to report.
    """
    data = copy.deepcopy(data)
    problems: list[Problem] = []
    gpus = data.get("gpus")
    if isinstance(gpus, dict):
        data["gpus"] = _canonical_gpus(gpus, catalog, problems)
    models = data.get("models")
    for i, entry in enumerate(models if isinstance(models, list) else ()):
        if isinstance(entry, dict):
            _canonicalize_model_entry(i, entry, catalog, problems)
    region = data.get("region")
    if isinstance(region, str):
        try:
            data["region"] = catalog.resolve_region(region)
        except UnknownIdError:
            msg = _unknown("region", region, catalog.regions, "region_id", _REGION_FIX)
            problems.append(("region", msg))
    return data, problems


def _gpu_id(name: Any, where: str, catalog: Catalog, problems: list[Problem]) -> Any:
    """Catalog id of a GPU name; an unknown name is kept and becomes a problem at *where*."""
    if not isinstance(name, str):
        return name
    found = catalog.try_resolve_gpu(name)
    if found is None:
        problems.append((where, _unknown("GPU", name, catalog.gpus, "id", _GPU_FIX)))
        return name
    return found


def _canonical_gpus(
    gpus: dict[Any, Any], catalog: Catalog, problems: list[Problem]
) -> dict[Any, Any]:
    """The ``gpus`` offers keyed by catalog id; duplicates and unpriced GPUs become problems."""
    resolved: dict[Any, Any] = {}
    first: dict[Any, Any] = {}
    for key, offer in gpus.items():
        new = _gpu_id(key, format_path(["gpus", key]), catalog, problems)
        if new in resolved:
            problems.append(
                (
                    format_path(["gpus", key]),
                    f"names the same GPU as gpus.{first[new]} ({new}) — list it once",
                )
            )
            continue
        offer = {} if offer is None else offer  # `L4:` with nothing = catalog defaults
        resolved[new], first[new] = offer, key
        known = isinstance(key, str) and catalog.try_resolve_gpu(key) is not None
        no_price = isinstance(offer, dict) and offer.get("usd_per_hour") is None
        if known and no_price and catalog.gpu(new).get("usd_per_hour") is None:
            problems.append(
                (
                    format_path(["gpus", key, "usd_per_hour"]),
                    f"the catalog has no price for {new} — set usd_per_hour",
                )
            )
    return resolved


def _canonicalize_model_entry(
    i: int, entry: dict[str, Any], catalog: Catalog, problems: list[Problem]
) -> None:
    """Resolve ``models[i]``'s model (quantised checkpoint -> base) and GPU lists in place."""
    name = entry.get("model")
    if isinstance(name, str):
        checkpoint = quantised.try_resolve_checkpoint(catalog, name)  # FP8/AWQ/… -> base
        if checkpoint is None:
            where = f"models[{i}].model"
            problems.append((where, _unknown("model", name, catalog.llms, "id", _LLM_FIX)))
        else:
            entry["model"] = checkpoint.model_id
            if checkpoint.precision is not None and entry.get("precision") is None:
                entry["precision"] = checkpoint.precision
    for field in ("allowed_gpus", "forbidden_gpus"):
        values = entry.get(field)
        if isinstance(values, list):
            entry[field] = [
                _gpu_id(v, f"models[{i}].{field}[{j}]", catalog, problems)
                for j, v in enumerate(values)
            ]


def fill_defaults(scenario: Scenario, catalog: Catalog, problems: list[Problem]) -> Scenario:
    """The scenario with PUE, grid intensity and GPU prices/list filled in from the catalogs.

    Problems (a GPU listed without a price anywhere, no default PUE) are appended to *problems*.
    Uses ``model_copy`` on purpose: the filled-in values come from the validated catalogs, and
    ``region`` together with ``grid_g_co2_per_kwh`` is only an error in what users write.
    """
    update: dict[str, Any] = {}
    if scenario.pue is None:
        rows = catalog.pue.filter(catalog.pue["scope"] == DEFAULT_PUE_SCOPE).to_dicts()
        if rows:
            update["pue"] = float(rows[0]["pue"])
            update["pue_source"] = f"catalogs/pue.csv {DEFAULT_PUE_SCOPE}: {rows[0].get('source')}"
        else:
            problems.append(("pue", f"no '{DEFAULT_PUE_SCOPE}' row in catalogs/pue.csv — set pue"))
    if scenario.region is not None:
        row = catalog.region(scenario.region)
        update["grid_g_co2_per_kwh"] = float(row["g_co2_per_kwh"])
        update["grid_year"] = int(row["year"]) if row.get("year") is not None else None
        update["grid_source"] = f"catalogs/grid_carbon.csv {scenario.region}: {row.get('source')}"
    offers: dict[str, Any] = {}
    if scenario.gpus is None:
        for gpu_id in catalog.gpus["id"].to_list():
            price = catalog.gpu(gpu_id).get(PRICE_BASIS_COLUMN[scenario.price_basis])
            if price is not None:
                offers[gpu_id] = {"usd_per_hour": float(price)}
    else:
        for gpu_id, offer in scenario.gpus.items():
            item = offer.model_dump()
            if offer.usd_per_hour is None:
                price = catalog.gpu(gpu_id).get(PRICE_BASIS_COLUMN[scenario.price_basis])
                if price is None:
                    problems.append(
                        (
                            format_path(["gpus", gpu_id, "usd_per_hour"]),
                            f"the catalog has no price for {gpu_id} — set usd_per_hour",
                        )
                    )
                    continue
                item["usd_per_hour"] = float(price)
            offers[gpu_id] = item
    update["gpus"] = {k: GpuOffer.model_validate(v) for k, v in offers.items()}
    return scenario.model_copy(update=update)


def context_problems(scenario: Scenario, catalog: Catalog) -> list[Problem]:
    """Entries whose prompt + generated tokens exceed the model's context window
    (``max_position_embeddings`` in the LLM catalog; no check when the catalog has no value)."""
    problems: list[Problem] = []
    for i, entry in enumerate(scenario.models):
        if catalog.try_resolve_llm(entry.model) is None:
            continue
        window = catalog.llm(entry.model).get("max_position_embeddings")
        tokens = entry.load.input_tokens + entry.load.output_tokens
        if window is not None and tokens > window:
            problems.append(
                (
                    f"models[{i}].load.input_tokens",
                    f"{tokens:,.0f} tokens (input {entry.load.input_tokens:,.0f} + output "
                    f"{entry.load.output_tokens:,.0f}) exceed the {window:,}-token context of "
                    f"{entry.model} — lower input_tokens or output_tokens",
                )
            )
    return problems


def duplicate_names(data: dict[str, Any]) -> list[Problem]:
    """Repeated model entry names, checked on the raw mapping (pydantic skips the Scenario rule
    when any entry has a field error)."""
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    models = data.get("models")
    for i, entry in enumerate(models if isinstance(models, list) else ()):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            continue
        if name in seen:
            problems.append(
                (
                    f"models[{i}].name",
                    f"'{name}' already used by models[{seen[name]}] — "
                    "give every entry a unique name",
                )
            )
        seen.setdefault(name, i)
    return problems
