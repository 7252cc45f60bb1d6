"""Tests for predictors.catalog.store: shipped catalogs, name resolution, validation rules,
overlays."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from predictors.catalog.store import load_catalog, normalize_name, validate_dir
from predictors.catalog.validate import GPU_SCHEMA, LLM_SCHEMA, PUE_SCHEMA, REGION_SCHEMA
from predictors.core.errors import CatalogError, UnknownIdError
from predictors.core.paths import USER_CATALOG_ENV, catalogs_dir

REQUIRED_GPUS = (
    "V100-SXM2-32GB V100-PCIE-16GB T4 A10 A10G A30 A40 A100-SXM4-40GB A100-SXM4-80GB "
    "A100-PCIE-40GB A100-PCIE-80GB L4 L40 L40S RTX-3090 RTX-4090 RTX-6000-ADA "
    "RTX-PRO-6000-BLACKWELL H100-PCIE-80GB H100-SXM5-80GB H100-NVL-94GB H200-SXM-141GB "
    "H200-NVL-141GB GH200-96GB GH200-144GB B200 GB200 MI250 MI300X MI325X GAUDI2 GAUDI3"
).split()
FILLED = ("memory_gb", "memory_bandwidth_gb_s", "tdp_w", "fp16_tflops_dense")

GPU_ROW = {
    "id": "TEST-GPU",
    "aliases": "Test GPU 1|tgpu",
    "vendor": "NVIDIA",
    "architecture": "Hopper",
    "form_factor": "SXM5",
    "release_year": "2022",
    "memory_gb": "80",
    "memory_type": "HBM3",
    "memory_bandwidth_gb_s": "3350",
    "tdp_w": "700",
    "idle_power_w": "70",
    "idle_power_source": "test",
    "base_clock_mhz": "1590",
    "boost_clock_mhz": "1980",
    "fp16_tflops_dense": "989",
    "fp8_tflops_dense": "1979",
    "int8_tops_dense": "",
    "fp4_tflops_dense": "",
    "sm_count": "132",
    "l2_cache_mb": "50",
    "transistors_billion": "80",
    "process_nm": "4",
    "interconnect_gb_s": "900",
    "usd_per_hour": "2.5",
    "list_price_usd": "",
    "source": "test",
    "usd_per_hour_min": "",
}
LLM_ROW = {
    "id": "org/Test-8B",
    "aliases": "test-8b",
    "family": "llama",
    "model_type": "llama",
    "total_params_b": "8.03",
    "active_params_b": "8.03",
    "num_layers": "32",
    "hidden_size": "4096",
    "num_attention_heads": "32",
    "num_kv_heads": "8",
    "head_dim": "128",
    "intermediate_size": "14336",
    "moe_intermediate_size": "",
    "num_experts": "",
    "num_experts_per_tok": "",
    "num_shared_experts": "",
    "first_k_dense": "",
    "kv_lora_rank": "",
    "qk_rope_head_dim": "",
    "vocab_size": "128256",
    "max_position_embeddings": "131072",
    "default_dtype": "bf16",
    "is_moe": "false",
    "attention_kind": "full",
    "sliding_window": "",
    "tie_word_embeddings": "false",
    "source": "test",
}
REGION_ROW = {
    "region_id": "DE",
    "aliases": "DEU|Germany",
    "kind": "country",
    "name": "Germany",
    "g_co2_per_kwh": "380",
    "year": "2023",
    "source": "test",
}
PUE_ROW = {"scope": "on-premise", "pue": "1.58", "source": "test"}


def write(path: Path, rows: list[dict[str, str]], columns: list[str] | None = None) -> Path:
    """Write rows as a catalog CSV (columns default to the first row's keys)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns or list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.fixture
def tiny_dir(tmp_path: Path) -> Path:
    """A valid tiny catalog directory with one row per file."""
    base = tmp_path / "cat"
    write(base / "gpus.csv", [GPU_ROW])
    write(base / "llms.csv", [LLM_ROW])
    write(base / "grid_carbon.csv", [REGION_ROW])
    write(base / "pue.csv", [PUE_ROW])
    return base


# --- shipped catalogs -------------------------------------------------------------------------


def test_every_shipped_catalog_file_validates() -> None:
    shipped = [
        s.file_name
        for s in (GPU_SCHEMA, LLM_SCHEMA, REGION_SCHEMA, PUE_SCHEMA)
        if (catalogs_dir() / s.file_name).is_file()
    ]
    assert {"gpus.csv", "grid_carbon.csv", "pue.csv"} <= set(shipped)
    assert validate_dir(catalogs_dir()) == []


def test_shipped_gpus_have_required_ids_and_fields() -> None:
    cat = load_catalog(catalog_dir=catalogs_dir())
    ids = set(cat.gpus["id"].to_list())
    assert set(REQUIRED_GPUS) <= ids
    for col in FILLED:
        assert cat.gpus[col].null_count() == 0, col
        assert (cat.gpus[col] > 0).all(), col
    assert cat.gpus["idle_power_source"].null_count() == 0
    assert (cat.gpus["idle_power_w"] < cat.gpus["tdp_w"]).all()


def test_shipped_conflict_decisions() -> None:
    cat = load_catalog(catalog_dir=catalogs_dir())
    assert cat.gpu("MI300X")["memory_bandwidth_gb_s"] == 5300
    assert cat.gpu("L40S")["tdp_w"] == 350
    assert cat.gpu("H200-NVL-141GB")["tdp_w"] == 600
    assert cat.gpu("A100-PCIE-40GB")["memory_bandwidth_gb_s"] == 1555
    assert cat.gpu("B200")["memory_gb"] == 180
    assert cat.gpu("RTX-4090")["fp16_tflops_dense"] == pytest.approx(165.2)


def test_shipped_regions_and_pue() -> None:
    cat = load_catalog(catalog_dir=catalogs_dir())
    assert cat.resolve_region("Germany") == "DE"
    assert cat.resolve_region("deu") == "DE"
    assert cat.resolve_region("AWS:EU-Central-1") == "aws:eu-central-1"
    assert cat.resolve_region("gcp:europe-west1") == "gcp:europe-west1"
    assert cat.region("FR")["g_co2_per_kwh"] > 0
    assert set(cat.regions["kind"].unique()) <= {"country", "cloud", "subnational"}
    assert cat.pue_for("on-premise") == pytest.approx(1.58)
    assert cat.pue_for("aws") == pytest.approx(1.135)


@pytest.mark.parametrize(
    ("name", "gpu_id"),
    [
        ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"),
        ("nvidia h100 80gb hbm3", "H100-SXM5-80GB"),
        ("H100_SXM5_80GB", "H100-SXM5-80GB"),
        ("h100_sxm", "H100-SXM5-80GB"),
        ("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"),
        ("Tesla V100-SXM2-32GB", "V100-SXM2-32GB"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA H100 NVL", "H100-NVL-94GB"),
        ("NVIDIA GeForce RTX 4090", "RTX-4090"),
        ("AMD Instinct MI300X", "MI300X"),
        ("AMD MI250 GPU", "MI250"),
        ("Habana Gaudi2", "GAUDI2"),
        ("Nvidia A100 GPU", "A100-SXM4-40GB"),
        ("A100", "A100-SXM4-80GB"),
        ("gb300", "GB300"),
        ("b300_sxm", "B300"),
        ("Intel PVC GPU", "MAX-1550"),
    ],
)
def test_gpu_alias_resolution(name: str, gpu_id: str) -> None:
    cat = load_catalog(catalog_dir=catalogs_dir())
    assert cat.resolve_gpu(name) == gpu_id
    assert cat.gpu(name)["id"] == gpu_id


def test_normalize_name_ignores_case_space_punctuation() -> None:
    assert normalize_name("H100_SXM5-80GB") == normalize_name("h100 sxm5 80gb") == "h100sxm580gb"


def test_unknown_gpu_did_you_mean() -> None:
    cat = load_catalog(catalog_dir=catalogs_dir())
    assert cat.try_resolve_gpu("H100 SXM7") is None
    with pytest.raises(UnknownIdError, match=r"unknown gpu 'H100 SXM7' \(did you mean: .*H100"):
        cat.resolve_gpu("H100 SXM7")


@pytest.mark.shared_data
def test_argonne_and_aiconfigurator_gpu_spellings_resolve(measurements_dir: Path) -> None:
    cat = load_catalog(catalog_dir=catalogs_dir())
    names: set[str] = set()
    with (measurements_dir / "argonne-llm-inference-bench" / "Plots_All_results.csv").open() as fh:
        names |= {r["Hardware"] for r in csv.DictReader(fh) if r["Hardware"] != "Hardware"}
    with (measurements_dir / "aiconfigurator-silicon" / "silicon_sample.csv").open() as fh:
        names |= {r["system"] for r in csv.DictReader(fh)}
    unresolved = {n for n in names if n.strip() and cat.try_resolve_gpu(n) is None}
    assert unresolved <= {"SambaNova SN40L"}  # not a GPU; no published bandwidth/TDP


# --- tiny catalogs: loading, validation rules -------------------------------------------------


def test_tiny_catalog_loads_with_explicit_types(tiny_dir: Path) -> None:
    cat = load_catalog(catalog_dir=tiny_dir)
    assert cat.resolve_gpu("test gpu 1") == "TEST-GPU"
    assert cat.resolve_llm("TEST-8B") == "org/Test-8B"
    assert cat.llm("org/Test-8B")["is_moe"] is False
    assert cat.gpus.schema["aliases"].base_type().__name__ == "List"
    assert cat.gpus["sm_count"].dtype.is_integer()
    assert cat.gpus["memory_gb"].dtype.is_float()


@pytest.mark.parametrize(
    ("file", "row", "column", "value", "message"),
    [
        ("gpus.csv", GPU_ROW, "memory_bandwidth_gb_s", "0", "greater than zero"),
        ("gpus.csv", GPU_ROW, "memory_gb", "-80", "greater than zero"),
        ("gpus.csv", GPU_ROW, "tdp_w", "0", "greater than zero"),
        ("gpus.csv", GPU_ROW, "boost_clock_mhz", "1000", "below base clock"),
        ("gpus.csv", GPU_ROW, "vendor", "Nvidiaa", "unknown value 'Nvidiaa'"),
        ("gpus.csv", GPU_ROW, "memory_gb", "eighty", "not a number"),
        ("gpus.csv", GPU_ROW, "fp16_tflops_dense", "", "value is empty"),
        ("gpus.csv", GPU_ROW, "usd_per_hour_min", "3.5", "exceeds the median usd_per_hour 2.5"),
        ("llms.csv", LLM_ROW, "active_params_b", "9", "exceed total"),
        ("llms.csv", LLM_ROW, "num_kv_heads", "64", "exceed 32 attention heads"),
        ("llms.csv", LLM_ROW, "is_moe", "yes", "not true/false"),
        ("llms.csv", LLM_ROW, "attention_kind", "linear", "unknown value 'linear'"),
        ("llms.csv", LLM_ROW, "num_layers", "32.5", "not an integer"),
        ("grid_carbon.csv", REGION_ROW, "kind", "planet", "unknown value 'planet'"),
        ("pue.csv", PUE_ROW, "pue", "0.9", "at least 1"),
    ],
)
def test_each_rule_gives_one_message(
    tiny_dir: Path, file: str, row: dict[str, str], column: str, value: str, message: str
) -> None:
    write(tiny_dir / file, [{**row, column: value}])
    problems = validate_dir(tiny_dir)
    assert len(problems) == 1, problems
    assert f"{file} row 2, column '{column}'" in problems[0]
    assert message in problems[0]
    assert "; fix: " in problems[0]


def test_duplicate_id(tiny_dir: Path) -> None:
    write(tiny_dir / "gpus.csv", [GPU_ROW, {**GPU_ROW, "aliases": ""}])
    problems = validate_dir(tiny_dir)
    assert len(problems) == 1
    assert "gpus.csv row 3, column 'id': duplicate id 'TEST-GPU' (also row 2)" in problems[0]


def test_alias_collision_across_ids(tiny_dir: Path) -> None:
    other = {**GPU_ROW, "id": "OTHER-GPU", "aliases": "TGPU"}
    write(tiny_dir / "gpus.csv", [GPU_ROW, other])
    problems = validate_dir(tiny_dir)
    assert len(problems) == 1
    assert "row 3, column 'aliases': 'TGPU' also names 'TEST-GPU'" in problems[0]


def test_missing_and_unknown_columns(tiny_dir: Path) -> None:
    row = {k: v for k, v in GPU_ROW.items() if k != "tdp_w"} | {"colour": "green"}
    write(tiny_dir / "gpus.csv", [row])
    problems = validate_dir(tiny_dir)
    assert len(problems) == 2
    assert any("column 'tdp_w': required column is missing" in p for p in problems)
    assert any("column 'colour': unknown column" in p for p in problems)


def test_dense_model_rules(tiny_dir: Path) -> None:
    write(tiny_dir / "llms.csv", [{**LLM_ROW, "active_params_b": "7", "num_experts": "8"}])
    problems = validate_dir(tiny_dir)
    assert len(problems) == 2
    assert any("'active_params_b': dense model" in p for p in problems)
    assert any("'num_experts': MoE field filled for a dense model" in p for p in problems)


def test_all_problems_raised_together(tiny_dir: Path) -> None:
    write(tiny_dir / "gpus.csv", [{**GPU_ROW, "tdp_w": "0", "memory_gb": "0"}])
    write(tiny_dir / "pue.csv", [{**PUE_ROW, "pue": "abc"}])
    with pytest.raises(CatalogError) as info:
        load_catalog(catalog_dir=tiny_dir)
    lines = str(info.value).splitlines()
    assert len(lines) == 3
    assert all("; fix: " in line for line in lines)


# --- user overlay and cache -------------------------------------------------------------------


def test_user_overlay_adds_and_overrides(tiny_dir: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"
    write(user / "gpus.csv", [{**GPU_ROW, "tdp_w": "650", "aliases": "tgpu"}])
    write(user / "llms.csv", [{**LLM_ROW, "id": "me/My-Model", "aliases": "mine"}])
    cat = load_catalog(user, catalog_dir=tiny_dir)
    assert cat.gpus.height == 1
    assert cat.gpu("TEST-GPU")["tdp_w"] == 650
    assert cat.try_resolve_gpu("Test GPU 1") is None  # the override replaced the aliases
    assert cat.resolve_llm("mine") == "me/My-Model"
    assert cat.resolve_llm("test-8b") == "org/Test-8B"


def test_user_overlay_from_environment(
    tiny_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "envuser"
    write(user / "llms.csv", [{**LLM_ROW, "id": "env/Model", "aliases": ""}])
    monkeypatch.setenv(USER_CATALOG_ENV, str(user))
    assert load_catalog(catalog_dir=tiny_dir).resolve_llm("env/model") == "env/Model"


def test_user_overlay_alias_collision(tiny_dir: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"
    write(user / "gpus.csv", [{**GPU_ROW, "id": "MY-GPU", "aliases": "tgpu"}])
    with pytest.raises(CatalogError, match=r"'tgpu' also names 'TEST-GPU'"):
        load_catalog(user, catalog_dir=tiny_dir)


def test_missing_user_dir_is_an_error(tiny_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="user catalog directory does not exist"):
        load_catalog(tmp_path / "nope", catalog_dir=tiny_dir)


def test_cache_reuses_and_reloads_on_change(tiny_dir: Path) -> None:
    first = load_catalog(catalog_dir=tiny_dir)
    assert load_catalog(catalog_dir=tiny_dir) is first
    write(tiny_dir / "gpus.csv", [{**GPU_ROW, "tdp_w": "710.5"}])
    second = load_catalog(catalog_dir=tiny_dir)
    assert second is not first
    assert second.gpu("TEST-GPU")["tdp_w"] == 710.5


@pytest.mark.parametrize("drop", ["", "gpus.csv", "pue.csv"])
def test_missing_base_catalog_is_an_error_not_an_empty_catalog(tiny_dir: Path, drop: str) -> None:
    target = tiny_dir.parent / "absent" if not drop else tiny_dir
    if drop:
        (tiny_dir / drop).unlink()
    with pytest.raises(CatalogError, match=r"catalog directory .*fix: give a directory holding"):
        load_catalog(catalog_dir=target)


def test_replaced_catalog_reads_its_own_rows_not_a_cached_copy() -> None:
    from dataclasses import replace

    import polars as pl

    cat = load_catalog()
    gpu = cat.gpus["id"][0]
    before = cat.gpu(gpu)["tdp_w"]
    assert cat.memo("x") is cat.memo("x")
    changed = replace(cat, gpus=cat.gpus.with_columns(pl.col("tdp_w") * 2))
    assert changed.gpu(gpu)["tdp_w"] == 2 * before
    assert cat.gpu(gpu)["tdp_w"] == before
    assert changed.memo("x") is not cat.memo("x")


def test_the_least_catalog_memory_leaves_room_after_the_runtime_reserve() -> None:
    """gpus.csv's memory_gb floor (a unit-mistake guard) is above what the engine's runtime
    reserve takes at its memory utilisation: a GPU the catalog accepts has usable memory."""
    from predictors.catalog.row_rules import GPU_RANGES
    from predictors.physics import MEMORY_UTILISATION, RUNTIME_RESERVE_GB_PER_GPU

    assert GPU_RANGES["memory_gb"][0] > RUNTIME_RESERVE_GB_PER_GPU / MEMORY_UTILISATION
