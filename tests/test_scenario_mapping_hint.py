"""A scenario section given as a bare value names what the mapping should hold."""

from __future__ import annotations

from pathlib import Path

from tests.cli_runner import run_cli

BASE = """name: hint
region: US
electricity_usd_per_kwh: 0.1
pue: 1.2
gpus: {{H100-SXM5-80GB: {{}}}}
models:
  - name: a
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {load}
    sla: {{itl_ms: 50}}
"""


def _validate(tmp_path: Path, text: str) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    result = run_cli("validate", str(path))
    assert result.code == 1
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    return lines[0]


def test_a_bare_objective_kind_is_shown_as_the_mapping_it_means(tmp_path: Path) -> None:
    text = (
        BASE.format(load="{requests_per_s: 1, input_tokens: 512, output_tokens: 128}")
        + "objective: carbon\n"
    )
    line = _validate(tmp_path, text)
    assert line.endswith(
        "objective: expected a mapping { key: value }, got text 'carbon' — give a mapping "
        "{ key: value } such as {minimize: carbon}"
    ), line


def test_a_bare_number_for_a_section_lists_its_keys(tmp_path: Path) -> None:
    line = _validate(tmp_path, BASE.format(load="3"))
    assert "models[0].load: expected a mapping { key: value }, got 3" in line
    assert line.endswith(
        "with the keys requests_per_s, input_tokens, output_tokens, "
        "daily_profile, requests_per_s_by_period"
    ), line


def test_text_that_no_key_takes_lists_the_keys_too(tmp_path: Path) -> None:
    text = (
        BASE.format(load="{requests_per_s: 1, input_tokens: 512, output_tokens: 128}")
        + "objective: cheapest\n"
    )
    line = _validate(tmp_path, text)
    assert line.endswith("with the keys minimize, weights"), line
