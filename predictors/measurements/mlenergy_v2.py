"""ML.ENERGY v2 (2024) JSON tree -> canonical measurement table.

Layout ``{task}/{GPU}/{org}/{model}/bs{N}+tp{T}+pp{P}.json``, fields ``Model, GPU, TP, PP,
Energy/req (J)`` (summed over GPUs), ``Avg TPOT (s), Token tput (tok/s), Avg Output Tokens,
Avg BS (reqs), Max BS (reqs)``. vLLM 0.4.2, saturated offline batches. Physics (SOURCES.md):

- power per GPU = Energy/req / Avg Output Tokens * Token tput / (TP * PP);
- ITL = Avg TPOT (decode only, ``itl_includes_prefill = False``);
- batch size = the mean number of decoding sequences by Little's law, ``Token tput x Avg TPOT``
  (:func:`running_sequences`), not ``Avg BS``; ``gpu_count = TP * PP``;
- task (chat / code) from the folder, kept in ``task``.

``Avg BS`` is the scheduler's batch at its ``max_num_seqs`` (every kept run is within 5 % of
it), not the sequences decoding on average: the source's own throughput and mean TPOT put the
mean decoding batch (Little's law: sequences = token throughput x time per token) at 0.98 x
``Avg BS`` below 100 sequences, and 1.7-1.9 x below it above 700 (median over the 314 runs
1.17 x, up to 2.97 x), and 14 of the 21 runs whose ``Avg BS`` sequences could not hold their KV
cache in memory fit at the Little's-law batch. ``Avg BS`` stays in ``note``.

A run file that cannot be read is dropped with its reason, naming the field (``Avg TPOT (s):
'fast' is not a number``, ``Model is empty (required)``); load.py names the file by its path
under the data directory (the file names repeat in every model folder).

Input length is not published per run: we assume :data:`ASSUMED_INPUT_TOKENS` per task and set
``input_tokens_assumed = True``. Precision: the models' native 16-bit weights as served by vLLM
("auto", resolved from the LLM catalog's default dtype in load.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from predictors.core.errors import DataError
from predictors.measurements.schema import (
    CELL_ERRORS,
    conform,
    empty_frame,
    frame_from_rows,
    unreadable_row,
    whole_number,
)

SOURCE = "mlenergy-v2"
FILE_PATTERN = re.compile(r"^bs\d+\+tp\d+\+pp\d+\.json$")
#: Assumed mean prompt lengths (tokens): chat = ShareGPT-style prompts, code = code prompts.
ASSUMED_INPUT_TOKENS = {"chat": 250.0, "code": 400.0}
_DEFAULT_INPUT = 300.0
_FIELDS = (
    "Model",
    "GPU",
    "TP",
    "PP",
    "Energy/req (J)",
    "Avg TPOT (s)",
    "Token tput (tok/s)",
    "Avg Output Tokens",
    "Avg BS (reqs)",
)


def find_v2_files(root: Path) -> list[Path]:
    """All ``bs*+tp*+pp*.json`` run files under *root* (sorted)."""
    if root.is_file():
        return [root] if FILE_PATTERN.match(root.name) else []
    return sorted(p for p in root.rglob("*.json") if FILE_PATTERN.match(p.name))


def read_mlenergy_v2(path: Path) -> pl.DataFrame:
    """Read every v2 run file under *path* (a tree root, or one run file)."""
    rows = [_read_run(f, path) for f in find_v2_files(path)]
    if not rows:
        return empty_frame()
    return conform(frame_from_rows(rows), origin=path)


def _task_of(file: Path, root: Path) -> str:
    """The task folder: four levels above the file ({task}/{GPU}/{org}/{model}/file)."""
    parts = file.parts
    return parts[-5] if len(parts) >= 5 else root.name


def running_sequences(token_throughput_tok_s: float, mean_tpot_s: float) -> float:
    """Mean number of decoding sequences of a saturated run (Little's law): each produces one
    token per ``mean_tpot_s``, so ``throughput x TPOT`` of them produce the token throughput."""
    return token_throughput_tok_s * mean_tpot_s


def _read_run(file: Path, root: Path) -> dict[str, object]:
    """The row of one run file, or its :func:`unreadable_row` (one bad run never stops the
    others)."""
    try:
        return _row(file, root)
    except CELL_ERRORS as exc:
        return unreadable_row(SOURCE, file, "run", exc)


def _number(d: dict[str, object], field: str) -> float:
    """The number in *field* of a run file; ValueError naming the field when it is none."""
    try:
        return float(d[field])  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{field}: {str(d[field])[:40]!r} is not a number") from None


def _row(file: Path, root: Path) -> dict[str, object]:
    try:
        d = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{file}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    except RecursionError:
        raise DataError(f"{file}: not a readable JSON file (nested too deeply)") from None
    if not isinstance(d, dict):
        raise DataError(f"{file}: a run file must be a JSON object")
    missing = [k for k in _FIELDS if k not in d]
    if missing:
        raise DataError(f"{file}: missing fields {', '.join(missing)}")
    for field in ("Model", "GPU"):  # named here, with the field, not later by its column
        if d[field] is None or str(d[field]).strip() == "":
            raise DataError(f"{field} is empty (required)")
    n_gpu = whole_number(d["TP"], "TP") * whole_number(d["PP"], "PP")
    out_tok = _number(d, "Avg Output Tokens")
    if out_tok == 0:
        raise DataError("Avg Output Tokens: 0 (a run's mean output length is positive)")
    tput = _number(d, "Token tput (tok/s)")
    power = _number(d, "Energy/req (J)") / out_tok * tput / n_gpu
    tpot = _number(d, "Avg TPOT (s)")
    avg_bs = _number(d, "Avg BS (reqs)")
    task = _task_of(file, root)
    return {
        "source": SOURCE,
        "model": d["Model"],
        "gpu": d["GPU"],
        "gpu_count": n_gpu,
        "engine": "vllm",
        "precision": "auto",
        "batch_size": running_sequences(tput, tpot),
        "arrival_rate_rps": None,
        "input_tokens": ASSUMED_INPUT_TOKENS.get(task, _DEFAULT_INPUT),
        "output_tokens": out_tok,
        "power_w_per_gpu": power,
        "itl_s": tpot,
        "ttft_s": None,
        "output_throughput_tok_s": tput,
        "itl_includes_prefill": False,
        "quality": "ok",
        "model_raw": d["Model"],
        "gpu_raw": d["GPU"],
        "file": str(file),
        "gpu_hint": None,
        "task": task,
        "input_tokens_assumed": True,
        "note": (f"tp={d['TP']} pp={d['PP']} max_bs={d.get('Max BS (reqs)')} avg_bs={avg_bs:.6g}"),
    }
