"""A misspelt required key is one error line that says to rename it (fuzz round 31).

Before, ``sla: {itl: 30}`` gave two lines for one typo, "models[0].sla.itl_ms: required but missing
— add it" and "models[0].sla.itl: unknown key 'itl' (did you mean: itl_ms?) — remove it", and a
layout's ``{gpus: 16}`` got no did-you-mean for ``gpu_count`` at all.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli_runner import run_cli

SCENARIO = """name: typo
region: US
electricity_usd_per_kwh: 0.1
gpus:
  H100-SXM5-80GB: {{layouts: [{layout}]}}
models:
  - name: a
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {{requests_per_s: 1, input_tokens: 512, output_tokens: 128}}
    sla: {sla}
"""


def _errors(tmp_path: Path, layout: str, sla: str) -> list[str]:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(layout=layout, sla=sla), encoding="utf-8")
    result = run_cli("validate", str(path))
    assert result.code == 1, result.out
    return result.err.strip().splitlines()


def test_a_misspelt_required_key_is_one_line_saying_rename(tmp_path: Path) -> None:
    lines = _errors(tmp_path, "{gpu_count: 1}", "{itl: 30}")
    assert len(lines) == 1, lines
    assert (
        "models[0].sla.itl: unknown key 'itl', and itl_ms is required here — rename it to "
        in (lines[0])
    )
    assert "required but missing" not in lines[0]


def test_a_layout_key_far_from_its_name_is_still_paired(tmp_path: Path) -> None:
    lines = _errors(tmp_path, "{gpus: 2}", "{itl_ms: 30}")
    assert len(lines) == 1, lines
    assert "layouts[0].gpus: unknown key 'gpus', and gpu_count is required here" in lines[0]


def test_two_unknown_keys_with_one_missing_pair_only_the_close_one(tmp_path: Path) -> None:
    lines = _errors(tmp_path, "{gpu_count: 1}", "{itl: 30, colour: red}")
    assert len(lines) == 2, lines
    assert any("sla.itl: unknown key 'itl', and itl_ms is required here" in x for x in lines)
    assert any("sla.colour: unknown key 'colour'" in x and "remove it" in x for x in lines)


def test_an_unknown_key_beside_a_present_required_key_is_still_removed(tmp_path: Path) -> None:
    lines = _errors(tmp_path, "{gpu_count: 1}", "{itl_ms: 30, itl: 20}")
    assert len(lines) == 1, lines
    assert "sla.itl: unknown key 'itl'" in lines[0] and "— remove it" in lines[0]
