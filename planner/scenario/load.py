"""Load a scenario file: YAML, overlays, ``--set`` overrides, catalog names, one line per problem.

:func:`load_scenario` reads the YAML (:mod:`planner.scenario.yaml12`: safe, YAML 1.2 scalars,
duplicate keys rejected, size, depth and alias expansion bounded), deep-merges overlay files,
applies ``--set PATH=VALUE`` overrides (:mod:`planner.scenario.overrides`), resolves
GPU/model/region names against the catalogs (replacing aliases with catalog ids,
:mod:`planner.scenario.names`), validates the result with
:class:`planner.scenario.model.Scenario`, checks each entry's tokens against its model's context
window and fills in catalog defaults (PUE, grid intensity, GPU prices, the GPU list when ``gpus``
is omitted). Every problem found on the way is collected and raised together as one
:class:`~predictors.core.errors.WattgpuError`, one line per problem::

    FILE: field.path: what is wrong (did you mean X?) — how to fix
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from planner.scenario.errors import Problem, as_error, pydantic_problems
from planner.scenario.layout_checks import offer_problems
from planner.scenario.model import PRICE_BASIS_COLUMN, Scenario, cross_field_problems
from planner.scenario.names import canonicalize, gpu_name_notes, no_price_problem
from planner.scenario.origin import latest_field, origin_of
from planner.scenario.overrides import apply_overrides, deep_merge, shorten
from planner.scenario.rules import DEFER_RULES
from planner.scenario.sections import GpuOffer, Load
from planner.scenario.tco import gpu_price
from planner.scenario.text import repeated_name
from planner.scenario.yaml12 import load_yaml_text, yaml_error
from predictors.catalog.context_window import context_excess
from predictors.core.document_kinds import SCENARIO, document_kind
from predictors.core.errors import WattgpuError
from predictors.core.paths import user_catalog_dir
from predictors.core.safe_read import check_depth, read_text

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
    data, source, problems = merged_scenario(path, overrides, overlays)
    return scenario_from_dict(data, source, catalog, base_dir=path.parent, problems=problems)


def merged_scenario(
    path: Path, overrides: Sequence[str] = (), overlays: Sequence[str | Path] = ()
) -> tuple[Any, str | Callable[[str], str], list[Problem]]:
    """The scenario *path* with *overlays* merged over it and *overrides* applied, as
    :func:`load_scenario` reads it: (the mapping, where each field was set — the file, or a
    callable naming each field's own file (:func:`planner.scenario.origin.origin_of`) — and the
    overrides refused)."""
    data = _read_yaml(path)
    check_not_output(str(path), data)
    layers: list[tuple[str, Any]] = []
    for overlay in overlays:
        layer = _read_yaml(Path(overlay))
        check_not_output(str(overlay), layer)
        layers.append((str(overlay), layer))
        if not isinstance(layer, dict):  # an empty file or a list would replace the scenario
            shape = "is empty" if layer is None else f"is a {type(layer).__name__}, not a mapping"
            problem = f"{shape} — give the scenario fields to merge (docs/scenarios.md, --overlay)"
            raise as_error(str(overlay), [("(top level)", problem)])
        try:
            data = deep_merge(data, layer)
        except WattgpuError as exc:
            raise WattgpuError(f"{overlay}: {exc}") from None
    problems: list[Problem] = []
    failed: list[tuple[str, str]] = []
    before = data
    if overrides:
        data, failed = apply_overrides(data, list(overrides))
        problems += [(f"--set {shorten(item)}", message) for item, message in failed]
    check_depth(data, str(path))
    refused = {item for item, _ in failed}
    applied = [item for item in overrides if item not in refused]
    if layers or applied:
        source: str | Callable[[str], str] = origin_of(str(path), layers, data, applied, before)
    else:
        source = str(path)
    return data, source, problems


def scenario_from_dict(
    data: Any,
    source: str | Callable[[str], str],
    catalog: Catalog | None = None,
    base_dir: Path | None = None,
    problems: list[Problem] | None = None,
) -> Scenario:
    """Validate and resolve an already-parsed scenario mapping; *source* names it in messages
    (a callable: the file of each problem's field, :func:`planner.scenario.origin.origin_of`)."""
    problems = list(problems or [])
    if not isinstance(data, dict):
        problems.append(("(top level)", "expected a mapping of scenario fields — see scenarios/"))
        raise as_error(source, problems)
    # Top-level keys starting with "x-" are free-form extensions (e.g. YAML anchors to share).
    data = {k: v for k, v in data.items() if not (isinstance(k, str) and k.startswith("x-"))}
    if catalog is None or isinstance(data.get("user_catalog"), str):
        catalog = _default_catalog(data, base_dir or Path.cwd(), problems)
    notes = gpu_name_notes(data, catalog)  # the names as given, before they are resolved
    data, catalog_problems = canonicalize(data, catalog)
    problems += catalog_problems + duplicate_names(data)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        reported = {p for p, _ in problems}
        found = pydantic_problems(exc)
        # every field sound, only rules broken: the rules that tie the sections together and
        # the layout rules are listed too (a broken rule hides none, planner.scenario.rules)
        sound = _with_rules_deferred(data)
        if sound is not None:
            found += [p for p in cross_field_problems(sound) if p not in found]
        problems += [p for p in found if p[0] not in reported]
        problems += context_problems(data, catalog, source)  # a field rule: listed with the rest
        problems += offer_problems(sound, catalog) if sound is not None else []
        raise as_error(source, problems) from None
    problems += context_problems(data, catalog, source) + offer_problems(scenario, catalog)
    if not problems:
        scenario = fill_defaults(scenario, catalog, problems)
    if problems:
        raise as_error(source, problems)
    scenario._gpu_notes = tuple(notes)
    where = source if callable(source) else _fixed(source)
    scenario._origin = (where, tuple(e.name for e in scenario.models))
    return scenario


def _with_rules_deferred(data: dict[str, Any]) -> Scenario | None:
    """*data* validated with the rules of its sections put off (:data:`DEFER_RULES`); None when
    a field does not hold a value of its type and range."""
    try:
        return Scenario.model_validate(data, context=DEFER_RULES)
    except ValidationError:
        return None


def _fixed(source: str) -> Callable[[str], str]:
    """The origin of every field of a scenario read from *source* alone."""
    return lambda _field: source


#: What to give instead of each of wattgpu's output documents read where a scenario is
#: (:data:`predictors.core.document_kinds.KINDS` names them by their keys).
INSTEAD: dict[str, str] = {
    "plan": "give the scenario YAML, or use report, pareto or diff on it",
    "sweep": "give the scenario YAML it was swept from",
    "report": "give the scenario YAML, or the saved plan JSON to report, pareto or diff",
    "comparison": "give a scenario YAML (`wattgpu scenarios --copy` starts one)",
    "pareto": "give the scenario YAML, or the saved plan JSON it was drawn from",
    "model card": "give a scenario YAML; a model card goes to --models (its directory)",
}


def check_not_output(source: str, data: Any) -> None:
    """Refuse, in one line, a file that is one of wattgpu's own output documents (a saved plan,
    a sweep, a report, a comparison or a Pareto front) given where a scenario is read, instead
    of one line per field that is no scenario field."""
    found = document_kind(data)
    if found is not None and found[0] != SCENARIO:
        raise WattgpuError(f"{source}: {found[1]}, not a scenario — {INSTEAD[found[0]]}")


def _read_yaml(path: Path) -> Any:
    text = read_text(path)
    try:
        return load_yaml_text(text)
    except yaml.YAMLError as exc:
        raise yaml_error(str(path), exc) from None


# --- catalogs and their defaults -------------------------------------------------------------


def user_catalog_path(user_catalog: str, base_dir: Path) -> Path:
    """The directory a scenario's ``user_catalog`` names (relative to the scenario's directory)."""
    return base_dir / Path(user_catalog).expanduser()


def _default_catalog(data: dict[str, Any], base_dir: Path, problems: list[Problem]) -> Catalog:
    from predictors.catalog.store import load_catalog

    user = data.get("user_catalog")
    explicit = user_catalog_path(user, base_dir) if isinstance(user, str) else None
    if explicit is not None and not explicit.is_dir():
        what = (
            f"{explicit} is a file, not a directory — give the directory holding it "
            f"({explicit.parent})"
            if explicit.exists()
            else f"directory {explicit} not found — fix the path"
        )
        problems.append(("user_catalog", what))
        explicit = None
    return load_catalog(user_catalog_dir(explicit))


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
    if scenario.regions is not None:
        update["regions"] = {
            name: spec.model_copy(update=_region_grid(spec.region, catalog))
            if spec.region is not None
            else spec
            for name, spec in scenario.regions.items()
        }
    offers: dict[str, Any] = {}
    if scenario.gpus is None:
        for gpu_id in catalog.gpus["id"].to_list():
            row = catalog.gpu(gpu_id)
            if scenario.price_basis != "tco" and row.get(PRICE_BASIS_COLUMN["median"]) is None:
                continue  # rental bases: only the GPUs some provider rents out
            price = gpu_price(row, scenario.price_basis, None, None, scenario.tco)
            if price is not None:
                offers[gpu_id] = {"usd_per_hour": price.usd_per_hour, "price_basis": price.basis}
    else:
        for gpu_id, offer in scenario.gpus.items():
            item = offer.model_dump()
            price = gpu_price(
                catalog.gpu(gpu_id),
                scenario.price_basis,
                offer.usd_per_hour,
                offer.purchase_price_usd,
                scenario.tco,
            )
            if price is None:
                problems.append(no_price_problem(gpu_id, gpu_id, scenario.price_basis))
                continue
            item["usd_per_hour"], item["price_basis"] = price.usd_per_hour, price.basis
            offers[gpu_id] = item
    update["gpus"] = {k: GpuOffer.model_validate(v) for k, v in offers.items()}
    return scenario.model_copy(update=update)


def _region_grid(region: str, catalog: Catalog) -> dict[str, Any]:
    """The grid intensity of a region's catalog grid ``region``."""
    return {"grid_g_co2_per_kwh": float(catalog.region(region)["g_co2_per_kwh"])}


_TOKEN_FIELDS = ("input_tokens", "output_tokens")


def context_problems(
    data: Any, catalog: Catalog, source: str | Callable[[str], str] = ""
) -> list[Problem]:
    """Entries whose prompt + generated tokens exceed the model's context window
    (``max_position_embeddings`` in the LLM catalog; no check when the catalog has no value).

    Checked on the resolved mapping *data*, each entry's ``load`` validated on its own, so that
    the problem is listed with every other one even when the scenario as a whole does not
    validate (an unknown GPU under ``allowed_gpus``, say); an entry whose model or load has
    problems of its own is skipped (those are reported). The problem is listed under whichever
    of ``input_tokens`` and ``output_tokens`` was set last (*source*: where each field was set,
    :func:`~planner.scenario.origin.latest_field`), so that its line names the ``--set`` or
    overlay that made the sum too large."""
    problems: list[Problem] = []
    models = data.get("models") if isinstance(data, dict) else None
    for i, entry in enumerate(models if isinstance(models, list) else ()):
        model = entry.get("model") if isinstance(entry, dict) else None
        if not isinstance(model, str) or catalog.try_resolve_llm(model) is None:
            continue
        try:
            load = Load.model_validate(entry.get("load"))
        except ValidationError:
            continue
        excess = context_excess(catalog.llm(model), load.input_tokens, load.output_tokens)
        if excess:
            problems.append(
                (
                    latest_field(source, [f"models[{i}].load.{f}" for f in _TOKEN_FIELDS]),
                    f"{excess} — lower input_tokens or output_tokens",
                )
            )
    return problems


def duplicate_names(data: dict[str, Any]) -> list[Problem]:
    """Repeated model entry names, checked on the raw mapping (pydantic skips the Scenario rule
    when any entry has a field error)."""
    problems: list[Problem] = []
    seen: dict[str, tuple[int, str]] = {}
    models = data.get("models")
    for i, entry in enumerate(models if isinstance(models, list) else ()):
        name = entry.get("name") if isinstance(entry, dict) else None
        repeated = repeated_name(seen, i, name) if isinstance(name, str) else None
        if repeated is not None:  # equal once NFC-normalised (café typed two ways)
            problems.append((f"models[{i}].name", repeated))
    return problems
