"""The one rule that pairs a misspelt required name with the name it stands for, shared by the
scenario loader (keys) and the catalog header (columns)."""

from __future__ import annotations

from predictors.core.errors import misspelt_required


def test_a_close_unknown_pairs_with_its_missing_name() -> None:
    assert misspelt_required(["itl"], ["itl_ms"]) == {"itl": "itl_ms"}
    got = misspelt_required(["memory_bandwith_gb_s", "colour"], ["memory_bandwidth_gb_s", "tdp_w"])
    assert got == {"memory_bandwith_gb_s": "memory_bandwidth_gb_s"}


def test_an_unrelated_stray_name_pairs_only_when_asked_to() -> None:
    """Beside one missing column, a stray 'colour' is not its misspelling; in a small scenario
    mapping, one stray key beside one missing key is (``{gpus: 16}`` for ``gpu_count``)."""
    assert misspelt_required(["colour"], ["tdp_w"]) == {}
    assert misspelt_required(["colour"], ["tdp_w"], alone=True) == {"colour": "tdp_w"}


def test_two_unknowns_close_to_one_missing_name_pair_with_none() -> None:
    assert misspelt_required(["itl_m", "itl_mss"], ["itl_ms"]) == {}
    assert misspelt_required(["ttft", "itl"], ["itl_ms", "ttft_ms"]) == {
        "ttft": "ttft_ms",
        "itl": "itl_ms",
    }
