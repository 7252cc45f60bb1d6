"""Discover measurement files, run the adapters, resolve names, apply quality rules.

:func:`load_measurements` finds every supported format under a data directory -- by the shared
layout's folder names and by sniffing CSV headers, so a Watt Counts CSV anywhere is picked up --
runs the adapters, resolves model/GPU names through the catalog and returns a
:class:`MeasurementSet`.

Files that no format recognises are left alone (data folders hold READMEs, licences and score
tables) -- except a ``.csv`` inside an Argonne folder (one named ``argonne-llm-inference-bench`` or
one holding recognised Argonne CSVs): every CSV there is a table of that source, so one that is
not recognised raises :class:`DataError` naming the file and the expected header, as the other
file-level problems do (a whole file cannot be counted as dropped rows). Headers may start with a
UTF-8 byte-order mark.

Name resolution: GPU = the first of the adapter's ``gpu_hint`` candidates ("|"-separated, the
variant the source documents) and then ``gpu_raw`` that the catalog resolves; model = the
adapter's ``model`` (equal to ``model_raw`` except where an adapter documents a mapping), then
``model_raw``. Precision ``"auto"`` (the model's default dtype as vLLM loads it) becomes the
catalog's ``default_dtype`` (fp32 -> fp16, as vLLM does). Rows that do not resolve stay in
``all_rows`` and are listed in ``unresolved`` -- never dropped silently.

Quality rules (:data:`RULES`, in this order; the first that applies is the row's ``drop_reason``):

0. ``unreadable: <file> <line>: <problem>``: a line its adapter could not read
   (:func:`predictors.measurements.schema.unreadable_row`; one bad line never stops the others);
1. ``unresolved gpu`` / ``unresolved model``: the name is not in the catalog;
2. ``non-finite measured value``: itl_s, power_w_per_gpu, ttft_s or output_throughput_tok_s
   is NaN or infinite (a ``nan``/``inf``/``1e400`` cell in any source);
3. ``non-positive itl or power`` / ``non-positive ttft``: itl_s or power_w_per_gpu <= 0, then
   ttft_s <= 0 (a row is dropped whole: training drops no row a summary counts as usable);
4. ``non-finite size`` / ``non-positive size`` / ``size above …``: batch_size, input/output
   tokens or throughput NaN or infinite; gpu_count or a stated parallel degree < 1, or a size
   <= 0; more than 10 M tokens or 1 M sequences;
5. ``itl below 0.1 ms`` / ``ttft below 0.1 ms``: itl_s, then ttft_s < 1e-4 s (faster than any
   GPU can stream weights; a first token takes at least one forward pass);
6. ``power above 1.5 x TDP``: power_w_per_gpu > 1.5 x the catalog TDP;
7. ``power below 0.5 x idle``: a serving GPU draws at least its idle power (wrong units);
7a. ``itl above the slowest step`` / ``batch above 10 x GPU memory`` / ``ttft above 10 x the
   batch's service``: a latency in ms read as s, a TTFT typed far too large
   (:mod:`predictors.measurements.unit_rules`);
8. ``doubtful: <reason>``: rows the source notes flag (Argonne Fig_10 power, llama.cpp with
   batch > 1, MI300X power from 1-2 samples) -- excluded unless ``include_doubtful=True``;
9. ``no target``: power, ITL, TTFT and throughput all empty.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from predictors.catalog.quantised import checkpoint_precision
from predictors.core.errors import DataError
from predictors.measurements import unit_rules
from predictors.measurements.aiconfigurator import read_aiconfigurator
from predictors.measurements.amd_mi300x import read_amd_mi300x
from predictors.measurements.argonne import read_argonne
from predictors.measurements.discovery import SourceFile, discover
from predictors.measurements.layouts import read_layouts
from predictors.measurements.mlenergy_v1 import read_mlenergy_v1
from predictors.measurements.mlenergy_v2 import read_mlenergy_v2
from predictors.measurements.mlenergy_v3 import read_mlenergy_v3
from predictors.measurements.schema import LAYOUT_COLUMNS, SCHEMA, UNREADABLE, empty_frame
from predictors.measurements.watt_counts import read_watt_counts

ADAPTERS: dict[str, Callable[[Path], pl.DataFrame]] = {
    "mlenergy_v1": read_mlenergy_v1,
    "mlenergy_v2": read_mlenergy_v2,
    "mlenergy_v3": read_mlenergy_v3,
    "argonne": read_argonne,
    "aiconfigurator": read_aiconfigurator,
    "amd_mi300x": read_amd_mi300x,
    "watt_counts": read_watt_counts,
}

RULES: tuple[str, ...] = (
    "unreadable: <file> <line>: <problem>: a source line its adapter could not read (a cell "
    "that is not a number, a zero count, an unknown engine); the other lines are read",
    "unresolved gpu / unresolved model: name not in the catalog (listed, not used)",
    "non-finite measured value: itl_s, power_w_per_gpu, ttft_s or output_throughput_tok_s is "
    "NaN or infinite",
    "non-positive itl or power / non-positive ttft: itl_s or power_w_per_gpu <= 0 / ttft_s <= 0",
    "non-finite size: batch_size, input_tokens, output_tokens or output_throughput_tok_s is "
    "NaN or infinite",
    "non-positive size: gpu_count or a stated parallel degree < 1, or batch_size, input_tokens, "
    "output_tokens or output_throughput_tok_s <= 0",
    "size above 10,000,000 tokens or 1,000,000 sequences: input_tokens or output_tokens above "
    "10 M, batch_size above 1 M",
    "itl below 0.1 ms / ttft below 0.1 ms: itl_s / ttft_s < 1e-4 s (one forward pass)",
    "power above 1.5 x TDP: power_w_per_gpu > 1.5 x catalog tdp_w",
    "power below 0.5 x idle: power_w_per_gpu < 0.5 x catalog idle_power_w (wrong units)",
    *unit_rules.RULES,
    "doubtful: <reason>: flagged by the source notes; excluded unless include_doubtful",
    "no target: power, itl, ttft and throughput all empty",
)
MIN_ITL_S = 1e-4
#: Sizes no measured run reaches: prompt or output tokens, and concurrent sequences.
MAX_TOKENS = 10_000_000
MAX_SEQUENCES = 1_000_000
#: The measured columns that must be finite when present.
MEASURED = ("power_w_per_gpu", "itl_s", "ttft_s", "output_throughput_tok_s")
MAX_POWER_TDP_RATIO = 1.5
#: A GPU serving draws at least its idle power: below half of it, the value's units are wrong
#: (W read as mW, a per-node figure divided too often).
MIN_POWER_IDLE_RATIO = 0.5


class Resolver(Protocol):
    """The part of :class:`predictors.catalog.store.Catalog` this module uses."""

    def try_resolve_gpu(self, name: str) -> str | None:
        """Catalog GPU id of *name* (id or alias); None when it is not in the catalog."""

    def try_resolve_llm(self, name: str) -> str | None:
        """Catalog LLM id of *name* (id or alias); None when it is not in the catalog."""

    def gpu(self, name_or_id: str) -> dict[str, Any]:
        """Catalog row of a GPU (``tdp_w``, ``memory_gb`` ... as in ``catalogs/gpus.csv``)."""

    def llm(self, name_or_id: str) -> dict[str, Any]:
        """Catalog row of an LLM (architecture facts as in ``catalogs/llms.csv``)."""


@dataclass(frozen=True)
class MeasurementSet:
    """Measurements after resolution and quality rules.

    ``table``: usable rows (catalog ids in ``model``/``gpu``), canonical columns.
    ``all_rows``: every row read, with ``drop_reason`` (null for usable rows).
    ``unresolved``: ``source, kind (gpu|model), name, rows``.
    ``dropped``: ``reason, rows``.
    """

    table: pl.DataFrame
    all_rows: pl.DataFrame
    unresolved: pl.DataFrame
    dropped: pl.DataFrame
    sources: tuple[SourceFile, ...] = ()


def read_all(sources: list[SourceFile]) -> pl.DataFrame:
    """Run the adapters and stack their tables (canonical schema)."""
    frames = [ADAPTERS[s.format](s.path) for s in sources]
    frames = [f for f in frames if f.height]
    return pl.concat(frames) if frames else empty_frame()


def _resolve_gpu(cat: Resolver, hint: str | None, raw: str) -> str | None:
    for cand in [*(hint.split("|") if hint else []), raw]:
        got = cat.try_resolve_gpu(cand)
        if got is not None:
            return got
    return None


def _precision(cat: Resolver, model_id: str | None, prec: str) -> str:
    if prec != "auto" or model_id is None:
        return prec
    return checkpoint_precision(cat, model_id)


def _spec(cat: Resolver, gpu_id: str | None, column: str) -> float | None:
    if gpu_id is None:
        return None
    v = cat.gpu(gpu_id).get(column)
    return float(v) if v not in (None, "") else None


def apply_rules(
    raw: pl.DataFrame, cat: Resolver, *, include_doubtful: bool = False
) -> pl.DataFrame:
    """Resolve ids and add ``drop_reason`` (and ``tdp_w``) to every row; see the module doc."""
    pairs = raw.select("gpu_hint", "gpu_raw").unique().rows()
    gpu_map = {(h, r): _resolve_gpu(cat, h, r) for h, r in pairs}
    mpairs = raw.select("model", "model_raw").unique().rows()
    model_map = {
        (m, r): cat.try_resolve_llm(m) or (cat.try_resolve_llm(r) if r != m else None)
        for m, r in mpairs
    }
    gpu_ids = [gpu_map[(h, r)] for h, r in zip(raw["gpu_hint"], raw["gpu_raw"], strict=True)]
    model_ids = [model_map[(m, r)] for m, r in zip(raw["model"], raw["model_raw"], strict=True)]
    precisions = [_precision(cat, m, p) for m, p in zip(model_ids, raw["precision"], strict=True)]
    tdp_map = {g: _spec(cat, g, "tdp_w") for g in set(gpu_ids)}
    idle_map = {g: _spec(cat, g, "idle_power_w") for g in set(gpu_ids)}
    df = raw.with_columns(
        pl.Series("gpu_id", gpu_ids, dtype=pl.String),
        pl.Series("model_id", model_ids, dtype=pl.String),
        pl.Series("precision", precisions, dtype=pl.String),
        pl.Series("tdp_w", [tdp_map[g] for g in gpu_ids], dtype=pl.Float64),
        pl.Series("_idle_w", [idle_map[g] for g in gpu_ids], dtype=pl.Float64),
    )
    facts = unit_rules.facts(cat, model_ids, gpu_ids)
    df = df.drop([f.name for f in facts if f.name in df.columns]).with_columns(facts)
    sizes = ("batch_size", "input_tokens", "output_tokens", "output_throughput_tok_s")
    too_small = [pl.col(c) <= 0 for c in sizes if c in raw.columns]
    if "gpu_count" in raw.columns:
        too_small.append(pl.col("gpu_count") < 1)
    too_small += [pl.col(c) < 1 for c in LAYOUT_COLUMNS if c in raw.columns]
    non_positive_size = pl.any_horizontal(pl.lit(False), *too_small)
    # NaN is neither above nor below 0 here: a NaN or infinite size is its own reason
    non_finite_size = pl.any_horizontal(
        pl.lit(False),
        *((pl.col(c).is_nan() | pl.col(c).is_infinite()) for c in sizes if c in raw.columns),
    )
    implausible = pl.any_horizontal(
        pl.lit(False),
        *(pl.col(c) > MAX_TOKENS for c in ("input_tokens", "output_tokens") if c in raw.columns),
        *(pl.col(c) > MAX_SEQUENCES for c in ("batch_size",) if c in raw.columns),
    )
    itl, pw, ttft = pl.col("itl_s"), pl.col("power_w_per_gpu"), pl.col("ttft_s")
    doubtful = pl.col("quality").str.starts_with("doubtful")
    no_target = pl.all_horizontal(pl.col(c).is_null() for c in MEASURED)
    # NaN compares above every number in polars: test it first, or NaN power reads "above TDP"
    non_finite = pl.any_horizontal(pl.col(c).is_nan() | pl.col(c).is_infinite() for c in MEASURED)
    reason = (
        pl.when(pl.col("quality").str.starts_with(UNREADABLE))
        .then(pl.col("quality"))
        .when(pl.col("gpu_id").is_null())
        .then(pl.lit("unresolved gpu"))
        .when(pl.col("model_id").is_null())
        .then(pl.lit("unresolved model"))
        .when(non_finite)
        .then(pl.lit("non-finite measured value"))
        .when((itl <= 0) | (pw <= 0))
        .then(pl.lit("non-positive itl or power"))
        .when(ttft <= 0)
        .then(pl.lit("non-positive ttft"))
        .when(non_finite_size)
        .then(pl.lit("non-finite size"))
        .when(non_positive_size)
        .then(pl.lit("non-positive size"))
        .when(implausible)
        .then(pl.lit(f"size above {MAX_TOKENS:,} tokens or {MAX_SEQUENCES:,} sequences"))
        .when(itl < MIN_ITL_S)
        .then(pl.lit("itl below 0.1 ms"))
        .when(ttft < MIN_ITL_S)  # a first token takes a forward pass: no faster than a step
        .then(pl.lit("ttft below 0.1 ms"))
        .when(pw > MAX_POWER_TDP_RATIO * pl.col("tdp_w"))
        .then(pl.lit("power above 1.5 x TDP"))
        .when(pw < MIN_POWER_IDLE_RATIO * pl.col("_idle_w"))
        .then(pl.lit("power below 0.5 x idle"))
        .otherwise(
            unit_rules.reasons(
                pl.when(doubtful & pl.lit(not include_doubtful))
                .then(pl.col("quality"))
                .when(no_target)
                .then(pl.lit("no target"))
                .otherwise(pl.lit(None, dtype=pl.String)),
                df.columns,
            )
        )
    )
    df = df.with_columns(reason.alias("drop_reason"))
    return df.with_columns(
        pl.coalesce("model_id", "model_raw").alias("model"),
        pl.coalesce("gpu_id", "gpu_raw").alias("gpu"),
    ).drop("gpu_id", "model_id", "_idle_w", *unit_rules.FACTS)


_LINE = re.compile(rf"^{UNREADABLE}(?P<file>.+?) line (?P<line>\d+): (?P<problem>.*)$")


def _line_ranges(reasons: list[str]) -> list[str]:
    """*reasons* where the unreadable lines of one file with one problem share one reason
    naming their lines (``unreadable: f.csv lines 75-78, 81: no Hardware or Framework cell``),
    so the summary counts them together."""
    lines: dict[tuple[str, str], list[int]] = {}
    for r in reasons:
        m = _LINE.match(r)
        if m:
            lines.setdefault((m["file"], m["problem"]), []).append(int(m["line"]))
    joined: dict[tuple[str, str], str] = {}
    for (file, problem), numbers in lines.items():
        spans: list[list[int]] = []
        for n in sorted(set(numbers)):
            if spans and n == spans[-1][1] + 1:
                spans[-1][1] = n
            else:
                spans.append([n, n])
        text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)
        word = "line" if len(numbers) == 1 else "lines"
        joined[(file, problem)] = f"{UNREADABLE}{file} {word} {text}: {problem}"
    out = []
    for r in reasons:
        m = _LINE.match(r)
        out.append(joined[(m["file"], m["problem"])] if m else r)
    return out


#: Sources whose file names repeat across folders (ML.ENERGY v2's run files are named by batch
#: and parallel layout alone): their unreadable reasons name the file by its path relative to
#: the data directory, not by its base name.
NAMED_BY_PATH = frozenset({"mlenergy-v2"})


def _named_by_path(raw: pl.DataFrame) -> pl.DataFrame:
    """*raw* (``file`` relative to the data directory) with the unreadable reasons of
    :data:`NAMED_BY_PATH` sources naming the file's relative path instead of its base name."""
    named = pl.lit(UNREADABLE) + pl.col("file").str.extract(r"([^/\\]+)$", 1)
    hit = pl.col("source").is_in(sorted(NAMED_BY_PATH)) & pl.col("quality").str.starts_with(
        UNREADABLE
    )
    hit = hit & pl.col("quality").str.starts_with(named).fill_null(False)
    return raw.with_columns(
        pl.when(hit)
        .then(pl.lit(UNREADABLE) + pl.col("file") + pl.col("quality").str.strip_prefix(named))
        .otherwise(pl.col("quality"))
        .alias("quality")
    )


def _unresolved(df: pl.DataFrame) -> pl.DataFrame:
    gpu = df.filter(pl.col("drop_reason") == "unresolved gpu").group_by("source", "gpu_raw").len()
    mod = (
        df.filter(pl.col("drop_reason") == "unresolved model").group_by("source", "model_raw").len()
    )
    out = pl.concat(
        [
            gpu.select(
                "source", pl.lit("gpu").alias("kind"), pl.col("gpu_raw").alias("name"), "len"
            ),
            mod.select(
                "source", pl.lit("model").alias("kind"), pl.col("model_raw").alias("name"), "len"
            ),
        ]
    )
    return (
        out.rename({"len": "rows"})
        .with_columns(pl.col("rows").cast(pl.Int64))
        .sort("source", "kind", "name")
    )


def load_measurements(
    data_dir: Path, catalog: Resolver | None = None, *, include_doubtful: bool = False
) -> MeasurementSet:
    """Read, resolve and filter every measurement under *data_dir* (see the module doc)."""
    if catalog is None:
        from predictors.catalog.store import load_catalog

        catalog = load_catalog()
    sources = discover(data_dir)
    if not sources:
        raise DataError(f"{data_dir}: no measurement files of a known format found")
    raw = read_all(sources).with_row_index("_order")
    # provenance relative to the data directory, so that the table (and the training-data hash
    # in the model card) does not depend on where the data lies or how its path was spelled
    root = str(data_dir).rstrip("/\\") + "/"
    raw = _named_by_path(raw.with_columns(pl.col("file").str.strip_prefix(root)))
    all_rows = apply_rules(raw, catalog, include_doubtful=include_doubtful)
    all_rows = read_layouts(all_rows, catalog)
    all_rows = all_rows.sort("source", "file", "_order").drop("_order")
    table = all_rows.filter(pl.col("drop_reason").is_null()).select(list(SCHEMA))
    reasons = all_rows.filter(pl.col("drop_reason").is_not_null())["drop_reason"].to_list()
    dropped = (
        pl.DataFrame({"reason": _line_ranges(reasons)}, schema={"reason": pl.String})
        .group_by("reason")
        .len()
        .rename({"len": "rows"})
        .with_columns(pl.col("rows").cast(pl.Int64))
        .sort("rows", "reason", descending=[True, False])
    )
    unresolved = _unresolved(all_rows)
    suggest = getattr(catalog, "suggest", None)
    if suggest is not None:  # the catalog's nearest names, as predict and catalog show give
        hints = [
            suggest("gpu" if k == "gpu" else "llm", n)
            .strip()
            .removeprefix("(did you mean: ")
            .removesuffix("?)")
            for k, n in unresolved.select("kind", "name").rows()
        ]
        unresolved = unresolved.with_columns(pl.Series("did_you_mean", hints, dtype=pl.String))
    return MeasurementSet(
        table=table,
        all_rows=all_rows,
        unresolved=unresolved,
        dropped=dropped,
        sources=tuple(sources),
    )
