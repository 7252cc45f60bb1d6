"""Hugging Face config.json normalisation and the ``catalog import-hf`` command."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from planner.cli import hf_import as cli_hf_import
from predictors.catalog.hf_config import LLM_COLUMNS, catalog_row_from_hf_config
from predictors.core.errors import WattgpuError

#: A Llama-3.1-8B-shaped Hugging Face config.json.
LLAMA_CONFIG = Path(__file__).parent / "fixtures" / "llama8b_config.json"
LLAMA = json.loads(LLAMA_CONFIG.read_text(encoding="utf-8"))


def test_llama_row() -> None:
    row = catalog_row_from_hf_config(LLAMA, "acme/llama-like-8b", "cfg.json")
    assert set(row) == set(LLM_COLUMNS)
    assert row["total_params_b"] == pytest.approx(8.03, rel=0.01)
    assert row["active_params_b"] == row["total_params_b"]
    assert (row["head_dim"], row["num_kv_heads"], row["is_moe"]) == (128, 8, False)
    assert (row["attention_kind"], row["default_dtype"]) == ("full", "bf16")
    assert row["num_experts"] is None and row["kv_lora_rank"] is None


def test_mistral_sliding_and_qwen_window_disabled() -> None:
    mistral = {**LLAMA, "model_type": "mistral", "vocab_size": 32000, "sliding_window": 4096,
               "max_position_embeddings": 32768}  # fmt: skip
    row = catalog_row_from_hf_config(mistral, "a/m", "m.json")
    assert (row["attention_kind"], row["sliding_window"]) == ("sliding", 4096)
    qwen = {**mistral, "model_type": "qwen2", "use_sliding_window": False}
    assert catalog_row_from_hf_config(qwen, "a/q", "q.json")["attention_kind"] == "full"


def test_gemma3_text_config_nesting_is_hybrid() -> None:
    raw = {
        "model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
        "text_config": {"model_type": "gemma3_text", "num_hidden_layers": 6, "hidden_size": 256,
                        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
                        "intermediate_size": 512, "vocab_size": 1000, "sliding_window": 512,
                        "max_position_embeddings": 8192},
        "torch_dtype": "bfloat16",
    }  # fmt: skip
    row = catalog_row_from_hf_config(raw, "g/gemma3-tiny", "g.json")
    assert (row["num_layers"], row["head_dim"], row["tie_word_embeddings"]) == (6, 64, True)
    assert (row["attention_kind"], row["sliding_window"]) == ("hybrid", 512)


def test_deepseek_mla_moe() -> None:
    raw = {
        "model_type": "deepseek_v3", "num_hidden_layers": 4, "hidden_size": 256,
        "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": 1024,
        "moe_intermediate_size": 128, "n_routed_experts": 16, "num_experts_per_tok": 2,
        "n_shared_experts": 1, "first_k_dense_replace": 1, "kv_lora_rank": 64,
        "q_lora_rank": 96, "qk_rope_head_dim": 16, "qk_nope_head_dim": 32, "v_head_dim": 32,
        "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
        "quantization_config": {"quant_method": "fp8"},
    }  # fmt: skip
    row = catalog_row_from_hf_config(raw, "d/tiny-v3", "d.json")
    assert row["attention_kind"] == "mla"
    assert (row["kv_lora_rank"], row["qk_rope_head_dim"], row["head_dim"]) == (64, 16, 48)
    assert (row["num_experts"], row["num_shared_experts"], row["first_k_dense"]) == (16, 1, 1)
    assert row["is_moe"] and row["active_params_b"] < row["total_params_b"]
    assert row["default_dtype"] == "fp8"


def test_falcon_multi_query_gpt_oss_and_mixtral() -> None:
    falcon = {"model_type": "falcon", "num_hidden_layers": 2, "hidden_size": 128,
              "num_attention_heads": 4,
              "multi_query": True, "vocab_size": 100, "max_position_embeddings": 2048,
              "torch_dtype": "bfloat16"}  # fmt: skip
    row = catalog_row_from_hf_config(falcon, "t/falcon-tiny", "f.json")
    assert (row["num_kv_heads"], row["intermediate_size"]) == (1, 512)
    oss = {**LLAMA, "model_type": "gpt_oss", "num_local_experts": 8, "experts_per_token": 2,
           "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 128,
           "quantization_config": {"quant_method": "mxfp4"}}  # fmt: skip
    row = catalog_row_from_hf_config(oss, "o/oss-tiny", "o.json")
    assert (row["attention_kind"], row["default_dtype"], row["num_experts_per_tok"]) == (
        "hybrid",
        "fp4",
        2,
    )
    mixtral = {**LLAMA, "model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 2}
    row = catalog_row_from_hf_config(mixtral, "m/mixtral-like", "x.json")
    assert row["moe_intermediate_size"] == 14336


@pytest.mark.parametrize(
    ("drop", "key"), [("num_hidden_layers", "num_hidden_layers"), ("torch_dtype", "torch_dtype"),
                      ("intermediate_size", "intermediate_size")],
)  # fmt: skip
def test_missing_fact_names_key_and_file(drop: str, key: str) -> None:
    raw = {k: v for k, v in LLAMA.items() if k != drop}
    with pytest.raises(WattgpuError) as err:
        catalog_row_from_hf_config(raw, "a/b", "/tmp/x/config.json")
    message = str(err.value)
    assert key in message and "/tmp/x/config.json" in message and "\n" not in message


def _app() -> typer.Typer:
    app = typer.Typer()
    catalog = typer.Typer()
    cli_hf_import.register(catalog)
    app.add_typer(catalog, name="catalog")
    return app


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_import_hf_writes_and_replaces_row(tmp_path: Path) -> None:
    cfg = _write(tmp_path / "config.json", LLAMA)
    user = tmp_path / "user"
    args = ["catalog", "import-hf", str(cfg), "--id", "acme/my-8b", "--alias", "my8b",
            "--user-catalog", str(user)]  # fmt: skip
    result = CliRunner().invoke(_app(), args)
    assert result.exit_code == 0, result.output
    assert "acme/my-8b" in result.output and "total_params_b: 8.03" in result.output
    result = CliRunner().invoke(_app(), [*args, "--alias", "my-eight-b"])
    assert result.exit_code == 0, result.output
    with (user / "llms.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 1 and rows[0]["aliases"] == "my8b|my-eight-b"
    assert rows[0]["is_moe"] == "false" and rows[0]["kv_lora_rank"] == ""


def test_import_hf_uses_env_and_is_seen_by_load_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from predictors.catalog import store as catalog

    user = tmp_path / "overlay"
    monkeypatch.setenv("WATTGPU_USER_CATALOG", str(user))
    cfg = _write(tmp_path / "config.json", LLAMA)
    result = CliRunner().invoke(
        _app(), ["catalog", "import-hf", str(cfg), "--id", "acme/env-8b", "--alias", "envy"]
    )
    assert result.exit_code == 0, result.output
    loaded = catalog.load_catalog(user)
    assert loaded.resolve_llm("envy") == "acme/env-8b"
    assert loaded.llm("acme/env-8b")["num_kv_heads"] == 8


def test_import_hf_errors_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WATTGPU_USER_CATALOG", raising=False)
    cfg = _write(tmp_path / "config.json", LLAMA)
    result = CliRunner().invoke(_app(), ["catalog", "import-hf", str(cfg), "--id", "a/b"])
    assert isinstance(result.exception, WattgpuError)
    assert "--user-catalog" in str(result.exception) and "WATTGPU_USER_CATALOG" in str(
        result.exception
    )
    bad = _write(tmp_path / "bad.json", "{not json")
    result = CliRunner().invoke(
        _app(), ["catalog", "import-hf", str(bad), "--id", "a/b", "--user-catalog", str(tmp_path)]
    )
    assert isinstance(result.exception, WattgpuError)
    assert "bad.json" in str(result.exception) and "\n" not in str(result.exception)
    missing = _write(
        tmp_path / "missing.json", {k: v for k, v in LLAMA.items() if k != "vocab_size"}
    )
    result = CliRunner().invoke(
        _app(),
        ["catalog", "import-hf", str(missing), "--id", "a/b", "--user-catalog", str(tmp_path)],
    )
    assert isinstance(result.exception, WattgpuError) and "vocab_size" in str(result.exception)
