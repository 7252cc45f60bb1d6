"""CLI tests for ``wattgpu plan`` and ``wattgpu compare`` (every format, overrides, errors).

The trained predictors are loaded once per module (``Predictor.load`` is patched to return the
cached instance) so the commands only pay for prediction and solving.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planner.cli.app import app, main
from planner.report.plan_csv import CSV_COLUMNS
from planner.text import num, to_json
from predictors.core.errors import WattgpuError

runner = CliRunner()
REPO = Path(__file__).resolve().parent.parent
PAPER = str(REPO / "scenarios" / "paper-llama8b-low-load.yaml")
LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
COMPARE_GPUS = "L4,H200-NVL-141GB,A100-SXM4-80GB,H100-SXM5-80GB"


pytestmark = pytest.mark.usefixtures("cached_predictor")


def _invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=True)


def _plan_json(*args: str) -> dict[str, Any]:
    result = _invoke("plan", PAPER, "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


# --- plan ----------------------------------------------------------------------------------------


def test_plan_json_is_the_contract() -> None:
    data = _plan_json()
    assert data["scenario"] == "paper-llama8b-low-load"
    assert data["status"] == "optimal"
    for key in ("solve", "assumptions", "models", "inventory", "candidates", "allocations"):
        assert key in data
    assert set(data["inventory"]) == {"L4", "A30", "H100-SXM5-80GB"}
    assert data["allocations"][0]["gpu"] in data["inventory"]
    assert "NaN" not in json.dumps(data) and "Infinity" not in json.dumps(data)


def test_plan_table_shows_plan_and_baselines() -> None:
    result = _invoke("plan", PAPER)
    assert result.exit_code == 0, result.output
    out = result.stdout
    for text in ("paper-llama8b-low-load", "optimal", "chat-8b", "savings vs baselines", "h100"):
        assert text in out
    data = _plan_json()
    alloc = data["allocations"][0]
    assert alloc["gpu"] in out
    assert num(data["totals"]["energy_kwh"]) in out
    assert "excluded candidates" not in out


def test_plan_table_candidates_lists_exclusions() -> None:
    result = _invoke("plan", PAPER, "--candidates", "--set", "models[0].sla.itl_ms=60")
    assert result.exit_code == 0, result.output
    assert "excluded candidates" in result.stdout
    assert "> SLA 60 ms" in result.stdout


def test_plan_markdown_has_tables() -> None:
    result = _invoke("plan", PAPER, "--format", "md")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "# wattgpu plan"
    assert "## allocations" in lines and "## savings vs baselines" in lines
    assert any(line.startswith("| model entry | GPU |") for line in lines)
    assert any(line.startswith("| chat-8b |") for line in lines)


def test_plan_csv_one_row_per_allocation() -> None:
    result = _invoke("plan", PAPER, "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    data = _plan_json()
    assert len(rows) == len(data["allocations"]) >= 1
    header = result.stdout.splitlines()[0].split(",")
    assert header[: len(CSV_COLUMNS)] == list(CSV_COLUMNS)
    row, alloc = rows[0], data["allocations"][0]
    assert row["gpu"] == alloc["gpu"] and int(row["replicas"]) == alloc["replicas"]
    assert json.loads(row["requests_per_s_by_period"]) == alloc["requests_per_s_by_period"]
    assert float(row["energy_kwh"]) == pytest.approx(alloc["energy_kwh"])


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_plan_set_override_changes_the_plan() -> None:
    base = _plan_json()
    chosen = base["allocations"][0]["gpu"]
    changed = _plan_json("--set", f"gpus.{chosen}.available=0")
    assert changed["status"] == "optimal"
    assert chosen not in {a["gpu"] for a in changed["allocations"]}
    assert changed["totals"]["energy_kwh"] > base["totals"]["energy_kwh"]
    more = _plan_json("--set", "models[0].load.requests_per_s=20")
    assert sum(a["requests_per_s_by_period"][0] for a in more["allocations"]) == pytest.approx(20)
    assert more["totals"]["energy_kwh"] > base["totals"]["energy_kwh"]


def test_plan_unknown_gpu_in_set_is_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["plan", PAPER, "--set", "gpus.H100-SXM9.available=1"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: ") and "H100-SXM9" in err[0] and "did you mean" in err[0]


def test_plan_output_writes_file(tmp_path: Path) -> None:
    target = tmp_path / "out" / "plan.json"
    result = _invoke("plan", PAPER, "--format", "json", "--output", str(target))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["status"] == "optimal"
    table = tmp_path / "plan.txt"
    assert _invoke("plan", PAPER, "-o", str(table)).exit_code == 0
    assert "savings vs baselines" in table.read_text(encoding="utf-8")


def test_plan_infeasible_exits_1_with_reasons() -> None:
    result = _invoke("plan", PAPER, "--set", "models[0].sla.itl_ms=1")
    assert result.exit_code == 1
    assert "infeasible" in result.stdout
    flat = " ".join(result.stdout.split())
    assert "chat-8b: misses the ITL SLA on L4, A30, H100-SXM5-80GB: best ITL achievable" in flat
    assert "> SLA 1 ms" in flat


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_plan_without_file_uses_default_scenario(tmp_path: Path) -> None:
    target = tmp_path / "default.json"
    result = _invoke("plan", "--format", "json", "-o", str(target))
    assert result.exit_code == 0, result.output
    assert json.loads(target.read_text(encoding="utf-8"))["scenario"] == "enterprise-fleet"


def test_to_json_writes_null_for_non_finite() -> None:
    assert json.loads(to_json({"a": float("inf"), "b": [float("nan"), 1.5]})) == {
        "a": None,
        "b": [None, 1.5],
    }


# --- compare -------------------------------------------------------------------------------------


def _compare(*args: str) -> dict[str, Any]:
    result = _invoke(
        "compare", "--model", LLAMA_8B, "--requests-per-s", "2", "--itl-ms", "60", *args
    )
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


@pytest.mark.parametrize("by", ["energy", "cost"])
def test_compare_ranking_respects_by(by: str) -> None:
    data = _compare("--gpus", COMPARE_GPUS, "--by", by, "--format", "json")
    rows = data["rows"]
    assert {r["gpu"] for r in rows} == set(COMPARE_GPUS.split(","))
    fits = [r for r in rows if r["fits"]]
    assert len(fits) >= 2
    assert rows[: len(fits)] == fits, "fitting GPUs come first"
    if by == "energy":
        energies = [r["energy_kwh"] for r in fits]
        assert energies == sorted(energies)
    else:
        priced = [r for r in fits if r["priced"]]
        assert fits[: len(priced)] == priced
        costs = [r["cost_usd"] for r in priced]
        assert costs == sorted(costs)
    nvl = next(r for r in rows if r["gpu"] == "H200-NVL-141GB")
    # no public H200 NVL rental price: costed on TCO from its list price, as plan costs it
    assert nvl["priced"] is True and nvl["cost_usd"] > 0 and "TCO" in nvl["reason"]
    assert data["request"]["region"] == "US"


@pytest.mark.slow
def test_compare_table_and_csv() -> None:
    result = _invoke(
        "compare",
        "-m",
        LLAMA_8B,
        "--requests-per-s",
        "1",
        "--itl-ms",
        "60",
        "--gpus",
        "L4,H200-NVL-141GB",
    )
    assert result.exit_code == 0, result.output
    # H200 NVL has no rental price: costed on TCO (tests/test_fuzz_round20_compare.py has a GPU
    # with neither price, whose cells read "no price")
    assert "no price" not in result.stdout and "region US" in result.stdout
    csv_out = _invoke(
        "compare",
        "-m",
        LLAMA_8B,
        "--requests-per-s",
        "1",
        "--itl-ms",
        "60",
        "--gpus",
        "L4",
        "--format",
        "csv",
    )
    rows = list(csv.DictReader(io.StringIO(csv_out.stdout)))
    assert [r["gpu"] for r in rows] == ["L4"]
    assert float(rows[0]["wh_per_1k_output_tokens"]) > 0


def test_compare_unknown_model_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "--model", "Llama-3.1-8B-Instrct", "--requests-per-s", "1",
              "--itl-ms", "50"])  # fmt: skip
    assert exit_info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did you mean" in err[0] and "Llama-3.1-8B-Instruct" in err[0]


@pytest.mark.slow
def test_compare_nothing_fits_is_an_error() -> None:
    result = _invoke("compare", "-m", LLAMA_8B, "--requests-per-s", "1", "--itl-ms", "1",
                     "--gpus", "L4", "--format", "json")  # fmt: skip
    assert isinstance(result.exception, WattgpuError)
    assert "no GPU type meets" in str(result.exception)
    rows = json.loads(result.stdout)["rows"]
    assert rows[0]["fits"] is False and "SLA 1 ms" in rows[0]["reason"]


@pytest.mark.slow
def test_compare_nothing_meets_the_ttft_names_the_ttft() -> None:
    """A TTFT no GPU meets was reported as the (met) ITL limit alone."""
    result = _invoke("compare", "-m", LLAMA_8B, "--requests-per-s", "1", "--itl-ms", "50",
                     "--ttft-ms", "0.01", "--gpus", "H100", "--format", "json")  # fmt: skip
    assert isinstance(result.exception, WattgpuError)
    assert "ITL ≤ 50 ms and TTFT ≤ 0.01 ms" in str(result.exception)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--input-tokens", "200000"), "--input-tokens: 200,256 tokens"),
        (("--engine", "vlm"), "--engine: 'vlm' is not allowed (did you mean: vllm?)"),
    ],
)
def test_compare_errors_name_its_options_not_scenario_fields(
    args: tuple[str, ...], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """compare builds a one-model scenario from its options; its errors named that scenario's
    fields (``models[0].load.input_tokens``), which the user never typed."""
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "-m", LLAMA_8B, "--requests-per-s", "1", "--itl-ms", "50", *args])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert "models[0]" not in err[0] and "input_tokens" not in err[0]


def test_option_text_replaces_whole_field_paths_only() -> None:
    from planner.analysis.compare_errors import option_text

    assert option_text("models[0].sla.ttft_ms: too small; raise ttft_ms") == (
        "--ttft-ms: too small; raise ttft_ms"
    )
    assert option_text("lower input_tokens or output_tokens") == (
        "lower --input-tokens or --output-tokens"
    )
    assert option_text("gpus.H100.region: x") == "gpus.H100.region: x"  # not a top-level field
    assert option_text("max_input_tokens_x") == "max_input_tokens_x"


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_predict_at_a_poisson_load() -> None:
    args = ["predict", "--model", LLAMA_8B, "--gpu", "A30", "--input-tokens", "1024"]
    result = _invoke(*args, "--requests-per-s", "0.33", "--format", "json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["requests_per_s"] == pytest.approx(0.33)
    assert out["concurrency"] > 0.33 * 256 * out["itl_s"] * 0.99  # Little's law, TTFT on top
    assert out["itl_s_p90"] >= out["itl_s"] and out["ttft_s_at_load"] > 0
    table = _invoke(*args, "--requests-per-s", "0.33")
    assert table.exit_code == 0 and "p90 ITL" in table.output and "concurrency" in table.output
    too_much = _invoke(*args, "--requests-per-s", "500")
    assert too_much.exit_code != 0
    assert "--requests-per-s: 500 is more than one replica carries" in str(too_much.exception)


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_predict_takes_a_stated_layout() -> None:
    """The single form takes the batch contract's layout columns as options: DeepSeek-V3 at 600
    running sequences of 4,096 + 1,024 tokens on 8 H200 does not fit at TP 8 (eight copies of the
    latent KV cache) and fits at attention DP 8; a layout the GPUs cannot form is refused."""
    args = ["predict", "--model", "deepseek-ai/DeepSeek-V3", "--gpu", "H200-SXM-141GB"]
    args += ["--gpu-count", "8", "--batch-size", "600", "--input-tokens", "4096"]
    args += ["--output-tokens", "1024"]
    tp = _invoke(*args)
    assert tp.exit_code != 0 and "held 8 times" in str(tp.exception)
    dp = _invoke(*args, "--data-parallel", "8", "--format", "json")
    assert dp.exit_code == 0, dp.output
    out = json.loads(dp.stdout)
    assert (out["tensor_parallel"], out["data_parallel"], out["expert_parallel"]) == (1, 8, 8)
    assert "TP 1 × PP 1 × DP 8, EP 8" in _invoke(*args, "--data-parallel", "8").output
    bad = _invoke(*args, "--data-parallel", "3")
    assert bad.exit_code != 0 and "data_parallel = 3" in str(bad.exception)
