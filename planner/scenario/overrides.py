"""Edit a parsed scenario before validation: ``--set PATH=VALUE`` overrides and overlay merges.

:func:`apply_override` sets one value at a path such as ``models[0].load.requests_per_s``
(:func:`parse_path`), creating missing mappings; :func:`deep_merge` merges an overlay file's
mapping over the scenario (``models`` entries by ``name``). Both work on plain YAML data and
raise one-line :class:`~predictors.core.errors.WattgpuError` messages.
"""

from __future__ import annotations

import copy
import difflib
import re
from typing import Any

import yaml

from planner.scenario.errors import format_path
from planner.scenario.yaml12 import load_yaml_text, yaml_error_text
from predictors.core.errors import WattgpuError, did_you_mean
from predictors.core.escape import short_repr
from predictors.core.safe_read import MAX_DEPTH


def shorten(text: str, limit: int = 80) -> str:
    """*text*, cut to *limit* characters with an ellipsis (for messages)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: A path token: a key quoted whole, a bare key (each after a dot, but for the first token), an
#: ASCII index (``[0]``; not ``\d``, which takes ``[٠]`` too) or a key with dots (``["a.b"]``).
_TOKEN = re.compile(r'\.?"([^"]+)"(?=[.\[]|$)|\.?([^.\[\]="]+)|\[([0-9]+)\]|\["([^"]+)"\]')


def parse_path(path: str) -> list[str | int]:
    """``models[0].load.requests_per_s`` → ``["models", 0, "load", "requests_per_s"]``.

    Keys containing dots are written ``gpus["a.b"]``; a key may also be quoted whole
    (``gpus."L4"``: the key ``L4``). A ``"`` anywhere else is refused, never read as part of
    a key.
    """
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        match = _TOKEN.match(path, pos)
        key_token = match is not None and match.group(3) is None and match.group(4) is None
        dotted = match is not None and match.group(0).startswith(".")
        if match is None or (dotted and pos == 0) or (key_token and not dotted and pos > 0):
            # ("models[0]min_replicas": a key after an index needs its dot)
            raise WattgpuError(
                f"cannot read the path at '{shorten(path[pos:])}' — "
                "write it like models[0].load.input_tokens"
            )
        whole, name, index, quoted = match.groups()
        parts.append(int(index) if index is not None else (whole or quoted or name).strip())
        pos = match.end()
    if not parts:
        raise WattgpuError("empty path — write PATH=VALUE, e.g. models[0].load.requests_per_s=5")
    return parts


def apply_override(data: Any, item: str) -> Any:
    """Return a copy of *data* with ``PATH=VALUE`` applied (creating missing mappings)."""
    copied = copy.deepcopy(data) if data is not None else {}
    set_override(copied, item)
    return copied


def apply_overrides(data: Any, items: list[str]) -> tuple[Any, list[tuple[str, str]]]:
    """*data* (copied once) with every ``PATH=VALUE`` of *items* applied in order, and the
    (item, message) of each that could not be applied (those change nothing). Costs one copy
    of the scenario in all, not one per item."""
    copied = copy.deepcopy(data) if data is not None else {}
    problems: list[tuple[str, str]] = []
    for item in items:
        try:
            set_override(copied, item)
        except WattgpuError as exc:
            problems.append((item, str(exc)))
    return copied, problems


def set_override(data: Any, item: str) -> None:
    """Apply ``PATH=VALUE`` to *data* in place; on an error nothing is changed."""
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
    if not isinstance(data, dict):
        raise WattgpuError("the scenario is not a mapping — check the file")
    node, rest = _walk(data, parts)
    for key in rest[:-1]:  # the missing mappings on the way (all keys: checked by _walk)
        node[key] = {}
        node = node[key]
    node[rest[-1]] = value


def _walk(data: Any, parts: list[str | int]) -> tuple[Any, list[str | int]]:
    """The deepest existing container on *parts* and the parts below it, checked in full
    before anything is created (so a bad path changes nothing)."""
    node = data
    for depth, key in enumerate(parts):
        where = format_path(parts[: depth + 1])
        if isinstance(key, int):
            if not isinstance(node, list):
                raise WattgpuError(f"{format_path(parts[:depth])} is not a list — drop [{key}]")
            if key >= len(node):
                raise WattgpuError(f"{where} does not exist (the list has {len(node)} entries)")
        elif not isinstance(node, dict):
            raise WattgpuError(f"{format_path(parts[:depth])} is not a mapping — check the path")
        last = depth == len(parts) - 1
        if last or (isinstance(key, str) and key not in node):
            rest = parts[depth:]
            below = [k for k in rest[1:] if isinstance(k, int)]
            if below:  # a new mapping cannot be indexed like a list
                hint = _misspelled(key, _known_keys(node, top=depth == 0))
                if hint:  # a misspelled name, not a list to create
                    raise WattgpuError(f"{where} does not exist{hint} — fix the name in the path")
                raise WattgpuError(
                    f"{where} does not exist, so {format_path(parts)} cannot index it — "
                    "create the list first"
                )
            return node, rest
        node = node[key]
    raise AssertionError("unreachable: the last part always returns")


def _misspelled(key: str | int, known: list[str]) -> str:
    """' (did you mean: models?)' when *key* is close to a *known* key (and none of them; closer
    than :func:`did_you_mean`'s rule, so a new name such as ``new`` is not taken for ``name``)."""
    if key in known:
        return ""
    hits = difflib.get_close_matches(str(key), sorted(set(known)), n=3, cutoff=0.7)
    return f" (did you mean: {', '.join(hits)}?)" if hits else ""


def _known_keys(node: dict[Any, Any], *, top: bool) -> list[str]:
    """The keys a path may name in *node*: its own, and at the top every scenario field."""
    keys = [str(k) for k in node]
    if top:
        from planner.scenario.model import Scenario

        keys += list(Scenario.model_fields)
    return keys


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


def _refuse_repeated_names(overlay: list[Any]) -> None:
    """Refuse an overlay whose ``models`` list gives one (text) name twice: both entries would
    merge into the same one, the last silently replacing what the first set."""
    seen: dict[str, int] = {}
    for k, entry in enumerate(overlay):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            continue
        if name in seen:
            raise WattgpuError(
                f"models[{k}].name: {short_repr(name)} already given by models[{seen[name]}] "
                "of this overlay — list each entry once"
            )
        seen[name] = k


def _merge_models(base: list[Any], overlay: list[Any]) -> list[Any]:
    """Overlay entries replace base entries of the same (text) name; others are appended, so a
    name that is not text (a list, a mapping) is reported by validation, not a crash here."""
    _refuse_repeated_names(overlay)
    merged = list(base)
    index = {
        e["name"]: i
        for i, e in enumerate(merged)
        if isinstance(e, dict) and isinstance(e.get("name"), str)
    }
    for k, entry in enumerate(overlay):
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str) and name in index:
            merged[index[name]] = deep_merge(merged[index[name]], entry)
        elif isinstance(name, str) and isinstance(entry, dict) and "model" not in entry:
            # a misspelled name would be appended as a new entry without a model
            raise WattgpuError(
                f"models[{k}].name: {short_repr(name)} names no model entry of the scenario"
                f"{did_you_mean(name, list(index))} and gives no model — use an entry's exact "
                "name to change it, or give model: to add a new entry"
            )
        else:
            merged.append(copy.deepcopy(entry))
    return merged
