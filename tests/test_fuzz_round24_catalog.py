"""Fuzz round 24 (user catalog GPUs and LLMs): each finding's one-line error or fixed message.

F2: a bidirectional override in a catalog id or alias is refused as a control character is;
F3: ``import-hf`` refuses a ``layer_types`` list of another length than the layers; F5: memory
refusals print numbers that differ and never suggest more GPUs than one replica holds; F6:
``idle_power_w`` 0 and numbers written ``3_350`` are refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from predictors.catalog.hf_config import catalog_row_from_hf_config
from tests.cli_runner import Result, run_cli

LLAMA8B = "meta-llama/Llama-3.1-8B-Instruct"
LLAMA405B = "meta-llama/Llama-3.1-405B-Instruct"
GPU_HEADER = (
    "id,aliases,vendor,architecture,form_factor,release_year,memory_gb,memory_bandwidth_gb_s,"
    "tdp_w,idle_power_w,idle_power_source,fp16_tflops_dense,source"
)
GPU_CELLS: dict[str, str] = {
    "id": "MYG",
    "aliases": "",
    "vendor": "NVIDIA",
    "architecture": "Hopper",
    "form_factor": "SXM5",
    "release_year": "2022",
    "memory_gb": "80",
    "memory_bandwidth_gb_s": "3350",
    "tdp_w": "700",
    "idle_power_w": "105",
    "idle_power_source": "rule",
    "fp16_tflops_dense": "989.4",
    "source": "synthetic clone",
}
#: A Llama-3.1-8B-shaped config with a sliding window (32 layers).
WINDOWED: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 32,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
    "sliding_window": 4096,
}
BIDI = ["\u202a", "\u202e", "\u2066", "\u2069"]


def _one_error(result: Result, *parts: str) -> str:
    assert result.code == 1, (result.code, result.out, result.err)
    assert len(result.errors) == 1, result.err
    assert "Traceback" not in result.err and "internal error" not in result.err
    for part in parts:
        assert part in result.errors[0], result.errors[0]
    return result.errors[0]


def _gpu_catalog(directory: Path, **cells: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    row = {**GPU_CELLS, **cells}
    line = ",".join(row[name] for name in GPU_HEADER.split(","))
    (directory / "gpus.csv").write_text(f"{GPU_HEADER}\n{line}\n", encoding="utf-8")
    return directory


def _llm_catalog(directory: Path, model_id: str, num_layers: str = "32") -> Path:
    """A user llms.csv holding one Llama-8B-shaped row."""
    directory.mkdir(parents=True, exist_ok=True)
    header = (
        "id,family,model_type,total_params_b,active_params_b,num_layers,hidden_size,"
        "num_attention_heads,num_kv_heads,head_dim,intermediate_size,vocab_size,"
        "max_position_embeddings,default_dtype,is_moe,attention_kind,tie_word_embeddings,source"
    )
    row = (
        f"{model_id},llama,llama,8.03,8.03,{num_layers},4096,32,8,128,14336,128256,131072,bf16,"
        "false,full,false,hand"
    )
    (directory / "llms.csv").write_text(f"{header}\n{row}\n", encoding="utf-8")
    return directory


# F2: a bidirectional override in an id or alias
@pytest.mark.slow  # measured among the slowest of the default run (round 29)
@pytest.mark.parametrize("char", BIDI)
@pytest.mark.parametrize("column", ["id", "aliases"])
def test_a_gpu_id_or_alias_with_a_bidirectional_override_is_refused(
    tmp_path: Path, char: str, column: str
) -> None:
    user = _gpu_catalog(tmp_path / "uc", **{column: f"MY{char}G"})
    line = _one_error(
        run_cli("catalog", "validate", "--user-catalog", str(user)),
        f"{user / 'gpus.csv'} row 2, column '{column}'",
        f"holds a bidirectional override (U+{ord(char):04X}); fix: remove it",
    )
    assert char not in line
    # wherever the user catalog is read, not only by validate
    _one_error(
        run_cli("predict", "--user-catalog", str(user), "--model", LLAMA8B, "--gpu", "H100"),
        f"column '{column}': holds a bidirectional override",
    )


def test_an_llm_id_with_a_bidirectional_override_is_refused(tmp_path: Path) -> None:
    user = _llm_catalog(tmp_path / "uc", "test/\u202esw")
    _one_error(
        run_cli("catalog", "validate", "--user-catalog", str(user)),
        f"{user / 'llms.csv'} row 2, column 'id'",
        "holds a bidirectional override (U+202E); fix: remove it",
    )
    # a control character is still named as one
    user = _llm_catalog(tmp_path / "uc2", "test/\x07sw")
    _one_error(
        run_cli("catalog", "validate", "--user-catalog", str(user)),
        "column 'id': holds a control character (U+0007)",
    )


def test_import_hf_refuses_an_alias_with_a_bidirectional_override(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({k: v for k, v in WINDOWED.items() if k != "sliding_window"}))
    user = tmp_path / "uc"
    args = ["catalog", "import-hf", str(config), "--user-catalog", str(user)]
    _one_error(
        run_cli(*args, "--id", "acme/m", "--alias", "m\u2067x"),
        "--alias 'm\\u2067x'",
        "bidirectional overrides",
    )
    assert not (user / "llms.csv").exists()
    _one_error(run_cli(*args, "--id", "acme/\u202em"), "--id", "must look like ORG/NAME")


# F3: a layer_types list of another length than the layers
@pytest.mark.parametrize(
    "kinds",
    [
        ["sliding_attention"] * 32 + ["full_attention"] * 32,
        ["sliding_attention"],
        ["sliding_attention", "full_attention"] * 15,
    ],
)
def test_import_hf_refuses_a_layer_types_list_of_another_length(
    tmp_path: Path, kinds: list[str]
) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({**WINDOWED, "layer_types": kinds}))
    user = tmp_path / "uc"
    entries = "entry" if len(kinds) == 1 else "entries"
    args = ["catalog", "import-hf", str(config), "--id", "acme/sw", "--user-catalog", str(user)]
    _one_error(
        run_cli(*args),
        f"{config}: 'layer_types' holds {len(kinds)} {entries} but 'num_hidden_layers' is 32",
        "give one entry per layer",
    )
    assert not (user / "llms.csv").exists()
    # nested in text_config (a multimodal checkpoint) the same
    nested = {"model_type": "gemma3", "text_config": {**WINDOWED, "layer_types": kinds}}
    config.write_text(json.dumps(nested))
    _one_error(
        run_cli(*args),
        f"'layer_types' holds {len(kinds)} {entries} but 'num_hidden_layers' is 32",
    )


def test_a_layer_types_list_of_every_layer_is_read_and_the_builder_period_repeats(
    tmp_path: Path,
) -> None:
    kinds = ["sliding_attention"] * 16 + ["full_attention"] * 16
    config = tmp_path / "c.json"
    config.write_text(json.dumps({**WINDOWED, "layer_types": kinds}))
    result = run_cli(
        "catalog", "import-hf", str(config), "--id", "acme/sw", "--user-catalog", str(tmp_path)
    )
    assert result.code == 0, result.err
    assert "full_attention_layers: 16" in result.out
    assert "window_attention_layers: 16" in result.out
    # the catalog builder's seed writes Gemma 3's 5:1 period only: it still repeats there
    period = ["sliding_attention"] * 5 + ["full_attention"]
    row = catalog_row_from_hf_config(
        {**WINDOWED, "layer_types": period}, "acme/g", "seed", layer_period=True
    )
    assert (row["full_attention_layers"], row["window_attention_layers"]) == (5, 27)


# F5: memory refusals
@pytest.mark.slow
def test_a_plan_memory_reason_prints_numbers_that_differ(tmp_path: Path) -> None:
    _gpu_catalog(tmp_path / "cat", id="M18_1", memory_gb="18.1")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: justfit\nregion: US\nhorizon_hours: 8760\nelectricity_usd_per_kwh: 0.12\n"
        "user_catalog: cat\ngpus:\n  M18_1:\n    usd_per_hour: 2.0\n"
        "  H100-SXM5-80GB:\n    usd_per_hour: 4.0\n"
        f"models:\n- name: chat\n  model: {LLAMA8B}\n  sla:\n    itl_ms: 100\n"
        "  load:\n    requests_per_s: 0.01\n    input_tokens: 128\n    output_tokens: 16\n"
        "objective:\n  minimize: cost\n",
        encoding="utf-8",
    )
    out = tmp_path / "p.json"
    result = run_cli("plan", str(scenario), "--candidates", "all", "-f", "json", "-o", str(out))
    assert result.code == 0, result.err
    reasons = [
        c["reason"]
        for c in json.loads(out.read_text())["candidates"]
        if c["gpu"] == "M18_1" and c["tp"] == 1
    ]
    assert reasons == ["needs 16.1 GB for weights, has 16.0 GB usable on 1× M18_1"]


@pytest.mark.parametrize("memory_gb", ["18.17", "18.18"])
def test_predict_memory_line_prints_numbers_that_differ(tmp_path: Path, memory_gb: str) -> None:
    user = _gpu_catalog(tmp_path / "uc", memory_gb=memory_gb)
    line = _one_error(
        run_cli(
            "predict",
            "--user-catalog",
            str(user),
            "--model",
            LLAMA8B,
            "--gpu",
            "MYG",
            "--batch-size",
            "1",
            "--input-tokens",
            "128",
            "--output-tokens",
            "16",
        ),  # fmt: skip
        "does not fit",
    )
    found = re.search(r"needs ([\d.]+) GB .* has ([\d.]+) GB usable", line)
    assert found is not None, line
    need, have = found.groups()
    assert need != have and float(need) > float(have), line


@pytest.mark.parametrize("gpu_count", ["1", "64"])
@pytest.mark.slow
def test_predict_never_suggests_more_gpus_than_one_replica_holds(
    tmp_path: Path, gpu_count: str
) -> None:
    user = _gpu_catalog(tmp_path / "uc", memory_gb="2")
    line = _one_error(
        run_cli(
            "predict",
            "--user-catalog",
            str(user),
            "--model",
            LLAMA405B,
            "--gpu",
            "MYG",
            "--batch-size",
            "8",
            "--gpu-count",
            gpu_count,
        ),  # fmt: skip
        "does not fit",
        "the weights do not fit in the largest replica (64 of these GPUs)",
        "lower precision or use a GPU with more memory",
    )
    assert "raise gpu_count" not in line and "batch_size" not in line
    # within the limit the count that may hold it is still given
    line = _one_error(
        run_cli("predict", "--model", LLAMA405B, "--gpu", "H100", "--gpu-count", "4"),
        "raise gpu_count (at least ",
    )
    found = re.search(r"at least (\d+) of these GPUs", line)
    assert found is not None and 4 < int(found.group(1)) <= 64, line


# F6: idle 0 and numbers with underscores
@pytest.mark.parametrize("idle", ["0", "-0", "0.0", "-0.0"])
def test_an_idle_power_of_zero_is_refused(tmp_path: Path, idle: str) -> None:
    user = _gpu_catalog(tmp_path / "uc", idle_power_w=idle)
    _one_error(
        run_cli("catalog", "validate", "--user-catalog", str(user)),
        "row 2, column 'idle_power_w'",
        f"{idle} must be greater than zero",
    )


@pytest.mark.parametrize(
    ("column", "value", "word"),
    [
        ("memory_bandwidth_gb_s", "3_350", "a number"),
        ("tdp_w", "7_00", "a number"),
        ("release_year", "2_022", "an integer"),
        ("memory_gb", "\u0668\u0660", "a number"),  # Arabic-Indic 80
    ],
)
def test_a_number_with_an_underscore_is_not_a_number(
    tmp_path: Path, column: str, value: str, word: str
) -> None:
    user = _gpu_catalog(tmp_path / "uc", **{column: value})
    _one_error(
        run_cli("catalog", "validate", "--user-catalog", str(user)),
        f"row 2, column '{column}'",
        f"is not {word}",
    )


def test_llm_numbers_use_the_same_parser_and_valid_numbers_still_read(tmp_path: Path) -> None:
    user = _llm_catalog(tmp_path / "uc", "test/m", num_layers="3_2")
    _one_error(
        run_cli("catalog", "validate", "--user-catalog", str(user)),
        "column 'num_layers': '3_2' is not an integer",
    )
    user = _gpu_catalog(tmp_path / "ok", memory_bandwidth_gb_s="3.35e3", idle_power_w="+105")
    result = run_cli("catalog", "show", "MYG", "--user-catalog", str(user))
    assert result.code == 0, result.err
    assert re.search(r"memory_bandwidth_gb_s\W+3,?350\b", result.out), result.out
