"""Fuzz round 21c: the engine capability table's reasons and fixes.

Each test failed before its fix: TensorRT-LLM and SGLang were predicted on V100 (both need
Ampere or newer); the GPU-generation and Gaudi checks read the free-text architecture by exact
spelling; a refusal's fix (more GPUs, pipeline stages across domains) was one the same engine then
refused; ``compare`` blamed memory or the SLA where the engine was the cause, and a disaggregated
deployment hid the engine's refusal; a stated layout on a GPU the engine does not run on stopped
the plan, while the same GPU without one was excluded; "1 GPUs"."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.catalog import engine_support
from predictors.catalog.store import load_catalog
from tests.cli_runner import one_error_line, plan_text, run_cli

REPO = Path(__file__).resolve().parents[1]


def test_tensorrt_llm_and_sglang_need_ampere_or_newer(predictor: Predictor) -> None:
    rows = pl.DataFrame(
        {
            "model": ["meta-llama/Llama-3.1-8B-Instruct"] * 4,
            "gpu": ["V100-SXM2-32GB", "T4", "V100-SXM2-32GB", "A100-SXM4-80GB"],
            "engine": ["tensorrt-llm", "sglang", "vllm", "tensorrt-llm"],
            "precision": ["fp16"] * 4,
        }
    )
    errors = predictor.predict(rows)["error"].to_list()
    assert errors[0].startswith("engine: tensorrt-llm does not run on V100-SXM2-32GB (Volta;")
    assert errors[1].startswith("engine: sglang does not run on T4 (Turing;")
    # the fix names only engines the table lets run there
    assert "use vllm, hf-transformers or llama.cpp on T4" in errors[1]
    assert errors[2] == "" and errors[3] == ""


def _user_gpu(tmp_path: Path, base: str, change: dict[str, str]) -> Predictor:
    with open(REPO / "catalogs" / "gpus.csv", encoding="utf-8", newline="") as fh:
        rows = {r["id"]: r for r in csv.DictReader(fh)}
    row = {**rows[base], **change, "aliases": "", "assumed_aliases": ""}
    with open(tmp_path / "gpus.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(row))
        w.writeheader()
        w.writerow(row)
    return Predictor.load(catalog=load_catalog(tmp_path))


@pytest.mark.slow
def test_the_generation_and_gaudi_checks_do_not_depend_on_spelling(tmp_path: Path) -> None:
    for i, arch in enumerate(("volta", "Volta GV100", "TURING")):
        folder = tmp_path / f"v{i}"
        folder.mkdir()
        p = _user_gpu(folder, "V100-SXM2-32GB", {"id": "MY-V100", "architecture": arch})
        row = {"model": ["meta-llama/Llama-3.1-8B-Instruct"], "gpu": ["MY-V100"]}
        out = p.predict(pl.DataFrame({**row, "engine": ["deepspeed-mii"]}))
        assert out["error"][0].startswith("engine: deepspeed-mii does not run on MY-V100"), arch
    gaudi = {"id": "MY-ACCEL", "architecture": "HL-225"}
    assert engine_support.platform({**gaudi, "vendor": "Intel"}) == "hpu"
    folder = tmp_path / "g"
    folder.mkdir()
    p = _user_gpu(folder, "GAUDI2", gaudi)
    out = p.predict(
        pl.DataFrame(
            {
                "model": ["meta-llama/Llama-3.1-8B-Instruct"],
                "gpu": ["MY-ACCEL"],
                "engine": ["llama.cpp"],
            }
        )
    )
    assert out["error"][0].startswith("engine: llama.cpp does not run on MY-ACCEL (Intel Gaudi;")


def test_a_refusals_fix_is_one_the_engine_can_follow(predictor: Predictor) -> None:
    rows = pl.DataFrame(
        {
            "model": ["meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Llama-3.1-405B-Instruct"]
            + ["StabilityAI/stablelm-tuned-alpha-7b"],
            "gpu": ["H100-SXM5-80GB"] * 3,
            "gpu_count": [8, 8, 12],
            "engine": ["deepspeed-mii", "vllm", "deepspeed-mii"],
            "precision": ["bf16", "bf16", "bf16"],
        }
    )
    errors = predictor.predict(rows)["error"].to_list()
    assert errors[0].endswith(
        "; deepspeed-mii serves a replica inside one node of 8 GPUs: use vllm, sglang or "
        "tensorrt-llm to span nodes"
    )
    assert errors[1].startswith("does not fit") and "inside one node" not in errors[1]
    assert errors[2].endswith(
        "use tensor parallelism 1, 2, 3, 4, 6, 8 on at most 8 GPUs (deepspeed-mii serves a "
        "replica inside one node), or vllm, sglang or tensorrt-llm with pipeline_parallel "
        "across domains"
    )
    assert engine_support.layout_problems("hf-transformers", {"id": "X"}, (2, 1, 1, 1), 1) == [
        "gpu_count: 2 GPUs of X span 2 nodes of 1; hf-transformers serves a replica inside one "
        "node; use at most 1 GPU per replica and more replicas, or vllm, sglang or tensorrt-llm"
    ]


@pytest.mark.slow  # about 1 s: the default run stays under 2 minutes
def test_compare_names_the_engine_when_it_is_the_cause() -> None:
    common = ("--requests-per-s", "1", "--itl-ms", "200", "-f", "csv")
    result = run_cli(
        "compare", "-m", "meta-llama/Llama-3.1-405B-Instruct", "--precision", "bf16",
        "--engine", "deepspeed-mii", "--gpus", "H100-SXM5-80GB", *common,
    )  # fmt: skip
    one_error_line(
        result,
        "does not fit in memory in one node of any GPU type listed, and deepspeed-mii serves a "
        "replica inside one node — pass --engine vllm, sglang or tensorrt-llm to span nodes",
    )
    result = run_cli(
        "compare", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--engine", "deepspeed-mii",
        "--gpus", "V100-SXM2-32GB,T4", *common,
    )  # fmt: skip
    one_error_line(result, "engine deepspeed-mii runs on none of the GPU types listed")
    result = run_cli(
        "compare", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--engine", "trtllm",
        "--gpus", "MI300X,H100-SXM5-80GB", "--deployment", "disaggregated", *common,
    )  # fmt: skip
    assert result.code == 0, result.err
    rows = pl.read_csv(result.out.encode())
    reasons = dict(zip(rows["gpu"], rows["reason"], strict=True))
    assert reasons["MI300X"].startswith(
        "no prefill/decode unit on MI300X: --engine: tensorrt-llm does not run on MI300X"
    )


SCENARIO = """name: engine-gpu
horizon_hours: 8760
region: US
electricity_usd_per_kwh: 0.12
engine: trtllm
{deployment}
gpus:
  MI300X: {mi300x}
  H100-SXM5-80GB: {{}}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {{requests_per_s: 1, input_tokens: 1024, output_tokens: 256}}
    sla: {{itl_ms: 100}}
"""


@pytest.mark.slow
def test_a_gpu_the_engine_does_not_run_on_is_excluded_with_or_without_layouts(
    tmp_path: Path,
) -> None:
    reasons = []
    for i, mi300x in enumerate(("{}", "{layouts: [{gpu_count: 1}]}")):
        folder = tmp_path / str(i)
        folder.mkdir()
        text = SCENARIO.format(deployment="", mi300x=mi300x)
        (folder / "s.yaml").write_text(text)
        assert run_cli("validate", str(folder / "s.yaml")).code == 0
        result, path = plan_text(folder, text, "--candidates", "all")
        assert result.code == 0, result.err
        plan = json.loads(path.read_text())
        assert {a["gpu"] for a in plan["allocations"]} == {"H100-SXM5-80GB"}
        refused = [c for c in plan["candidates"] if c["gpu"] == "MI300X"]
        assert refused and not any(c["feasible"] for c in refused)
        reasons.append({c["reason"] for c in refused})
    assert reasons[0] == reasons[1]
    assert next(iter(reasons[0])).startswith("engine: tensorrt-llm does not run on MI300X")


def test_a_disaggregated_entry_with_no_unit_says_the_engine_is_why(tmp_path: Path) -> None:
    text = SCENARIO.format(deployment="deployment: disaggregated", mi300x="{}").replace(
        "  H100-SXM5-80GB: {}\n", ""
    )
    result, path = plan_text(tmp_path, text)
    assert result.code == 1
    (message,) = json.loads(path.read_text())["solve"]["messages"]
    assert message.startswith(
        "chat: cannot predict MI300X TP1, MI300X TP2, MI300X TP4, MI300X TP8: engine: "
        "tensorrt-llm does not run on MI300X"
    )
