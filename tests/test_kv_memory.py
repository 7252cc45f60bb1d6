"""KV memory of windowed, chunked and recurrent layers (the memory rule's per-sequence KV).

Properties over every catalog LLM (:func:`predictors.physics.kv_bytes_per_sequence`):

* the layered KV (state aside) is never above the all-full-layers reading and never below the
  full layers' share; the fixed recurrent state does not depend on the context;
* it is non-decreasing in the context;
* a model whose KV layer columns are empty (or a catalog without them) gets today's reading;
* the fit verdict is monotone: more memory or more GPUs never refuse what fewer accepted.

Plus ``catalog import-hf`` filling the columns from ``layer_types`` and from a Nemotron-H
``hybrid_override_pattern``, and the catalog's checks of the columns.
"""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from test_hf_import import LLAMA, _app
from typer.testing import CliRunner

from predictors import memory_rule, physics
from predictors.api import Predictor
from predictors.catalog.kv_layers import KV_LAYER_COLUMNS
from predictors.catalog.store import load_catalog
from predictors.core.errors import CatalogError
from predictors.features import join_specs, with_layout
from predictors.serving.disagg_build import kv_transfer

CONTEXTS = (1, 17, 128, 512, 1000, 2047, 4096, 8192, 32_768, 131_072, 1_000_000)
PRECISIONS = ("bf16", "fp8", "fp4", "fp32")
_CATALOG = load_catalog()


def _grid(catalog: object = _CATALOG) -> pl.DataFrame:
    """Every catalog LLM at every context and precision, with catalog facts."""
    models = _CATALOG.llms["id"].to_list()
    rows = pl.DataFrame(
        list(itertools.product(models, PRECISIONS, CONTEXTS)),
        schema=["model", "precision", "c"],
        orient="row",
    ).with_columns(pl.lit("H100-SXM5-80GB").alias("gpu"), pl.col("c").cast(pl.Float64))
    return join_specs(rows, catalog)  # type: ignore[arg-type]


def _kv(frame: pl.DataFrame) -> pl.DataFrame:
    state = pl.col("state_bytes_per_sequence").cast(pl.Float64).fill_null(0.0)
    return frame.with_columns(
        physics.kv_bytes_per_sequence(pl.col("c")).alias("kv"),
        (physics.kv_bytes_per_token() * pl.col("c")).alias("all_full"),
        (physics.kv_bytes_per_layer_token() * pl.col("full_attention_layers") * pl.col("c"))
        .fill_null(physics.kv_bytes_per_token() * pl.col("c"))
        .alias("full_share"),
        state.alias("state"),
    )


def test_layered_kv_between_the_full_layers_share_and_the_all_full_reading() -> None:
    kv = _kv(_grid())
    assert kv["kv"].null_count() == 0 and kv["all_full"].null_count() == 0
    layered = kv["kv"] - kv["state"]
    assert bool((layered <= kv["all_full"] * (1 + 1e-12)).all())
    assert bool((layered >= kv["full_share"] * (1 - 1e-12)).all())
    assert bool((kv["state"] >= 0).all())
    windowed = kv.filter(pl.col("window_attention_layers").fill_null(0) > 0)
    # a windowed layer holds fewer tokens than the context once the context passes the window
    longer = windowed.filter(pl.col("c") > pl.col("sliding_window"))
    assert longer.height > 0 and bool((longer["kv"] - longer["state"] < longer["all_full"]).all())


def test_kv_per_sequence_non_decreasing_in_context() -> None:
    kv = _kv(_grid()).sort("model", "precision", "c")
    step = kv.group_by("model", "precision", maintain_order=True).agg(
        pl.col("kv").diff().drop_nulls().min().alias("min_step")
    )
    assert bool((step["min_step"] >= 0).all()), step.filter(pl.col("min_step") < 0)


def test_empty_columns_keep_todays_reading() -> None:
    kv = _kv(_grid())
    empty = kv.filter(pl.col("full_attention_layers").is_null())
    assert empty.height > 0
    assert (empty["kv"] == empty["all_full"]).all()
    # a catalog without the columns (a user catalog written before them) reads every layer full
    empty_cells = (pl.lit(None).cast(pl.Int64).alias(c) for c in KV_LAYER_COLUMNS)
    bare = _CATALOG.llms.with_columns(empty_cells)
    catalog = type("Bare", (), {"llms": bare, "gpus": _CATALOG.gpus})()
    old = _kv(_grid(catalog))
    assert (old["kv"] == old["all_full"]).all()


def _fits(frame: pl.DataFrame) -> np.ndarray:
    j = with_layout(join_specs(frame, _CATALOG))
    return j.select(memory_rule.fits_in_memory().fill_null(False)).to_series().to_numpy()


def test_fit_verdict_monotone_in_memory_and_gpus() -> None:
    models = _CATALOG.llms["id"].to_list()
    gpus = ["A100-SXM4-40GB", "H100-SXM5-80GB", "B200"]
    rows = pl.DataFrame(
        list(
            itertools.product(
                models, gpus, (1, 2, 4, 8), ("vllm", "tensorrt-llm"), (1, 16, 256), (512, 16_384)
            )
        ),
        schema=["model", "gpu", "gpu_count", "engine", "batch_size", "input_tokens"],
        orient="row",
    ).with_columns(
        pl.lit("bf16").alias("precision"),
        pl.col("input_tokens").alias("output_tokens"),
        pl.col("gpu_count").cast(pl.Float64),
        pl.col("batch_size").cast(pl.Float64),
        pl.col("input_tokens").cast(pl.Float64),
    )
    fits = _fits(rows)
    assert 0 < fits.sum() < fits.size
    more_gpus = _fits(rows.with_columns(pl.col("gpu_count") * 2))
    doubled = rows["gpu_count"].to_numpy() <= 4  # the doubled count still fits one node
    assert not np.any(fits & doubled & ~more_gpus)
    j = with_layout(join_specs(rows, _CATALOG))
    bigger = j.with_columns(pl.col("memory_gb") * 1.5)
    more_memory = (
        bigger.select(memory_rule.fits_in_memory().fill_null(False)).to_series().to_numpy()
    )
    assert not np.any(fits & ~more_memory)
    fewer = _fits(rows.with_columns(pl.col("batch_size") / 2))
    assert not np.any(fits & ~fewer)


def test_kv_transfer_moves_the_prompts_kv(predictor: Predictor) -> None:
    models = _CATALOG.llms["id"].to_list()
    prompt = 20_000.0
    pre = pl.DataFrame(
        {
            "model": models,
            "gpu": ["H100-SXM5-80GB"] * len(models),
            "precision": ["bf16"] * len(models),
            "input_tokens": [prompt] * len(models),
        }
    )
    ones = np.ones(len(models))
    moved = kv_transfer(predictor, pre, pre, 2 * ones, ones).bytes_per_request
    j = join_specs(pre, _CATALOG)
    held = j.select(physics.kv_bytes_per_sequence(pl.col("input_tokens"))).to_series()
    np.testing.assert_allclose(moved, held.to_numpy(), rtol=1e-12)
    all_full = j.select(physics.kv_bytes_per_token() * prompt).to_series().to_numpy()
    windowed = (j["window_attention_layers"].fill_null(0) > 0).to_numpy()
    assert windowed.any() and bool(np.all(moved[windowed] < all_full[windowed]))


def _import(tmp_path: Path, config: dict[str, object], model_id: str) -> dict[str, str]:
    cfg = tmp_path / f"{model_id.replace('/', '_')}.json"
    cfg.write_text(json.dumps(config))
    user = tmp_path / "user"
    args = ["catalog", "import-hf", str(cfg), "--id", model_id, "--user-catalog", str(user)]
    result = CliRunner().invoke(_app(), args)
    assert result.exit_code == 0, result.output
    with (user / "llms.csv").open(newline="") as fh:
        return {r["id"]: r for r in csv.DictReader(fh)}[model_id]


def test_import_hf_fills_layer_types(tmp_path: Path) -> None:
    oss = {**LLAMA, "model_type": "gpt_oss", "num_hidden_layers": 6, "sliding_window": 128,
           "layer_types": ["sliding_attention", "full_attention"] * 3}  # fmt: skip
    row = _import(tmp_path, oss, "acme/oss-like")
    assert (row["attention_kind"], row["sliding_window"]) == ("hybrid", "128")
    assert (row["full_attention_layers"], row["window_attention_layers"]) == ("3", "3")
    assert row["state_bytes_per_sequence"] == "0"
    gemma = {**LLAMA, "model_type": "gemma3_text", "num_hidden_layers": 8, "sliding_window": 512,
             "layer_types": (["sliding_attention"] * 5 + ["full_attention"]
                             + ["sliding_attention"] * 2)}  # fmt: skip
    row = _import(tmp_path, gemma, "acme/gemma-like")  # one entry per layer (round 24: required)
    assert (row["full_attention_layers"], row["window_attention_layers"]) == ("1", "7")
    dense = _import(tmp_path, LLAMA, "acme/dense")
    assert all(dense[c] == "" for c in KV_LAYER_COLUMNS)


def test_import_hf_fills_a_nemotron_h_pattern(tmp_path: Path) -> None:
    pattern = "M-M*-M-M*"
    nemo = {**LLAMA, "model_type": "nemotron_h", "num_hidden_layers": len(pattern),
            "hybrid_override_pattern": pattern, "mamba_num_heads": 8, "mamba_head_dim": 16,
            "ssm_state_size": 32, "n_groups": 2, "conv_kernel": 4,
            "mamba_ssm_cache_dtype": "float32"}  # fmt: skip
    row = _import(tmp_path, nemo, "acme/nemo-like")
    assert row["attention_kind"] == "hybrid"
    assert (row["full_attention_layers"], row["window_attention_layers"]) == ("2", "0")
    ssm = 8 * 16 * 32 * 4
    conv = (8 * 16 + 2 * 2 * 32) * 3 * 2
    assert int(row["state_bytes_per_sequence"]) == 4 * (ssm + conv)  # 4 Mamba layers
    # without the Mamba sizes nothing is guessed: the parameter count needs them (fuzz round 17;
    # the row was imported with an empty state and every layer counted as attention + MLP)
    sizes = ("mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups", "conv_kernel")
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({k: v for k, v in nemo.items() if k not in sizes}))
    user = str(tmp_path / "u")
    args = ["catalog", "import-hf", str(bare), "--id", "acme/nemo-bare", "--user-catalog", user]
    refused = CliRunner().invoke(_app(), args)
    assert refused.exit_code == 1 and "'mamba_num_heads'" in str(refused.exception)


def test_import_into_a_catalog_written_before_the_columns(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    before = _CATALOG.llms.columns[: _CATALOG.llms.columns.index("source") + 1]
    with (_CATALOG_FILE).open(newline="") as fh:
        first = next(csv.DictReader(fh))
    with (user / "llms.csv").open("w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(before)
        old = {**first, "id": "acme/old-row", "aliases": ""}
        writer.writerow([old[c] for c in before])
    row = _import(tmp_path, LLAMA, "acme/new-row")
    assert row["id"] == "acme/new-row"
    with (user / "llms.csv").open(newline="") as fh:
        ids = [r["id"] for r in csv.DictReader(fh)]
    assert ids == ["acme/old-row", "acme/new-row"]


_CATALOG_FILE = Path(__file__).resolve().parent.parent / "catalogs" / "llms.csv"


@pytest.mark.parametrize(
    ("cells", "column"),
    [
        ({"full_attention_layers": "4"}, "window_attention_layers"),
        ({"full_attention_layers": "40", "window_attention_layers": "40"},
         "window_attention_layers"),
        ({"full_attention_layers": "0", "window_attention_layers": "8", "sliding_window": ""},
         "sliding_window"),
        ({"state_bytes_per_sequence": "100"}, "full_attention_layers"),
        ({"full_attention_layers": "-1", "window_attention_layers": "0"}, "full_attention_layers"),
    ],
)  # fmt: skip
def test_catalog_checks_the_kv_layer_columns(
    tmp_path: Path, cells: dict[str, str], column: str
) -> None:
    with _CATALOG_FILE.open(newline="") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or ())
        row = next(r for r in reader if r["id"] == "meta-llama/Llama-3.1-8B")
    row = {**row, "id": "acme/bad-kv", "aliases": "", **cells}
    with (tmp_path / "llms.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, header, lineterminator="\n")
        writer.writeheader()
        writer.writerow(row)
    with pytest.raises(CatalogError) as err:
        load_catalog(tmp_path)
    lines = [line for line in str(err.value).splitlines() if "acme" in line or "row 2" in line]
    assert lines and all(f"column '{column}'" in line for line in lines), str(err.value)
