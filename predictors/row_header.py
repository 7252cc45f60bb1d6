"""Columns of a batch rows CSV that would be lost or silently ignored (``wattgpu predict
--input``; docs/contracts.md).

* A near-miss of an input column the file lacks (``Pipeline_Parallel``, ``batchsize``,
  ``gpu_cnt``, ``requests_per_sec``) would be kept as an extra column while every row took the
  default: :func:`header_problem` refuses the file with a did-you-mean.
* A column named like an output the command writes (``itl_s``, ``error``, ``concurrency``) would be
  overwritten and its cells lost: refused too (rename or drop it). The layout columns are the
  exception the contract states: ``pipeline_parallel``, ``data_parallel`` and
  ``expert_parallel`` are inputs, and a stated ``tensor_parallel`` must be what the row resolves
  to (:func:`tensor_parallel_errors`), so feeding a previous output's layout back is harmless.

Other extra columns are kept as they are.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from predictors.core.csv_text import csv_header
from predictors.core.escape import csv_cell
from predictors.numbers import number

#: Edits (insertions, deletions, substitutions of the names without case, spaces, dashes and
#: underscores) within which an extra column reads as a misspelling of a missing input column;
#: one edit for names of up to five characters (``gpus`` for ``gpu``). ``precision_bits`` is
#: four edits from ``precision``: an extra column of its own.
NEAR_MISS_EDITS = 2
TENSOR_PARALLEL = "tensor_parallel"
#: Input columns without a default.
REQUIRED = ("model", "gpu")


def _plain(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def _edits(a: str, b: str) -> int:
    """Levenshtein distance of *a* and *b*."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, start=1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


#: The engines', launchers' and benchmark tools' own names of input columns (vLLM's
#: ``--data-parallel-size`` and ``dtype``, SGLang's ``dp``, aiconfigurator's ``moe_ep_size`` and
#: ``isl``/``osl``), further than two edits from ours.
ENGINE_SPELLINGS: dict[str, str] = {
    **dict.fromkeys(("tp", "tpsize", "tensorparallelsize"), TENSOR_PARALLEL),
    **dict.fromkeys(("pp", "ppsize", "pipelineparallelsize"), "pipeline_parallel"),
    **dict.fromkeys(
        ("dp", "dpsize", "dataparallelsize", "attentiondpsize", "attentiondp"), "data_parallel"
    ),
    **dict.fromkeys(
        ("ep", "epsize", "expertparallelsize", "expertparallelism", "moeepsize"),
        "expert_parallel",
    ),
    **dict.fromkeys(("numgpus", "ngpus", "gpucount"), "gpu_count"),
    # the workload columns in benchmark tools' spellings (aiconfigurator's isl/osl, vLLM's
    # dtype, max_tokens and request rate)
    **dict.fromkeys(
        ("isl", "inputlen", "inputlength", "prompttokens", "promptlen"), "input_tokens"
    ),
    **dict.fromkeys(("osl", "outputlen", "outputlength", "maxtokens"), "output_tokens"),
    **dict.fromkeys(("dtype",), "precision"),
    **dict.fromkeys(("batch", "bs", "maxnumseqs"), "batch_size"),
    **dict.fromkeys(("qps", "rps", "requestrate"), "requests_per_s"),
}


def _near_miss(name: str, absent: dict[str, str]) -> str | None:
    """The missing input column *name* misspells, if any (an engine's own name of it, else the
    fewest edits)."""
    plain = _plain(name)
    known = ENGINE_SPELLINGS.get(plain)
    if known is not None and _plain(known) in absent:
        return absent[_plain(known)]
    best = None
    for key, column in absent.items():
        allowed = 1 if min(len(key), len(plain)) <= 5 else NEAR_MISS_EDITS
        if abs(len(plain) - len(key)) > allowed:  # more edits than allowed: skip the DP
            continue
        edits = _edits(plain, key)
        if edits <= allowed and (best is None or edits < best[0]):
            best = (edits, column)
    return best[1] if best else None


def header_problem(
    columns: Sequence[str], inputs: Sequence[str], outputs: Sequence[str]
) -> str | None:
    """The first column of *columns* that is an output's name (*outputs*: those the command
    replaces, the layout inputs not among them) or a near-miss of an input column (*inputs*) the
    file lacks, as one line with the fix; None when there is none."""
    as_input = {_plain(c) for c in (*inputs, TENSOR_PARALLEL)}
    plain_outputs = {_plain(o): o for o in outputs if _plain(o) not in as_input}
    for name in columns:
        if name in outputs:
            return (
                f"column {name!r} is an output column of wattgpu predict and would be "
                "overwritten — rename or drop it (extra columns are kept as they are)"
            )
        twin = plain_outputs.get(_plain(name))
        if twin is not None:  # ``Error``, ``power_w_per_gpu ``: beside the output, read as it
            return (
                f"column {name!r} is named like the output column {twin!r} the command writes "
                "beside it — rename or drop it (extra columns are kept as they are)"
            )
    absent = {_plain(c): c for c in (*inputs, TENSOR_PARALLEL) if c not in columns}
    for name in columns:
        if name in inputs or name in outputs or name == TENSOR_PARALLEL:
            continue
        meant = _near_miss(name, absent)
        if meant is not None:
            effect = (
                f"the required column {meant!r} is missing"
                if meant in REQUIRED
                else "it is not checked against the layout"
                if meant == TENSOR_PARALLEL
                else f"every row would take {meant}'s default"
            )
            return (
                f"column {name!r} is not an input column; did you mean {meant!r}? — rename it "
                f"(as it is, {effect}; other extra columns are kept as they are)"
            )
    return None


def tensor_parallel_errors(rows: pl.DataFrame, resolved: pl.Series) -> pl.Series:
    """Per row: '' or the error of a stated ``tensor_parallel`` cell of *rows* that is not the
    *resolved* degree (``gpu_count / (pipeline_parallel × data_parallel)``) or not a number; the
    resolved degree is null on rows with another error (not checked)."""
    if TENSOR_PARALLEL not in rows.columns:
        return pl.Series("error", [""] * rows.height, dtype=pl.String)
    text = rows[TENSOR_PARALLEL].cast(pl.String).str.strip_chars()
    stated = text.cast(pl.Float64, strict=False)
    given = text.is_not_null() & (text != "")
    frame = pl.DataFrame({"text": text, "stated": stated, "given": given, "resolved": resolved})
    return frame.select(
        pl.when(pl.col("given") & pl.col("stated").is_null())
        .then(
            pl.lit(f"{TENSOR_PARALLEL}: must be a whole number or empty (got '")
            + pl.col("text").str.slice(0, 40)
            + pl.lit("')")
        )
        .when(
            pl.col("given")
            & pl.col("resolved").is_not_null()
            & (pl.col("stated") != pl.col("resolved").cast(pl.Float64))
        )
        .then(
            pl.lit(f"{TENSOR_PARALLEL}: ")
            + pl.col("text")
            + pl.lit(" stated, but gpu_count / (pipeline_parallel × data_parallel) is ")
            + pl.col("resolved").cast(pl.Int64).cast(pl.String)
            + pl.lit(" — leave it empty (the output states the resolved layout) or fix gpu_count")
        )
        .otherwise(pl.lit(""))
        .alias("error")
    ).to_series()


#: Separators a spreadsheet may save a "CSV" with, and how a message names them.
_SEPARATORS = {";": "semicolon", "\t": "tab", "|": "pipe"}


def separator_problem(path: Path, inputs: Sequence[str]) -> str | None:
    """The fix for a CSV *path* whose header reads as one comma-separated column that another
    separator splits into input columns (*inputs*: a spreadsheet's semicolon- or tab-separated
    export); None otherwise."""
    names = csv_header(path)
    if len(names) != 1:
        return None
    for sep, word in _SEPARATORS.items():
        parts = [p.strip() for p in names[0].split(sep)]
        if len(parts) > 1 and sum(p in inputs for p in parts) >= 2:
            return (
                f"the file is {word}-separated (its header splits on '{sep}' into "
                f"{', '.join(parts[:6])}{', …' if len(parts) > 6 else ''}); save it "
                "comma-separated"
            )
    return None


def escaped_header(names: Sequence[str]) -> bytes | None:
    """The CSV header line of *names* when one of them is a name a spreadsheet would run as a
    formula (a kept extra column ``=cmd|…``: a header name is a cell too), each such name with
    the leading ``'`` the data cells get (docs/contracts.md); None when no name needs it (the
    writer's own header is then exact)."""
    safe = [csv_cell(name) for name in names]
    if safe == list(names):
        return None
    line = io.StringIO()
    csv.writer(line, lineterminator="\n").writerow(safe)
    return line.getvalue().encode()


def stated_layout_on_errors(
    layout: pl.DataFrame, rows: pl.DataFrame, failed: pl.Series
) -> pl.DataFrame:
    """*layout* (the resolved :data:`RESOLVED_LAYOUT_COLUMNS`, empty on the rows with an error)
    with each row *failed* showing the layout cells its input stated, as read (a whole number;
    empty where the cell was empty or no whole number, which its error quotes), so an output fed
    back keeps the layout the user asked for and its error (fuzz round 28: a row's
    ``expert_parallel`` 2 on a dense model came out empty, and fed back was predicted at EP 1)."""
    if not failed.any():
        return layout
    columns = []
    for column in layout.columns:
        if column not in rows.columns:
            columns.append(layout[column])
            continue
        stated = number(rows[column], None).fill_nan(None)
        whole = stated.is_not_null() & (stated == stated.round(0)) & (stated.abs() < 2.0**53)
        cells = pl.select(pl.when(whole).then(stated).otherwise(None)).to_series()
        shown = cells.cast(layout[column].dtype, strict=False)
        columns.append(
            pl.select(pl.when(pl.lit(failed)).then(shown).otherwise(layout[column]))
            .to_series()
            .alias(column)
        )
    return pl.DataFrame(columns)
