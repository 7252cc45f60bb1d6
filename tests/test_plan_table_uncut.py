"""The plan table never cuts an id or a number, in a file or a pipe as on a terminal.

Before, a table sent to a file (``-o plan.txt``) or a pipe was printed at a fixed 100 columns
(140 with ``--wide``) and rich cut what did not fit: a long model entry name became
``multilingual-customer-…`` and two GPUs cut to ``H100-SXM5-80…`` read the same. The table now
wraps its prose at spaces and runs wider than 100 columns when its ids and numbers need it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli

ENTRY = "multilingual-customer-support-assistant-for-the-eu-region"
SCENARIO = f"""\
name: long-ids
horizon_hours: 8760
region: US
electricity_usd_per_kwh: 0.12
objective: {{minimize: energy}}
engine: vllm
precision: bf16
gpus:
  H100-SXM5-80GB: {{}}
  A100-SXM4-80GB: {{}}
models:
  - name: {ENTRY}
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {{requests_per_s: 2.0, input_tokens: 1024, output_tokens: 256}}
    sla: {{itl_ms: 100}}
"""


def _table_cells(text: str) -> set[str]:
    return {
        cell.strip().removesuffix(" †")
        for line in text.splitlines()
        if line.startswith("│")
        for cell in line.split("│")
    }


@pytest.mark.parametrize("wide", [(), ("--wide",)])
def test_file_and_pipe_tables_keep_long_ids_whole(tmp_path: Path, wide: tuple[str, ...]) -> None:
    scenario = tmp_path / "long-ids.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    out = tmp_path / "plan.txt"
    written = run_cli("plan", str(scenario), *wide, "-o", str(out))
    assert written.code == 0, written.err
    piped = run_cli("plan", str(scenario), *wide)
    assert piped.code == 0, piped.err
    for text in (out.read_text(encoding="utf-8"), piped.out):
        cells = _table_cells(text)
        assert ENTRY in cells, text
        assert cells & {"H100-SXM5-80GB", "A100-SXM4-80GB"}, text
        table = [line for line in text.splitlines() if line[:1] in "┏┃┡│├└"]
        assert not any("…" in line for line in table), text
        # the entry name alone is 57 characters: the compact table runs past 100 columns
        assert max(len(line) for line in table) > 100, text
