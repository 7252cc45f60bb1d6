"""Fuzz round 28 (predict contract): a row with an error keeps the layout it stated.

Before: the four layout output columns were empty on a row with an error, so the user's
``expert_parallel`` 2 on a dense model (or ``pipeline_parallel`` 4 that does not fit) was gone,
and the output fed back was predicted at the usual layout with no error (1,240 of 3,590 error
rows of a random 5,000-row file changed on the second pass)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

HEADER = "model,gpu,gpu_count,batch_size,input_tokens,output_tokens,"
ROWS = (
    HEADER
    + """pipeline_parallel,data_parallel,expert_parallel
meta-llama/Llama-3.1-8B-Instruct,H100,2,1,512,256,,,2
Qwen/Qwen3-30B-A3B,H100,2,1,512,256,,2,4
meta-llama/Llama-3.1-70B-Instruct,L40S,4,64,4096,1024,4,,
meta-llama/Llama-3.1-8B-Instruct,H100,2,1,512,256,,,
meta-llama/Llama-3.1-8B-Instruct,H100,2,1,512,256,,,x
"""
)
INPUTS = ["model", "gpu", "gpu_count", "batch_size", "input_tokens", "output_tokens"]
LAYOUT = ["tensor_parallel", "pipeline_parallel", "data_parallel", "expert_parallel"]


def _predict(folder: Path, name: str, text: str) -> list[dict[str, str]]:
    src, out = folder / f"{name}.csv", folder / f"{name}.out.csv"
    src.write_text(text, encoding="utf-8")
    result = run_cli("predict", "--input", str(src), "--output", str(out))
    assert result.code == 0, result.err
    with out.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
def test_error_rows_show_their_stated_layout_and_keep_it_when_fed_back(tmp_path: Path) -> None:
    first = _predict(tmp_path, "first", ROWS)
    stated = [(r["pipeline_parallel"], r["data_parallel"], r["expert_parallel"]) for r in first]
    assert stated[:3] == [("", "", "2"), ("", "2", "4"), ("4", "", "")]
    assert stated[4] == ("", "", "")  # no whole number to show: its error quotes the cell
    assert [bool(r["error"]) for r in first] == [True, True, True, False, True]
    assert (first[3]["tensor_parallel"], first[3]["expert_parallel"]) == ("2", "1")
    # the output's inputs and layout, fed back as a spreadsheet round trip would
    lines = [",".join(INPUTS + LAYOUT)]
    lines += [",".join(r[c] for c in INPUTS + LAYOUT) for r in first[:4]]
    second = _predict(tmp_path, "second", "\n".join(lines) + "\n")
    for a, b in zip(first[:4], second, strict=True):
        assert bool(a["error"]) == bool(b["error"]), (a["error"], b["error"])
        assert (a["itl_s"], a["power_w_per_gpu"]) == (b["itl_s"], b["power_w_per_gpu"])
        assert [a[c] for c in LAYOUT[1:]] == [b[c] for c in LAYOUT[1:]]
