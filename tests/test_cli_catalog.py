"""CLI tests for ``wattgpu catalog`` (gpus, llms, regions, show, validate)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from test_catalog import FILLED, REQUIRED_GPUS
from typer.testing import CliRunner

from planner.cli.app import app, main

runner = CliRunner()

GPU_ROW = {
    "id": "TEST-GPU",
    "aliases": "",
    "vendor": "NVIDIA",
    "architecture": "Hopper",
    "form_factor": "SXM5",
    "release_year": "2022",
    "memory_gb": "80",
    "memory_bandwidth_gb_s": "3350",
    "tdp_w": "700",
    "idle_power_w": "70",
    "idle_power_source": "test",
    "fp16_tflops_dense": "989",
    "source": "test",
}
LLM_ROW = {
    "id": "org/Test-8B",
    "aliases": "",
    "family": "llama",
    "model_type": "llama",
    "total_params_b": "8.03",
    "active_params_b": "8.03",
    "num_layers": "32",
    "hidden_size": "4096",
    "num_attention_heads": "32",
    "num_kv_heads": "8",
    "head_dim": "128",
    "vocab_size": "128256",
    "default_dtype": "bf16",
    "is_moe": "false",
    "attention_kind": "full",
    "tie_word_embeddings": "false",
    "source": "test",
}


def write(path: Path, rows: list[dict[str, str]]) -> None:
    """Write rows as a catalog CSV; optional columns may be left out."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


@pytest.mark.slow
def test_gpus_json_lists_every_required_id_with_core_fields() -> None:
    result = runner.invoke(app, ["catalog", "gpus", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {r["id"]: r for r in json.loads(result.stdout)}
    for gpu_id in REQUIRED_GPUS:
        assert gpu_id in rows, gpu_id
        for col in FILLED:
            assert isinstance(rows[gpu_id][col], int | float) and rows[gpu_id][col] > 0
    assert isinstance(rows["H100-SXM5-80GB"]["aliases"], list)
    assert "source" in rows["T4"]


def test_gpus_csv_and_table() -> None:
    result = runner.invoke(app, ["catalog", "gpus", "--format", "csv"])
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    by_id = {r["id"]: r for r in rows}
    assert "NVIDIA H100 80GB HBM3" in by_id["H100-SXM5-80GB"]["aliases"].split("|")
    table = runner.invoke(app, ["catalog", "gpus"])
    assert table.exit_code == 0
    assert "MI300X" in table.stdout


def test_regions_json() -> None:
    result = runner.invoke(app, ["catalog", "regions", "-f", "json"])
    assert result.exit_code == 0
    rows = {r["region_id"]: r for r in json.loads(result.stdout)}
    assert rows["DE"]["kind"] == "country" and rows["DE"]["g_co2_per_kwh"] > 0
    assert "aws:eu-central-1" in rows


def test_show_resolves_nvidia_smi_name() -> None:
    result = runner.invoke(app, ["catalog", "show", "NVIDIA H100 80GB HBM3", "--format", "json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert row["kind"] == "gpu" and row["id"] == "H100-SXM5-80GB"
    assert row["memory_bandwidth_gb_s"] == 3350
    table = runner.invoke(app, ["catalog", "show", "nvidia h100 80gb hbm3"])
    assert "H100-SXM5-80GB" in table.stdout and "idle_power_source" in table.stdout


def test_show_region() -> None:
    result = runner.invoke(app, ["catalog", "show", "Germany", "-f", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["region_id"] == "DE"


def test_show_unknown_exits_1_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["catalog", "show", "H100 SXM7"])
    assert info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: unknown GPU, LLM or region 'H100 SXM7' (did you mean:")


def test_user_catalog_option(tmp_path: Path) -> None:
    user = tmp_path / "user"
    write(user / "llms.csv", [{**LLM_ROW, "id": "me/Only-Mine", "aliases": "only-mine-model"}])
    result = runner.invoke(
        app, ["catalog", "llms", "--format", "json", "--user-catalog", str(user)]
    )
    assert result.exit_code == 0, result.output
    assert "me/Only-Mine" in {r["id"] for r in json.loads(result.stdout)}
    shown = runner.invoke(app, ["catalog", "show", "only-mine-model", "--user-catalog", str(user)])
    assert "me/Only-Mine" in shown.stdout


def test_validate_bundled_and_bad_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok = runner.invoke(app, ["catalog", "validate"])
    assert ok.exit_code == 0 and ok.stdout.startswith("ok:")
    bad = tmp_path / "bad"
    write(bad / "gpus.csv", [{**GPU_ROW, "memory_bandwidth_gb_s": "0"}, {**GPU_ROW}])
    with pytest.raises(SystemExit) as info:
        main(["catalog", "validate", str(bad)])
    assert info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2
    assert any("row 2, column 'memory_bandwidth_gb_s'" in line for line in err)
    assert any("row 3, column 'id': duplicate id" in line for line in err)


def test_gpus_json_prices_with_source_and_date_and_measured_idle() -> None:
    result = runner.invoke(app, ["catalog", "gpus", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    priced = [r for r in rows if r["usd_per_hour"] is not None]
    assert len(priced) >= 28  # every GPU the public price tables offer (catalogs/README.md)
    for r in priced:
        assert r["price_source"] and r["price_date"] and r["price_n_providers"] >= 1, r["id"]
        assert r["usd_per_hour_min"] <= r["usd_per_hour"]
    measured = [r for r in rows if r["idle_power_source"].startswith("measured")]
    assert len(measured) == 10
    for gpu in ("T4", "L4", "A10G", "A30", "L40S", "A100-SXM4-80GB", "H100-SXM5-80GB", "B200"):
        assert next(r for r in rows if r["id"] == gpu)["usd_per_hour"] is not None, gpu


def test_show_bare_name_states_the_assumption() -> None:
    table = runner.invoke(app, ["catalog", "show", "A100"])
    assert table.exit_code == 0, table.output
    assert "A100-SXM4-80GB" in table.stdout
    assert "note: 'A100' does not name a variant: assumed A100-SXM4-80GB" in table.stdout
    shown = json.loads(runner.invoke(app, ["catalog", "show", "H200", "-f", "json"]).stdout)
    assert shown["id"] == "H200-SXM-141GB"
    assert any("assumed H200-SXM-141GB" in n for n in shown["notes"])
    exact = json.loads(runner.invoke(app, ["catalog", "show", "NVIDIA H200", "-f", "json"]).stdout)
    assert "notes" not in exact  # the nvidia-smi name names the variant


def test_show_quantised_checkpoint_states_the_resolution() -> None:
    result = runner.invoke(app, ["catalog", "show", "nvidia/DeepSeek-R1-NVFP4", "-f", "json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert row["kind"] == "llm" and row["id"] == "deepseek-ai/DeepSeek-R1"
    assert row["resolved_from"] == "nvidia/DeepSeek-R1-NVFP4" and row["implied_precision"] == "fp4"
    assert "quantised checkpoint (NVFP4) of deepseek-ai/DeepSeek-R1" in row["notes"][0]


def test_show_unpriced_gpu_says_so() -> None:
    result = runner.invoke(app, ["catalog", "show", "MI250"])
    assert result.exit_code == 0
    assert "note: no price: no provider in the public price tables offers MI250" in result.stdout
