"""GPU names users type: MLPerf, nvidia-smi, amd-smi/hl-smi/xpu-smi and bare family names.

The expected ids are a fixture table (tests/fixtures/gpu_names.csv: name, kind, expected_id).
Bare family names (kind ``bare``) resolve to the SXM datacenter part and carry an "assumed"
note; every other name names its variant and carries none.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from predictors.catalog.store import Catalog, load_catalog
from predictors.core.errors import UnknownIdError
from predictors.core.paths import catalogs_dir

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "gpu_names.csv"
with FIXTURE.open(encoding="utf-8", newline="") as _fh:
    NAMES: list[dict[str, str]] = list(csv.DictReader(_fh))
MLPERF_NAMES_IN_ISSUE = {
    "NVIDIA H200-SXM-141GB",
    "NVIDIA B200-SXM-180GB",
    "NVIDIA H100-SXM-80GB",
    "NVIDIA H200-NVL-141GB",
    "AMD Instinct MI300X 192GB HBM3",
    "AMD Instinct MI325X 256GB HBM3e",
    "RTX 6000 Pro Blackwell Server Edition",
}


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load_catalog(catalog_dir=catalogs_dir())


def test_fixture_covers_the_issue_names_and_every_catalog_gpu(cat: Catalog) -> None:
    names = {r["name"] for r in NAMES}
    assert MLPERF_NAMES_IN_ISSUE <= names
    smi_ids = {r["expected_id"] for r in NAMES if r["kind"].endswith("-smi")}
    assert smi_ids == set(cat.gpus["id"].to_list())  # a product name for every catalog GPU
    assert {r["kind"] for r in NAMES} >= {"mlperf", "nvidia-smi", "amd-smi", "bare"}


@pytest.mark.parametrize(
    ("name", "kind", "expected"), [(r["name"], r["kind"], r["expected_id"]) for r in NAMES]
)
def test_name_resolves_to_expected_id(cat: Catalog, name: str, kind: str, expected: str) -> None:
    assert cat.resolve_gpu(name) == expected
    note = cat.gpu_name_note(name)
    if kind == "bare" and name != expected:
        assert note is not None and f"assumed {expected}" in note
    else:
        assert note is None


def test_bare_family_names_mean_sxm_parts(cat: Catalog) -> None:
    for name in ("A100", "H100", "H200", "V100"):
        row = cat.gpu(name)
        assert row["form_factor"].startswith("SXM"), name
        # the largest-memory SXM variant of the family
        family = [
            r
            for r in cat.gpus.to_dicts()
            if r["id"].startswith(name) and r["form_factor"] == row["form_factor"]
        ]
        assert row["memory_gb"] == max(r["memory_gb"] for r in family)


def test_assumed_aliases_are_not_plain_aliases(cat: Catalog) -> None:
    for row in cat.gpus.to_dicts():
        assert not set(row["assumed_aliases"] or []) & set(row["aliases"] or []), row["id"]


@pytest.mark.parametrize(
    ("typo", "expected"),
    [
        ("H200 SXM5", "H200-SXM-141GB"),
        ("H100 SXM7", "H100-SXM5-80GB"),
        ("A100 SXM 80", "A100-SXM4-80GB"),
        ("MI300", "MI300X"),
        ("RTX 6000 Blackwell", "RTX-PRO-6000-BLACKWELL"),
        ("GH200 96", "GH200-96GB"),
        ("B200 SXM 192GB", "B200"),
        ("NVIDIA H200-SXM-141G", "H200-SXM-141GB"),
    ],
)
def test_did_you_mean_names_the_right_id(cat: Catalog, typo: str, expected: str) -> None:
    assert cat.try_resolve_gpu(typo) is None
    with pytest.raises(UnknownIdError) as info:
        cat.resolve_gpu(typo)
    hint = str(info.value).split("(did you mean: ", 1)[1].split("?)", 1)[0]
    assert expected in hint.split(", ")
