"""The lone-prompt TTFT of an aggregated replica (docs/method.md §3 item 4).

An aggregated replica's TTFT at load is ``t_1 + τ(b)``, ``t_1`` the predictors' TTFT at batch 1
(at least the physics prefill ``t_p``), the same lone-prompt time a disaggregated unit's prefill
pool starts from; before 2026-12-07 the aggregated side used ``t_p`` alone, so the two
deployments were compared on different prompt times.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from predictors.api import Predictor
from predictors.catalog.row_checks import LAYOUT_COLUMNS
from predictors.serving.disagg_build import disagg_curves
from predictors.serving.grid import row_physics, serving_table

ROWS = pl.DataFrame(
    {
        "model": [
            "meta-llama/Llama-3.1-8B-Instruct",
            "meta-llama/Llama-3.1-70B-Instruct",
            "Qwen/Qwen3-30B-A3B",
            "meta-llama/Llama-3.1-8B-Instruct",
        ],
        "gpu": ["H100-SXM5-80GB", "B200", "H100-SXM5-80GB", "L4"],
        "gpu_count": [1, 2, 1, 1],
        "engine": ["vllm", "vllm", "sglang", "vllm"],
        "precision": ["bf16", "fp8", "bf16", "fp8"],
        "input_tokens": [1024.0, 4096.0, 2048.0, 512.0],
        "output_tokens": [256.0, 512.0, 256.0, 128.0],
    }
)


def _ttft_at_batch_1(predictor: Predictor, rows: pl.DataFrame) -> np.ndarray:
    one = rows.with_columns(pl.lit(1).alias("batch_size"))
    out = predictor.predict(one, with_ttft=True, beyond_memory=True)
    return out["ttft_s"].cast(pl.Float64).to_numpy()


@pytest.mark.slow
def test_the_replica_starts_from_the_predictors_ttft_at_batch_1(predictor: Predictor) -> None:
    table = serving_table(ROWS, predictor)
    lone = _ttft_at_batch_1(predictor, ROWS)
    physics = row_physics(ROWS, predictor)["ttft_base_s"].to_numpy()
    base = table.curves.ttft_base_s
    assert np.all(np.isfinite(lone)) and np.all(lone > 0)
    np.testing.assert_allclose(base, np.maximum(lone, physics), rtol=1e-12)
    # the trained TTFT carries the engine's cost of a request: above the physics estimate here
    assert np.all(base > physics)


@pytest.mark.slow
def test_aggregated_and_disaggregated_share_the_lone_prompt_time(predictor: Predictor) -> None:
    """A disaggregated unit whose prefill worker is the replica's configuration times its
    prompt from the same ``t_1`` as the aggregated replica (the floors differ: the replica's
    physics floor also reads the weights once; the prompt time is above both here)."""
    units = ROWS.select(
        "model", "engine", "precision", "input_tokens", "output_tokens"
    ).with_columns(
        ROWS["gpu"].alias("prefill_gpu"),
        ROWS["gpu_count"].alias("prefill_gpu_count"),
        pl.lit(1).alias("prefill_workers"),
        ROWS["gpu"].alias("decode_gpu"),
        ROWS["gpu_count"].alias("decode_gpu_count"),
        pl.lit(1).alias("decode_workers"),
    )
    unit = disagg_curves(predictor, units)
    assert all(e == "" for e in unit.error), unit.error
    np.testing.assert_allclose(
        unit.prefill.latency_s, serving_table(ROWS, predictor).curves.ttft_base_s, rtol=1e-9
    )


class _NoTtft:
    """The shipped predictors with the TTFT column withheld (a user's models without TTFT)."""

    def __init__(self, inner: Predictor) -> None:
        self.catalog = inner.catalog
        self._inner = inner

    def predict(self, rows: pl.DataFrame, **kw: bool) -> pl.DataFrame:
        kw.pop("with_ttft", None)
        return self._inner.predict(rows, **kw)


def test_without_a_ttft_model_the_physics_estimate_stands(predictor: Predictor) -> None:
    table = serving_table(ROWS, _NoTtft(predictor))  # type: ignore[arg-type]
    physics = row_physics(ROWS, predictor)["ttft_base_s"].to_numpy()
    np.testing.assert_allclose(table.curves.ttft_base_s, physics, rtol=1e-12)


@pytest.mark.slow
def test_the_held_out_comparison_prices_both_prompt_times(predictor: Predictor) -> None:
    """``predictors.training.agg_ttft_accuracy`` (docs/serving-accuracy.md, "TTFT of aggregated
    replicas"): each measured row gets ``t_p + τ`` and ``t_1 + τ`` at its concurrency, and the
    summary's ratios are predicted / measured."""
    from predictors.training.agg_ttft_accuracy import predict_rows, summarise

    measured = ROWS.with_columns(
        pl.Series("batch_size", [4.0, 64.0, 8.0, 2.0]),
        pl.Series("ttft_s", [0.2, 0.5, 0.3, 0.4]),
        *(pl.lit(None, dtype=pl.Float64).alias(c) for c in LAYOUT_COLUMNS),
    )
    out = predict_rows(predictor, measured)
    lone = _ttft_at_batch_1(predictor, ROWS)
    np.testing.assert_allclose(out["lone_s"].to_numpy(), np.maximum(lone, out["physics_s"]))
    step = predictor.predict(ROWS.with_columns(measured["batch_size"]))["itl_s"].to_numpy()
    np.testing.assert_allclose(out["pred_lone_s"].to_numpy(), out["lone_s"].to_numpy() + step)
    table = summarise(out)
    light = table.row(0, named=True)
    assert light["rows"] == 3
    ratio = (out["pred_lone_s"] / out["ttft_s"]).to_numpy()[[0, 2, 3]]
    assert light["lone_ratio"] == pytest.approx(float(np.median(ratio)))


@pytest.mark.slow
def test_ttft_at_batch_1_only_is_the_full_prediction_there(predictor: Predictor) -> None:
    """The serving grid asks for TTFT at its batch-1 rows only (``with_ttft=AT_BATCH_1``): the
    same numbers there as a full TTFT prediction, null at the other batches."""
    from predictors.api import AT_BATCH_1

    rows = pl.concat([ROWS.with_columns(pl.lit(b).alias("batch_size")) for b in (1, 8, 64)])
    full = predictor.predict(rows, with_ttft=True, beyond_memory=True)
    some = predictor.predict(rows, with_ttft=AT_BATCH_1, beyond_memory=True)
    one = (rows["batch_size"] == 1).to_numpy()
    for col in ("ttft_s", "ttft_s_lo", "ttft_s_hi"):
        got = some[col].cast(pl.Float64).to_numpy()
        np.testing.assert_allclose(got[one], full[col].cast(pl.Float64).to_numpy()[one])
        assert some[col].is_null().to_numpy()[~one].all()
    rest = [c for c in full.columns if not c.startswith("ttft_s")]
    assert some.select(rest).equals(full.select(rest))
