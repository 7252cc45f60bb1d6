"""aiconfigurator ``silicon_sample.csv`` -> canonical measurement table (latency only, no power).

Columns used: ``model_path, system, backend, precision, mode, isl, osl, gemm_quant_mode,
tp_size, pp_size, attention_dp_size, prefill_*/decode_* worker shapes, silicon_ttft_ms,
silicon_tpot_ms`` and ``silicon_concurrency=N`` inside ``silicon_data_source``.

- ITL = TPOT (ms -> s, decode only), TTFT (ms -> s); power is not measured (null).
- batch size = the benchmark concurrency (``silicon_concurrency``; the ``batch_size`` column is
  per attention-DP rank), falling back to ``batch_size`` x attention DP when absent.
- GPU count: ``agg`` = tp x pp x attention_dp of the single deployment; ``disagg`` = the sum over
  workers: prefill_workers x tp x pp x dp + decode_workers x tp x pp x dp; ``disaggregated`` says
  which (the TTFT model's measurement-protocol input, predictors/estimators/ttft.py).
- precision: the ``precision`` column (fp4 / fp8 / bf16); empty with no quant mode = bf16.
- ``output_throughput_tok_s`` is not measured and left null.
- layout (``agg`` rows; a disaggregated deployment is not one replica and has none): the source's
  ``tp_size``, ``pp_size``, ``attention_dp_size`` (empty: 1) and ``moe_ep_size`` (0 or empty:
  not stated) as ``tensor_parallel``, ``pipeline_parallel``, ``data_parallel`` and
  ``expert_parallel``; :mod:`predictors.measurements.layouts` then reads the rows whose
  ``tp_size`` is the world size of a wide-EP deployment (see docs/data.md).
- decode pool (``disagg`` rows): ``decode_num_workers`` (empty: 1, ``decode_workers_stated``
  False), ``decode_tp_size``, ``decode_pp_size``, ``decode_attention_dp_size`` (empty: 1) and
  ``decode_moe_ep_size`` (0 or empty: not stated) as :data:`~predictors.measurements.schema.
  DECODE_COLUMNS`; training reads the TPOT of these rows on one decode worker
  (:mod:`predictors.training.decode_rows`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl

from predictors.core.errors import DataError
from predictors.measurements.schema import (
    CELL_ERRORS,
    DECODE_COLUMNS,
    LAYOUT_COLUMNS,
    conform,
    empty_frame,
    frame_from_rows,
    normalize_engine,
    normalize_precision,
    unreadable_row,
    whole_number,
)
from predictors.measurements.text_csv import read_text_csv, text_lines

SOURCE = "aiconfigurator"
REQUIRED = (
    "model_path",
    "system",
    "backend",
    "mode",
    "isl",
    "osl",
    "silicon_ttft_ms",
    "silicon_tpot_ms",
)
GPU_HINTS = {
    "h100_sxm": "H100 SXM5 80GB|H100-SXM5-80GB|H100 SXM",
    "h200_sxm": "H200 SXM 141GB|H200-SXM-141GB|H200 SXM",
    "b200_sxm": "B200|B200 SXM",
    "b300_sxm": "B300|B300 SXM",
    "gb200": "GB200|B200 (GB200)",
    "gb300": "GB300|B300 (GB300)",
}
_CONC = re.compile(r"silicon_concurrency=(\d+)")


def is_aiconfigurator_header(columns: list[str]) -> bool:
    """True when a CSV header looks like aiconfigurator's silicon table."""
    return {"silicon_ttft_ms", "silicon_tpot_ms", "model_path", "system"} <= set(columns)


def _f(row: dict[str, Any], col: str) -> float:
    """A required number cell; ValueError naming *col* when it is empty or not a number."""
    v = row.get(col)
    if v is None or not str(v).strip():
        raise ValueError(f"{col} is empty (required)")
    try:
        return float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{col}: {str(v)[:40]!r} is not a number") from None


def _i(row: dict[str, Any], col: str, default: int = 1) -> int:
    """A count cell (0 allowed: the source writes 0 for a degree it does not use)."""
    v = row.get(col)
    return whole_number(v, col, minimum=0) if v not in (None, "") else default


def _gpus(row: dict[str, Any], prefix: str) -> int:
    shape = _i(row, f"{prefix}tp_size") * _i(row, f"{prefix}pp_size")
    return shape * max(_i(row, f"{prefix}attention_dp_size"), 1)


def _decode_pool(row: dict[str, Any], mode: str) -> dict[str, int | bool | None]:
    """The decode pool of a disaggregated row as stated (all None for aggregated rows)."""
    if mode != "disagg":
        return dict.fromkeys(DECODE_COLUMNS)
    side = _disagg_side(row, "decode")
    return {
        "decode_workers": side["decode_workers"],
        "decode_tensor_parallel": side["decode_tp"],
        "decode_pipeline_parallel": side["decode_pp"],
        "decode_data_parallel": side["decode_dp"],
        "decode_expert_parallel": side["decode_ep"],
        "decode_workers_stated": _workers_stated(row),
    }


def _workers_stated(row: dict[str, Any]) -> bool:
    return row.get("prefill_num_workers") not in (None, "") and row.get(
        "decode_num_workers"
    ) not in (None, "")


def _layout(row: dict[str, Any], mode: str) -> dict[str, int | None]:
    """The stated layout of an aggregated row (all None for disaggregated rows)."""
    if mode != "agg":
        return dict.fromkeys(LAYOUT_COLUMNS)
    ep = _i(row, "moe_ep_size", 0)
    return {
        "tensor_parallel": _i(row, "tp_size"),
        "pipeline_parallel": _i(row, "pp_size"),
        "data_parallel": max(_i(row, "attention_dp_size"), 1),
        "expert_parallel": ep if ep > 0 else None,
    }


def read_aiconfigurator(path: Path) -> pl.DataFrame:
    """Read one aiconfigurator silicon CSV."""
    raw = read_text_csv(path)
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise DataError(f"{path}: not an aiconfigurator silicon CSV (lacks {', '.join(missing)})")
    rows = [_read_line(r, path, line, problem) for line, r, problem in text_lines(raw)]
    if not rows:
        return empty_frame()
    return conform(frame_from_rows(rows), origin=path)


#: Cells whose product is a row's GPU count.
_SIZES = ("tp_size", "pp_size", "num_workers")


def _read_line(r: dict[str, Any], path: Path, line: int, problem: str | None) -> dict[str, Any]:
    """The row of one CSV line, or its :func:`unreadable_row` (a bad line, *problem* when it
    could not be read as CSV, never stops the others)."""
    try:
        if problem is not None:
            raise DataError(problem)
        row = _row(r, path, line)
    except CELL_ERRORS as exc:
        return unreadable_row(
            SOURCE, path, f"line {line}", exc, r.get("model_path"), r.get("system")
        )
    bad = [
        c for c in ("gpu_count", "batch_size", "input_tokens", "output_tokens") if not row[c] > 0
    ]
    if bad:  # no GPUs: name the layout cell that states 0 (tp_size=0), not the product
        zero = [c for c, v in r.items() if c.endswith(_SIZES) and str(v).strip() in ("0", "0.0")]
        bad = [b for c in bad for b in (zero if c == "gpu_count" and zero else [c])]
        why = ValueError(f"{', '.join(bad)} must be positive")
        return unreadable_row(
            SOURCE, path, f"line {line}", why, r.get("model_path"), r.get("system")
        )
    return row


def _row(r: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    for name in ("model_path", "system"):  # named with its line, not later without one
        if not str(r.get(name) or "").strip():
            raise ValueError(f"{name} is empty (required)")
    mode = r["mode"]
    if mode == "agg":
        n_gpu = _gpus(r, "")
    elif mode == "disagg":
        n_gpu = _i(r, "prefill_num_workers") * _gpus(r, "prefill_") + _i(
            r, "decode_num_workers"
        ) * _gpus(r, "decode_")
    else:
        raise DataError(f"{path}: line {line}: mode {mode!r} is neither agg nor disagg")
    m = _CONC.search(r.get("silicon_data_source") or "")
    if m:
        conc = float(m.group(1))
    else:
        conc = float(_i(r, "batch_size")) * max(_i(r, "attention_dp_size"), 1)
    prec_raw = r.get("precision") or r.get("gemm_quant_mode") or "bf16"
    return (
        {
            "source": SOURCE,
            "model": r["model_path"],
            "gpu": r["system"],
            "gpu_count": n_gpu,
            "engine": normalize_engine(r["backend"]),
            "precision": normalize_precision(prec_raw),
            "batch_size": conc,
            "arrival_rate_rps": None,
            "input_tokens": _f(r, "isl"),
            "output_tokens": _f(r, "osl"),
            "power_w_per_gpu": None,
            "itl_s": _f(r, "silicon_tpot_ms") / 1000.0,
            "ttft_s": _f(r, "silicon_ttft_ms") / 1000.0,
            "output_throughput_tok_s": None,
            "itl_includes_prefill": False,
            "quality": "ok",
            "model_raw": r["model_path"],
            "gpu_raw": r["system"],
            "file": str(path),
            "gpu_hint": GPU_HINTS.get(r["system"]),
            "task": None,
            "input_tokens_assumed": False,
            "note": f"mode={mode} backend_version={r.get('backend_version')}",
            "disaggregated": mode == "disagg",
        }
        | _layout(r, mode)
        | _decode_pool(r, mode)
    )


#: Per-side columns of :func:`read_aiconfigurator_disagg` (``prefill_*`` and ``decode_*``).
DISAGG_SIDE_COLUMNS: tuple[str, ...] = ("workers", "tp", "pp", "dp", "ep", "moe_tp")


def _disagg_side(r: dict[str, Any], side: str) -> dict[str, Any]:
    ep = _i(r, f"{side}_moe_ep_size", 0)
    moe_tp = _i(r, f"{side}_moe_tp_size", 0)
    return {
        f"{side}_workers": _i(r, f"{side}_num_workers"),
        f"{side}_tp": _i(r, f"{side}_tp_size"),
        f"{side}_pp": _i(r, f"{side}_pp_size"),
        f"{side}_dp": max(_i(r, f"{side}_attention_dp_size"), 1),
        f"{side}_ep": ep if ep > 0 else None,
        f"{side}_moe_tp": moe_tp if moe_tp > 0 else None,
    }


def _disagg_concurrency(r: dict[str, Any]) -> float | None:
    """``silicon_concurrency``, else ``decode_batch_size`` × decode workers × decode attention
    DP (the per-rank batch; the product equals ``silicon_concurrency`` on every row of this copy
    that states both)."""
    m = _CONC.search(r.get("silicon_data_source") or "")
    if m:
        return float(m.group(1))
    if r.get("decode_batch_size") in (None, ""):
        return None
    workers = _i(r, "decode_num_workers") * max(_i(r, "decode_attention_dp_size"), 1)
    return float(_i(r, "decode_batch_size")) * workers


def read_aiconfigurator_disagg(path: Path) -> pl.DataFrame:
    """The ``mode == disagg`` rows of one aiconfigurator silicon CSV, both sides' configuration
    kept (the aggregated reading, :func:`read_aiconfigurator`, is unchanged and still sums them).

    Per side (``prefill_`` / ``decode_``): ``workers`` (``*_num_workers``; empty in most rows of
    this copy: read as 1 and flagged by ``workers_stated`` = False), ``tp``, ``pp``, ``dp``
    (``*_attention_dp_size``, empty: 1), ``ep`` (``*_moe_ep_size``, 0 or empty: not stated) and
    ``moe_tp``, as the source states them (the wide-EP reading needs the catalog:
    :mod:`predictors.measurements.disagg_rows`). Both pools run on the row's ``system``.
    ``concurrency`` = ``silicon_concurrency`` (all users of the unit; :func:`_disagg_concurrency`
    where the source column lacks it); ``ttft_s``, ``itl_s``
    (TPOT) in seconds. No throughput is published: the closed-loop benchmark's output rate
    follows from Little's law, ``concurrency · osl / (TTFT + (osl − 1) · TPOT)`` tokens/s
    (``output_throughput_tok_s``, and per GPU over all GPUs of both pools).
    """
    raw = read_text_csv(path)
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise DataError(f"{path}: not an aiconfigurator silicon CSV (lacks {', '.join(missing)})")
    rows = []
    for line, r, problem in text_lines(raw):
        if problem is not None or r["mode"] != "disagg":  # unreadable: read_aiconfigurator's
            continue
        conc = _disagg_concurrency(r)
        if conc is None:
            raise DataError(
                f"{path}: line {line}: disagg row with neither silicon_concurrency in "
                "silicon_data_source nor decode_batch_size; the unit's concurrency is needed"
            )
        stated = _workers_stated(r)
        row: dict[str, Any] = {
            "source": SOURCE,
            "row": line,
            "model_raw": r["model_path"],
            "gpu_raw": r["system"],
            "gpu_hint": GPU_HINTS.get(r["system"]),
            "engine": normalize_engine(r["backend"]),
            "precision": normalize_precision(
                r.get("precision") or r.get("gemm_quant_mode") or "bf16"
            ),
            "input_tokens": _f(r, "isl"),
            "output_tokens": _f(r, "osl"),
            "concurrency": conc,
            "ttft_s": _f(r, "silicon_ttft_ms") / 1000.0,
            "itl_s": _f(r, "silicon_tpot_ms") / 1000.0,
            "workers_stated": stated,
            **_disagg_side(r, "prefill"),
            **_disagg_side(r, "decode"),
        }
        rows.append(row)
    schema: dict[str, Any] = {
        "source": pl.String,
        "row": pl.Int64,
        "model_raw": pl.String,
        "gpu_raw": pl.String,
        "gpu_hint": pl.String,
        "engine": pl.String,
        "precision": pl.String,
        "input_tokens": pl.Float64,
        "output_tokens": pl.Float64,
        "concurrency": pl.Float64,
        "ttft_s": pl.Float64,
        "itl_s": pl.Float64,
        "workers_stated": pl.Boolean,
        **{f"{s}_{c}": pl.Int64 for s in ("prefill", "decode") for c in DISAGG_SIDE_COLUMNS},
    }
    frame = pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
    pre, dec = (
        pl.col(f"{s}_workers") * pl.col(f"{s}_tp") * pl.col(f"{s}_pp") * pl.col(f"{s}_dp")
        for s in ("prefill", "decode")
    )
    gpus = pre + dec
    o = pl.col("output_tokens")
    rate = pl.col("concurrency") * o / (pl.col("ttft_s") + (o - 1.0) * pl.col("itl_s"))
    return frame.with_columns(
        pl.lit(str(path)).alias("file"),
        gpus.cast(pl.Int64).alias("gpu_count"),
        rate.alias("output_throughput_tok_s"),
        (rate / gpus).alias("output_throughput_tok_s_per_gpu"),
    )
