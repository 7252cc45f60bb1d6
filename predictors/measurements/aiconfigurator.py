"""aiconfigurator ``silicon_sample.csv`` -> canonical measurement table (latency only, no power).

Columns used: ``model_path, system, backend, precision, mode, isl, osl, gemm_quant_mode,
tp_size, pp_size, attention_dp_size, prefill_*/decode_* worker shapes, silicon_ttft_ms,
silicon_tpot_ms`` and ``silicon_concurrency=N`` inside ``silicon_data_source``.

- ITL = TPOT (ms -> s, decode only), TTFT (ms -> s); power is not measured (null).
- batch size = the benchmark concurrency (``silicon_concurrency``; the ``batch_size`` column is
  per attention-DP rank), falling back to ``batch_size`` x attention DP when absent.
- GPU count: ``agg`` = tp x pp x attention_dp of the single deployment; ``disagg`` = the sum over
  workers: prefill_workers x tp x pp x dp + decode_workers x tp x pp x dp.
- precision: the ``precision`` column (fp4 / fp8 / bf16); empty with no quant mode = bf16.
- ``output_throughput_tok_s`` is not measured and left null.
- layout (``agg`` rows; a disaggregated deployment is not one replica and has none): the source's
  ``tp_size``, ``pp_size``, ``attention_dp_size`` (empty: 1) and ``moe_ep_size`` (0 or empty:
  not stated) as ``tensor_parallel``, ``pipeline_parallel``, ``data_parallel`` and
  ``expert_parallel``; :mod:`predictors.measurements.layouts` then reads the rows whose
  ``tp_size`` is the world size of a wide-EP deployment (see docs/data.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl

from predictors.core.errors import DataError
from predictors.measurements.schema import (
    LAYOUT_COLUMNS,
    conform,
    empty_frame,
    frame_from_rows,
    normalize_engine,
    normalize_precision,
)

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


def _i(row: dict[str, Any], col: str, default: int = 1) -> int:
    v = row.get(col)
    return int(float(v)) if v not in (None, "") else default


def _gpus(row: dict[str, Any], prefix: str) -> int:
    shape = _i(row, f"{prefix}tp_size") * _i(row, f"{prefix}pp_size")
    return shape * max(_i(row, f"{prefix}attention_dp_size"), 1)


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
    raw = pl.read_csv(path, infer_schema_length=0)
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise DataError(f"{path}: not an aiconfigurator silicon CSV (lacks {', '.join(missing)})")
    rows = [_row(r, path, i) for i, r in enumerate(raw.iter_rows(named=True))]
    if not rows:
        return empty_frame()
    return conform(frame_from_rows(rows), origin=path)


def _row(r: dict[str, Any], path: Path, i: int) -> dict[str, Any]:
    mode = r["mode"]
    if mode == "agg":
        n_gpu = _gpus(r, "")
    elif mode == "disagg":
        n_gpu = _i(r, "prefill_num_workers") * _gpus(r, "prefill_") + _i(
            r, "decode_num_workers"
        ) * _gpus(r, "decode_")
    else:
        raise DataError(f"{path}: row {i + 2}: mode {mode!r} is neither agg nor disagg")
    m = _CONC.search(r.get("silicon_data_source") or "")
    if m:
        conc = float(m.group(1))
    else:
        conc = float(_i(r, "batch_size")) * max(_i(r, "attention_dp_size"), 1)
    prec_raw = r.get("precision") or r.get("gemm_quant_mode") or "bf16"
    return {
        "source": SOURCE,
        "model": r["model_path"],
        "gpu": r["system"],
        "gpu_count": n_gpu,
        "engine": normalize_engine(r["backend"]),
        "precision": normalize_precision(prec_raw),
        "batch_size": conc,
        "arrival_rate_rps": None,
        "input_tokens": float(r["isl"]),
        "output_tokens": float(r["osl"]),
        "power_w_per_gpu": None,
        "itl_s": float(r["silicon_tpot_ms"]) / 1000.0,
        "ttft_s": float(r["silicon_ttft_ms"]) / 1000.0,
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
    } | _layout(r, mode)
