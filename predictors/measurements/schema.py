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
)


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


def read_text_csv(path: Path) -> pl.DataFrame:
    """A source CSV as text columns; a :class:`DataError` naming the file when it cannot be
    parsed as one (not UTF-8, a line with more fields than the header, an unclosed quote)."""
    try:
        return pl.read_csv(path, infer_schema_length=0)
    except (pl.exceptions.PolarsError, UnicodeDecodeError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        raise DataError(
            f"{path}: cannot read as CSV ({first}) — save it as comma-separated UTF-8 text with "
            "one header line and as many fields on every line"
        ) from None


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
    read = out.filter(~pl.col("quality").str.starts_with(UNREADABLE))  # lines read: checked
    for col in SCHEMA:
        if col in NULLABLE:
            continue
        n_null = out[col].null_count()
        if n_null:
            raise DataError(f"{origin}: column {col} has {n_null} empty values (required)")
    bad_engine = sorted(set(read["engine"].to_list()) - ENGINES)
    if bad_engine:
        raise DataError(f"{origin}: unknown engines {bad_engine}")
    bad_prec = sorted(set(read["precision"].to_list()) - PRECISIONS)
    if bad_prec:
        raise DataError(f"{origin}: unknown precisions {bad_prec}")
    qualities = set(read["quality"].to_list())
    bad_q = [q for q in qualities if q != "ok" and not q.startswith("doubtful: ")]
    if bad_q:
        raise DataError(f"{origin}: quality must be 'ok' or 'doubtful: <reason>', got {bad_q[:3]}")
    return out


def frame_from_rows(rows: list[dict[str, object]]) -> pl.DataFrame:
    """Build a canonical-typed frame from row dicts (keys = :data:`SCHEMA` columns)."""
    return pl.DataFrame(rows, schema=SCHEMA, strict=False)
