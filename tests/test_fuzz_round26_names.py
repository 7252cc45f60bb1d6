"""Fuzz round 26: ``facebook/opt-1.3b`` was read as ``facebook/opt-13b``; import-hf's directory.

Names match ignoring punctuation, and a catalog name whose digits no separator splits
(``opt-13b``) matched a name that splits them (``opt-1.3b``, a 10x smaller model): ``predict``,
``compare`` and batch rows used the 13B row silently, and ``import-hf --id facebook/opt-1.3b``
was refused as a clash. A name whose digits are split otherwise than a catalog name's is now
another model: unknown, with the catalog's name as did-you-mean, and importable under its own id.
Only a name with no separator at all (``H100SXM580GB``) matches whichever way the catalog splits.

``import-hf`` made a missing ``--user-catalog`` directory without a word; it now says so on one
``note:`` line, and a failed import leaves no directory behind. Read-only commands stay strict.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from predictors.catalog import user
from predictors.catalog.name_keys import digit_splits, named_ids
from predictors.catalog.store import load_catalog
from predictors.core.errors import UnknownIdError, WattgpuError
from tests.cli_runner import run_cli

OPT_1_3B = {  # facebook/opt-1.3b's published config.json, the keys the importer reads
    "architectures": ["OPTForCausalLM"],
    "model_type": "opt",
    "hidden_size": 2048,
    "num_hidden_layers": 24,
    "num_attention_heads": 32,
    "ffn_dim": 8192,
    "vocab_size": 50272,
    "max_position_embeddings": 2048,
    "torch_dtype": "float16",
    "word_embed_proj_dim": 2048,
    "do_layer_norm_before": True,
    "enable_bias": True,
    "tie_word_embeddings": True,
}


def _opt_config(tmp_path: Path) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(OPT_1_3B), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("kind", "name", "nearest"),
    [
        ("llm", "facebook/opt-1.3b", "facebook/opt-13b"),
        ("llm", "opt-1.3b", "facebook/opt-13b"),
        ("llm", "huggyllama/llama-1.3b", "huggyllama/llama-13b"),
        ("llm", "openai/gpt-oss-2.0b", "openai/gpt-oss-20b"),
        ("llm", "facebook/opt-67b", "facebook/opt-6.7b"),  # the other way round
        ("gpu", "A4.0", "A40"),
        ("gpu", "RTX 40.90", "RTX-4090"),
    ],
)
def test_a_name_splitting_digits_otherwise_is_unknown(kind: str, name: str, nearest: str) -> None:
    catalog = load_catalog()
    resolve = catalog.resolve_llm if kind == "llm" else catalog.resolve_gpu
    with pytest.raises(UnknownIdError, match=f"unknown {kind} '{name}'") as info:
        resolve(name)
    hint = str(info.value).split("(did you mean: ", 1)[1].split("?)", 1)[0]
    assert nearest in hint.split(", ")  # said as the nearest name, never taken silently


@pytest.mark.parametrize(
    ("kind", "name", "expected"),
    [
        ("llm", "facebook/opt-13b", "facebook/opt-13b"),
        ("llm", "OPT 13B", "facebook/opt-13b"),
        ("llm", "opt_6.7b", "facebook/opt-6.7b"),
        ("llm", "LLaMA-13B", "huggyllama/llama-13b"),
        ("llm", "gpt-oss 20B", "openai/gpt-oss-20b"),
        ("llm", "Llama 3.1 8B", "meta-llama/Llama-3.1-8B-Instruct"),
        ("gpu", "A10", "A10"),
        ("gpu", "nvidia a10 pcie", "A10"),
        ("gpu", "NVIDIA A30", "A30"),
        ("gpu", "A40 PCIe", "A40"),
        ("gpu", "NVIDIA GeForce RTX 4090", "RTX-4090"),
        ("gpu", "rtx4090", "RTX-4090"),
        ("gpu", "RTX-4090", "RTX-4090"),
        ("gpu", "H100 SXM5 80GB", "H100-SXM5-80GB"),
        ("gpu", "H100SXM580GB", "H100-SXM5-80GB"),  # no separator: matches either way
        ("gpu", "A3\x1b0", "A30"),  # an unseen control character splits no digits
    ],
)
def test_names_of_the_same_model_resolve_as_before(kind: str, name: str, expected: str) -> None:
    catalog = load_catalog()
    resolve = catalog.try_resolve_llm if kind == "llm" else catalog.try_resolve_gpu
    assert resolve(name) == expected


def test_named_ids_needs_the_same_splits_unless_the_name_is_a_bare_key() -> None:
    entries = [(digit_splits("opt-13b"), "13b"), (digit_splits("Qwen-1.3b"), "1.3b")]
    assert named_ids("opt-13b", entries) == {"13b"}
    assert named_ids("opt-1.3b", entries) == {"1.3b"}
    assert named_ids("opt 1 3b", entries) == {"1.3b"}
    assert named_ids("opt13b", entries) == {"13b"}  # a bare key: the alike name first
    assert named_ids("opt13b", entries[1:]) == {"1.3b"}
    assert named_ids("opt-13b", entries[1:]) == set()  # digits run together: another number


@pytest.mark.usefixtures("cached_predictor")
def test_predict_refuses_opt_1_3b_instead_of_predicting_opt_13b() -> None:
    result = run_cli("predict", "--model", "facebook/opt-1.3b", "--gpu", "L40S")
    assert result.code == 1 and "facebook/opt-13b on" not in result.out
    assert len(result.errors) == 1
    assert "unknown llm 'facebook/opt-1.3b' (did you mean: facebook/opt-13b" in result.errors[0]


def test_import_hf_adds_opt_1_3b_beside_the_bundled_opt_13b(tmp_path: Path) -> None:
    ucat = tmp_path / "ucat"
    ucat.mkdir()
    result = run_cli(
        "catalog", "import-hf", str(_opt_config(tmp_path)), "--id", "facebook/opt-1.3b",
        "--user-catalog", str(ucat),
    )  # fmt: skip
    assert result.code == 0, result.err
    assert result.err == ""  # an existing directory: no note
    catalog = load_catalog(ucat)
    assert catalog.resolve_llm("facebook/opt-1.3b") == "facebook/opt-1.3b"
    assert catalog.llm("Facebook/OPT_1.3B")["total_params_b"] == pytest.approx(1.31, abs=0.01)
    with pytest.raises(UnknownIdError, match="did you mean: facebook/opt-13b") as info:
        catalog.resolve_llm("opt-1.3b")  # an alias of the 13B only: never taken
    assert "facebook/opt-1.3b" in str(info.value)  # the new id among the nearest names
    assert catalog.resolve_llm("facebook/opt-13b") == "facebook/opt-13b"
    assert catalog.resolve_llm("OPT13B") == "facebook/opt-13b"  # a bare key: its alike name


def test_a_name_spelt_like_a_bundled_one_is_still_refused(tmp_path: Path) -> None:
    config = _opt_config(tmp_path)
    names = (("--id", "Facebook/OPT_13B"), ("--alias", "opt 13b"), ("--alias", "opt13b"))
    for option, name in names:
        args = ["--id", "my-org/opt", option, name] if option == "--alias" else ["--id", name]
        ucat = str(tmp_path / "u")
        result = run_cli("catalog", "import-hf", str(config), *args, "--user-catalog", ucat)
        assert result.code == 1, (name, result.out)
        assert f"{option} '{name}': already names the bundled model facebook/opt-13b" in result.err


def test_import_hf_creates_a_missing_directory_and_says_so(tmp_path: Path) -> None:
    ucat = tmp_path / "new" / "my-catalog"
    config = _opt_config(tmp_path)
    args = ("catalog", "import-hf", str(config), "--user-catalog", str(ucat))
    result = run_cli(*args, "--id", "my-org/my-model")
    assert result.code == 0, result.err
    assert result.err == f"note: --user-catalog {ucat}: did not exist — created it\n"
    assert load_catalog(ucat).resolve_llm("my-org/my-model") == "my-org/my-model"
    again = run_cli(*args, "--id", "my-org/other")  # the directory now exists: no note
    assert again.code == 0 and again.err == "", again.err


def test_read_only_commands_still_refuse_a_missing_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    result = run_cli("catalog", "llms", "--user-catalog", str(missing))
    assert result.code == 1
    assert f"error: {missing}: user catalog directory does not exist" in result.err
    assert not missing.exists()


def test_a_failed_import_leaves_no_directory_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(target: Path, text: str) -> Path:
        raise WattgpuError("the imported row would make the user catalog invalid: …")

    monkeypatch.setattr(user, "_validated_write", refuse)
    with pytest.raises(WattgpuError, match="would make the user catalog invalid"):
        user.upsert_llm_row(tmp_path / "a" / "b", {"id": "my-org/my-model", "aliases": []})
    assert list(tmp_path.iterdir()) == []
    kept = tmp_path / "kept"
    kept.mkdir()
    with pytest.raises(WattgpuError):
        user.upsert_llm_row(kept, {"id": "my-org/my-model", "aliases": []})
    assert kept.is_dir()  # a directory the import did not make stays
