"""Fuzz round 16 (hostile input to the command line). Each test failed before its fix:

* ``-o`` naming a file of the user catalog the command reads replaced it (the catalog was lost);
* ``report`` and ``diff`` took an allocation's copies of its candidate's facts (ITL, batch size,
  layout degrees, nodes) and its mean power per GPU as they were edited;
* an empty axis of a sweep grid silently emptied the whole grid;
* a misspelt batch column (``Pipeline_Parallel``) was kept as an extra column and every row took
  the default; a column named like an output (``error``, ``itl_s``) was overwritten; a stated
  ``tensor_parallel`` that the row does not resolve to was replaced without a word.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.cli_runner import run_bounded, run_cli

LLM_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "model_type": "llama",
}
SCENARIO = """\
name: u
region: US
electricity_usd_per_kwh: 0.1
user_catalog: ucat
gpus: {L4: {}}
models:
  - {name: a, model: my-org/m1, load: {requests_per_s: 1, input_tokens: 100, output_tokens: 100},
     sla: {itl_ms: 100}}
"""


@pytest.fixture
def user_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.json").write_text(json.dumps(LLM_CONFIG), encoding="utf-8")
    made = run_cli(
        "catalog", "import-hf", "cfg.json", "--id", "my-org/m1", "--user-catalog", "ucat"
    )
    assert made.code == 0, made.err
    (tmp_path / "us.yaml").write_text(SCENARIO, encoding="utf-8")
    return tmp_path / "ucat"


@pytest.mark.slow  # over 2 s on 2 cores: run by .ci/run
def test_an_output_never_replaces_a_user_catalog_file(
    user_catalog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (user_catalog / "llms.csv").read_bytes()
    for args in (
        ("plan", "us.yaml", "-o", "ucat/llms.csv"),
        ("plan", "us.yaml", "-o", "ucat/gpus.csv"),  # absent there: it would become a table
        ("report", "us.yaml", "-o", "ucat/llms.csv"),
    ):
        result = run_cli(*args)
        assert result.code == 1, args
        assert result.errors == [
            f"error: --output {args[-1]}: is the input file "
            f"{user_catalog / Path(args[-1]).name} — write to another path"
        ]
    rows = Path("rows.csv")
    rows.write_text("model,gpu\nmy-org/m1,L4\n", encoding="utf-8")
    monkeypatch.setenv("WATTGPU_USER_CATALOG", str(user_catalog))
    result = run_cli("predict", "--input", "rows.csv", "--output", "ucat/llms.csv")
    assert result.code == 1 and "is the input file" in result.err
    assert (user_catalog / "llms.csv").read_bytes() == before
    assert not (user_catalog / "gpus.csv").exists()
    assert run_cli("validate", "us.yaml").code == 0


def _edited_plan(tmp_path: Path) -> tuple[Path, Path]:
    plan = tmp_path / "plan.json"
    assert run_cli("plan", "paper-llama8b-low-load", "-f", "json", "-o", str(plan)).code == 0
    data = json.loads(plan.read_text(encoding="utf-8"))
    data["allocations"][0].update(
        itl_s=-5, itl_s_at_capacity=-5, power_w_per_gpu=1000, batch_size=-5, nodes=-5,
        tensor_parallel=0, pipeline_parallel=0,
    )  # fmt: skip
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    return plan, edited


def test_an_allocations_copies_of_its_candidate_are_checked(tmp_path: Path) -> None:
    plan, edited = _edited_plan(tmp_path)
    for args in (("report", str(edited), "-f", "md"), ("diff", str(plan), str(edited))):
        result = run_cli(*args)
        assert result.code == 1, args
        named = {line.split(": ")[2] for line in result.errors}
        assert {
            "allocations[0].itl_s",
            "allocations[0].itl_s_at_capacity",
            "allocations[0].batch_size",
            "allocations[0].nodes",
            "allocations[0].tensor_parallel",
            "allocations[0].pipeline_parallel",
            "allocations[0].power_w_per_gpu",
        } <= named, result.err
    out = tmp_path / "report.json"
    trusted = run_cli("report", str(edited), "-f", "json", "--trust", "-o", str(out))
    assert trusted.code == 0, trusted.err
    shown = json.loads(out.read_text(encoding="utf-8"))["plan"]["allocations"][0]
    original = json.loads(plan.read_text(encoding="utf-8"))["allocations"][0]
    for key in ("itl_s", "itl_s_at_capacity", "batch_size", "nodes", "tensor_parallel"):
        assert shown[key] == original[key], key
    assert shown["power_w_per_gpu"] == pytest.approx(original["power_w_per_gpu"], rel=1e-9)


def test_an_empty_sweep_axis_is_one_error(tmp_path: Path) -> None:
    result = run_cli(
        "sweep", "paper-llama8b-low-load", "--draws", "2", "--set",
        "sweep.grid={load_growth: [1, 2], model_load: {chat-8b: []}}",
        "-f", "json", "-o", str(tmp_path / "sw.json"),
    )  # fmt: skip
    assert result.code == 1
    assert len(result.errors) == 1
    assert result.errors[0].endswith(
        "sweep.grid.model_load.chat-8b: empty — give at least one value"
    )
    assert not (tmp_path / "sw.json").exists()


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("model,gpu,gpu_count,Pipeline_Parallel", "did you mean 'pipeline_parallel'?"),
        ("model,gpu,gpu_count,requests_per_sec", "did you mean 'requests_per_s'?"),
        ("model,gpu,gpu_cnt", "did you mean 'gpu_count'?"),
        ("model,gpu,batchsize", "did you mean 'batch_size'?"),
        ("model,gpu,gpu_count,error", "column 'error' is an output column"),
        ("model,gpu,gpu_count,itl_s", "column 'itl_s' is an output column"),
    ],
)
def test_a_batch_column_that_would_be_ignored_or_lost_is_refused(
    tmp_path: Path, header: str, message: str
) -> None:
    rows = tmp_path / "rows.csv"
    cells = ["meta-llama/Llama-3.1-8B-Instruct", "H100", "2", "2"][: header.count(",") + 1]
    rows.write_text(f"{header}\n{','.join(cells)}\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    result = run_cli("predict", "--input", str(rows), "--output", str(out))
    assert result.code == 1
    assert len(result.errors) == 1 and message in result.errors[0], result.err
    assert not out.exists()


def test_a_stated_tensor_parallel_must_be_what_the_row_resolves_to(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "model,gpu,gpu_count,tensor_parallel,note\n"
        "meta-llama/Llama-3.1-8B-Instruct,H100,2,1,wrong\n"
        "meta-llama/Llama-3.1-8B-Instruct,H100,2,2,right\n"
        "meta-llama/Llama-3.1-8B-Instruct,H100,2,abc,text\n"
        "meta-llama/Llama-3.1-8B-Instruct,H100,2,,empty\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.csv"
    result = run_cli("predict", "--input", str(rows), "--output", str(out))
    assert result.code == 0, result.err
    with out.open(encoding="utf-8", newline="") as fh:
        got = {r["note"]: r for r in csv.DictReader(fh)}
    assert got["wrong"]["error"].startswith(
        "tensor_parallel: 1 stated, but gpu_count / (pipeline_parallel × data_parallel) is 2"
    )
    # an error row shows the layout it stated (fuzz round 28), not the resolved one
    assert got["wrong"]["itl_s"] == "" and got["wrong"]["tensor_parallel"] == "1"
    assert got["text"]["tensor_parallel"] == ""  # no whole number to show: the error quotes it
    assert got["text"]["error"] == "tensor_parallel: must be a whole number or empty (got 'abc')"
    for ok in ("right", "empty"):
        assert got[ok]["error"] == "" and float(got[ok]["itl_s"]) > 0
        assert got[ok]["tensor_parallel"] == "2"


def test_compare_names_its_gpus_option_on_a_bad_name() -> None:
    base = ("compare", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--requests-per-s", "1")
    unknown = run_cli(*base, "--itl-ms", "50", "--gpus", "nosuch")
    assert unknown.code == 1 and unknown.errors == [
        "error: --gpus: unknown gpu 'nosuch'; fix: use an id or alias from `wattgpu catalog gpus`"
    ]
    empty = run_cli(*base, "--itl-ms", "50", "--gpus", "H100,,L4")
    assert empty.code == 1 and empty.errors == [
        "error: --gpus 'H100,,L4': an empty name between commas — remove it"
    ]


@pytest.mark.slow  # over 2 s on 2 cores: run by .ci/run
def test_an_output_below_a_file_or_to_a_piped_stdout(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text("x", encoding="utf-8")
    below = run_cli("schema", "plan", "-o", str(tmp_path / "plan.json" / "x.json"))
    assert below.code == 1 and below.errors == [
        f"error: --output {tmp_path / 'plan.json' / 'x.json'}: {tmp_path / 'plan.json'} is a "
        "file, not a directory"
    ]
    piped = run_bounded("schema", "plan", "-o", "/dev/stdout", cwd=tmp_path)  # stdout: a pipe
    assert piped.code == 0, piped.err
    assert json.loads(piped.out)["$schema"].startswith("https://json-schema.org/")


def test_a_layout_listed_twice_is_one_error(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: dup\nregion: US\nelectricity_usd_per_kwh: 0.12\ngpus:\n  H100-SXM5-80GB:\n"
        "    layouts:\n      - {gpu_count: 16, pipeline_parallel: 2}\n"
        "      - {gpu_count: 16, pipeline_parallel: 2}\nmodels:\n  - name: m\n"
        "    model: meta-llama/Llama-3.1-8B-Instruct\n"
        "    load: {requests_per_s: 1, input_tokens: 512, output_tokens: 256}\n"
        "    sla: {itl_ms: 50}\n",
        encoding="utf-8",
    )
    result = run_cli("validate", str(scenario))
    assert result.code == 1
    assert result.errors == [
        f"error: {scenario}: gpus.H100-SXM5-80GB.layouts[1]: the same layout as [0] — list it once"
    ]


@pytest.mark.parametrize(
    ("header", "kept"),
    [
        ("model,gpu,precision_bits", True),  # four edits from precision: a column of its own
        ("model,gpu,note,run_label,gpu_type", True),
        ("Model,gpu", False),
        ("model,gpus", False),
    ],
)
def test_only_a_near_miss_of_a_missing_input_is_refused(
    tmp_path: Path, header: str, kept: bool
) -> None:
    rows = tmp_path / "rows.csv"
    cells = ["meta-llama/Llama-3.1-8B-Instruct", "H100", "8", "x", "y"][: header.count(",") + 1]
    rows.write_text(f"{header}\n{','.join(cells)}\n", encoding="utf-8")
    result = run_cli("predict", "--input", str(rows), "--output", str(tmp_path / "o.csv"))
    if kept:
        assert result.code == 0, result.err
    else:
        assert result.code == 1 and "required column" in result.errors[0], result.err


@pytest.mark.slow  # a plan and a compare: 2 s
def test_every_command_takes_the_precision_spellings_predict_takes(tmp_path: Path) -> None:
    """Round 16f: predict read bfloat16 / FP8 (docs/contracts.md: "in the spellings a scenario
    takes"), while compare and a scenario refused them."""
    model = "meta-llama/Llama-3.1-8B-Instruct"
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: t\nregion: US\nelectricity_usd_per_kwh: 0.12\nprecision: bfloat16\n"
        "gpus: {H100-SXM5-80GB: {}}\nmodels:\n"
        f"  - {{name: m, model: {model}, precision: FP8,\n"
        "     load: {requests_per_s: 2, input_tokens: 1024, output_tokens: 256},\n"
        "     sla: {itl_ms: 50}}\n",
        encoding="utf-8",
    )
    plan = tmp_path / "plan.json"
    assert run_cli("plan", str(scenario), "-f", "json", "-o", str(plan)).code == 0
    assert json.loads(plan.read_text(encoding="utf-8"))["models"][0]["precision"] == "fp8"
    out = tmp_path / "c.json"
    result = run_cli(
        "compare", "-m", model, "--gpus", "H100-SXM5-80GB", "--requests-per-s", "2",
        "--itl-ms", "50", "--precision", "bfloat16", "-f", "json", "-o", str(out),
    )  # fmt: skip
    assert result.code == 0, result.err
    assert json.loads(out.read_text(encoding="utf-8"))["precision"] == "bf16"
