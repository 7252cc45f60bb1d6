"""Fuzz round 26's physics findings, checked over the catalog.

* A ``TP × PP`` replica's token cycle is never shorter than one decode step of its ``TP · DP``
  stage group at the micro-batch (``b / min(PP, b)`` sequences; the whole batch for a layer
  split): TP 8 × PP 8 was predicted 26 % faster than TP 8 at batch 1 (the KV read counted once
  per micro-batch over every stage, and the residual's GPU-count input).
* A precision whose rate the GPU lacks computes at the 16-bit rate (docs/method.md §1): fp4 on
  Hopper took the FP8 rate, so writing the documented fallback out slowed the GPU by 55 %.
* A user row that changes a measured GPU's fabric or int8 rate describes a GPU nobody measured.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from predictors import physics
from predictors.api import Predictor
from predictors.catalog.store import Catalog, load_catalog
from predictors.estimators import domain
from predictors.features import join_specs

MODELS = ("meta-llama/Llama-3.1-8B-Instruct", "mistralai/Mixtral-8x7B-Instruct-v0.1")


def _datacentre_gpus(catalog: Catalog) -> list[str]:
    g = catalog.gpus
    return g.filter(pl.col("memory_gb").cast(pl.Float64) >= 40)["id"].to_list()


def test_a_pipeline_is_never_faster_than_its_stage_group(predictor: Predictor) -> None:
    rows = []
    for gpu, model, tp, pp, engine, prompt in itertools.product(
        _datacentre_gpus(predictor.catalog), MODELS, (1, 2, 8), (2, 4), ("vllm", "llama.cpp"),
        (1024, 32000),
    ):  # fmt: skip
        for b in (1, 2 * pp) if engine == "vllm" else (1, 8):
            micro = min(pp, b) if engine == "vllm" else 1
            common = {"model": model, "gpu": gpu, "engine": engine, "precision": "bf16"}
            common |= {"input_tokens": prompt, "output_tokens": 256}
            rows.append(common | {"gpu_count": tp * pp, "pipeline_parallel": pp, "batch_size": b})
            rows.append(
                common | {"gpu_count": tp, "pipeline_parallel": 1, "batch_size": b // micro}
            )
    out = predictor.predict(pl.DataFrame(rows), beyond_memory=True)
    itl = out["itl_s"].cast(pl.Float64).to_numpy()
    piped, group = itl[0::2], itl[1::2]
    both = np.isfinite(piped) & np.isfinite(group)
    assert both.sum() > 500
    ratio = piped[both] / group[both]
    assert ratio.min() >= 1.0 - 1e-9, f"a pipeline beat its stage group: {ratio.min():.3f}"


def test_a_precision_the_gpu_lacks_computes_at_the_16_bit_rate() -> None:
    catalog = load_catalog()
    gpus = catalog.gpus.filter(pl.col("fp16_tflops_dense").is_not_null())
    frame = pl.DataFrame(
        {
            "gpu": [g for g in gpus["id"].to_list() for _ in range(2)],
            "precision": ["fp4", "int8"] * gpus.height,
            "model": ["meta-llama/Llama-3.1-8B-Instruct"] * (2 * gpus.height),
        }
    )
    specs = join_specs(frame, catalog).with_columns(physics.peak_tflops().alias("peak"))
    rate = {"fp4": "fp4_tflops_dense", "int8": "int8_tops_dense"}
    for precision, column in rate.items():
        part = specs.filter(pl.col("precision") == precision)
        fp16 = part["fp16_tflops_dense"].cast(pl.Float64)
        own = part[column].cast(pl.Float64).fill_null(fp16)
        # never below the 16-bit rate (fuzz round 31: B300's INT8 is 157.5 against 2,250)
        expected = [max(a, b) for a, b in zip(own.to_list(), fp16.to_list(), strict=True)]
        assert part["peak"].to_list() == pytest.approx(expected)
    h100 = specs.filter((pl.col("gpu") == "H100-SXM5-80GB") & (pl.col("precision") == "fp4"))
    assert h100["peak"][0] == pytest.approx(float(h100["fp16_tflops_dense"][0]))


@pytest.mark.parametrize(
    ("column", "value"),
    [("scale_out_gbit_s", 25.0), ("int8_tops_dense", 100.0), ("nvlink_domain_gpus", 4.0)],
)
def test_a_re_rated_fabric_or_int8_rate_is_an_unmeasured_gpu(
    predictor: Predictor, column: str, value: float
) -> None:
    frame = join_specs(
        pl.DataFrame({"gpu": ["H100-SXM5-80GB"] * 2, "model": [MODELS[0]] * 2}),
        predictor.catalog,
    )
    re_rated = frame.with_columns(
        pl.Series(column, [frame[column].cast(pl.Float64)[0], value], dtype=pl.Float64)
    )
    measured = domain.gpu_measured_series(predictor.models.card, re_rated).to_list()
    assert measured == [True, False]
