"""Fuzz round 20a: ``wattgpu compare``.

Each test failed before its fix: ``-o`` replaced the ``--models`` card compare had read; a GPU
type's row depended on the other types listed (T4 alone: refused for needing 417 replicas; with
B200: a T4 fleet of 807 replicas); a type without a rental price read "no price" where a plan
costs it on TCO; ``--deployment disaggregated`` dropped a type that forms no unit; the final
error blamed the SLA when no type had the memory; row reasons named ``sla.itl_ms``; unknown
``--model``/``--region`` errors named no option; the table cut GPU ids until two read the
same; ``--region`` changed no figure; ``--engine trtllm`` was echoed as typed; units were planned
for engines without disaggregated serving."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

#: Slow: every test runs compare, plan, pareto or sweep end to end (about 0.3-1.4 s each); the
#: default run keeps the faster checks of the same code (tests/test_cli_plan.py, test_flags.py).
pytestmark = [pytest.mark.usefixtures("cached_predictor"), pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
BASE = ("compare", "-m", LLAMA_8B, "--itl-ms", "50")


def _rows(*args: str) -> list[dict[str, str]]:
    result = run_cli(*BASE, *args, "-f", "csv")
    assert result.code in (0, 1), result.err
    return list(csv.DictReader(io.StringIO(result.out)))


def test_compare_never_replaces_the_models_it_reads(tmp_path: Path) -> None:
    models = tmp_path / "m"
    shutil.copytree(REPO / "predictors" / "trained", models)
    before = (models / "model_card.json").read_bytes()
    result = run_cli(
        *BASE, "--requests-per-s", "1", "--gpus", "A30", "--models", str(models),
        "-f", "json", "-o", str(models / "model_card.json"),
    )  # fmt: skip
    assert result.code == 1 and "is the input file" in result.errors[0]
    assert (models / "model_card.json").read_bytes() == before


def test_a_rows_fleet_size_never_depends_on_the_other_types() -> None:
    alone = _rows("--requests-per-s", "2000", "--gpus", "T4")
    both = _rows("--requests-per-s", "2000", "--gpus", "T4,B200")
    t4 = [r for r in both if r["gpu"] == "T4"]
    assert alone[0]["fits"] == t4[0]["fits"] == "false"
    # 417 replicas before the 2026-12-06 retrain, 427 after: the count is the model's
    assert re.search(r"needs \d+ replicas", t4[0]["reason"]) and t4[0]["reason"].endswith(
        "(--requests-per-s)"
    )
    assert any(r["gpu"] == "B200" and r["fits"] == "true" for r in both)


def test_a_type_without_a_rental_price_is_costed_on_tco_as_plan_does(tmp_path: Path) -> None:
    rows = _rows("--requests-per-s", "1", "--gpus", "H200-NVL-141GB", "--by", "cost")
    assert rows[0]["priced"] == "true" and float(rows[0]["cost_usd"]) > 0
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: nvl\nregion: US\nelectricity_usd_per_kwh: 0.12\nobjective: {minimize: cost}\n"
        "gpus:\n  H200-NVL-141GB: {}\nmodels:\n  - name: compare\n"
        f"    model: {LLAMA_8B}\n    load: {{requests_per_s: 1, input_tokens: 1024, "
        "output_tokens: 256}\n    sla: {itl_ms: 50}\n    min_replicas: 1\n",
        encoding="utf-8",
    )
    result = run_cli("plan", str(scenario), "-f", "json", "-o", str(tmp_path / "p.json"))
    assert result.code == 0, result.err
    plan = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    assert float(rows[0]["cost_usd"]) == pytest.approx(plan["totals"]["cost_usd"], rel=1e-9)


def test_a_type_with_no_price_at_all_reads_no_price(tmp_path: Path) -> None:
    with open(REPO / "catalogs" / "gpus.csv", encoding="utf-8", newline="") as fh:
        rows = {r["id"]: r for r in csv.DictReader(fh)}
    row = {**rows["L4"], "id": "X-L4-UNPRICED", "aliases": "", "assumed_aliases": ""}
    row |= {k: "" for k in row if k.startswith(("usd_per_hour", "list_price"))}
    with open(tmp_path / "gpus.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(row))
        w.writeheader()
        w.writerow(row)
    result = run_cli(
        *BASE, "--requests-per-s", "1", "--gpus", "X-L4-UNPRICED,L4",
        "--user-catalog", str(tmp_path), "-f", "csv",
    )  # fmt: skip
    assert result.code == 0, result.err
    row = next(r for r in csv.DictReader(io.StringIO(result.out)) if r["gpu"] == "X-L4-UNPRICED")
    assert row["priced"] == "false" and row["cost_usd"] == ""
    assert "no $/hour" in row["reason"]


def test_disaggregated_rows_name_every_type_asked() -> None:
    args = ("--requests-per-s", "1", "--gpus", "T4,H200", "--deployment", "disaggregated")
    result = run_cli(
        "compare", "-m", "moonshotai/Kimi-K2-Instruct", "--itl-ms", "80", *args, "-f", "csv"
    )
    rows = list(csv.DictReader(io.StringIO(result.out)))
    t4 = [r for r in rows if r["gpu"] == "T4"]
    assert t4 and t4[0]["fits"] == "false" and "no prefill/decode unit on T4" in t4[0]["reason"]


def test_no_type_with_the_memory_says_memory() -> None:
    result = run_cli(
        "compare", "-m", "moonshotai/Kimi-K2-Instruct", "--requests-per-s", "3",
        "--itl-ms", "60", "--gpus", "T4",
    )  # fmt: skip
    assert result.code == 1
    assert "does not fit in memory on any GPU type" in result.errors[0]


def test_row_reasons_and_errors_name_compares_options() -> None:
    rows = _rows("--requests-per-s", "1", "--gpus", "A100", "--itl-ms", "0.001")
    assert "--itl-ms is in milliseconds" in rows[0]["reason"] and "sla." not in rows[0]["reason"]
    model = run_cli("compare", "-m", "meta-llama/Llama-3.1-8B-Instruc", "--requests-per-s",
                    "1", "--itl-ms", "50")  # fmt: skip
    assert model.errors[0].startswith("error: --model: unknown llm")
    region = run_cli(*BASE, "--requests-per-s", "1", "--region", "USS")
    assert region.errors[0].startswith("error: --region: unknown region")


def test_the_table_never_cuts_a_gpu_id(tmp_path: Path) -> None:
    gpus = "A100,A100-SXM4-40GB,V100-SXM2-16GB,V100"
    out = tmp_path / "t.txt"
    result = run_cli(*BASE, "--requests-per-s", "1", "--gpus", gpus, "-o", str(out))
    assert result.code == 0, result.err
    text = out.read_text(encoding="utf-8")
    for gpu in ("A100-SXM4-80GB", "A100-SXM4-40GB", "V100-SXM2-16GB", "V100-SXM2-32GB"):
        assert gpu in text


def test_the_region_sets_each_rows_carbon() -> None:
    us = _rows("--requests-per-s", "1", "--gpus", "A30", "--region", "US")
    fr = _rows("--requests-per-s", "1", "--gpus", "A30", "--region", "FR")
    assert us[0]["energy_kwh"] == fr[0]["energy_kwh"]
    assert float(fr[0]["carbon_kg"]) < float(us[0]["carbon_kg"])


def test_the_engine_is_written_canonical_and_units_need_a_disaggregating_engine() -> None:
    result = run_cli(*BASE, "--requests-per-s", "1", "--gpus", "A30", "--engine", "trtllm",
                     "-f", "json")  # fmt: skip
    assert json.loads(result.out)["request"]["engine"] == "tensorrt-llm"
    refused = run_cli(*BASE, "--requests-per-s", "1", "--gpus", "A30", "--engine", "llama.cpp",
                      "--deployment", "both")  # fmt: skip
    assert refused.code == 1 and "serves no disaggregated prefill/decode" in refused.errors[0]


def test_a_scenario_asking_units_of_an_engine_without_them_is_refused(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: x\nengine: llama.cpp\ndeployment: both\nregion: US\n"
        "electricity_usd_per_kwh: 0.1\ngpus: {L4: {}}\nmodels:\n"
        f"  - name: a\n    model: {LLAMA_8B}\n    load: {{requests_per_s: 1, input_tokens: "
        "512, output_tokens: 128}\n    sla: {itl_ms: 60}\n",
        encoding="utf-8",
    )
    result = run_cli("validate", str(scenario))
    assert result.code == 1
    assert "deployment: engine llama.cpp serves no disaggregated" in result.out + result.err
