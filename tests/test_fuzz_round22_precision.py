"""Fuzz round 22b: precisions a GPU serves, and the precision a row states.

Each test failed before its fix: ``Llama-3.1-70B-Instruct-W8A8-FP8`` resolved to int8 (``W8A8``
ranked above ``FP8``), 15× slower on B300; fp8 and fp4 checkpoints (gpt-oss, DeepSeek-V3) and
AWQ were predicted in domain on V100 and T4, and ``compare`` recommended them; a batch row whose
model resolved to nothing still stated ``precision`` bf16 (even ``foo/bar-FP8``)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from predictors.catalog import precision_support, validity
from predictors.catalog.quantised import resolve_checkpoint, split_scheme
from predictors.catalog.store import Catalog, load_catalog
from predictors.core.vocab import PRECISIONS
from predictors.measurements import load_measurements
from tests.cli_runner import one_error_line, plan_text, run_cli


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


# --- A. a number format wins over a bit-width pair -------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "precision"),
    [
        ("W8A8-FP8", "fp8"),
        ("FP8-W8A8", "fp8"),
        ("w8a8_fp8", "fp8"),
        ("quantized.w8a8-fp8", "fp8"),
        ("FP8-W8A16", "fp8"),
        ("W8A8", "int8"),
        ("quantized.w8a8", "int8"),
        ("W8A8-INT8", "int8"),
        ("INT8-W8A8", "int8"),
        ("GPTQ-Int8", "int8"),
        ("bnb-8bit", "int8"),
        ("FP8-dynamic", "fp8"),
        ("W4A16-AWQ", "int4"),
        ("AWQ-W4A16", "int4"),
        ("AWQ-INT4", "int4"),
        ("bnb-4bit", "int4"),
        ("W4A16-NVFP4", "fp4"),
        ("MXFP4-W4A16", "fp4"),
    ],
)
def test_a_number_format_token_wins_over_a_bit_width_pair(scheme: str, precision: str) -> None:
    split = split_scheme(f"acme/Llama-3.1-70B-Instruct-{scheme}")
    assert split == ("acme/Llama-3.1-70B-Instruct", scheme, precision)


def test_a_w8a8_fp8_checkpoint_is_predicted_at_fp8(catalog: Catalog) -> None:
    found = resolve_checkpoint(catalog, "Llama-3.1-70B-Instruct-W8A8-FP8")
    assert (found.model_id, found.precision) == ("meta-llama/Llama-3.1-70B-Instruct", "fp8")
    args = ("--gpu", "B300", "--batch-size", "256", "-f", "json")
    named = run_cli("predict", "--model", "Llama-3.1-70B-Instruct-W8A8-FP8", *args)
    assert named.code == 0, named.err
    assert "(W8A8-FP8)" in named.err and "at fp8" in named.err and "int8" not in named.err
    explicit = run_cli(
        "predict", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--precision", "fp8", *args
    )
    assert explicit.code == 0, explicit.err
    got, want = json.loads(named.out), json.loads(explicit.out)
    assert got["precision"] == "fp8"
    assert got["itl_s"] == pytest.approx(want["itl_s"], rel=1e-9)  # not B300's int8 rate
    assert got["power_w_per_gpu"] == pytest.approx(want["power_w_per_gpu"], rel=1e-9)


# --- B. a precision the GPU cannot serve is refused -------------------------------------------


def test_the_precision_rule_over_the_catalog(catalog: Catalog) -> None:
    refused = {
        p: {
            g["id"]
            for g in catalog.gpus.iter_rows(named=True)
            if not precision_support.serves(p, g)
        }
        for p in PRECISIONS
    }
    volta = {"V100-SXM2-32GB", "V100-SXM2-16GB", "V100-PCIE-16GB", "V100-PCIE-32GB"}
    volta.add("V100S-PCIE-32GB")
    assert refused["fp8"] == volta | {"MI250", "MI250X"}
    assert refused["fp4"] == volta | {"T4", "MI250", "MI250X"}
    assert refused["int4"] == set()  # GPTQ's own kernel runs from Pascal (compute 6.0)
    for p in ("fp32", "fp16", "bf16", "int8"):  # bf16 on V100 stays predicted at fp16's rate
        assert refused[p] == set(), p
    line = precision_support.precision_problems("fp8", catalog.gpu("V100-SXM2-32GB"))
    assert line == [
        "precision: fp8 needs an NVIDIA GPU of the Turing generation or newer; V100-SXM2-32GB "
        "is Volta; use fp16, or a newer GPU"
    ]
    (amd,) = precision_support.precision_problems("fp4", catalog.gpu("MI250"))
    assert "needs an AMD CDNA 3 GPU or newer; MI250 is CDNA 2; use fp16 or bf16" in amd


def test_an_architecture_the_rule_does_not_know_is_not_refused(catalog: Catalog) -> None:
    v100 = catalog.gpu("V100-SXM2-32GB")
    for change in (
        {"architecture": "Graviton"},
        {"architecture": ""},
        {"architecture": None},
        {"vendor": "Acme"},
    ):
        gpu = {**v100, **change}
        assert all(precision_support.serves(p, gpu) for p in PRECISIONS), change
    gaudi1 = {**catalog.gpu("GAUDI2"), "architecture": "Gaudi 1", "id": "HL-205"}
    assert not precision_support.serves("fp8", gaudi1)
    assert precision_support.serves("fp8", catalog.gpu("GAUDI2"))
    assert precision_support.serves("fp8", {**v100, "architecture": "Blackwell Ultra"})


def test_validity_applies_the_rule_only_when_given_a_precision(catalog: Catalog) -> None:
    """Property over every catalog GPU × precision: the shared validity rules refuse a
    configuration for its precision exactly where the precision rule does, and never without a
    precision (the planner's layout ladder)."""
    llm = catalog.llm("meta-llama/Llama-3.1-8B-Instruct")
    for gpu in catalog.gpus.iter_rows(named=True):
        base, base_problems = validity.layout_problems(llm, gpu, 1, engine="vllm")
        assert base is not None and not base_problems
        for precision in PRECISIONS:
            layout, problems = validity.layout_problems(
                llm, gpu, 1, engine="vllm", precision=precision
            )
            wrong = precision_support.precision_problems(precision, gpu)
            assert problems == wrong, (gpu["id"], precision)
            assert (layout is None) == bool(wrong)


@pytest.mark.slow
def test_no_measured_configuration_is_refused_for_its_precision(
    measurements_dir: Path, catalog: Catalog
) -> None:
    table = load_measurements(measurements_dir, catalog).table
    for gpu, precision in table.select("gpu", "precision").unique().iter_rows():
        assert precision_support.serves(precision, catalog.gpu(gpu)), (gpu, precision)


@pytest.mark.slow
def test_predict_refuses_a_checkpoint_precision_the_gpu_cannot_serve() -> None:
    gpt = ("predict", "--model", "openai/gpt-oss-120b", "--gpu-count", "4", "--gpu")
    one_error_line(
        run_cli(*gpt, "V100-SXM2-32GB", "-f", "json"),
        "fp4 needs an NVIDIA GPU of the Ampere generation or newer",
        "V100-SXM2-32GB is Volta",
        "use fp16",
    )
    one_error_line(run_cli(*gpt, "T4"), "fp4 needs an NVIDIA GPU", "T4 is Turing")
    one_error_line(
        run_cli(
            "predict",
            "--model",
            "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
            "--gpu",
            "MI250",
            "--precision",
            "fp8",
        ),  # fmt: skip
        "fp8 needs an AMD CDNA 3 GPU or newer; MI250 is CDNA 2",
    )
    fine = run_cli("predict", "--model", "openai/gpt-oss-120b", "--gpu", "V100-SXM2-32GB",
                   "--gpu-count", "8", "--precision", "fp16", "-f", "json")  # fmt: skip
    assert fine.code == 0, fine.err
    bf16 = run_cli(
        "predict", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "T4", "--gpu-count", "2",
        "-f", "json",
    )  # fmt: skip
    assert bf16.code == 0 and json.loads(bf16.out)["precision"] == "bf16", bf16.err


def test_batch_predict_gives_the_refusal_as_the_row_error(tmp_path: Path) -> None:
    src = tmp_path / "rows.csv"
    src.write_text(
        "model,gpu,gpu_count,precision\n"
        "openai/gpt-oss-120b,V100-SXM2-32GB,4,\n"
        "deepseek-ai/DeepSeek-R1-Distill-Llama-8B,V100-SXM2-32GB,1,fp8\n"
        "deepseek-ai/DeepSeek-R1-Distill-Llama-8B,T4,1,fp8\n"
        "meta-llama/Llama-3.1-8B-Instruct,V100-SXM2-32GB,1,\n"
        "openai/gpt-oss-120b,A100-SXM4-80GB,1,\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.csv"
    result = run_cli("predict", "--input", str(src), "-o", str(out))
    assert result.code == 0, result.err
    rows = pl.read_csv(out, infer_schema_length=0)
    errors = rows["error"].fill_null("").to_list()
    assert errors[0] == (
        "precision: fp4 needs an NVIDIA GPU of the Ampere generation or newer; V100-SXM2-32GB "
        "is Volta; use fp16, or a newer GPU"
    )
    assert errors[1].startswith("precision: fp8 needs an NVIDIA GPU of the Turing generation")
    assert errors[2:] == ["", "", ""]
    assert rows["precision"].to_list() == ["fp4", "fp8", "fp8", "bf16", "fp4"]
    assert rows["in_domain"].to_list()[:2] == ["false", "false"]
    assert rows["tensor_parallel"].fill_null("").to_list()[:2] == ["", ""]


@pytest.mark.slow
def test_compare_refuses_the_gpu_types_the_checkpoint_precision_cannot_run_on() -> None:
    result = run_cli(
        "compare", "-m", "openai/gpt-oss-120b", "--requests-per-s", "2", "--itl-ms", "100",
        "--gpus", "V100-SXM2-32GB,T4,A100-SXM4-80GB", "-f", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    rows = {r["gpu"]: r for r in json.loads(result.out)["rows"]}
    assert rows["A100-SXM4-80GB"]["fits"]
    for gpu, arch in (("V100-SXM2-32GB", "Volta"), ("T4", "Turing")):
        assert not rows[gpu]["fits"], rows[gpu]
        reason = rows[gpu]["reason"]
        assert "fp4 needs an NVIDIA GPU of the Ampere generation or newer" in reason
        assert f"{gpu} is {arch}" in reason
    ds = run_cli(
        "compare", "-m", "deepseek-ai/DeepSeek-V3", "--requests-per-s", "2", "--itl-ms", "100",
        "--gpus", "V100-SXM2-32GB", "-f", "json",
    )  # fmt: skip
    assert ds.code == 1 and "Traceback" not in ds.err
    (row,) = json.loads(ds.out)["rows"]
    assert not row["fits"] and "fp8 needs an NVIDIA GPU" in row["reason"], row


SCENARIO = """name: precision-by-generation
horizon_hours: 8760
region: US
electricity_usd_per_kwh: 0.12
gpus:
  V100-SXM2-32GB: {}
  H100-SXM5-80GB: {}
models:
  - name: gpt
    model: openai/gpt-oss-120b
    load: {requests_per_s: 0.5, input_tokens: 1024, output_tokens: 256}
    sla: {itl_ms: 150}
"""


def test_a_plan_excludes_the_candidates_whose_gpu_cannot_serve_the_precision(
    tmp_path: Path,
) -> None:
    result, path = plan_text(tmp_path, SCENARIO, "--candidates", "all")
    assert result.code == 0, result.err
    plan = json.loads(path.read_text(encoding="utf-8"))
    assert {a["gpu"] for a in plan["allocations"]} == {"H100-SXM5-80GB"}
    volta = [c for c in plan["candidates"] if c["gpu"] == "V100-SXM2-32GB"]
    assert volta
    for c in volta:
        assert not c["feasible"]
        assert "fp4 needs an NVIDIA GPU of the Ampere generation or newer" in c["reason"], c


# --- C. a row whose model did not resolve states no precision ---------------------------------


def test_an_unresolved_model_states_no_precision(tmp_path: Path) -> None:
    src = tmp_path / "u.csv"
    src.write_text(
        "model,gpu,precision\n"
        "foo/bar,h100,\n"
        "foo/bar-FP8,h100,\n"
        "foo/baz,h100,fp8\n"
        ",h100,\n"
        "meta-llama/Llama-3.1-8B-Instruct,no-such-gpu,\n"
        "meta-llama/Llama-3.1-8B-Instruct,h100,\n",
        encoding="utf-8",
    )
    out = tmp_path / "u.out.csv"
    result = run_cli("predict", "--input", str(src), "-o", str(out))
    assert result.code == 0, result.err
    rows = pl.read_csv(out, infer_schema_length=0)
    assert rows["precision"].fill_null("").to_list() == ["", "", "fp8", "", "bf16", "bf16"]
    assert rows["error"].fill_null("").to_list()[0].startswith("model: unknown llm 'foo/bar'")
    bare = tmp_path / "bare.csv"  # no precision column at all
    bare.write_text("model,gpu\nfoo/bar,h100\nmeta-llama/Llama-3.1-8B-Instruct,h100\n")
    result = run_cli("predict", "--input", str(bare), "-o", str(out))
    assert result.code == 0, result.err
    rows = pl.read_csv(out, infer_schema_length=0)
    assert rows["precision"].fill_null("").to_list() == ["", "bf16"]
