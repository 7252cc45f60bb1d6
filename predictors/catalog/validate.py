"""Catalog schemas and validation: CSV text -> typed rows, one message per problem.

Each catalog file has a fixed schema (:data:`GPU_SCHEMA`, :data:`LLM_SCHEMA`, :data:`REGION_SCHEMA`,
:data:`PUE_SCHEMA`). :func:`read_table` reads a file as text with polars, converts every cell to
its declared type, applies the value rules of its column and the cross-field rules of its table,
and returns the typed rows together with every problem found. A problem is one line:
``<file> row <n>, column <col>: <what is wrong>; fix: <how>`` where row 1 is the header line.
Nothing here raises on bad data; :mod:`predictors.catalog.store` collects the problems and raises
one
:class:`~predictors.core.errors.CatalogError` listing them all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

from predictors.catalog.header_rules import header_problems
from predictors.catalog.kv_layers import kv_layer_rules
from predictors.catalog.row_rules import GPU_RANGES, Row, gpu_rules, grid_rules, llm_rules
from predictors.core.csv_text import (
    CONTROL_PATTERN,
    control_in_names,
    csv_head_problem,
    duplicate_csv_columns,
    longer_record,
)
from predictors.core.errors import did_you_mean
from predictors.core.ragged import needs_line_reader, read_whole_or_problem
from predictors.core.safe_read import MAX_CATALOG_BYTES, file_size_problem
from predictors.core.vocab import PRECISIONS

Kind = Literal["str", "int", "float", "bool", "list"]
#: The latest GPU release year a catalog row may give (announced parts are a few years ahead).
LATEST_RELEASE_YEAR = 2040

#: Polars dtype per column kind (the explicit schema of every catalog frame).
POLARS_TYPES: dict[str, pl.DataType] = {
    "str": pl.Utf8(),
    "int": pl.Int64(),
    "float": pl.Float64(),
    "bool": pl.Boolean(),
    "list": pl.List(pl.Utf8()),
}


@dataclass(frozen=True)
class Column:
    """One catalog column: its type, whether a value is required, and its value rule."""

    name: str
    kind: Kind
    required: bool = False
    #: Values must be > this (``positive``) or >= this (``at_least``).
    positive: bool = False
    at_least: float | None = None
    enum: frozenset[str] | None = None
    at_most: float | None = None


@dataclass(frozen=True)
class Schema:
    """A catalog file: its name, id column and columns, plus cross-field rules."""

    file_name: str
    id_column: str
    columns: tuple[Column, ...]
    rules: tuple[Callable[[Row], list[tuple[str, str, str]]], ...] = field(default=())

    @property
    def names(self) -> list[str]:
        """Column names of the file, in schema order."""
        return [c.name for c in self.columns]


def _s(name: str, required: bool = False, enum: set[str] | None = None) -> Column:
    return Column(name, "str", required, enum=frozenset(enum) if enum else None)


def _f(name: str, required: bool = False, at_least: float | None = None) -> Column:
    return Column(name, "float", required, positive=at_least is None, at_least=at_least)


def _i(name: str, required: bool = False, at_least: float | None = None) -> Column:
    return Column(name, "int", required, positive=at_least is None, at_least=at_least)


VENDORS = {"NVIDIA", "AMD", "Intel", "Google", "Amazon", "Huawei", "SambaNova", "Qualcomm", "other"}
FORM_FACTORS = {"PCIe", "SXM2", "SXM3", "SXM4", "SXM5", "SXM6", "OAM", "Superchip", "other"}
DTYPES = set(PRECISIONS)
ATTENTION_KINDS = {"full", "sliding", "hybrid", "mla"}
REGION_KINDS = {"country", "cloud", "subnational"}


GPU_SCHEMA = Schema(
    "gpus.csv",
    "id",
    (
        _s("id", True),
        Column("aliases", "list"),
        _s("vendor", True, VENDORS),
        _s("architecture", True),
        _s("form_factor", True, FORM_FACTORS),
        # a year past LATEST_RELEASE_YEAR is a typo (20255): it would widen every interval
        Column("release_year", "int", True, at_least=1990, at_most=LATEST_RELEASE_YEAR),
        _f("memory_gb", True),
        _s("memory_type"),
        _f("memory_bandwidth_gb_s", True),
        _f("tdp_w", True),
        _f("idle_power_w", True),
        _s("idle_power_source", True),
        _f("base_clock_mhz"),
        _f("boost_clock_mhz"),
        _f("fp16_tflops_dense", True),
        _f("fp8_tflops_dense"),
        _f("int8_tops_dense"),
        _f("fp4_tflops_dense"),
        _i("sm_count"),
        _f("l2_cache_mb"),
        _f("transistors_billion"),
        _f("process_nm"),
        _f("interconnect_gb_s"),
        _f("usd_per_hour"),
        _f("list_price_usd"),
        _s("source", True),
        _f("usd_per_hour_min"),
        _i("price_n_providers"),
        _s("price_providers"),
        _s("price_source"),
        _s("price_date"),
        Column("assumed_aliases", "list"),
        _f("embodied_kg_co2e"),
        _s("embodied_source"),
        _s("list_price_source"),
        _i("nvlink_domain_gpus"),
        _i("node_gpus"),
        _f("scale_out_gbit_s"),
        _f("scale_out_latency_us", at_least=0.0),
        _s("fabric_source"),
    ),
    (gpu_rules,),
)

LLM_SCHEMA = Schema(
    "llms.csv",
    "id",
    (
        _s("id", True),
        Column("aliases", "list"),
        _s("family", True),
        _s("model_type", True),
        _f("total_params_b", True),
        _f("active_params_b", True),
        _i("num_layers", True),
        _i("hidden_size", True),
        _i("num_attention_heads", True),
        _i("num_kv_heads", True),
        _i("head_dim", True),
        _i("intermediate_size"),
        _i("moe_intermediate_size"),
        _i("num_experts"),
        _i("num_experts_per_tok"),
        _i("num_shared_experts", at_least=0),
        _i("first_k_dense", at_least=0),
        _i("kv_lora_rank"),
        _i("qk_rope_head_dim"),
        _i("vocab_size", True),
        _i("max_position_embeddings"),
        _s("default_dtype", True, DTYPES),
        Column("is_moe", "bool", True),
        _s("attention_kind", True, ATTENTION_KINDS),
        _i("sliding_window"),
        Column("tie_word_embeddings", "bool", True),
        _s("source", True),
        _i("full_attention_layers", at_least=0),
        _i("window_attention_layers", at_least=0),
        _i("state_bytes_per_sequence", at_least=0),
    ),
    (llm_rules, kv_layer_rules),
)

REGION_SCHEMA = Schema(
    "grid_carbon.csv",
    "region_id",
    (
        _s("region_id", True),
        Column("aliases", "list"),
        _s("kind", True, REGION_KINDS),
        _s("name", True),
        _f("g_co2_per_kwh", True, 0.0),
        _i("year", at_least=1990),
        _s("source", True),
    ),
    (grid_rules,),
)

PUE_SCHEMA = Schema(
    "pue.csv", "scope", (_s("scope", True), _f("pue", True, 1.0), _s("source", True))
)

SCHEMAS = (GPU_SCHEMA, LLM_SCHEMA, REGION_SCHEMA, PUE_SCHEMA)


#: Largest integer a catalog cell may hold: exact as a float and within the Int64 columns.
MAX_CATALOG_INT = 2**53


def problem(path: Path | str, line: int | None, column: str | None, what: str, fix: str) -> str:
    """Format one validation problem as a single line."""
    where = str(path)
    if line is not None:
        where += f" row {line}"
    if column is not None:
        where += f", column '{column}'"
    return f"{where}: {what}; fix: {fix}"


def _convert(col: Column, raw: str) -> tuple[Any, str | None]:
    """Convert one non-empty cell; return (value, None) or (None, error text)."""
    if col.kind == "str":
        if col.enum is not None and raw not in col.enum:
            same = [v for v in col.enum if v.lower() == raw.strip().lower()]  # nvidia: NVIDIA
            if len(same) == 1:
                return same[0], None
            hint = did_you_mean(raw, col.enum)
            return None, f"unknown value '{raw}'{hint} (allowed: {', '.join(sorted(col.enum))})"
        return raw, None
    if col.kind == "list":
        return [a.strip() for a in raw.split("|") if a.strip()], None
    if col.kind == "bool":
        low = raw.strip().lower()
        if low in ("true", "false"):
            return low == "true", None
        return None, f"'{raw}' is not true/false"
    try:  # Python reads '3_350' and non-ASCII digits; a catalog, like '3,350', does not
        if "_" in raw or not raw.isascii():
            raise ValueError(raw)
        num: float = int(raw) if col.kind == "int" else float(raw) + 0.0  # -0 is 0
    except ValueError:
        word = "an integer" if col.kind == "int" else "a number"
        return None, f"'{raw}' is not {word}"
    if not math.isfinite(num):
        return None, f"'{raw}' is not a finite number"
    if col.kind == "int" and abs(num) > MAX_CATALOG_INT:
        return None, f"{raw} is too large for an integer field (at most {MAX_CATALOG_INT:,})"
    if col.positive and num <= 0:
        return None, f"{raw} must be greater than zero"
    if col.at_least is not None and num < col.at_least:
        return None, f"{raw} must be at least {col.at_least:g}"
    if col.at_most is not None and num > col.at_most:
        return None, f"{raw} must be at most {col.at_most:g} (a typo?)"
    return num, None


#: A bidirectional override or isolate (U+202A to U+202E, U+2066 to U+2069): an id holding one
#: reads as another, and a plan naming it is refused (:mod:`planner.documents.verify_text`).
BIDI_PATTERN = "[\u202a-\u202e\u2066-\u2069]"
#: What no catalog cell may hold (Python's and polars' regular expression).
_REFUSED = f"{CONTROL_PATTERN}|{BIDI_PATTERN}"


def _refused_char(cell: str) -> str:
    """``holds a control character (U+0007)`` (or a bidirectional override) for *cell*."""
    found = re.search(_REFUSED, cell)
    point = ord(found.group()) if found else 0
    kind = "a bidirectional override" if point > 0x9F else "a control character"
    return f"holds {kind} (U+{point:04X})"


def _control_cells(path: Path, text: pl.DataFrame) -> tuple[set[tuple[int, str]], list[str]]:
    """The cells of *text* (row index, column) holding a control character or a bidirectional
    override, found by one vectorised scan per column, and a problem for each."""
    cells: list[tuple[int, str, str]] = []
    any_hit = text.select(pl.all().str.contains(_REFUSED).any()).row(0, named=True)
    for name in [name for name, hit in any_hit.items() if hit]:
        column = text.get_column(name)
        found = column.str.contains(_REFUSED).fill_null(False).arg_true()
        cells += [(i, name, _refused_char(column[i])) for i in found.to_list()]
    cells.sort(key=lambda cell: (cell[0], text.columns.index(cell[1])))
    return {(i, name) for i, name, _ in cells}, [
        problem(path, i + 2, name, what, "remove it") for i, name, what in cells
    ]


def _read_text(path: Path) -> pl.DataFrame | str:
    """Catalog file *path* as text columns, or the one problem that stops reading it: not a
    regular file or too large, UTF-16 or bare CR line ends, malformed CSV, a control character
    in the header."""
    too_big = file_size_problem(path, MAX_CATALOG_BYTES)
    if too_big is not None:
        what, _, fix = too_big.partition(" — ")
        return problem(path, None, None, what, fix or "give a regular file")
    not_text = csv_head_problem(path)  # UTF-16 or bare CR line ends: one problem, not garble
    if not_text is not None:
        return problem(path, None, None, not_text.what, not_text.fix)
    twice = duplicate_csv_columns(path)
    if twice:  # polars would read the first and rename the others NAME_duplicated_N
        return problem(
            path, 1, twice[0], "appears more than once in the header", "keep one column of it"
        )
    if needs_line_reader(path):  # a quote or a header that is not UTF-8: as Python's csv reads
        read = read_whole_or_problem(path)
        if isinstance(read, tuple):
            what, _, fix = read[1].partition("; ")
            return problem(path, read[0], None, what, fix or "save it as UTF-8 CSV")
        text = read
    else:
        polars_read = _polars_text(path)
        if isinstance(polars_read, str):
            return polars_read
        text = polars_read
    bad_name = control_in_names(text.columns)
    if bad_name is not None:
        return problem(path, 1, None, bad_name.what, bad_name.fix)
    return text


def _polars_text(path: Path) -> pl.DataFrame | str:
    """Catalog file *path* as text columns read by polars, or its one problem."""
    try:
        return pl.read_csv(path, infer_schema=False, truncate_ragged_lines=False)
    except Exception as exc:  # polars raises several error types for malformed CSV
        longer = longer_record(path) if "more fields" in str(exc) else None
        if longer is not None:
            return problem(
                path,
                longer[0],
                None,
                f"{longer[1]} fields for the header's {longer[2]} columns (an unquoted comma?)",
                'remove the extra fields or quote a cell that holds a comma ("a, b")',
            )
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return problem(
            path,
            None,
            None,
            f"not a readable CSV ({first})",
            "save it as comma-separated UTF-8 with one header line",
        )


def read_table(path: Path, schema: Schema) -> tuple[list[Row], list[int], list[str]]:
    """Read and check one catalog file: (typed rows, their row numbers, problems)."""
    text = _read_text(path)
    if isinstance(text, str):
        return [], [], [text]
    hits, problems = _control_cells(path, text)
    required = [c.name for c in schema.columns if c.required]
    problems.extend(header_problems(path, text.columns, schema.names, required, problem))
    rows: list[Row] = []
    lines: list[int] = []
    for index, raw_row in enumerate(text.iter_rows(named=True)):
        line = index + 2
        if all(not (v or "").strip() for v in raw_row.values()):
            continue  # a blank line (an editor's trailing newline) is no row, as for csv
        row: Row = {}
        bad: set[str] = set()  # columns whose cell is reported: no cross-field echo of them
        for col in schema.columns:
            raw = raw_row.get(col.name)
            raw = raw.strip() if isinstance(raw, str) else None
            if hits and (index, col.name) in hits:  # reported by _control_cells
                row[col.name] = [] if col.kind == "list" else None
                continue
            if not raw:
                row[col.name] = [] if col.kind == "list" else None
                if col.required and col.name in text.columns:
                    problems.append(
                        problem(
                            path, line, col.name, "value is empty", f"fill {col.name} (required)"
                        )
                    )
                continue
            value, error = _convert(col, raw)
            if error is not None:
                fix = "use one of the allowed values" if col.enum else f"correct {col.name}"
                if col.name in GPU_RANGES and error.endswith("is not a number"):
                    fix = f"{GPU_RANGES[col.name][3]}, a plain number without its unit"
                problems.append(problem(path, line, col.name, error, fix))
                bad.add(col.name)
            row[col.name] = value
        for rule in schema.rules:
            for column, what, fix in rule(row):
                if column not in bad:
                    problems.append(problem(path, line, column, what, fix))
        rows.append(row)
        lines.append(line)
    return rows, lines, problems


def to_frame(rows: list[Row], schema: Schema) -> pl.DataFrame:
    """Typed rows -> a polars frame with the schema's explicit dtypes."""
    data = {c.name: [r.get(c.name) for r in rows] for c in schema.columns}
    return pl.DataFrame(data, schema={c.name: POLARS_TYPES[c.kind] for c in schema.columns})
