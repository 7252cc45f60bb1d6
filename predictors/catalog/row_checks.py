"""Validate batch-predict input rows against the catalog: one ``error`` line per row.

:func:`check_rows` resolves each row's model and GPU (quantised checkpoints included) and
collects every problem of the row, '; '-joined: unknown ids, an unknown engine or precision, a
number outside (0, :data:`MAX_VALUES`], a configuration that no serving engine runs
(:mod:`predictors.catalog.validity`: its engine's capabilities and the GPU's precisions
included) and tokens beyond the model's context. It is the
validation half of :meth:`predictors.api.Predictor.predict`; nothing here raises on a bad row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from predictors.catalog import quantised, row_layouts, validity
from predictors.catalog.context_window import (
    COUNTED,
    COUNTED_ENCODER_DECODER,
    context_tokens_expr,
    is_encoder_decoder,
)
from predictors.catalog.store import Catalog
from predictors.core.errors import UnknownIdError
from predictors.core.vocab import ENGINES, PRECISIONS

#: The numeric input columns of the batch contract.
NUMERIC_COLUMNS: tuple[str, ...] = ("gpu_count", "batch_size", "input_tokens", "output_tokens")
#: The optional layout input columns (empty: the engines' usual layout, see
#: :func:`predictors.catalog.validity.resolve_layout`).
LAYOUT_COLUMNS: tuple[str, ...] = validity.LAYOUT_INPUTS
#: The resolved layout of every valid row, as output columns (in this order).
RESOLVED_LAYOUT_COLUMNS: tuple[str, ...] = (
    "tensor_parallel",
    "pipeline_parallel",
    "data_parallel",
    "expert_parallel",
)
#: Largest value accepted per numeric input column (a row above it gets an error): a GPU count
#: that can only be a typing mistake (below it, the GPU type's own bound is checked with the
#: layout and named: "216 GPUs exceed the 144 of one replica of GB200 (2 NVLink domains of 72)"),
#: more sequences or tokens than any serving engine handles.
MAX_VALUES: dict[str, float] = {
    "gpu_count": 100_000,
    "batch_size": 65_536,
    "input_tokens": 10_000_000,
    "output_tokens": 10_000_000,
}


def joined_messages(checks: list[pl.Expr]) -> pl.Expr:
    """The non-empty strings of *checks* (one string expression per check), '; '-joined ('' when
    none is): one vectorised string concatenation, no per-row list."""
    return pl.concat_str(
        [pl.when(check != "").then(check) for check in checks], separator="; ", ignore_nulls=True
    )


def _resolve_names(
    names: pl.Series, resolve: Callable[[str], str], column: str
) -> tuple[dict[str, str | None], dict[str, str]]:
    """Resolved id (or None) and error text ('' when resolved) of every distinct name."""
    ids: dict[str, str | None] = {}
    errors: dict[str, str] = {}
    for name in names.unique().drop_nulls().to_list():
        try:
            ids[name] = resolve(name)
            errors[name] = ""
        except UnknownIdError as exc:
            ids[name] = None
            errors[name] = f"{column}: {exc.problem}{exc.hint}"
    return ids, errors


@dataclass(frozen=True)
class Check:
    """One validation rule: *bad* is true on the rows it rejects, *message* their error line
    (evaluated on those rows only)."""

    bad: pl.Expr
    message: pl.Expr


def _id_error(column: str, errors: dict[str, str], kind: str) -> Check:
    """The resolution error of *column* per row; an empty cell asks for a catalog *kind* id."""
    empty = f"{column}: empty; give a catalog {kind} id"
    unknown = [name for name, error in errors.items() if error]
    return Check(
        pl.col(column).is_null() | pl.col(column).is_in(unknown),
        pl.col(column)
        .replace_strict(errors, default=empty, return_dtype=pl.String)
        .fill_null(empty),
    )


def _vocabulary_error(column: str, known: tuple[str, ...]) -> Check:
    """An error where *column* is not one of *known*."""
    return Check(
        ~pl.col(column).is_in(known).fill_null(False),
        pl.format(f"{column}: unknown '{{}}'; use one of ", pl.col(column))
        + pl.lit(", ".join(known)),
    )


#: Least value of a numeric input column that may be fractional (others: above 0): a request
#: decodes at least one token (a mean of 1e-50 output tokens gave ITLs of 1e28 s).
MIN_VALUES: dict[str, float] = {"output_tokens": 1.0}


def _range_error(column: str) -> Check:
    """An error where the number in *column* is missing, below its least (above 0 when it has
    none), above its bound, or (for counts) not whole."""
    v = pl.col(column)
    least = MIN_VALUES.get(column)
    low = (v <= 0) if least is None else (v < least)
    bad = v.is_null() | ~v.is_finite() | low | (v > MAX_VALUES[column])
    whole = column in ("gpu_count", "batch_size")
    if whole:
        bad = bad | (v != v.floor())
    if whole:
        kind = "whole number from 1"
    else:
        kind = "number above 0" if least is None else f"number from {least:g}"
    return Check(
        bad.fill_null(True), pl.lit(f"{column}: must be a {kind} to {MAX_VALUES[column]:,.0f}")
    )


def _layout_error(column: str) -> Check:
    """An error where a stated layout degree is not a whole number from 1 to the GPU bound."""
    v = pl.col(column)
    top = row_layouts.MAX_DEGREE
    bad = v.is_not_null() & (~v.is_finite() | (v < 1) | (v != v.floor()) | (v > top))
    return Check(
        bad.fill_null(True),
        pl.lit(f"{column}: must be a whole number from 1 to {top} (or empty)"),
    )


def failing_lines(frame: pl.DataFrame, checks: Sequence[Check]) -> pl.Series:
    """Per row of *frame*, its failed checks' messages '; '-joined ('' when it passes all): the
    rules are evaluated as booleans on every row, the messages on the failing rows only."""
    lines = pl.repeat("", frame.height, dtype=pl.String, eager=True)
    if not checks or frame.is_empty():
        return lines
    failing = frame.select(pl.any_horizontal([c.bad for c in checks])).to_series()
    where = failing.arg_true()
    if where.is_empty():
        return lines
    # only the columns the messages read are filtered (a feature frame has about 90)
    read = {n for c in checks for n in c.message.meta.root_names() + c.bad.meta.root_names()}
    narrow = frame.select([c for c in frame.columns if c in read] or frame.columns[:1])
    text = narrow.filter(failing).select(
        joined_messages([pl.when(c.bad).then(c.message) for c in checks])
    )
    return lines.scatter(where, text.to_series().fill_null(""))


def _config_errors(catalog: Catalog, keys: pl.DataFrame) -> pl.DataFrame:
    """The configuration-validity error (``_config``: TP vs heads, domains, layout splits, the
    engine's capabilities, the GPU's precisions) and the resolved layout (``_tp``, ``_pp``,
    ``_dp``, ``_ep``; null where not valid) of each row of *keys* (resolved ``model``, ``gpu``,
    ``engine``, ``precision``, ``gpu_count`` and the stated layout degrees), checked
    once per distinct configuration: the verdicts are kept in a table that lives as long as the
    catalog, so a large input predicted in chunks checks each configuration once."""
    on = ["model", "gpu", "engine", "precision", "gpu_count", *LAYOUT_COLUMNS]
    keys = keys.select(
        *(pl.col(c).cast(pl.String) for c in on[:4]),
        *(pl.col(c).cast(pl.Float64) for c in on[4:]),
    )
    memo = catalog.memo("config_verdicts")
    known: pl.DataFrame | None = memo.get("table")
    shown = (pl.col("_config").fill_null(""), "_tp", "_pp", "_dp", "_ep")
    if known is None:
        distinct = keys.unique(maintain_order=True)
    else:  # a known configuration's ``_config`` is never null ('' when valid)
        joined = keys.join(known, on=on, how="left", nulls_equal=True, maintain_order="left")
        unknown = joined["_config"].is_null()
        if not unknown.any():
            return joined.select(*shown)
        distinct = keys.filter(unknown).unique(maintain_order=True)
    verdicts = _verdicts(catalog, distinct)
    known = verdicts if known is None else pl.concat([known, verdicts])
    memo["table"] = known
    return keys.join(known, on=on, how="left", nulls_equal=True, maintain_order="left").select(
        *shown
    )


def _verdicts(catalog: Catalog, distinct: pl.DataFrame) -> pl.DataFrame:
    """*distinct* configurations with their ``_config`` error and resolved layout."""
    errors, layouts = row_layouts.row_layouts(
        catalog,
        distinct["model"].to_list(),
        distinct["gpu"].to_list(),
        distinct["gpu_count"].to_list(),
        list(distinct.select(LAYOUT_COLUMNS).iter_rows()),
        distinct["engine"].to_list(),
        distinct["precision"].to_list(),
    )
    shape = {
        name: [None if lay is None else getattr(lay, attr) for lay in layouts]
        for name, attr in zip(("_tp", "_pp", "_dp", "_ep"), ("tp", "pp", "dp", "ep"), strict=True)
    }
    return distinct.with_columns(
        pl.Series("_config", errors, dtype=pl.String),
        *(pl.Series(name, values, dtype=pl.Int64) for name, values in shape.items()),
    )


def _context_error(catalog: Catalog, model_id: pl.Expr) -> Check:
    """An error where the tokens a workload holds in one window
    (:func:`predictors.catalog.context_window.context_tokens`) exceed the row's model's
    context."""
    ids = catalog.llms["id"].to_list()
    windows = catalog.llms["max_position_embeddings"].to_list()
    context = dict(zip(ids, windows, strict=True))
    split = dict(
        zip(ids, map(is_encoder_decoder, catalog.llms["model_type"].to_list()), strict=True)
    )
    window = model_id.replace_strict(context, default=None, return_dtype=pl.Float64)
    encoder_decoder = model_id.replace_strict(split, default=False, return_dtype=pl.Boolean)
    tokens = context_tokens_expr(encoder_decoder)
    counted = pl.when(encoder_decoder).then(pl.lit(COUNTED_ENCODER_DECODER))
    return Check(
        (tokens > window).fill_null(False),
        pl.format(
            "{} = {} exceed the model's {}-token context; lower them",
            counted.otherwise(pl.lit(COUNTED)),
            tokens.cast(pl.Int64, strict=False),
            window.cast(pl.Int64),
        ),
    )


def check_rows(catalog: Catalog, rows: pl.DataFrame) -> pl.DataFrame:
    """Resolved ids (``_model``, ``_gpu``), the per-row validation error (``_error``, '' for
    a valid row) and the resolved layout (``_tp``, ``_pp``, ``_dp``, ``_ep``) of normalised
    input *rows* (:func:`predictors.api.normalise_rows`)."""
    model_map, model_err = _resolve_names(
        rows["model"], lambda name: quantised.resolve_llm(catalog, name), "model"
    )
    gpu_map, gpu_err = _resolve_names(rows["gpu"], catalog.resolve_gpu, "gpu")
    model_id = pl.col("model").replace_strict(model_map, default=None, return_dtype=pl.String)
    gpu_id = pl.col("gpu").replace_strict(gpu_map, default=None, return_dtype=pl.String)
    checks: list[Check] = [
        _id_error("model", model_err, "LLM"),
        _id_error("gpu", gpu_err, "GPU"),
        _vocabulary_error("engine", ENGINES),
        _vocabulary_error("precision", PRECISIONS),
        *(_range_error(col) for col in NUMERIC_COLUMNS),
        *(_layout_error(col) for col in LAYOUT_COLUMNS),
    ]
    # a count above its bound already has its error
    keys = rows.select(
        model_id.alias("model"),
        gpu_id.alias("gpu"),
        pl.col("engine").cast(pl.String),
        pl.col("precision").cast(pl.String),
        pl.when(pl.col("gpu_count") <= MAX_VALUES["gpu_count"]).then(pl.col("gpu_count")),
        *(pl.col(c).cast(pl.Float64) for c in LAYOUT_COLUMNS),
    )
    config = _config_errors(catalog, keys)
    checks.append(Check(pl.col("_config") != "", pl.col("_config")))
    checks.append(_context_error(catalog, model_id))
    errors = failing_lines(rows.with_columns(config["_config"]), checks)
    return rows.select(
        model_id.alias("_model"), gpu_id.alias("_gpu"), pl.lit(errors).alias("_error")
    ).with_columns(config.select("_tp", "_pp", "_dp", "_ep"))
