"""Fuzz round 24: a name that splits its digits elsewhere names another model.

Matching drops case, punctuation and spaces, so ``Qwen/Qwen2-57B`` (Qwen2's 57B MoE) and
``Qwen2.5-7B`` shared the key ``qwen257b`` and the 57B name silently resolved to the 7B dense
model (``Llama-3-18B`` to ``Llama-3.1-8B``), in ``predict``, scenarios and measurement files
alike. A name whose separators split its digits where no id or alias of that key does is now
unknown, with the catalog's nearest names; names that split them the same way, or not at all,
resolve as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from predictors.catalog.name_keys import digit_splits
from predictors.catalog.store import load_catalog
from predictors.core.errors import WattgpuError
from tests.cli_runner import run_cli


@pytest.mark.parametrize(
    ("name", "splits"),
    [
        ("Qwen2.5-7B", {1, 2}),
        ("Qwen/Qwen2-57B", {1}),
        ("H100SXM580GB", set()),
        ("H100-SXM5-80GB", {4}),
        ("A100 SXM 4 80GB", {4}),  # a space between a letter and a digit splits nothing
        ("meta-llama/Llama-3.1-8B-Instruct", {1, 2}),
    ],
)
def test_digit_splits(name: str, splits: set[int]) -> None:
    assert digit_splits(name) == splits


@pytest.mark.parametrize(
    ("name", "nearest"),
    [("Qwen/Qwen2-57B", "Qwen/Qwen2.5-7B"), ("Llama-3-18B", "meta-llama/Llama-3.1-8B-Instruct")],
)
def test_a_name_that_splits_its_digits_elsewhere_is_unknown(name: str, nearest: str) -> None:
    with pytest.raises(WattgpuError, match=f"unknown llm '{name}'") as info:
        load_catalog().resolve_llm(name)
    assert nearest in str(info.value)  # said as the nearest name, never taken silently


@pytest.mark.parametrize(
    ("name", "llm"),
    [
        ("llama 3.1 8b", "meta-llama/Llama-3.1-8B-Instruct"),
        ("Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct"),
        ("qwen2.5-7b", "Qwen/Qwen2.5-7B"),
    ],
)
def test_names_that_split_digits_alike_resolve_as_before(name: str, llm: str) -> None:
    assert load_catalog().resolve_llm(name) == llm


def test_gpu_names_without_separators_resolve_as_before() -> None:
    catalog = load_catalog()
    assert catalog.resolve_gpu("H100SXM580GB") == catalog.resolve_gpu("H100-SXM5-80GB")


def test_predict_refuses_the_name_instead_of_predicting_another_model() -> None:
    result = run_cli("predict", "--model", "Qwen/Qwen2-57B", "--gpu", "H100")
    assert result.code == 1 and "Qwen/Qwen2.5-7B on" not in result.out
    assert len(result.errors) == 1 and "unknown llm 'Qwen/Qwen2-57B'" in result.errors[0]


def test_a_user_catalog_may_add_the_model_its_digits_tell_apart(tmp_path: Path) -> None:
    """The catalog's duplicate-name check follows the same rule (before: ``Qwen/Qwen2-57B`` was
    refused as "also names Qwen/Qwen2.5-7B" though it resolves to neither)."""
    config = Path(__file__).parent / "fixtures" / "llama8b_config.json"
    user = tmp_path / "uc"
    result = run_cli(
        "catalog", "import-hf", str(config), "--id", "Qwen/Qwen2-57B", "--user-catalog", str(user)
    )
    assert result.code == 0, result.err
    catalog = load_catalog(user)
    assert catalog.resolve_llm("Qwen/Qwen2-57B") == "Qwen/Qwen2-57B"
    assert catalog.resolve_llm("Qwen2.5-7B") == "Qwen/Qwen2.5-7B"
    with pytest.raises(WattgpuError, match="unknown llm 'QwenQwen257B'"):
        catalog.resolve_llm("QwenQwen257B")  # no splits: two models' ids share the key
