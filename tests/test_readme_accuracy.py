"""The README's held-out accuracy figures are the ones the shipped model card and
docs/accuracy.md state, and the card states the evaluation stored beside it.

Before, ``wattgpu evaluate --metrics-to`` rewrote ``evaluation_summary.json`` and the card's
residuals but not the card's ``metrics``, so after the ITL change of 1b50bd4 every report quoted
the previous evaluation (LOGO ITL 24.7 % where the README says 24.0 %), and the README's LOLO and
per-layout ITL figures were those of earlier evaluations."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TRAINED = ROOT / "predictors" / "trained"


def _metrics() -> dict[tuple[str, str], dict[str, Any]]:
    card = json.loads((TRAINED / "model_card.json").read_text(encoding="utf-8"))
    return {(m["target"], m["split"]): m for m in card["metrics"]}


def _bullets() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("\n- ", text.index("the median absolute error is:"))
    return " ".join(text[start : text.index("\n\n", start)].split())


def test_the_card_states_the_stored_evaluation() -> None:
    stored = json.loads((TRAINED / "evaluation_summary.json").read_text(encoding="utf-8"))
    card = json.loads((TRAINED / "model_card.json").read_text(encoding="utf-8"))
    assert card["metrics"] == stored


def test_readme_accuracy_bullets_are_the_cards() -> None:
    m, text = _metrics(), _bullets()

    def number(pattern: str) -> float:
        found = re.search(pattern, text)
        assert found, pattern
        return float(found.group(1))

    dc, logo = m[("itl", "logo-nvidia-dc")], m[("itl", "logo")]
    assert number(r"NVIDIA datacenter GPU: \*\*([\d.]+) %") == round(dc["mdape_pct"], 1)
    assert number(r"intervals cover ([\d.]+) %") == round(dc["coverage_90_pct"], 1)
    assert number(r"wide \(median upper/lower bound ([\d.]+)\)") == round(
        dc["median_hi_over_lo"], 1
    )
    assert number(r"GPU ranking τ only ([\d.]+)") == round(dc["kendall_tau_gpu"], 3)
    assert number(r"of all 13: ([\d.]+) %") == round(logo["mdape_pct"], 1)
    assert number(r"of all 13: [\d.]+ % \(coverage ([\d.]+) %") == round(logo["coverage_90_pct"], 1)
    power, ttft = m[("power", "logo")], m[("ttft", "logo")]
    assert number(r"power per GPU on an unseen GPU: \*\*([\d.]+) %") == round(power["mdape_pct"], 1)
    assert number(r"power per GPU .*?interval covers ([\d.]+) %") == round(
        power["coverage_90_pct"], 1
    )
    assert number(r"time to first token on an unseen GPU: \*\*([\d.]+) %") == round(
        ttft["mdape_pct"], 1
    )
    assert number(r"unseen LLMs: ITL ([\d.]+) %") == round(m[("itl", "lolo")]["mdape_pct"], 1)
    assert number(r"unseen LLMs: ITL [\d.]+ %, power ([\d.]+) %") == round(
        m[("power", "lolo")]["mdape_pct"], 1
    )


def test_readme_layout_figures_are_the_accuracy_reports() -> None:
    report = (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
    logo_itl = {}
    for line in report.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 4 and cells[0] == "leave-one-GPU-out (LOGO)" and "(" in cells[1]:
            logo_itl[cells[1].split(" (")[0]] = float(cells[3])
    text = _bullets()
    readme = {
        "pure TP": r"pure TP ([\d.]+) %",
        "TP × PP": r"multi-node ([\d.]+) %",
        "EP": r"expert parallel ([\d.]+) %",
        "attention DP": r"attention DP ([\d.]+) %",
        "NVL72": r"NVL72 ([\d.]+) %",
    }
    assert set(readme) <= set(logo_itl), logo_itl
    for layout, pattern in readme.items():
        found = re.search(pattern, text)
        assert found and float(found.group(1)) == logo_itl[layout], layout
