"""Load the GPU, LLM, grid-carbon and PUE catalogs into polars frames and resolve names.

The bundled catalogs live in ``catalogs/`` (``predictors/_catalogs`` in a wheel). A user overlay
directory (``user_dir`` argument or ``$WATTGPU_USER_CATALOG``) may hold any of ``gpus.csv``,
``llms.csv``, ``grid_carbon.csv`` and ``pue.csv`` with the same columns: its rows are added, and
a row whose id already exists replaces the bundled row. Every file is validated
(:mod:`predictors.catalog.validate`); all problems are collected and raised as one
:class:`~predictors.core.errors.CatalogError`, one line per problem.

Names resolve through ids and aliases, ignoring case, spaces and punctuation, so
``"nvidia h100 80gb hbm3"``, ``"H100_SXM5_80GB"`` and ``"NVIDIA H100 80GB HBM3"`` all resolve
to ``H100-SXM5-80GB``, but not where punctuation splits digits another way (``opt-1.3b`` is not
``opt-13b``). Unknown names raise :class:`~predictors.core.errors.UnknownIdError` with the
closest ids and aliases.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from predictors.catalog.fingerprint import catalog_fingerprint
from predictors.catalog.name_keys import digit_splits, known_spelling, named_ids, normalize_name
from predictors.catalog.unknown_names import suggestible, unknown_id_error
from predictors.catalog.validate import (
    GPU_SCHEMA,
    LLM_SCHEMA,
    PUE_SCHEMA,
    REGION_SCHEMA,
    SCHEMAS,
    Row,
    Schema,
    problem,
    read_table,
    to_frame,
)
from predictors.catalog.validity import with_node_gpus
from predictors.core.errors import CatalogError
from predictors.core.output import protect_inputs
from predictors.core.paths import USER_CATALOG_ENV, catalogs_dir, user_catalog_dir

__all__ = ["Catalog", "load_catalog", "normalize_name", "validate_dir"]


@dataclass(frozen=True)
class _Index:
    """Name lookup for one table: normalized id/alias -> id, id -> row number in the frame."""

    kind: str
    keys: dict[str, str]
    rows: dict[str, int]
    names: tuple[str, ...]
    splits: dict[str, tuple[tuple[frozenset[int], str], ...]] = field(default_factory=dict)
    """Per key, the :func:`digit_splits` and id of every id and alias with that key (two ids
    share a key only where their names split its digits apart: ``Qwen2.5-7B``, ``Qwen2-57B``)."""

    def try_resolve(self, name: str) -> str | None:
        """The id *name* names (spelling-insensitive), or None: of the names with its key, the
        one id whose names split its digits as *name* does (:func:`named_ids`). A name that
        splits them otherwise (``opt-1.3b`` against ``opt-13b``, ``Qwen2-57B`` against
        ``Qwen2.5-7B``) names another model; only a bare key (``H100SXM580GB``) may match any."""
        entries = self.splits.get(normalize_name(name))
        if not entries:  # no name has its key (and a huge value's digit splits are not read)
            return None
        ids = named_ids(name, entries)
        return ids.pop() if len(ids) == 1 else None

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Ids whose id or alias is closest to *name* (spelling-insensitive), best first; of the
        ids that share a key (``opt-13b``, ``opt-1.3b``), the one splitting digits alike first;
        none for a value far longer than any name (:func:`.unknown_names.suggestible`)."""
        if not suggestible(name):
            return []
        hits = difflib.get_close_matches(normalize_name(name), list(self.keys), n=4 * n, cutoff=0.5)
        mine = digit_splits(name)
        ids = [
            rid
            for h in hits
            for _, rid in sorted(self.splits.get(h, ()), key=lambda entry: entry[0] != mine)
        ]
        return list(dict.fromkeys(ids))[:n]

    def resolve(self, name: str) -> str:
        found = self.try_resolve(name)
        if found is None:
            fix = f"use an id or alias from `wattgpu catalog {self.kind}s`"
            raise unknown_id_error(self.kind, name, self.suggest(name), self.names, fix)
        return found


@dataclass(frozen=True)
class Catalog:
    """The loaded catalogs: polars frames (``aliases`` as list[str]) plus name resolution."""

    gpus: pl.DataFrame
    llms: pl.DataFrame
    regions: pl.DataFrame
    pue: pl.DataFrame
    _gpu_index: _Index = field(repr=False)
    _llm_index: _Index = field(repr=False)
    _region_index: _Index = field(repr=False)
    user_dir: str | None = None
    """The user catalog directory overlaid on the bundled one (absolute; None: none)."""
    fingerprint: str = ""
    """:func:`~predictors.catalog.fingerprint.catalog_fingerprint` of the files read."""
    _rows: dict[tuple[str, str], dict[str, Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Rows already read (by kind and id): a candidate build asks for the same rows ~10⁵ times.
    Not an init field, so ``dataclasses.replace`` (a catalog with changed frames) starts empty."""
    _memos: dict[str, dict[Any, Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def memo(self, name: str) -> dict[Any, Any]:
        """A cache named *name* that lives as long as this catalog (for results that depend on
        catalog rows only, such as a configuration's validity)."""
        return self._memos.setdefault(name, {})

    def _row(self, kind: str, frame: pl.DataFrame, index: _Index, rid: str) -> dict[str, Any]:
        cached = self._rows.get((kind, rid))
        if cached is None:
            cached = self._rows[(kind, rid)] = frame.row(index.rows[rid], named=True)
        return dict(cached)  # a copy: callers may add keys

    def resolve_gpu(self, name: str) -> str:
        """GPU id for an id or alias (e.g. an nvidia-smi name); UnknownIdError otherwise."""
        return self._gpu_index.resolve(name)

    def resolve_llm(self, name: str) -> str:
        """LLM id (Hugging Face repo id) for an id or alias; UnknownIdError otherwise."""
        return self._llm_index.resolve(name)

    def resolve_region(self, name: str) -> str:
        """Region id (``DE``, ``aws:eu-central-1``) for an id or alias; UnknownIdError otherwise."""
        return self._region_index.resolve(name)

    def suggest(self, kind: str, name: str, n: int = 3) -> str:
        """' (did you mean: a, b?)' naming the *kind* (``gpu`` or ``llm``) ids whose id or an
        alias is closest to *name*, each id once ('' when nothing is close)."""
        index = {"gpu": self._gpu_index, "llm": self._llm_index}
        ids = index[kind].suggest(name, n)
        return f" (did you mean: {', '.join(ids)}?)" if ids else ""

    def try_resolve_gpu(self, name: str) -> str | None:
        """GPU id for a name, or None when nothing matches."""
        return self._gpu_index.try_resolve(name)

    def try_resolve_llm(self, name: str) -> str | None:
        """LLM id for a name, or None when nothing matches."""
        return self._llm_index.try_resolve(name)

    def try_resolve_region(self, name: str) -> str | None:
        """Region id for a name, or None when nothing matches."""
        return self._region_index.try_resolve(name)

    def gpu_name_note(self, name: str) -> str | None:
        """The "assumed" note when *name* is a bare family name (``assumed_aliases``), else None.

        Bare names (``A100``, ``H100``, ``H200``, ``V100``) resolve to the SXM datacenter part;
        the note says so and lists the other variants of the family, to pick one explicitly.
        """
        gid = self.try_resolve_gpu(name)
        if gid is None:
            return None
        row = self.gpu(gid)
        key = normalize_name(name)
        if not any(normalize_name(a) == key for a in row.get("assumed_aliases") or []):
            return None
        family = normalize_name(gid.split("-")[0])
        others = [
            str(g)
            for g in self.gpus["id"].to_list()
            if g != gid and normalize_name(str(g).split("-")[0]) == family
        ]
        alternatives = f"; other variants: {', '.join(others)}" if others else ""
        return (
            f"'{name}' does not name a variant: assumed {gid} (bare family names mean the SXM "
            f"datacenter part){alternatives} — give the full id to choose another"
        )

    def gpu(self, name_or_id: str) -> dict[str, Any]:
        """All columns of one GPU row."""
        gid = self.resolve_gpu(name_or_id)
        return self._row("gpu", self.gpus, self._gpu_index, gid)

    def llm(self, name_or_id: str) -> dict[str, Any]:
        """All columns of one LLM row."""
        lid = self.resolve_llm(name_or_id)
        return self._row("llm", self.llms, self._llm_index, lid)

    def region(self, name_or_id: str) -> dict[str, Any]:
        """All columns of one grid-carbon region row."""
        rid = self.resolve_region(name_or_id)
        return self.regions.row(self._region_index.rows[rid], named=True)

    def pue_for(self, scope: str) -> float:
        """PUE of a scope (``aws``, ``gcp:europe-west1``, ``on-premise``); else UnknownIdError."""
        scopes = self.pue["scope"].to_list()
        key = normalize_name(scope)
        for s, value in zip(scopes, self.pue["pue"].to_list(), strict=True):
            if normalize_name(s) == key:
                return float(value)
        raise unknown_id_error("PUE scope", scope, [], scopes, "use one of the scopes in pue.csv")


@dataclass
class _Table:
    """Rows of one catalog after overlaying, with where each row came from."""

    schema: Schema
    rows: list[Row] = field(default_factory=list)
    origin: list[tuple[Path, int]] = field(default_factory=list)

    def add(self, rows: list[Row], lines: list[int], path: Path, problems: list[str]) -> None:
        """Append rows from one file; a repeated id within the file is a problem, across files
        the later file (the user overlay) replaces the earlier row."""
        rows = known_spelling(rows, self.rows, "architecture")  # a user's hopper is Hopper
        id_col = self.schema.id_column
        position = {r[id_col]: i for i, r in enumerate(self.rows) if r[id_col] is not None}
        seen_here: dict[str, int] = {}
        for row, line in zip(rows, lines, strict=True):
            rid = row[id_col]
            if rid is None:
                continue
            if rid in seen_here:
                problems.append(
                    problem(
                        path,
                        line,
                        id_col,
                        f"duplicate id '{rid}' (also row {seen_here[rid]})",
                        "keep one row per id",
                    )
                )
                continue
            seen_here[rid] = line
            if rid in position:
                self.rows[position[rid]] = row
                self.origin[position[rid]] = (path, line)
            else:
                position[rid] = len(self.rows)
                self.rows.append(row)
                self.origin.append((path, line))


def _build_index(table: _Table, kind: str, problems: list[str]) -> _Index:
    """Map every normalized id and alias to its id; two ids' names that share a key and split its
    digits alike are a problem (``opt-13b`` beside ``opt-1.3b`` is not: they name two models)."""
    id_col = table.schema.id_column
    keys: dict[str, str] = {}
    names: list[str] = []
    splits: dict[str, tuple[tuple[frozenset[int], str], ...]] = {}
    rows: dict[str, int] = {}
    owner: dict[str, tuple[tuple[Path, int], ...]] = {}
    for i, (row, (path, line)) in enumerate(zip(table.rows, table.origin, strict=True)):
        rid = row[id_col]
        rows[rid] = i
        names_of_row = [(rid, id_col)] + [(a, "aliases") for a in row.get("aliases", [])]
        names_of_row += [(a, "assumed_aliases") for a in row.get("assumed_aliases") or []]
        for name, column in names_of_row:
            key = normalize_name(name)
            if not key:
                problems.append(
                    problem(
                        path, line, column, f"name '{name}' has no letters or digits", "remove it"
                    )
                )
                continue
            names.append(name)
            mine = digit_splits(name)
            clash = [
                (rid2, at)
                for (split, rid2), at in zip(splits.get(key, ()), owner.get(key, ()), strict=True)
                if rid2 != rid and split == mine  # one spelling: both named
            ]
            if clash:
                other, (opath, oline) = clash[0]
                problems.append(
                    problem(
                        path,
                        line,
                        column,
                        f"'{name}' also names '{other}' ({opath} row {oline})",
                        "remove or rename one of them",
                    )
                )
                continue
            keys.setdefault(key, rid)
            owner[key] = (*owner.get(key, ()), (path, line))
            splits[key] = (*splits.get(key, ()), (mine, rid))
    return _Index(kind, keys, rows, tuple(names), splits)


def _read_dirs(dirs: list[Path]) -> tuple[dict[str, _Table], list[str]]:
    problems: list[str] = []
    tables = {s.file_name: _Table(s) for s in SCHEMAS}
    for directory in dirs:
        for schema in SCHEMAS:
            path = directory / schema.file_name
            if not os.path.lexists(path):
                continue
            rows, lines, found = read_table(path, schema)
            problems.extend(found)
            tables[schema.file_name].add(rows, lines, path, problems)
    return tables, problems


def _assemble(dirs: list[Path]) -> tuple[Catalog | None, list[str]]:
    tables, problems = _read_dirs(dirs)
    pue = tables[PUE_SCHEMA.file_name]
    _build_index(pue, "PUE scope", problems)
    gpu_index = _build_index(tables[GPU_SCHEMA.file_name], "gpu", problems)
    llm_index = _build_index(tables[LLM_SCHEMA.file_name], "llm", problems)
    region_index = _build_index(tables[REGION_SCHEMA.file_name], "region", problems)
    if problems:
        return None, problems
    catalog = Catalog(
        gpus=with_node_gpus(to_frame(tables[GPU_SCHEMA.file_name].rows, GPU_SCHEMA)),
        llms=to_frame(tables[LLM_SCHEMA.file_name].rows, LLM_SCHEMA),
        regions=to_frame(tables[REGION_SCHEMA.file_name].rows, REGION_SCHEMA),
        pue=to_frame(pue.rows, PUE_SCHEMA),
        _gpu_index=gpu_index,
        _llm_index=llm_index,
        _region_index=region_index,
        user_dir=str(dirs[1]) if len(dirs) > 1 else None,
        fingerprint=catalog_fingerprint(dirs, (s.file_name for s in SCHEMAS)),
    )
    return catalog, []


def validate_dir(directory: Path) -> list[str]:
    """All problems of the catalog files in *directory* (empty list when valid)."""
    if not directory.is_dir():
        return [problem(directory, None, None, "not a directory", "give a catalog directory")]
    if not any((directory / s.file_name).is_file() for s in SCHEMAS):
        names = ", ".join(s.file_name for s in SCHEMAS)
        return [problem(directory, None, None, "no catalog files found", f"add one of: {names}")]
    return _assemble([directory])[1]


_CACHE: dict[tuple[Any, ...], Catalog] = {}


def _stamp(dirs: list[Path]) -> tuple[Any, ...]:
    out: list[Any] = []
    for directory in dirs:
        for schema in SCHEMAS:
            path = directory / schema.file_name
            st = path.stat() if path.is_file() else None
            out.append((str(path), st.st_mtime_ns if st else None, st.st_size if st else None))
    return tuple(out)


def load_catalog(user_dir: Path | None = None, *, catalog_dir: Path | None = None) -> Catalog:
    """The bundled catalogs (or *catalog_dir*) plus the user overlay, validated and cached.

    The overlay is *user_dir*, else ``$WATTGPU_USER_CATALOG``, else none. The cache is keyed by
    the files' paths, sizes and modification times, so edits are picked up.
    """
    base = (catalog_dir or catalogs_dir()).resolve()
    missing = [s.file_name for s in SCHEMAS if not (base / s.file_name).is_file()]
    if missing:  # the base catalogs are whole: a missing table is never read as empty
        what = "is not a directory" if not base.is_dir() else f"has no {', '.join(missing)}"
        raise CatalogError(
            f"{base}: the catalog directory {what}; fix: give a directory holding "
            f"{', '.join(s.file_name for s in SCHEMAS)} (the bundled catalogs/ has them)"
        )
    dirs = [base]
    overlay = user_catalog_dir(user_dir)
    if overlay is not None:
        if overlay.exists() and not overlay.is_dir():
            raise CatalogError(
                f"{overlay}: is a file, not a user catalog directory; fix: give the directory "
                f"holding it ({overlay.parent})"
            )
        if not overlay.is_dir():
            raise CatalogError(
                f"{overlay}: user catalog directory does not exist; fix: create it, pass an "
                f"existing --user-catalog or unset ${USER_CATALOG_ENV}"
            )
        dirs.append(overlay.resolve())
    protect_inputs(d / s.file_name for d in dirs for s in SCHEMAS)
    key = _stamp(dirs)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    catalog, problems = _assemble(dirs)
    if catalog is None:
        raise CatalogError("\n".join(problems))
    _CACHE[key] = catalog
    return catalog
