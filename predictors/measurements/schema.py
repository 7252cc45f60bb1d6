"""The canonical measurement table every adapter returns, and :func:`conform` to enforce it.

Columns (units in the names; see ``../shared/DESIGN.md``):

``source, model, gpu, gpu_count, engine, precision, batch_size, arrival_rate_rps, input_tokens,
output_tokens, power_w_per_gpu, itl_s, ttft_s, output_throughput_tok_s, itl_includes_prefill,
quality`` plus the extras ``model_raw, gpu_raw, file`` and the adapter extras ``gpu_hint`` (a more
specific GPU name the source documents, tried before ``gpu_raw`` when resolving), ``task``,
``input_tokens_assumed`` (True when the input length is a documented assumption rather than a
measured value) and ``note`` (free text: KV-cache dtype, engine version, ...), then the measured
parallel layout :data:`LAYOUT_COLUMNS` (``tensor_parallel``, ``pipeline_parallel``,
``data_parallel``, ``expert_parallel``; null where a source does not state one or the row is not
one replica, e.g. disaggregated serving; ``gpu_count = TP × PP × DP``; docs/data.md states how
each source's fields are read), then ``disaggregated`` (True for a run of a disaggregated
prefill/decode unit, whose ``gpu_count`` is the sum over both pools; False otherwise) and
the decode pool of a disaggregated run :data:`DECODE_COLUMNS` (``decode_workers``,
``decode_tensor_parallel``, ``decode_pipeline_parallel``, ``decode_data_parallel``,
``decode_expert_parallel``, ``decode_workers_stated``; null elsewhere).

``batch_size`` is the mean number of concurrent sequences; ``arrival_rate_rps`` is null for offline
(saturated) runs. ``quality`` is ``"ok"``, ``"doubtful: <reason>"`` or, for a source line its
adapter could not read, ``"unreadable: <file> <where>: <problem>"`` (:func:`unreadable_row`).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import polars as pl

from predictors.core import vocab
from predictors.core.errors import DataError

#: Canonical columns and their polars dtypes, in output order.
SCHEMA: dict[str, pl.DataType] = {
    "source": pl.String(),
    "model": pl.String(),
    "gpu": pl.String(),
    "gpu_count": pl.Int64(),
    "engine": pl.String(),
    "precision": pl.String(),
    "batch_size": pl.Float64(),
    "arrival_rate_rps": pl.Float64(),
    "input_tokens": pl.Float64(),
    "output_tokens": pl.Float64(),
    "power_w_per_gpu": pl.Float64(),
    "itl_s": pl.Float64(),
    "ttft_s": pl.Float64(),
    "output_throughput_tok_s": pl.Float64(),
    "itl_includes_prefill": pl.Boolean(),
    "quality": pl.String(),
    "model_raw": pl.String(),
    "gpu_raw": pl.String(),
    "file": pl.String(),
    "gpu_hint": pl.String(),
    "task": pl.String(),
    "input_tokens_assumed": pl.Boolean(),
    "note": pl.String(),
    "tensor_parallel": pl.Int64(),
    "pipeline_parallel": pl.Int64(),
    "data_parallel": pl.Int64(),
    "expert_parallel": pl.Int64(),
    "disaggregated": pl.Boolean(),
    "decode_workers": pl.Int64(),
    "decode_tensor_parallel": pl.Int64(),
    "decode_pipeline_parallel": pl.Int64(),
    "decode_data_parallel": pl.Int64(),
    "decode_expert_parallel": pl.Int64(),
    "decode_workers_stated": pl.Boolean(),
}
#: The measured parallel layout of a row (the columns of :data:`SCHEMA` after ``note``).
LAYOUT_COLUMNS: tuple[str, ...] = (
    "tensor_parallel",
    "pipeline_parallel",
    "data_parallel",
    "expert_parallel",
)

#: The decode pool of a disaggregated run as the source states it (the last columns of
#: :data:`SCHEMA`; null on every other row): workers, their TP, PP, attention DP and EP (null:
#: not stated), and whether the source states the worker counts (unstated: read as 1).
DECODE_COLUMNS: tuple[str, ...] = (
    "decode_workers",
    "decode_tensor_parallel",
    "decode_pipeline_parallel",
    "decode_data_parallel",
    "decode_expert_parallel",
    "decode_workers_stated",
)
#: Columns that may be null.
NULLABLE: frozenset[str] = frozenset(
    {
        "arrival_rate_rps",
        "power_w_per_gpu",
        "itl_s",
        "ttft_s",
        "output_throughput_tok_s",
        "gpu_hint",
        "task",
        "note",
        *LAYOUT_COLUMNS,
        *DECODE_COLUMNS,
    }
)

#: Adapter extras that :func:`conform` fills when an adapter leaves them out.
_EXTRA_DEFAULTS: dict[str, object] = {
    "gpu_hint": None,
    "task": None,
    "input_tokens_assumed": False,
    "note": None,
    "disaggregated": False,
} | dict.fromkeys((*LAYOUT_COLUMNS, *DECODE_COLUMNS))

#: Engines that appear in measurements: the servable ones plus two found only in data.
#: Sources whose batch is read by Little's law from their own throughput and mean ITL
#: (:func:`predictors.measurements.mlenergy_v2.running_sequences`): their throughput is
#: ``batch / ITL`` by construction, like a source whose ITL includes the prefill, so the serving
#: model's step time of their rows is the ITL itself
#: (:func:`predictors.serving.grid.measured_step_time_s`).
LITTLES_LAW_BATCH_SOURCES: frozenset[str] = frozenset({"mlenergy-v2"})


def step_time_is_itl(rows: pl.DataFrame) -> pl.Series:
    """Per measured row: whether its throughput is ``batch / ITL`` by construction (its ITL
    includes the prefill, latency / L, or its batch is a Little's-law count,
    :data:`LITTLES_LAW_BATCH_SOURCES`), so its serving step time is the ITL alone."""
    return (
        rows["itl_includes_prefill"].fill_null(False)
        | rows["source"].is_in(sorted(LITTLES_LAW_BATCH_SOURCES))
    ).alias("step_time_is_itl")


ENGINES: frozenset[str] = frozenset(vocab.ENGINES) | {"deepspeed", "sambaflow"}
#: "auto" means "the model's default dtype"; load.py replaces it from the LLM catalog.
PRECISIONS: frozenset[str] = frozenset(vocab.PRECISIONS) | {"auto"}

_ENGINE_ALIASES = {**{e: e for e in ENGINES}, **vocab.ENGINE_ALIASES}
_PRECISION_ALIASES = {**{p: p for p in PRECISIONS}, **vocab.PRECISION_ALIASES}


def normalize_engine(name: str) -> str:
    """Map an engine name as written by a source (``TensorRT-LLM``, ``trtllm``) to ours."""
    key = name.strip().lower()
    if key not in _ENGINE_ALIASES:
        raise DataError(f"unknown engine {name!r}; known: {', '.join(sorted(ENGINES))}")
    return _ENGINE_ALIASES[key]


def normalize_precision(name: str) -> str:
    """Map a precision as written by a source (``bfloat16``, ``nvfp4``, ``mxfp4``) to ours."""
    key = name.strip().lower()
    if key not in _PRECISION_ALIASES:
        raise DataError(f"unknown precision {name!r}; known: {', '.join(sorted(PRECISIONS))}")
    return _PRECISION_ALIASES[key]


#: ``quality`` prefix of a source line its adapter could not read: the row holds only where it
#: came from and why, is dropped with that reason (load.py) and never stops the other lines.
UNREADABLE = "unreadable: "
#: What an adapter's per-line conversion raises on a bad cell.
CELL_ERRORS: tuple[type[Exception], ...] = (
    DataError,
    ValueError,
    TypeError,
    ZeroDivisionError,
    AttributeError,
    KeyError,
    IndexError,
    OverflowError,
    RecursionError,  # a JSON cell or file nested deeper than Python's decoder recurses
)
#: The largest GPU, worker or parallel-degree count a measurement row may state.
MAX_COUNT = 1_000_000


def whole_number(value: object, name: str, minimum: int = 1) -> int:
    """A count cell (GPUs, a parallel degree, workers) as an int; :class:`DataError` naming
    *name* unless it is a whole number from *minimum* to :data:`MAX_COUNT` (a fraction was
    truncated, a negative degree multiplied into a valid GPU count, before)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DataError(f"{name}: {str(value)[:40]!r} is not a number") from None
    if not math.isfinite(number) or number != int(number) or not minimum <= number <= MAX_COUNT:
        raise DataError(
            f"{name}: {str(value)[:40]!r} is not a whole number from {minimum} to {MAX_COUNT:,}"
        )
    return int(number)


def unreadable_row(
    source: str, path: Path, where: str, exc: Exception, model: object = None, gpu: object = None
) -> dict[str, object]:
    """The placeholder row of a line (*where*: ``line 7``, ``configuration 3``) of *path* that
    raised *exc*: ``quality`` says where and why (:data:`UNREADABLE`)."""
    problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    problem = problem.removeprefix(f"{path}: ").removeprefix(f"{where}: ")
    problem = re.sub(r"^(?:line|row|configuration) \d+[,:] *", "", problem)[:160]
    if isinstance(exc, KeyError):
        problem = f"no {problem}"
    if isinstance(exc, ZeroDivisionError):
        problem = "a zero where a count or duration must be positive"
    name = lambda v: str(v) if v not in (None, "") else "?"  # noqa: E731
    return {
        "source": source,
        "model": name(model),
        "gpu": name(gpu),
        "gpu_count": 1,
        "engine": "?",
        "precision": "?",
        "batch_size": float("nan"),
        "input_tokens": float("nan"),
        "output_tokens": float("nan"),
        "itl_includes_prefill": False,
        "quality": f"{UNREADABLE}{path.name} {where}: {problem}",
        "model_raw": name(model),
        "gpu_raw": name(gpu),
        "file": str(path),
        "input_tokens_assumed": False,
    }


def empty_frame() -> pl.DataFrame:
    """An empty table with the canonical columns and dtypes."""
    return pl.DataFrame(schema=SCHEMA)


def conform(df: pl.DataFrame, *, origin: Path | str = "<adapter>") -> pl.DataFrame:
    """Cast an adapter's output to the canonical schema, fill extras, and validate it.

    Raises :class:`DataError` naming *origin* when a required column is missing, a required
    value is null, or an engine/precision/quality value is outside the allowed set.
    """
    for col, default in _EXTRA_DEFAULTS.items():
        if col not in df.columns:
            df = df.with_columns(pl.lit(default, dtype=SCHEMA[col]).alias(col))
    # rows built by frame_from_rows without the key: an aggregated (one-replica) run
    df = df.with_columns(pl.col("disaggregated").fill_null(False))
    missing = [c for c in SCHEMA if c not in df.columns]
    if missing:
        raise DataError(f"{origin}: adapter output lacks columns {', '.join(missing)}")
    try:
        out = df.select([pl.col(c).cast(t, strict=True) for c, t in SCHEMA.items()])
    except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
        first = str(exc).splitlines()[0]
        raise DataError(f"{origin}: cannot cast to the canonical schema: {first}") from exc
    return _mark_unreadable(out, origin)


def _mark_unreadable(out: pl.DataFrame, origin: Path | str) -> pl.DataFrame:
    """Rows read with an empty required cell, an unknown engine or precision, or a quality that
    is neither ``ok`` nor ``doubtful: …`` become unreadable rows saying so (placeholders in
    their required cells), so one bad row never stops the others (quality rule 1)."""
    quality = pl.col("quality")
    read = ~quality.str.starts_with(UNREADABLE).fill_null(False)
    required = [c for c in SCHEMA if c not in NULLABLE and c != "file"]
    problem = pl.lit(None, dtype=pl.String)
    checks = [(pl.col(c).is_null(), pl.lit(f"{c} is empty (required)")) for c in required]
    checks += [
        (
            ~pl.col("engine").is_in(sorted(ENGINES)),
            pl.lit("unknown engine ") + pl.col("engine").fill_null("?"),
        ),
        (
            ~pl.col("precision").is_in(sorted(PRECISIONS)),
            pl.lit("unknown precision ") + pl.col("precision").fill_null("?"),
        ),
        (
            (quality != "ok") & ~quality.str.starts_with("doubtful: "),
            pl.lit("quality must be 'ok' or 'doubtful: <reason>', not ") + quality.fill_null(""),
        ),
    ]
    for bad, text in reversed(checks):  # the first problem in column order is the one named
        problem = pl.when(read & bad.fill_null(False)).then(text).otherwise(problem)
    out = out.with_columns(problem.alias("_problem"))
    if out["_problem"].null_count() == out.height:
        return out.drop("_problem")
    name = Path(str(origin)).name
    bad = pl.col("_problem").is_not_null()
    file_name = pl.col("file").fill_null(str(origin)).str.extract(r"([^/\\]+)$", 1)
    return out.with_columns(
        pl.when(bad)
        .then(pl.lit(UNREADABLE) + file_name.fill_null(name) + pl.lit(": ") + pl.col("_problem"))
        .otherwise(pl.col("quality"))
        .alias("quality"),
        pl.col("file").fill_null(str(origin)),
        *(
            pl.col(c).fill_null(_PLACEHOLDER[SCHEMA[c].__class__])
            for c in required
            if c != "quality" and SCHEMA[c].__class__ in _PLACEHOLDER
        ),
    ).drop("_problem")


#: What an unreadable row holds in a required cell it left empty (by column type).
_PLACEHOLDER: dict[type[pl.DataType], object] = {
    pl.String: "?",
    pl.Int64: 1,
    pl.Float64: float("nan"),
    pl.Boolean: False,
}


def frame_from_rows(rows: list[dict[str, object]]) -> pl.DataFrame:
    """Build a canonical-typed frame from row dicts (keys = :data:`SCHEMA` columns); a row with
    a cell the column cannot hold (an integer beyond 64 bits, a list for a name) becomes an
    unreadable row naming that column, and the others are kept."""
    try:
        return pl.DataFrame(rows, schema=SCHEMA, strict=False)
    except (pl.exceptions.PolarsError, OverflowError, TypeError, ValueError):
        return pl.DataFrame([_typed_or_unreadable(r) for r in rows], schema=SCHEMA, strict=False)


def _typed_or_unreadable(row: dict[str, object]) -> dict[str, object]:
    """*row* when it makes a one-row frame, else its :func:`unreadable_row` naming the first
    cell its column cannot hold."""
    try:
        pl.DataFrame([row], schema=SCHEMA, strict=False)
        return row
    except (pl.exceptions.PolarsError, OverflowError, TypeError, ValueError):
        pass
    bad = next((c for c, v in row.items() if c in SCHEMA and not _fits(v, SCHEMA[c])), None)
    value = str(row.get(bad))[:40] if bad is not None else "?"
    problem = DataError(f"{bad or 'a cell'}: {value!r} does not fit the column")
    path = Path(str(row.get("file") or "?"))
    model, gpu = row.get("model_raw") or row.get("model"), row.get("gpu_raw")
    return unreadable_row(str(row.get("source") or "?"), path, "a record", problem, model, gpu)


def _fits(value: object, dtype: pl.DataType) -> bool:
    """Whether one cell *value* fits a column of *dtype* (an int beyond 64 bits does not)."""
    if value is None:
        return True
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return False
    try:
        pl.DataFrame({"v": [value]}, schema={"v": dtype}, strict=False)
    except (pl.exceptions.PolarsError, OverflowError, TypeError, ValueError):
        return False
    return True
