"""A GPU of a vendor no training row measured takes an average measured vendor's software stack.

The step model's κ(vendor) is fitted per measured vendor (NVIDIA = 1, AMD 1.89, Intel 2.91 in the
shipped card). A vendor without training rows took 1, CUDA's, so a user's accelerator of a new
vendor was predicted with NVIDIA's efficiency, faster than an AMD GPU stronger in every spec
(fuzz round 31). It now takes the geometric mean of the fitted factors.
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.catalog.store import load_catalog
from predictors.estimators.step import StepParams, unseen_vendor_factor

HEADER = (
    "id,aliases,vendor,architecture,form_factor,release_year,memory_gb,memory_bandwidth_gb_s,"
    "tdp_w,idle_power_w,idle_power_source,fp16_tflops_dense,fp8_tflops_dense,interconnect_gb_s,"
    "source"
)


def test_the_unseen_factor_is_the_geometric_mean_of_the_fitted_ones() -> None:
    params = StepParams(vendor_factor={"NVIDIA": 1.0, "AMD": 2.0, "Intel": 4.0})
    assert unseen_vendor_factor(params) == pytest.approx(2.0)
    assert unseen_vendor_factor(StepParams()) == pytest.approx(1.0)  # NVIDIA alone


def test_an_unmeasured_vendor_is_slower_than_the_same_chip_by_that_factor(tmp_path: Path) -> None:
    shipped = Predictor.load()
    h100 = shipped.catalog.gpu("H100-SXM5-80GB")
    folder = tmp_path / "cat"
    folder.mkdir()
    cells = [
        "ACME-H1", "", "other", "Acme One", "OAM", "2025", "80", str(h100["memory_bandwidth_gb_s"]),
        "700", "105", "rule", str(h100["fp16_tflops_dense"]), str(h100["fp8_tflops_dense"]),
        str(h100["interconnect_gb_s"]), "synthetic: H100 specs of another vendor",
    ]  # fmt: skip
    (folder / "gpus.csv").write_text(f"{HEADER}\n{','.join(cells)}\n", encoding="utf-8")
    predictor = Predictor.load(catalog=load_catalog(folder))
    rows = pl.DataFrame(
        {
            "model": ["meta-llama/Llama-3.1-8B-Instruct"] * 2,
            "gpu": ["H100-SXM5-80GB", "ACME-H1"],
            "gpu_count": [1, 1],
            "batch_size": [8, 8],
            "input_tokens": [1024, 1024],
            "output_tokens": [256, 256],
        }
    )
    out = predictor.predict(rows)
    assert (out["error"] == "").all(), out["error"].to_list()
    factors = shipped.models.card["targets"]["itl"]["step_params"]["vendor_factor"]
    expected = math.exp(sum(math.log(v) for v in factors.values()) / len(factors))
    ratio = out["itl_s"][1] / out["itl_s"][0]
    assert ratio == pytest.approx(expected, rel=1e-6)
    assert 1.0 < expected < max(factors.values())
    assert out["in_domain"].to_list() == [True, False]
