"""Which file set a scenario field: the scenario itself, one of its ``--overlay`` files, or a
``--set`` override.

A problem found after overlays are merged names the file the offending value came from, so that
``wattgpu plan s.yaml --overlay cap.yaml`` with a bad key in ``cap.yaml`` names ``cap.yaml``,
not ``s.yaml``. The rule follows :func:`planner.scenario.overrides.deep_merge`: an overlay owns
a field it states; a mapping it states merges key by key with the one below, so a key it does
not state belongs to the layer below; a list or a value it states replaces the one below whole;
``models`` entries are matched by ``name``. A missing field (``field required``) belongs to the
file that states the entry it is missing from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from planner.scenario.overrides import parse_path, shorten
from predictors.core.errors import WattgpuError


class FieldOrigin:
    """Where each field of a merged scenario was set (built by :func:`origin_of`): called with a
    field path, the name to print before its problem; :meth:`rank` orders the layers."""

    def __init__(
        self,
        base: str,
        layers: Sequence[tuple[str, Any]],
        merged: Any,
        overrides: Sequence[str],
        before: Any,
    ) -> None:
        self._base, self._layers, self._merged, self._before = base, layers, merged, before
        self._sets = [(item, _set_path(item)) for item in overrides]

    def __call__(self, field: str) -> str:
        """Where the value at *field* was set (module docstring, :func:`origin_of`)."""
        return self._where(field)[0]

    def rank(self, field: str) -> int:
        """How late the value at *field* was set: 0 by the scenario, ``i`` by its i-th overlay
        (from 1), above every overlay by a ``--set`` (the later, the higher)."""
        return self._where(field)[1]

    def _where(self, field: str) -> tuple[str, int]:
        try:
            parts = parse_path(field)
        except WattgpuError:
            return self._base, 0
        for k in reversed(range(len(self._sets))):
            item, path = self._sets[k]
            if path is None:
                continue
            if parts[: len(path)] == path or (
                path[: len(parts)] == parts and not _exists(self._before, parts)
            ):
                return f"{self._base} --set {shorten(item)}", len(self._layers) + 1 + k
        for k in reversed(range(len(self._layers))):
            name, layer = self._layers[k]
            if _owns(layer, self._merged, parts):
                return name, k + 1
        return self._base, 0


def origin_of(
    base: str,
    layers: Sequence[tuple[str, Any]],
    merged: Any,
    overrides: Sequence[str] = (),
    before: Any = None,
) -> FieldOrigin:
    """A function from a problem's field path (``models[0].sla.itl_ms``) to where it was set:
    ``BASE --set PATH=VALUE`` for the last of *overrides* whose path holds the field (they apply
    last), else the last of *layers* (``(file, parsed overlay)``, in merge order) that owns it,
    else *base*; a field an override created (absent from *before*, the mapping before the
    overrides, and on the override's path: ``gpus.X`` of ``--set gpus.X.available=0``) is the
    override's too. A path it cannot read (``(top level)``, ``--set …``) is the scenario's."""
    return FieldOrigin(base, layers, merged, overrides, before)


def latest_field(source: Callable[[str], str] | str, fields: Sequence[str]) -> str:
    """Of *fields* (that together make one problem: a sum of two), the one set last by
    *source* (a :class:`FieldOrigin`; the first field on a tie or a plain file name)."""
    if not isinstance(source, FieldOrigin):
        return fields[0]
    return max(fields, key=lambda f: (source.rank(f), -fields.index(f)))


def _exists(data: Any, parts: list[str | int]) -> bool:
    """Whether *data* holds a value at the field path *parts*."""
    node = data
    for part in parts:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return False
    return True


def _set_path(item: str) -> list[str | int] | None:
    """The field path of a ``PATH=VALUE`` override (None when it cannot be read)."""
    try:
        return parse_path(item.split("=", 1)[0].strip())
    except WattgpuError:
        return None


_ABSENT = object()


def _owns(layer: Any, merged: Any, parts: list[str | int]) -> bool:
    """Whether *layer* (an overlay as parsed) set the value at *parts* of *merged*."""
    node, seen = layer, merged
    for k, part in enumerate(parts):
        if isinstance(part, int) and isinstance(seen, list):
            if not isinstance(node, list) or part >= len(seen):
                return False
            if k > 0 and parts[k - 1] == "models":  # entries merge by name
                node = _entry_of(node, seen[part])
                if node is _ABSENT:
                    return False
            else:
                return True  # the layer states this list: it replaced the one below whole
            seen = seen[part]
            continue
        if not isinstance(node, dict):
            return True  # the layer replaced this value whole
        if part not in node:  # (an integer part here is a YAML key that is not text)
            missing_here = not (isinstance(seen, dict) and part in seen)
            return missing_here and k == len(parts) - 1 and k > 0  # a field its entry lacks
        node = node[part]
        seen = seen.get(part) if isinstance(seen, dict) else None
    return True


def _entry_of(entries: list[Any], merged_entry: Any) -> Any:
    """The entry of an overlay's ``models`` list that became *merged_entry*: the one of the same
    name, or, for an entry without a text name (appended whole), an equal one; else _ABSENT."""
    if isinstance(merged_entry, dict) and isinstance(merged_entry.get("name"), str):
        name = merged_entry["name"]
        named = [e for e in entries if isinstance(e, dict) and e.get("name") == name]
        return named[0] if named else _ABSENT
    return next((e for e in entries if e == merged_entry), _ABSENT)
