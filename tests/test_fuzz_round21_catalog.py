"""Fuzz round 21 (catalog, import-hf, batch CSV): each finding's one-line error or fixed output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from predictors.catalog.hf_config import LLM_COLUMNS, catalog_row_from_hf_config
from predictors.core.errors import WattgpuError
from predictors.measurements.aiconfigurator import _f
from tests.cli_runner import run_cli

LLAMA8B = "meta-llama/Llama-3.1-8B-Instruct"
REPO = Path(__file__).resolve().parents[1]

QWEN3_MOE: dict[str, Any] = {
    "model_type": "qwen3_moe",
    "hidden_size": 2048,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "intermediate_size": 6144,
    "moe_intermediate_size": 768,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 48,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
    "decoder_sparse_step": 1,
    "mlp_only_layers": [],
}


def _one_error(result: Any, *parts: str) -> str:
    assert result.code == 1, (result.code, result.err)
    assert len(result.errors) == 1, result.err
    assert "internal error" not in result.err and "Traceback" not in result.err
    for part in parts:
        assert part in result.errors[0], result.errors[0]
    return str(result.errors[0])


def _import(tmp_path: Path, config: dict[str, Any], name: str = "c.json") -> Any:
    path = tmp_path / name
    path.write_text(json.dumps(config), encoding="utf-8")
    return run_cli(
        "catalog", "import-hf", str(path), "--id", "fuzz/x", "--user-catalog", str(tmp_path / "uc")
    )


# 1. a nested key of the wrong JSON kind
@pytest.mark.parametrize("value", [[1], [{"hidden_size": 1}], "x", 5])
def test_a_text_config_that_is_no_object_is_refused_naming_it(tmp_path: Path, value: Any) -> None:
    _one_error(
        _import(tmp_path, {"model_type": "llama", "text_config": value}),
        "c.json",
        "'text_config' must be an object",
    )


@pytest.mark.parametrize(
    ("key", "value", "kind"),
    [
        ("attn_type_list", 5, "a list"),
        ("hybrid_override_pattern", [1], "a string"),
        ("rope_scaling", [1], "an object"),
    ],
)
def test_other_nested_keys_of_the_wrong_kind_are_refused(
    tmp_path: Path, key: str, value: Any, kind: str
) -> None:
    config = {**QWEN3_MOE, "model_type": "llama", key: value}
    _one_error(_import(tmp_path, config), f"'{key}' must be {kind}")
    nested = {"model_type": "llama", "text_config": {key: value}}
    _one_error(_import(tmp_path, nested), f"'text_config.{key}' must be {kind}")


# 4. MoE keys the counter would miscount
def test_qwen3_moe_counts_and_refuses_what_it_would_miscount() -> None:
    row = catalog_row_from_hf_config(QWEN3_MOE, "fuzz/q", "q.json")
    assert 30 < row["total_params_b"] < 31 and row["is_moe"]
    cases = {
        "all dense": ({"mlp_only_layers": list(range(48))}, "'mlp_only_layers' names dense layers"),
        "out of range": (
            {"mlp_only_layers": [99]},
            "'mlp_only_layers' holds 99, not a layer index from 0 to 47",
        ),
        "step 0": (
            {"decoder_sparse_step": 0},
            "'decoder_sparse_step' must be a whole number from 1",
        ),
        "no experts": ({"num_experts": 0}, "'num_experts' is 0 in a mixture-of-experts model"),
    }
    for name, (change, message) in cases.items():
        with pytest.raises(WattgpuError, match="^q.json: ") as info:
            catalog_row_from_hf_config({**QWEN3_MOE, **change}, "fuzz/q", "q.json")
        assert message in str(info.value), name


def test_mixtral_without_experts_is_refused_not_imported_dense(tmp_path: Path) -> None:
    mixtral = {
        "model_type": "mixtral", "hidden_size": 4096, "num_attention_heads": 32,
        "num_key_value_heads": 8, "intermediate_size": 14336, "num_local_experts": 0,
        "num_experts_per_tok": 2, "num_hidden_layers": 32, "vocab_size": 32000,
        "max_position_embeddings": 32768, "torch_dtype": "bfloat16",
    }  # fmt: skip
    _one_error(_import(tmp_path, mixtral), "'num_local_experts' is 0", "'mixtral'")
    assert not (tmp_path / "uc" / "llms.csv").exists()


# 2. grid carbon far outside any grid
def test_an_absurd_grid_carbon_row_fails_validation(tmp_path: Path) -> None:
    catalog = tmp_path / "c13"
    catalog.mkdir()
    (catalog / "grid_carbon.csv").write_text(
        "region_id,aliases,kind,name,g_co2_per_kwh,year,source\n"
        "XY,,country,Y,1e308,99999,s\nXZ,,country,Z,400,2022,s\n",
        encoding="utf-8",
    )
    result = run_cli("catalog", "validate", str(catalog))
    assert result.code == 1
    assert result.errors == [
        f"error: {catalog}/grid_carbon.csv row 2, column 'g_co2_per_kwh': 1e+308 g CO2e/kWh is "
        "above 5,000, more than any grid emits; fix: give grams of CO2e per kWh from 0 to 5000 "
        "(400, not 400000 g/MWh or 0.4 kg)",
        f"error: {catalog}/grid_carbon.csv row 2, column 'year': 99999 is outside 1990-2100; "
        "fix: give the data's year",
    ]


def test_the_bundled_grid_carbon_rows_pass_the_new_rules() -> None:
    from predictors.catalog.row_rules import grid_rules
    from predictors.catalog.validate import REGION_SCHEMA, read_table

    rows, _, problems = read_table(REPO / "catalogs" / "grid_carbon.csv", REGION_SCHEMA)
    assert not problems and rows and not [r for r in rows if grid_rules(r)]


# 6. validate: ragged rows and repeated columns
def test_validate_names_the_line_of_too_many_fields_and_a_repeated_column(tmp_path: Path) -> None:
    ragged, twice = tmp_path / "c10", tmp_path / "c11"
    ragged.mkdir()
    twice.mkdir()
    (ragged / "pue.csv").write_text("scope,pue,source\nx,1.2,s\ny,1.2,s,extra\n", encoding="utf-8")
    (twice / "pue.csv").write_text("scope,pue,source,pue\nx,1.2,s,1.3\n", encoding="utf-8")
    line = _one_error(
        run_cli("catalog", "validate", str(ragged)),
        "pue.csv row 3",
        "4 fields for the header's 3 columns",
    )
    assert "Schema" not in line
    line = _one_error(
        run_cli("catalog", "validate", str(twice)),
        "pue.csv row 1, column 'pue'",
        "appears more than once",
    )
    assert "duplicated" not in line


# 5. import-hf into a user llms.csv without its optional columns
@pytest.mark.slow
def test_import_hf_keeps_a_user_llms_csv_that_leaves_optional_columns_out(tmp_path: Path) -> None:
    user = tmp_path / "uc"
    user.mkdir()
    keep = [
        c
        for c in LLM_COLUMNS
        if c not in ("aliases", "kv_lora_rank", "sliding_window", "full_attention_layers")
    ]
    values = dict.fromkeys(keep, "")
    values.update(
        id="my/copy", family="llama-3.1", model_type="llama", total_params_b="8.03",
        active_params_b="8.03", num_layers="32", hidden_size="4096", num_attention_heads="32",
        num_kv_heads="8", head_dim="128", intermediate_size="14336", vocab_size="128256",
        max_position_embeddings="131072", default_dtype="bf16", is_moe="false",
        attention_kind="full", tie_word_embeddings="false", source="by hand",
    )  # fmt: skip
    (user / "llms.csv").write_text(
        ",".join(keep) + "\n" + ",".join(values[c] for c in keep) + "\n", encoding="utf-8"
    )
    assert run_cli("catalog", "validate", "--user-catalog", str(user)).code == 0
    config = REPO / "tests" / "fixtures" / "llama8b_config.json"
    result = run_cli(
        "catalog", "import-hf", str(config), "--id", "fuzz/l8", "--user-catalog", str(user)
    )
    assert result.code == 0, result.err
    lines = (user / "llms.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == ",".join(LLM_COLUMNS)
    kept = dict(zip(LLM_COLUMNS, lines[1].split(","), strict=True))
    assert kept["id"] == "my/copy" and kept["num_kv_heads"] == "8" and kept["source"] == "by hand"
    assert lines[2].startswith("fuzz/l8,")
    assert run_cli("catalog", "validate", "--user-catalog", str(user)).code == 0


def test_import_hf_names_an_unknown_column_of_the_user_llms_csv(tmp_path: Path) -> None:
    user = tmp_path / "uc"
    user.mkdir()
    (user / "llms.csv").write_text("id,famly,source\n", encoding="utf-8")
    config = REPO / "tests" / "fixtures" / "llama8b_config.json"
    result = run_cli(
        "catalog", "import-hf", str(config), "--id", "fuzz/l8", "--user-catalog", str(user)
    )
    _one_error(result, "column 'famly' is not an llms.csv column (did you mean 'family'?)")


# 3, 7, 8. the batch CSV
@pytest.mark.slow
def test_batch_csv_escapes_header_names_and_writes_each_number_as_its_own(tmp_path: Path) -> None:
    rows = tmp_path / "in.csv"
    rows.write_text(
        f"model,gpu,batch_size,=cmd|' /C calc'!A0,@x\n{LLAMA8B},A30,8,a,b\n{LLAMA8B},A30,8.5,c,d\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.csv"
    result = run_cli("predict", "--input", str(rows), "-o", str(out))
    assert result.code == 0, result.err
    header, first, second = out.read_text(encoding="utf-8").splitlines()
    assert header.startswith("model,gpu,batch_size,'=cmd|' /C calc'!A0,'@x,")
    assert first.startswith(f"{LLAMA8B},A30,8,a,b,")  # not 8.0 beside the 8.5 row
    assert second.startswith(f"{LLAMA8B},A30,8.5,c,d,")


@pytest.mark.parametrize(("sep", "word"), [(";", "semicolon"), ("\t", "tab")])
def test_a_semicolon_or_tab_separated_input_is_named_as_such(
    tmp_path: Path, sep: str, word: str
) -> None:
    rows = tmp_path / "semi.csv"
    rows.write_text(
        sep.join(["model", "gpu", "batch_size"]) + f"\n{LLAMA8B}{sep}A30{sep}8\n", encoding="utf-8"
    )
    line = _one_error(
        run_cli("predict", "--input", str(rows)), f"is {word}-separated", "save it comma-separated"
    )
    assert "missing column" not in line


def test_missing_columns_are_listed_without_a_python_list(tmp_path: Path) -> None:
    rows = tmp_path / "x.csv"
    rows.write_text("foo,bar\n1,2\n", encoding="utf-8")
    line = _one_error(
        run_cli("predict", "--input", str(rows)), "missing column(s) model, gpu; add them"
    )
    assert "[" not in line


# 9. aiconfigurator reason wording
def test_an_empty_aiconfigurator_number_says_empty_not_none() -> None:
    with pytest.raises(ValueError, match="^osl is empty"):
        _f({"osl": ""}, "osl")
    with pytest.raises(ValueError, match="^osl is empty"):
        _f({}, "osl")
