"""The "Disaggregated prefill/decode units" section of docs/serving-accuracy.md (issue 19):
held-out accuracy of :mod:`predictors.serving.disagg` on the measured disaggregated runs, from
:mod:`predictors.training.disagg_accuracy`."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from predictors.catalog.store import Catalog
from predictors.serving.disagg import DEFAULT_SETTINGS
from predictors.training.disagg_accuracy import (
    THROUGHPUT_BAND,
    TPOT_TARGET_PCT,
    TTFT_TARGET_PCT,
    HeldOut,
    held_out,
    settings_label,
    summarise,
)
from predictors.training.report_format import fmt, table


def _verdict(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _rows(summary: pl.DataFrame) -> list[list[str]]:
    lo, hi = THROUGHPUT_BAND
    out = []
    for r in summary.iter_rows(named=True):
        ratio = r["throughput_ratio"]
        out.append(
            [
                str(r["gpu"]),
                f"{r['rows']:,}",
                str(r["refused"]),
                f"{fmt(r['ttft_mdape_pct'])} %",
                f"{fmt(r['tpot_mdape_pct'])} %",
                fmt(ratio, 2),
                f"{fmt(r['throughput_mdape_pct'])} %",
                " / ".join(
                    _verdict(ok)
                    for ok in (
                        r["ttft_mdape_pct"] <= TTFT_TARGET_PCT,
                        r["tpot_mdape_pct"] <= TPOT_TARGET_PCT,
                        ratio is not None and lo <= ratio <= hi,
                    )
                ),
            ]
        )
    return out


def _median(frame: pl.DataFrame, column: str) -> str:
    return fmt(frame[column].median(), 0) if frame.height else "–"


def _max(frame: pl.DataFrame, column: str) -> str:
    return fmt(frame[column].max(), 0) if frame.height else "–"


def _reading_row(label: str, summary: pl.DataFrame) -> str:
    r = summary.filter(pl.col("gpu") == "all").row(0, named=True)
    return (
        f"| {label} | {r['rows']:,} | {fmt(r['ttft_mdape_pct'])} % | "
        f"{fmt(r['tpot_mdape_pct'])} % | {fmt(r['throughput_ratio'], 2)} |"
    )


HEADERS = [
    "held-out GPU",
    "rows",
    "refused",
    "TTFT MdAPE",
    "TPOT MdAPE",
    "throughput/GPU median predicted / measured",
    "throughput/GPU MdAPE",
    "targets met (TTFT / TPOT / throughput)",
]


def render_section(h: HeldOut) -> list[str]:
    """The section's Markdown lines from the held-out predictions *h*."""
    pred = h.predictions
    stated = pred.filter(pl.col("workers_stated"))
    unstated = pred.filter(~pl.col("workers_stated"))
    one_each = h.one_each.filter(~pl.col("workers_stated"))
    refused = pred.filter(pl.col("error") != "")
    reasons = refused.group_by("gpu", "model", "engine", "error").len().sort("gpu", "model")
    lo, hi = THROUGHPUT_BAND
    lines = [
        "## Disaggregated prefill/decode units",
        "",
        'The disaggregated serving model (docs/method.md, "Disaggregated prefill and decode")',
        "on aiconfigurator's measured disaggregated runs, each predicted at its measured",
        "configuration (prefill and decode workers, each side's layout) by predictors retrained",
        "without any row of the held-out GPU (its aggregated and disaggregated rows; model",
        "selection and calibration inside the fold, `predictors.training.disagg_accuracy`). Each",
        "run is a closed loop of `N` users: it is predicted at the unit rate whose mean number",
        "in the unit is `N` (Little's law); measured throughput = `N · O / (TTFT + (O − 1) ·",
        "TPOT)` (the source publishes none), per GPU over both pools. Rows are predicted in their",
        "source's protocol (its indicator), as `wattgpu evaluate` predicts held-out rows.",
        f"Targets (issue 19): TTFT MdAPE ≤ {TTFT_TARGET_PCT:g} %, TPOT MdAPE ≤",
        f"{TPOT_TARGET_PCT:g} %, signed median throughput ratio within {lo:g}–{hi:g}.",
        "",
        "### Every measured disaggregated row",
        "",
        *table(HEADERS, _rows(summarise(pred))),
        "",
        "### Rows that state their worker counts",
        "",
        f"{stated.height:,} of the {pred.height:,} rows state both worker counts; the others",
        "give each side's layout but leave the counts empty (next section), so the rows that",
        "state them are the cleaner check.",
        "",
        *table(HEADERS, _rows(summarise(stated))),
        "",
        "### Rows that leave their worker counts empty",
        "",
        "They are read as the smallest unit that can run their loop (docs/method.md,",
        '"Closed-loop runs"; `predictors.serving.disagg_sizing`): `⌈N / B⌉` decode workers at',
        "the decode worker's batch limit `B`, and the fewest prefill workers that keep up with",
        "them (utilisation at most 1 at the loop's rate); no measured latency enters the rule.",
        f"Sized this way, the {unstated.height:,} rows use a median of "
        f"{_median(unstated, 'prefill_workers_read')} prefill and "
        f"{_median(unstated, 'decode_workers_read')} decode worker(s), at most "
        f"{_max(unstated, 'prefill_workers_read')} and {_max(unstated, 'decode_workers_read')}.",
        "Read instead as one prefill and one decode worker each (the reading before",
        "2026-12-05, as the aggregated reading's GPU count does), a decode worker cannot hold the",
        "largest loops and the surplus users wait before prefill:",
        "",
        "| reading | rows | TTFT MdAPE | TPOT MdAPE | throughput/GPU median predicted / measured |",
        "|---|---|---|---|---|",
        _reading_row("sized for the loop", summarise(unstated)),
        _reading_row("one worker each", summarise(one_each)),
        "",
        "### Prefill-queue settings chosen inside the folds",
        "",
        "The model has no fitted parameter; its three prefill-queue choices (the share κ of the",
        "lone-prompt TTFT a prompt occupies a server for, whether the servers are the",
        "workers or their attention-DP ranks, and whether a closed-loop run's prompts reach",
        "the queue as a Poisson stream or in waves of all its users, which only the measured",
        "rows read) are chosen among fixed candidates by the lowest",
        "mean of TTFT, TPOT and throughput MdAPE on the training GPUs' rows that state their",
        "worker counts, predicted by the fold's predictors.",
        "",
        *table(["held-out GPU", "chosen"], [[g, c] for g, c in sorted(h.chosen.items())]),
        "",
        f"On every such row with the shipped predictors: {h.all_rows_choice}; the shipped",
        f"default (`DEFAULT_SETTINGS`) is {settings_label(DEFAULT_SETTINGS)}.",
        "",
        "### Refused rows",
        "",
    ]
    if refused.height:
        lines += table(
            ["GPU", "model", "engine", "rows", "reason"],
            [
                [r["gpu"], r["model"], r["engine"], str(r["len"]), r["error"]]
                for r in reasons.iter_rows(named=True)
            ],
        )
    else:
        lines.append("None.")
    lines += [
        "",
        "### Decided after seeing held-out numbers",
        "",
        "* The prefill queue's service time was first the lone-prompt TTFT; after predicting the",
        "  rows with the shipped (not held-out) predictors it became the prompt's compute, the",
        "  lone-prompt TTFT kept as latency, and the κ and per-rank candidates were added.",
        "* The first held-out run predicted every row in the planner's reference-source",
        "  protocol; it was switched to the row's own source, as `wattgpu evaluate` does.",
        "* The settings were first chosen on every training row; they are now chosen on the rows",
        "  that state their worker counts (κ = 0 both times; the servers changed from the DP",
        "  ranks to the workers).",
        "* The wave arrivals of closed-loop runs (`predictors.serving.disagg.wave_ttft_s`) were",
        "  added as a third choice after seeing held-out TTFT grow about linearly with the",
        "  number of users while the prefill pool was mostly idle; with it the choice moved to",
        "  the DP ranks as servers. Before: TTFT MdAPE 85.4 % on every row, 70.2 % on the rows",
        "  that state their worker counts.",
        "* The loader test allowed 3 refusals (memory rule, stated layout) until SGLang's",
        "  attention-DP ranks were found to copy only attention and embedding weights",
        "  (`predictors.physics.dp_copied_weight_bytes`); it now asserts that none is refused.",
        "* H100's TPOT (TP 16 over two 8-GPU nodes) was 0.39 x measured even in sample;",
        "  looking for why found that `Predictor.predict` pruned the column `layout_known`, so",
        "  a stated TP group was read as one NVLink domain and paid no network, while the",
        "  training and `wattgpu evaluate` frames kept it. Fixed as a bug (the prediction path",
        "  now gives what the full feature frame gives, on stated cross-node layouts too;",
        "  `tests/test_predictors.py`). Before: H100 TPOT MdAPE 48.8 % on every row, 61.2 %",
        "  on the rows that state their worker counts.",
        "* Rows that leave their worker counts empty were read as one prefill and one decode",
        "  worker until 2026-12-05; they are now sized for their loop",
        "  (`predictors.serving.disagg_sizing`), adopted after seeing this section's held-out",
        "  TTFT over-stated 2-15 times at 1,024-8,192 users, where one decode worker cannot hold",
        "  the loop. Before → after on every row (the same folds): TTFT MdAPE 71.4 → 56.7 %,",
        "  TPOT 30.9 → 31.0 %, throughput ratio 1.00 → 1.17, throughput MdAPE 29.0 → 30.8 %;",
        "  the rule was not varied (no other target utilisation or worker rule was tried). The",
        "  KV transfer's placement rule changed the same day for a physics property (one more",
        "  prefill worker never raises TTFT; docs/method.md), not for these numbers.",
        "* Sides that state every degree as 1 and whose weights cannot fit one GPU (GB200",
        "  DeepSeek-R1 SGLang rows) are read as the smallest fitting usual layout",
        "  (`predictors.measurements.disagg_rows`), decided after seeing them refused.",
        "* A replica's engine batch limit counts one scheduler per attention-DP rank",
        "  (`predictors.serving.grid.engine_max_batch`: DP times the engine's per-scheduler limit,",
        "  the batch grid extended from 2,048 to 65,536), adopted after reading this section's",
        "  TTFT over-stated up to 37 times (in sample, shipped predictors) on wide-EP decode",
        "  workers (TP 1 × DP 8-32) at 4,096-12,288 users: each worker was capped at one rank's",
        "  2,048 sequences, so the surplus users waited before prefill. The limit follows the",
        "  engines' per-rank scheduling (vLLM's engine core, SGLang's scheduler, TensorRT-LLM's",
        "  `max_batch_size`, each per DP rank); nothing was fitted and no other limit was tried.",
        "  Before → after on every row (the same folds): TTFT MdAPE 56.8 → 55.4 %, TPOT 31.5 →",
        "  31.3 %, throughput ratio 1.17 → 1.17; on the rows that state their worker counts TTFT",
        "  50.0 → 42.4 %, TPOT 27.9 → 24.9 %, throughput ratio 1.30 → 1.32 (the aggregated TTFT",
        "  check above, concurrency > 16: 64.7 → 64.8 %).",
        "",
    ]
    return lines


def disagg_section(data_dir: Path, catalog: Catalog) -> list[str]:
    """The section for the measurements under *data_dir* (empty without disaggregated rows)."""
    h = held_out(data_dir, catalog)
    return render_section(h) if h.predictions.height else []
