"""Predict power, ITL and throughput at a batch for rows of (model, GPU, workload).

:class:`Predictor` binds the trained models to a catalog. :meth:`Predictor.predict` takes the
input columns :data:`BATCH_INPUT_COLUMNS` (all but ``model`` and ``gpu`` optional, defaults in
:data:`DEFAULTS`) and returns the input rows in order plus :data:`PREDICTION_COLUMNS`. A row that
cannot be predicted gets a one-line ``error`` and empty predictions; the others are still
predicted. ``in_domain`` is false when the row lies outside the training data and
``domain_reason`` then says why ('; '-joined); ``gpu_measured`` is true when the GPU had training
rows. Power and its interval lie in [idle, TDP] of the GPU. The whole batch contract of
``wattgpu predict --input`` (a Poisson ``requests_per_s`` per row too) is
:func:`predictors.rows.predict_rows`. Predicting needs only the catalogs and
``predictors/trained``; rows are checked by :mod:`predictors.catalog.row_checks`, the training
domain by :mod:`predictors.estimators.domain`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import polars as pl

from predictors import memory_rule
from predictors.catalog import quantised
from predictors.catalog.row_checks import (
    LAYOUT_COLUMNS,
    NUMERIC_COLUMNS,
    RESOLVED_LAYOUT_COLUMNS,
    check_rows,
    joined_messages,
)
from predictors.catalog.row_checks import MAX_VALUES as MAX_VALUES
from predictors.catalog.store import Catalog, load_catalog
from predictors.core.vocab import ENGINE_ALIASES, PRECISION_ALIASES
from predictors.estimators import artifacts, domain, intervals
from predictors.features import DECODE_WORKERS_COLUMN, add_features, join_specs
from predictors.fit_verdict import fit_errors
from predictors.numbers import number as _number
from predictors.numbers import shown_number as shown_number
from predictors.numbers import whole_number_columns as whole_number_columns
from predictors.numbers import whole_numbers_as_int

BATCH_INPUT_COLUMNS: tuple[str, ...] = (
    "model",
    "gpu",
    "gpu_count",
    "engine",
    "precision",
    "batch_size",
    "input_tokens",
    "output_tokens",
)
#: Defaults for a missing column or an empty cell.
DEFAULTS: dict[str, Any] = {
    "gpu_count": 1,
    "engine": "vllm",
    "precision": "bf16",
    "batch_size": 1,
    "input_tokens": 512,
    "output_tokens": 256,
}
#: Rows featurised and predicted at once: memory stays bounded (features are ~60 columns) and
#: every row's prediction is independent of the others, so the result does not depend on it.
PREDICT_CHUNK_ROWS = 200_000
#: The at-batch predictions, in the order of the batch contract's output columns.
PREDICTION_COLUMNS: tuple[str, ...] = (
    "power_w_per_gpu",
    "power_w_per_gpu_lo",
    "power_w_per_gpu_hi",
    "itl_s",
    "itl_s_lo",
    "itl_s_hi",
    "output_throughput_tok_s",
    "in_domain",
    "error",
    "gpu_measured",
    "domain_reason",
)
#: The resolved parallel layout of each row (null where the row has an error), after every other
#: output column: what ``gpu_count`` and the optional :data:`LAYOUT_COLUMNS` inputs resolve to
#: (:func:`predictors.catalog.validity.resolve_layout`). Inputs of these names are replaced.
LAYOUT_OUTPUT_COLUMNS: tuple[str, ...] = RESOLVED_LAYOUT_COLUMNS
#: ``predict(..., with_ttft=AT_BATCH_1)``: TTFT only at the rows of batch 1 (NaN elsewhere).
AT_BATCH_1: Final = "at_batch_1"
#: Extra columns of ``predict(..., with_ttft=True)`` (not part of the CSV contract).
TTFT_COLUMNS: tuple[str, ...] = ("ttft_s", "ttft_s_lo", "ttft_s_hi")
#: Extra column of ``predict(..., with_fit=True)`` (not part of the CSV contract): False where
#: the weights and the batch's KV cache exceed the usable memory (the row's "does not fit" error),
#: null where the row has another error. Callers branch on it instead of on the error text.
FIT_COLUMNS: tuple[str, ...] = ("fits_in_memory",)


#: Other spellings of the text inputs, mapped to the canonical names (``trtllm``, ``bfloat16``).
ALIASES: dict[str, dict[str, str]] = {"engine": ENGINE_ALIASES, "precision": PRECISION_ALIASES}


def normalise_rows(rows: pl.DataFrame) -> pl.DataFrame:
    """Add missing input columns, fill empty cells with :data:`DEFAULTS`, map the engine and
    precision to their canonical names (case and :data:`ALIASES`), cast the types.

    Unparseable numbers become null here and are reported per row by :meth:`Predictor.predict`.
    """
    out = rows
    for col in BATCH_INPUT_COLUMNS:
        if col not in out.columns:
            out = out.with_columns(pl.lit(DEFAULTS.get(col)).alias(col))
    exprs = []
    for col in ("model", "gpu", "engine", "precision"):
        e = pl.col(col).cast(pl.String).str.strip_chars()
        e = pl.when(e == "").then(None).otherwise(e)
        if col in DEFAULTS:
            e = e.fill_null(pl.lit(DEFAULTS[col]))
        if col in ALIASES:  # the same spellings as a scenario takes (predictors.core.vocab)
            e = e.str.to_lowercase().replace(ALIASES[col])
        exprs.append(e.alias(col))
    out = out.with_columns(exprs)
    none = pl.lit(None, dtype=pl.Float64)
    layout = (_number(out[c], None) if c in out.columns else none.alias(c) for c in LAYOUT_COLUMNS)
    return out.with_columns(*numeric_inputs(out).get_columns(), *layout)


def numeric_inputs(rows: pl.DataFrame) -> pl.DataFrame:
    """The :data:`NUMERIC_COLUMNS` of raw input *rows* as :func:`normalise_rows` parses them."""
    return pl.DataFrame(
        _number(rows[col], float(DEFAULTS[col]))
        if col in rows.columns
        else pl.Series(col, [float(DEFAULTS[col])] * rows.height, dtype=pl.Float64)
        for col in NUMERIC_COLUMNS
    )


@dataclass(frozen=True)
class Predictor:
    """Trained power and ITL estimators bound to a catalog (frozen: another catalog or model
    set is another predictor, which :mod:`predictors.serving.grid`'s reuse relies on)."""

    models: artifacts.TrainedModels
    catalog: Catalog

    @classmethod
    def load(cls, directory: Path | None = None, catalog: Catalog | None = None) -> Predictor:
        """The trained models in *directory* (default: ``$WATTGPU_MODELS``, else the shipped
        ``predictors/trained``) bound to *catalog* (default: the bundled catalogs plus
        ``$WATTGPU_USER_CATALOG``)."""
        return cls(artifacts.load_chosen(directory), catalog or load_catalog())

    @property
    def card(self) -> dict[str, Any]:
        """The model card of the trained models (features, metrics, domain, provenance)."""
        return self.models.card

    def used_features(self) -> frozenset[str]:
        """The feature columns a prediction reads: every estimator's trees' features and the
        card's domain ranges (:func:`predictors.features.add_features` adds the physics
        columns itself)."""
        used = {f for t in self.models.targets.values() for f in t.estimator.features}
        return frozenset(used | set(self.card.get("domain", {}).get("ranges", {})))

    def predict(
        self,
        rows: pl.DataFrame,
        *,
        with_ttft: bool | Literal["at_batch_1"] = False,
        with_fit: bool = False,
        beyond_memory: bool = False,
    ) -> pl.DataFrame:
        """The input rows (in order) plus :data:`PREDICTION_COLUMNS`, at each row's batch.

        With *with_ttft*, also :data:`TTFT_COLUMNS` (time to first token at the row's
        concurrency; null when the shipped models have no TTFT estimator; with
        :data:`AT_BATCH_1`, computed at the rows of batch 1 only, null elsewhere); with *with_fit*,
        then :data:`FIT_COLUMNS` (the memory verdict as a boolean); *beyond_memory* estimates
        rows whose batch does not fit too (``error`` still says so). Rows at a Poisson load
        (a ``requests_per_s`` value) are :func:`predictors.rows.predict_rows`'s: they raise
        ``ValueError`` here rather than be predicted at their batch.
        """
        if (
            "requests_per_s" in rows.columns
            and rows["requests_per_s"]
            .cast(pl.String)
            .str.strip_chars()
            .replace("", None)
            .is_not_null()
            .any()
        ):
            raise ValueError(
                "Predictor.predict predicts at a batch; rows with requests_per_s go through "
                "predictors.rows.predict_rows(predictor, rows)"
            )
        given = [c for c in rows.columns if c not in PREDICTION_COLUMNS]
        rows = quantised.fill_implied_precision(rows, self.catalog)  # explicit precision wins
        rows = normalise_rows(rows.drop([c for c in PREDICTION_COLUMNS if c in rows.columns]))
        # the given columns in their order, then the missing inputs in the contract's order
        # (precision, filled first, came before gpu_count when missing)
        added = [c for c in BATCH_INPUT_COLUMNS if c not in given]
        rows = rows.select(*given, *added, *(c for c in rows.columns if c not in {*given, *added}))
        resolved = check_rows(self.catalog, rows)
        layout = resolved.select(
            pl.col(f"_{a}").alias(c)
            for a, c in zip(("tp", "pp", "dp", "ep"), LAYOUT_OUTPUT_COLUMNS, strict=True)
        )
        rows = rows.drop([c for c in LAYOUT_OUTPUT_COLUMNS if c in rows.columns])
        work = (
            rows.select(BATCH_INPUT_COLUMNS)
            .with_columns(
                resolved["_model"].alias("model"),
                resolved["_gpu"].alias("gpu"),
                resolved["_error"],
                *(layout[c].cast(pl.Float64) for c in LAYOUT_OUTPUT_COLUMNS),
                pl.lit(self.card.get("reference_source", "")).alias("source"),
                pl.lit(False).alias("itl_includes_prefill"),
                # a disaggregated decode worker runs no prefill (serving.disagg_build)
                pl.lit(bool(self.card.get(DECODE_WORKERS_COLUMN, False))).alias(
                    DECODE_WORKERS_COLUMN
                ),
            )
            .with_row_index("_row")
        )
        valid = work.filter(pl.col("_error") == "")
        pred = pl.concat(
            [
                self._predict_valid(
                    valid.slice(start, PREDICT_CHUNK_ROWS), with_ttft, beyond_memory
                )
                for start in range(0, max(valid.height, 1), PREDICT_CHUNK_ROWS)
            ]
        )
        merged = work.select("_row", "_error").join(
            pred, on="_row", how="left", maintain_order="left"
        )
        result = merged.select(
            *PREDICTION_COLUMNS[:7],
            pl.col("in_domain").fill_null(False),
            pl.when(pl.col("_error") != "")
            .then(pl.col("_error"))
            .otherwise(pl.col("_fit_error").fill_null(""))
            .alias("error"),
            pl.col("gpu_measured").fill_null(False),
            pl.when(pl.col("_error") != "")
            .then(pl.lit("invalid row (see error)"))
            .otherwise(pl.col("_reason").fill_null(""))
            .alias("domain_reason"),
            *(TTFT_COLUMNS if with_ttft else ()),
            pl.when(pl.col("_error") == "").then(pl.col("_fits")).alias("fits_in_memory"),
        )
        ordered = [
            *PREDICTION_COLUMNS,
            *(TTFT_COLUMNS if with_ttft else ()),
            *(FIT_COLUMNS if with_fit else ()),
        ]
        shown = layout.with_columns(
            pl.when(resolved["_error"] == "").then(pl.col(c)).alias(c)
            for c in LAYOUT_OUTPUT_COLUMNS
        )
        return pl.concat(
            [
                whole_numbers_as_int(rows),
                result.select(PREDICTION_COLUMNS),
                shown,
                result.select(ordered[len(PREDICTION_COLUMNS) :]),
            ],
            how="horizontal",
        )

    def _predict_valid(
        self, valid: pl.DataFrame, with_ttft: bool | str, beyond_memory: bool = False
    ) -> pl.DataFrame:
        """Predictions, intervals, domain reasons and the memory verdict of valid work rows.
        The estimators see only the rows whose batch fits in memory (all with *beyond_memory*):
        the others' numbers are shown empty (their line says why), never computed."""
        feats = add_features(join_specs(valid, self.catalog), keep=self.used_features())
        feats = feats.with_columns(memory_rule.memory_terms())
        fits = feats.select(memory_rule.fits_from_terms().fill_null(False)).to_series()
        targets = (*domain.ROW_TARGETS, "ttft") if with_ttft else domain.ROW_TARGETS
        reasons = domain.domain_reason_series(self.card, feats, self.catalog.gpus, targets)
        measured = domain.gpu_measured_series(self.card, feats)
        # a measured id re-rated by a user row is an unmeasured GPU to the intervals too
        feats = feats.with_columns(
            (pl.col("gpu").is_in(self.card.get("domain", {}).get("gpus", [])) & ~measured)
            .fill_null(False)
            .alias(intervals.RESPECIFIED_COLUMN)
        )
        head = feats.select(
            "_row",
            fits.alias("_fits"),
            fit_errors(feats, fits),
            (reasons == "").fill_null(False).alias("in_domain"),
            measured.alias("gpu_measured"),
            reasons.alias("_reason"),
            "batch_size",
        )
        estimate = fits | beyond_memory
        where = np.flatnonzero(estimate.to_numpy())
        if where.size < feats.height:
            feats = feats.filter(estimate)  # the full frame is no longer needed: freed here
        columns = self._estimates(feats, with_ttft)
        del feats
        if where.size < head.height:
            for name, values in columns.items():
                full = np.full(head.height, np.nan)
                full[where] = values
                columns[name] = full
        pred = head.select(
            "_row",
            "_fits",
            "_fit_error",
            *(pl.Series(c, columns[c]) for c in PREDICTION_COLUMNS[:6]),
            (pl.col("batch_size") / pl.Series(columns["itl_s"])).alias("output_throughput_tok_s"),
            "in_domain",
            "gpu_measured",
            "_reason",
            *(pl.Series(c, columns[c]) for c in TTFT_COLUMNS),
        )
        numeric = list(PREDICTION_COLUMNS[:7]) + list(TTFT_COLUMNS)
        return pred.with_columns(
            [
                pl.when(pl.col("_fits") | beyond_memory).then(pl.col(c).fill_nan(None)).alias(c)
                for c in numeric
            ]
            + [
                pl.col("in_domain") & pl.col("_fits"),
                joined_messages(
                    [
                        pl.when(pl.col("_fits"))
                        .then(pl.lit(""))
                        .otherwise(pl.lit("does not fit in GPU memory")),
                        pl.col("_reason"),
                    ]
                ).alias("_reason"),
            ]
        )

    def _estimates(self, feats: pl.DataFrame, with_ttft: bool | str) -> dict[str, np.ndarray]:
        """Power, ITL and (with *with_ttft*) TTFT with their bounds for every row of *feats*,
        keyed by output column (TTFT NaN when not asked for or not shipped)."""
        nan = np.full(feats.height, np.nan)
        out = dict.fromkeys((*PREDICTION_COLUMNS[:6], *TTFT_COLUMNS), nan)
        if not feats.height:
            return out
        for name, col in (("power", "power_w_per_gpu"), ("itl", "itl_s")):
            target = self.models.targets[name]
            value = target.estimator.predict(feats)
            lo, hi = target.estimator.bounds(feats, value, target.interval)
            out |= {col: value, f"{col}_lo": lo, f"{col}_hi": hi}
        ttft_model = self.models.targets.get("ttft")
        if with_ttft and ttft_model is not None:
            one = feats["batch_size"].to_numpy() == 1 if with_ttft == AT_BATCH_1 else None
            at = feats if one is None else feats.filter(pl.Series(one))
            ttft = ttft_model.estimator.predict(at)
            lo, hi = ttft_model.estimator.bounds(at, ttft, ttft_model.interval)
            for col, values in (("ttft_s", ttft), ("ttft_s_lo", lo), ("ttft_s_hi", hi)):
                if one is None:
                    out[col] = values
                else:
                    out[col] = np.full(feats.height, np.nan)
                    out[col][one] = values
        return out

    def in_domain(self, feats: pl.DataFrame) -> list[bool]:
        """True where the row lies inside the training domain recorded in the model card."""
        return [r == "" for r in self.domain_reasons(feats)]

    def gpu_measured(self, feats: pl.DataFrame) -> list[bool]:
        """True where the row's GPU had training rows (its predictions are not extrapolated)."""
        return domain.gpu_measured(self.card, feats)

    def domain_reasons(self, feats: pl.DataFrame) -> list[str]:
        """Why each row lies outside the training domain ('' when inside), '; '-joined."""
        return domain.domain_reasons(self.card, feats, self.catalog.gpus)
