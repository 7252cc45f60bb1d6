"""The "Disaggregated prefill/decode units" section of docs/serving-accuracy.md renders both
readings of the rows that leave their worker counts empty, from the held-out predictions."""

from __future__ import annotations

import polars as pl

from predictors.training.disagg_accuracy import HeldOut
from predictors.training.disagg_report import render_section


def _predictions(ttft_ratio: float, workers: float) -> pl.DataFrame:
    n = 6
    return pl.DataFrame(
        {
            "gpu": ["B200", "GB200"] * 3,
            "model": ["deepseek-ai/DeepSeek-R1"] * n,
            "engine": ["tensorrt-llm"] * n,
            "error": [""] * n,
            "workers_stated": [True, True, False, False, False, False],
            "ttft_s": [1.0] * n,
            "pred_ttft_s": [1.2, 0.9, *([ttft_ratio] * 4)],
            "itl_s": [0.01] * n,
            "pred_itl_s": [0.011] * n,
            "output_throughput_tok_s": [1000.0] * n,
            "pred_throughput_tok_s": [1100.0] * n,
            "prefill_workers_read": [1.0, 2.0, *([workers] * 4)],
            "decode_workers_read": [1.0, 1.0, *([2 * workers] * 4)],
        }
    )


def test_both_readings_of_rows_without_worker_counts_are_reported() -> None:
    h = HeldOut(_predictions(1.5, 3.0), _predictions(4.0, 1.0), {"B200": "κ=0"}, "κ=0")
    text = "\n".join(render_section(h))
    assert "### Rows that leave their worker counts empty" in text
    assert "| sized for the loop | 4 | 50.0 % |" in text
    assert "| one worker each | 4 | 300.0 % |" in text
    assert "median of 3 prefill and 6 decode worker(s), at most 3 and 6." in text
    # the stated rows' table still reads only the two stated rows
    stated = text.split("### Rows that state their worker counts")[1].split("###")[0]
    assert "| all | 2 | 0 | 15.0 % |" in stated
