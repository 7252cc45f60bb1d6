"""Fuzz round 22d: what a docs walkthrough met on the command line.

Each test failed before its fix: ``compare``'s 14-column table cut its numbers to ``5…`` at 80 to
120 columns and when redirected; ``catalog gpus|llms`` wrapped ids letter block by letter block
at 80 columns; a saved plan (sweep, report, …) JSON given as a scenario printed about 100 error
lines; ``pareto --points`` was described as "cost caps between the ends" and ``report
--pareto-points 1`` drew a silent 2-point front where ``pareto --points 1`` was refused;
``predict --engine vlm`` had no did-you-mean, nor ``--set 'modles[0]…'``; a bare family name
(``H100``) was taken for a variant silently by compare, validate and plan; the compact plan
table printed the wide table's ITL note; the plan views labelled CO2e ``CO2 kg``; help texts
stated other defaults than the code has; docs/cli.md and docs/method.md described rows and
answers the code does not produce. Numbers are never asserted exactly (the predictors are
retrained): the tests check structure and text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planner.analysis.compare import CompareRequest, CompareResult
from planner.analysis.compare_rows import CompareRow
from planner.analysis.compare_view import compare_section
from planner.text import least_width, num, sections_to_text
from tests.cli_runner import one_error_line, run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

REPO = Path(__file__).resolve().parent.parent
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
README_COMPARE = (
    "compare", "--model", LLAMA, "--requests-per-s", "2", "--itl-ms", "50",
    "--gpus", "L4,A30,L40S,H100", "--by", "energy",
)  # fmt: skip
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_BOX = "┏┃┡│├└┗┠┨┣┫"


def _table_lines(text: str) -> list[str]:
    return [line for line in _ANSI.sub("", text).splitlines() if line[:1] in _BOX]


def _as_terminal(monkeypatch: pytest.MonkeyPatch, columns: int | None) -> None:
    """Make rich see a terminal *columns* wide (None: a pipe, whatever COLUMNS says)."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", str(columns or 80))
    monkeypatch.setenv("TTY_COMPATIBLE", "1" if columns else "0")


# --- 1. compare never cuts a number -------------------------------------------------------------


@pytest.mark.slow
def test_compare_table_never_cuts_a_number_at_80_100_120_columns_or_redirected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = run_cli(*README_COMPARE, "-f", "json")
    assert data.code == 0, data.err
    rows = json.loads(data.out)["rows"]
    wanted = {
        num(r[key])
        for r in rows
        for key in ("energy_kwh", "cost_usd", "itl_ms", "wh_per_1k_output_tokens")
    }
    for columns in (80, 100, 120, None):
        _as_terminal(monkeypatch, columns)
        result = run_cli(*README_COMPARE)
        assert result.code == 0, result.err
        lines = _table_lines(result.out)
        assert lines, result.out
        assert not any("…" in line for line in lines), (columns, result.out)
        cells = {c.strip() for line in lines for c in line.split("│")}
        assert wanted <= cells, (columns, wanted - cells, result.out)
        assert max(len(line) for line in lines) <= (columns or 100), (columns, result.out)
        assert "--wide for every column" in result.out
    wide = run_cli(*README_COMPARE, "--wide")
    assert wide.code == 0, wide.err
    cells = {c.strip() for line in _table_lines(wide.out) for c in line.split("│")}
    assert {num(r["carbon_kg"]) for r in rows} <= cells and "W/GPU" in wide.out
    assert not any("…" in line for line in _table_lines(wide.out))


def _row(gpu: str, fits: bool, energy: float = 0.0, cost: float = 0.0) -> CompareRow:
    if not fits:
        return CompareRow(
            gpu, False, f"misses the ITL SLA on {gpu}: far too slow", True, "", None, 0, 0,
            None, None, None, None, None, None, None,
        )  # fmt: skip
    return CompareRow(
        gpu, True, "", True, "12 × [P 2×4 → D 3×8]", 8, 12, 96, 4.5, 350.0, 1.07, 11.3, energy,
        cost, True, 4.4, "8", 1, "disaggregated", energy * 0.58,
    )  # fmt: skip


def test_compare_numbers_stay_whole_when_they_outgrow_a_narrow_table() -> None:
    request = CompareRequest(LLAMA, 20.0, 4.5, gpus=("H100-SXM5-80GB", "L4"))
    rows = (_row("H100-SXM5-80GB", True, 25_181_234.0, 2_528_573_111.0), _row("L4", False))
    result = CompareResult(request, LLAMA, "bf16", 1.3, 369.0, rows)
    for wide in (False, True):
        section = compare_section(result, wide=wide)
        text = sections_to_text([section], max(80, least_width(section)))
        lines = _table_lines(text)
        assert not any("…" in line for line in lines), text
        assert "25,181,234" in text and "2,528,573,111" in text, text
        # why L4 has no fleet: a numbered note under the table, not a column squeezing numbers
        assert section.rows[1][2] == "no (1)", section.rows
        assert "(1) L4: misses the ITL SLA on L4: far too slow" in section.notes
    compact = compare_section(result, wide=False)
    assert least_width(compact) < least_width(compare_section(result, wide=True))


def test_catalog_tables_at_80_columns_keep_ids_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    _as_terminal(monkeypatch, 80)
    for kind, ids in (("gpus", ["H100-SXM5-80GB", "A100-SXM4-80GB"]), ("llms", [LLAMA])):
        result = run_cli("catalog", kind)
        assert result.code == 0, result.err
        text = _ANSI.sub("", result.out)
        assert max(len(line) for line in text.splitlines()) <= 80, text
        cells = {c.strip() for line in _table_lines(text) for c in line.split("│")}
        assert set(ids) <= cells, kind
        assert "not shown at 80 columns" in text and "--format csv" in text


# --- 2. an output JSON given as a scenario --------------------------------------------------------

_PLAN_LINE = (
    "a saved plan JSON (wattgpu plan --format json), not a scenario — give the scenario YAML, "
    "or use report, pareto or diff on it"
)


def test_a_saved_plan_given_as_a_scenario_is_one_line(tmp_path: Path) -> None:
    plan = tmp_path / "p.json"
    assert run_cli("plan", "paper-llama8b-low-load", "-f", "json", "-o", str(plan)).code == 0
    for command in ("plan", "validate", "sweep"):
        one_error_line(run_cli(command, str(plan)), f"{plan}: {_PLAN_LINE}")
    overlaid = run_cli("validate", "paper-llama8b-low-load", "--overlay", str(plan))
    one_error_line(overlaid, f"{plan}: {_PLAN_LINE}")


def test_other_output_documents_given_as_a_scenario_are_one_line(tmp_path: Path) -> None:
    documents = {
        "plan": ({"scenario": "x", "models": [], "allocations": [], "candidates": []}, _PLAN_LINE),
        "sweep": ({"scenario": "x", "base_outcome": {}, "records": []}, "a sweep JSON"),
        "report": ({"wattgpu_version": "0", "headline": {}, "models": []}, "a report JSON"),
        "compare": ({"request": {}, "rows": []}, "a comparison JSON"),
        "pareto": ({"scenario": "x", "points": [], "chosen": None}, "a Pareto front JSON"),
    }
    for name, (document, what) in documents.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        one_error_line(run_cli("validate", str(path)), f"{path}: {what}", "not a scenario")


# --- 3. pareto points -------------------------------------------------------------------------


def _words(text: str) -> str:
    return re.sub(r"[│╭╮╰╯─\s]+", " ", _ANSI.sub("", text))


def test_pareto_points_count_the_ends_and_report_refuses_a_one_point_front() -> None:
    helped = _words(run_cli("pareto", "--help").out)
    assert "Cost caps between the ends" not in helped
    assert "Points on the front, both ends" in helped
    one = run_cli("report", "paper-llama8b-low-load", "--pareto-points", "1")
    assert one.code == 2 and "Traceback" not in one.err
    assert "1 is not a front" in _words(one.err) and "0 for no front" in _words(one.err)


# --- 4. did-you-mean ----------------------------------------------------------------------------


def test_predict_engine_typo_gets_a_did_you_mean() -> None:
    result = run_cli("predict", "--model", LLAMA, "--gpu", "A30", "--engine", "vlm")
    one_error_line(result, "--engine: unknown 'vlm' (did you mean: vllm?)")


def test_a_misspelled_set_path_suggests_the_scenario_field() -> None:
    result = run_cli("validate", "paper-llama8b-low-load", "--set", "modles[0].name=x")
    one_error_line(result, "modles does not exist (did you mean: models?)", never=("list first",))


# --- 5. bare family names -------------------------------------------------------------------------

_H100_NOTE = "note: 'H100' does not name a variant: assumed H100-SXM5-80GB"
BARE_SCENARIO = """\
name: bare
region: US
horizon_hours: 8760
electricity_usd_per_kwh: 0.12
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s: 1, input_tokens: 512, output_tokens: 128}
    sla: {itl_ms: 80}
gpus:
  H100: {}
"""


@pytest.mark.slow
def test_a_bare_family_name_is_noted_by_compare_validate_and_plan(tmp_path: Path) -> None:
    compared = run_cli("compare", "--model", LLAMA, "--requests-per-s", "1", "--itl-ms", "80",
                       "--gpus", "H100", "-f", "json")  # fmt: skip
    assert compared.code == 0 and _H100_NOTE in compared.err, compared.err
    scenario = tmp_path / "bare.yaml"
    scenario.write_text(BARE_SCENARIO, encoding="utf-8")
    validated = run_cli("validate", str(scenario))
    assert validated.code == 0 and _H100_NOTE in validated.err, validated.err
    planned = run_cli("plan", str(scenario), "-f", "json", "-o", str(tmp_path / "p.json"))
    assert planned.code == 0 and _H100_NOTE in planned.err, planned.err
    full = run_cli("validate", "paper-llama8b-low-load")  # full ids: no note
    assert full.code == 0 and "note:" not in full.err


# --- 6 and 10. the plan views -----------------------------------------------------------------


@pytest.mark.slow
def test_plan_views_print_their_own_itl_note_and_label_co2e(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _as_terminal(monkeypatch, None)
    compact = run_cli("plan", "paper-llama8b-low-load")
    wide = run_cli("plan", "paper-llama8b-low-load", "--wide")
    md = run_cli("plan", "paper-llama8b-low-load", "-f", "md")
    assert compact.code == wide.code == md.code == 0
    assert "the SLA in brackets" not in _words(compact.out)
    assert "ITL srv/cap = mean ITL" in _words(compact.out)
    assert "the SLA in brackets" in _words(wide.out) and "the SLA in brackets" in md.out
    for text in (wide.out, md.out):
        assert "CO2e kg" in text and "CO2 kg" not in text


# --- 11. help texts and docs ---------------------------------------------------------------------


def test_help_states_the_data_default_and_every_report_format() -> None:
    default = "$WATTGPU_DATA, else ../shared/data/measurements beside the wattgpu checkout"
    for command in (("data", "summary"), ("train",), ("evaluate",)):
        assert default in _words(run_cli(*command, "--help").out), command
    summary = _words(run_cli("--help").out)
    assert "spdx, cyclonedx" in summary and "(md, html, json or text)" not in summary


def test_docs_describe_the_rows_and_answers_the_code_gives() -> None:
    cli = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "then end with\n`deployment_kind`" not in cli and "end with `deployment_kind`" not in cli
    assert "`deployment_kind`,\njust before the last field" in cli
    assert "compare` assumes 1,024 input" in cli and "`predict` 512 and 256" in cli
    method = (REPO / "docs" / "method.md").read_text(encoding="utf-8")
    assert "one H100 TP1 replica beside one prefill/decode unit" not in " ".join(method.split())
