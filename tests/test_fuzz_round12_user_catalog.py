"""Findings of the round-12 fuzzer on user catalogs (GPUs and LLMs nobody measured).

* A TDP in kW (0.7) or in tens of kW, a memory of 1 GB (negative usable memory, "at least -30
  GPUs"), parameters written as a raw count in a column of billions, KV heads that do not divide
  the attention heads and a sliding-window model without its window were accepted; a TDP far
  beyond the measured GPUs' was "in domain".
* A GPU like H100 but with twice the memory got a worse plan than H100 (the ladder stopped one
  group after the first that met the SLA, so the wider layout that serves best was never tried).
* A trailing blank line made every column of a catalog row "empty", and a predict input row.
* Messages: a negative price also said "usd_per_hour_min given without usd_per_hour"; did-you-mean
  listed one GPU three times by its aliases; an unknown GPU key made by --set blamed the file; a
  user_catalog naming a file said "not found"; a rental-only GPU under price_basis tco said it
  had neither price; domain reasons wrote 999999999999.9999.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

from predictors.core.paths import catalogs_dir
from tests.cli_runner import one_error_line, run_cli
from tests.test_cli_catalog import LLM_ROW, write

LLAMA70 = "meta-llama/Llama-3.1-70B-Instruct"


def _h100(**changes: Any) -> dict[str, Any]:
    """The bundled H100 SXM row as a user GPU ``X-H100`` with *changes*."""
    gpus = pl.read_csv(catalogs_dir() / "gpus.csv", infer_schema=False)
    row: dict[str, Any] = gpus.filter(pl.col("id") == "H100-SXM5-80GB").row(0, named=True)
    return {**row, "id": "X-H100", "aliases": "", "assumed_aliases": "", **changes}


def _catalog(folder: Path, gpus: list[dict[str, Any]], tail: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(gpus[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(gpus)
    (folder / "gpus.csv").write_text(out.getvalue() + tail, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("changes", "column", "says"),
    [
        ({"tdp_w": "0.7", "idle_power_w": "0.105"}, "tdp_w", "below 10 W"),
        ({"tdp_w": "70000"}, "tdp_w", "above 10,000 W"),
        ({"memory_gb": "1"}, "memory_gb", "below 2 GB"),
        ({"memory_gb": "85899345920"}, "memory_gb", "above 100,000 GB"),
        ({"memory_bandwidth_gb_s": "3.35"}, "memory_bandwidth_gb_s", "below 10 GB/s"),
    ],
)
def test_gpu_values_of_another_unit_are_refused(
    tmp_path: Path, changes: dict[str, str], column: str, says: str
) -> None:
    folder = _catalog(tmp_path / "cat", [_h100(**changes)])
    result = run_cli("catalog", "validate", str(folder))
    line = one_error_line(result, "gpus.csv row 2", f"column '{column}'", says, "fix:")
    assert "a unit mistake?" in line


def test_a_negative_price_is_one_problem(tmp_path: Path) -> None:
    folder = _catalog(tmp_path / "cat", [_h100(usd_per_hour="-1")])
    one_error_line(run_cli("catalog", "validate", str(folder)), "'usd_per_hour'", "greater than")


def test_blank_lines_are_no_rows(tmp_path: Path) -> None:
    folder = _catalog(tmp_path / "cat", [_h100()], tail="\n\n")
    result = run_cli("catalog", "validate", str(folder))
    assert result.code == 0, result.err
    rows = tmp_path / "rows.csv"
    rows.write_text("model,gpu\n\nmeta-llama/Llama-3.1-8B-Instruct,H100-SXM5-80GB\n\n,\n")
    result = run_cli("predict", "--input", str(rows))
    assert result.code == 0, result.err
    (row,) = csv.DictReader(io.StringIO(result.out))
    assert row["error"] == "" and float(row["itl_s"]) > 0


@pytest.mark.parametrize(
    ("changes", "column", "says"),
    [
        ({"num_kv_heads": "7"}, "num_kv_heads", "do not divide 32"),
        ({"attention_kind": "sliding"}, "sliding_window", "without its window"),
        (
            {"total_params_b": "8030000000", "active_params_b": "8030000000"},
            "total_params_b",
            "raw",
        ),
    ],
)
def test_llm_rows_that_cannot_be_right_are_refused(
    tmp_path: Path, changes: dict[str, str], column: str, says: str
) -> None:
    folder = tmp_path / "cat"
    write(folder / "llms.csv", [{**LLM_ROW, **changes}])
    result = run_cli("catalog", "validate", str(folder))
    assert result.code == 1
    assert any(f"column '{column}'" in x and says in x for x in result.errors), result.errors


def test_a_tdp_far_beyond_the_measured_gpus_is_out_of_domain(tmp_path: Path) -> None:
    folder = _catalog(tmp_path / "cat", [_h100(tdp_w="7000")])
    result = run_cli(
        "predict", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "X-H100",
        "--user-catalog", str(folder), "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    out = json.loads(result.out)
    assert not out["in_domain"]
    assert (
        "GPU board power (TDP) 7,000 W beyond 2 × the largest measured (1,400 W)"
        in (out["domain_reason"])
    )


def _plan(folder: Path, gpu: str) -> dict[str, Any]:
    scenario = {
        "name": "more-memory",
        "grid_g_co2_per_kwh": 369,
        "electricity_usd_per_kwh": 0.12,
        "user_catalog": "cat",
        "gpus": {gpu: {}},
        "models": [
            {
                "name": "big",
                "model": LLAMA70,
                "load": {"requests_per_s": 3, "input_tokens": 1024, "output_tokens": 256},
                "sla": {"itl_ms": 60},
            }
        ],
    }
    path = folder / f"{gpu}.yaml"
    path.write_text(yaml.safe_dump(scenario), encoding="utf-8")
    out = folder / f"{gpu}.json"
    result = run_cli("plan", str(path), "-f", "json", "-o", str(out))
    assert result.code == 0, result.err
    plan: dict[str, Any] = json.loads(out.read_text())
    return plan


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_a_gpu_with_more_memory_is_planned_no_worse(tmp_path: Path) -> None:
    """X-H100 is H100 with twice the memory: it fits Llama-3.1-70B on one GPU, and met the SLA
    on 2 × TP 2 (20,214 kWh), never trying the TP 4 that serves best on H100 (18,125 kWh)."""
    _catalog(tmp_path / "cat", [_h100(memory_gb="160", usd_per_hour="2.95")])
    h100, more = _plan(tmp_path, "H100-SXM5-80GB"), _plan(tmp_path, "X-H100")
    assert more["totals"]["energy_kwh"] <= h100["totals"]["energy_kwh"] * (1 + 1e-9)
    assert more["totals"]["cost_usd"] <= h100["totals"]["cost_usd"] * (1 + 1e-9)


def test_did_you_mean_names_each_gpu_once() -> None:
    result = run_cli("catalog", "show", "H100-SXM5")
    line = one_error_line(result, "did you mean: H100-SXM5-80GB,")
    assert "h100" not in line.split("did you mean")[1].lower().replace("h100-sxm5-80gb", "")


def test_an_unknown_gpu_made_by_set_names_the_set(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "s", "region": "US", "electricity_usd_per_kwh": 0.1,
        "gpus": {"L4": {}}, "models": [{"name": "m", "model": "meta-llama/Llama-3.1-8B-Instruct",
        "load": {"requests_per_s": 1, "input_tokens": 100, "output_tokens": 100},
        "sla": {"itl_ms": 100}}]}))  # fmt: skip
    result = run_cli("validate", str(path), "--set", "gpus.H100-SXM5-80G.available=0")
    one_error_line(result, "s.yaml --set gpus.H100-SXM5-80G.available=0:", "did you mean: H100")


def test_a_user_catalog_naming_a_file_says_so(tmp_path: Path) -> None:
    folder = _catalog(tmp_path / "cat", [_h100()])
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "s", "region": "US", "electricity_usd_per_kwh": 0.1,
        "user_catalog": "cat/gpus.csv", "models": [{"name": "m", "model": LLAMA70,
        "load": {"requests_per_s": 1, "input_tokens": 100, "output_tokens": 100},
        "sla": {"itl_ms": 100}}]}))  # fmt: skip
    one_error_line(run_cli("validate", str(path)), "is a file, not a directory", str(folder))
    result = run_cli("catalog", "gpus", "--user-catalog", str(folder / "gpus.csv"))
    assert result.code != 0


def test_a_rental_only_gpu_under_tco_asks_for_a_purchase_price(tmp_path: Path) -> None:
    _catalog(tmp_path / "cat", [_h100(list_price_usd="", list_price_source="")])
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "s", "region": "US", "electricity_usd_per_kwh": 0.1,
        "user_catalog": "cat", "price_basis": "tco", "gpus": {"X-H100": {}},
        "models": [{"name": "m", "model": "meta-llama/Llama-3.1-8B-Instruct",
        "load": {"requests_per_s": 1, "input_tokens": 100, "output_tokens": 100},
        "sla": {"itl_ms": 100}}]}))  # fmt: skip
    one_error_line(
        run_cli("validate", str(path)),
        "gpus.X-H100.purchase_price_usd: price_basis tco needs a purchase price",
        never=("neither a rental nor a list price",),
    )
