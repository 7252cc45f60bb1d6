"""ML.ENERGY v3 leaderboard JSON (``public/data``) -> canonical measurement table.

Reads ``index.json`` for the list of LLM tasks (``architectures.llm``: gpqa, lm-arena-chat,
sourcegraph-fim) and ``tasks/{task}.json`` for their configurations. Diffusion (text-to-image,
text-to-video) and multimodal (image-chat, video-chat) tasks are ignored. ``models/*.json`` repeat
the same configurations per model and are not read (no double counting).

Physics (SOURCES.md): ``avg_power_watts`` is the TOTAL over all GPUs, so power per GPU =
avg_power_watts / num_gpus; ITL = median ITL (decode only); batch = measured ``avg_batch_size``;
``gpu_count = num_gpus`` (tensor x expert x data parallel); weight precision bfloat16 -> bf16,
fp8 -> fp8, mxfp4 -> fp4; engine vLLM.

Layout: vLLM runs ``num_gpus = tensor × data parallel`` GPUs; with ``--enable-expert-parallel``
the MoE layers use EP = TP × DP. The records carry ``tensor_parallel`` 1 for every MoE run, also
on 8 GPUs with ``data_parallel`` 1, which vLLM cannot run literally (TP 1 × DP 1 is one GPU): the
benchmark passes ``num_gpus`` as the tensor-parallel size unless its per-model config sets
``data-parallel-size`` (ml-energy/benchmark ``configs/vllm/<task>/<model>/<gpu>/``). So a row
is read as DP = ``data_parallel`` (empty: 1), TP = ``num_gpus / DP``, EP = ``expert_parallel``
(empty: TP × DP, the default rule); e.g. (8 GPUs, tp 1, ep 8, dp 1) is TP 8 × EP 8 and
(8 GPUs, tp 1, ep 8, dp 8) is attention DP 8 × EP 8 (docs/data.md).

The input length is not stated per row; unless a task JSON carries a mean input length
(``avg_input_len``), we use the documented per-task assumption :data:`ASSUMED_INPUT_TOKENS` and set
``input_tokens_assumed = True``. GPU "H100" is the SXM part (hint given).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from predictors.core.errors import DataError
from predictors.measurements.schema import (
    CELL_ERRORS,
    conform,
    empty_frame,
    frame_from_rows,
    normalize_precision,
    unreadable_row,
    whole_number,
)

SOURCE = "mlenergy-v3"
#: Assumed mean prompt lengths (tokens incl. chat template) per task -- not published per row.
#: gpqa: GPQA Diamond question + 4 options + instruction; lm-arena-chat: LMArena user prompts;
#: sourcegraph-fim: fill-in-the-middle prefix + suffix code context.
ASSUMED_INPUT_TOKENS = {"gpqa": 250.0, "lm-arena-chat": 200.0, "sourcegraph-fim": 1000.0}
GPU_HINTS = {"H100": "H100 SXM5 80GB|H100-SXM5-80GB|H100 SXM"}
_REQUIRED = (
    "model_id",
    "gpu_model",
    "num_gpus",
    "weight_precision",
    "avg_batch_size",
    "avg_output_len",
    "avg_power_watts",
    "median_itl_ms",
    "output_throughput_tokens_per_sec",
)


def is_v3_dir(path: Path) -> bool:
    """True when *path* holds a v3 ``index.json`` and a ``tasks`` folder."""
    idx = path / "index.json"
    if not (idx.is_file() and (path / "tasks").is_dir()):
        return False
    try:
        d = json.loads(idx.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        # an index.json beside a tasks folder is a v3 directory: a broken one is an error, not
        # a reason to skip the source silently (fuzz round 17)
        where = f" at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise DataError(
            f"{idx}: not valid JSON ({str(exc).splitlines()[0][:80]}{where}) — restore the "
            "ML.ENERGY v3 index.json (it lists the tasks to read)"
        ) from None
    return isinstance(d, dict) and "architectures" in d and "tasks" in d


def read_mlenergy_v3(path: Path) -> pl.DataFrame:
    """Read the LLM tasks of a v3 ``public/data`` directory."""
    index = _load(path / "index.json")
    tasks = sorted(index.get("architectures", {}).get("llm", []))
    rows: list[dict[str, Any]] = []
    for task in tasks:
        tfile = path / "tasks" / f"{task}.json"
        if not tfile.is_file():
            raise DataError(f"{tfile}: task listed in index.json but file missing")
        tdata = _load(tfile)
        mean_in = tdata.get("avg_input_len")
        configurations = tdata.get("configurations", [])
        if not isinstance(configurations, list):
            raise DataError(f"{tfile}: 'configurations' must be a list of configurations")
        for i, cfg in enumerate(configurations):
            try:
                rows.append(_row(cfg, task, tfile, i, mean_in))
            except CELL_ERRORS as exc:  # one bad configuration never stops the others
                names = (cfg.get("model_id"), cfg.get("gpu_model")) if isinstance(cfg, dict) else ()
                rows.append(unreadable_row(SOURCE, tfile, f"configuration {i}", exc, *names))
    if not rows:
        return empty_frame()
    return conform(frame_from_rows(rows), origin=path)


def _load(file: Path) -> dict[str, Any]:
    try:
        d = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{file}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    except RecursionError:
        raise DataError(f"{file}: not a readable JSON file (nested too deeply)") from None
    if not isinstance(d, dict):
        raise DataError(f"{file}: expected a JSON object")
    return d


def _row(
    cfg: dict[str, Any], task: str, file: Path, i: int, mean_in: float | None
) -> dict[str, Any]:
    missing = [k for k in _REQUIRED if cfg.get(k) is None]
    if missing:
        raise DataError(f"{file}: configuration {i}: lacks {', '.join(missing)}")
    n_gpu = whole_number(cfg["num_gpus"], "num_gpus")
    dp = whole_number(cfg.get("data_parallel") or 1, "data_parallel")
    if n_gpu % dp:
        raise DataError(
            f"{file}: configuration {i}: num_gpus {n_gpu} is not a multiple of data_parallel "
            f"{dp}; expected num_gpus = tensor x data parallel"
        )
    ep = cfg.get("expert_parallel")
    assumed = mean_in is None
    gpu = str(cfg["gpu_model"])
    return {
        "source": SOURCE,
        "model": cfg["model_id"],
        "gpu": gpu,
        "gpu_count": n_gpu,
        "engine": "vllm",
        "precision": normalize_precision(str(cfg["weight_precision"])),
        "batch_size": float(cfg["avg_batch_size"]),
        "arrival_rate_rps": None,
        "input_tokens": float(mean_in) if mean_in is not None else ASSUMED_INPUT_TOKENS[task],
        "output_tokens": float(cfg["avg_output_len"]),
        "power_w_per_gpu": float(cfg["avg_power_watts"]) / n_gpu,
        "itl_s": float(cfg["median_itl_ms"]) / 1000.0,
        "ttft_s": None,
        "output_throughput_tok_s": float(cfg["output_throughput_tokens_per_sec"]),
        "itl_includes_prefill": False,
        "quality": "ok",
        "model_raw": cfg["model_id"],
        "gpu_raw": gpu,
        "file": str(file),
        "gpu_hint": GPU_HINTS.get(gpu),
        "task": task,
        "input_tokens_assumed": assumed,
        "note": (
            f"tp={cfg.get('tensor_parallel')} ep={cfg.get('expert_parallel')} "
            f"dp={cfg.get('data_parallel')} max_num_seqs={cfg.get('max_num_seqs')}"
        ),
        "tensor_parallel": n_gpu // dp,
        "pipeline_parallel": 1,
        "data_parallel": dp,
        "expert_parallel": whole_number(ep, "expert_parallel") if ep else None,
    }
