"""The capacity model's vectorised operating-point choice and its candidate order.

:func:`planner.capacity._operating_points` must choose exactly what a per-candidate polars
filter/sort would (largest error-free batch meeting the SLA, batch-1 error, minimum ITL), with
nulls and errors anywhere in the grid; :func:`evaluate_candidates` must keep the specs' order
when some are excluded by scenario rules.
"""

from __future__ import annotations

import math
import random
from typing import Any

import polars as pl
import pytest

from planner.capacity import (
    BATCH_GRID,
    CandidateSpec,
    _operating_points,
    evaluate_candidates,
)
from predictors.api import Predictor


def _random_grid(n: int, seed: int) -> tuple[pl.DataFrame, list[float]]:
    """Prediction-like rows: BATCH_GRID rows per spec with errors, nulls and rising ITL."""
    rng = random.Random(seed)
    cols: dict[str, list[Any]] = {
        k: []
        for k in (
            "_spec",
            "batch_size",
            "error",
            "itl_s",
            "itl_s_lo",
            "itl_s_hi",
            "power_w_per_gpu",
            "power_w_per_gpu_lo",
            "power_w_per_gpu_hi",
            "in_domain",
        )
    }
    slas = []
    for i in range(n):
        slas.append(rng.choice([0.01, 0.02, 0.05, 0.1]))
        fit_limit = rng.choice([0, 3, 8, 16, 16])  # batches from this index on do not fit
        bad_input = rng.random() < 0.05
        base = rng.uniform(0.002, 0.08)
        for j, b in enumerate(BATCH_GRID):
            error = ""
            if bad_input:
                error = "gpu: unknown 'x'"
            elif j >= fit_limit:
                error = "does not fit: needs 1 GB"
            itl = None if error or rng.random() < 0.03 else base * (1 + 0.1 * j)
            cols["_spec"].append(i)
            cols["batch_size"].append(b)
            cols["error"].append(error)
            cols["itl_s"].append(itl)
            cols["itl_s_lo"].append(None if itl is None else itl * 0.8)
            cols["itl_s_hi"].append(None if itl is None else itl * 1.3)
            power = None if itl is None else rng.uniform(50, 700)
            cols["power_w_per_gpu"].append(power)
            cols["power_w_per_gpu_lo"].append(None if power is None else power * 0.9)
            cols["power_w_per_gpu_hi"].append(None if power is None else power * 1.1)
            cols["in_domain"].append(rng.random() < 0.7)
    return pl.DataFrame(cols), slas


def _reference(rows: pl.DataFrame, sla: float, robust: bool) -> tuple[Any, ...]:
    """The former per-candidate choice (filter and sort one spec's rows)."""
    ok = rows.filter(pl.col("error") == "").sort("batch_size")
    if ok.is_empty():
        return ("no-ok", rows.sort("batch_size")["error"][0])
    itl_col = "itl_s_hi" if robust else "itl_s"
    best = ok[itl_col].min()
    meets = ok.filter(pl.col(itl_col) <= sla)
    first = ok.row(0, named=True)
    if meets.is_empty():
        return ("no-meet", first["batch_size"], first[itl_col], best)
    op = meets.sort("batch_size").row(-1, named=True)
    return (
        "op",
        op["batch_size"],
        op[itl_col],
        op["itl_s_lo"],
        op["itl_s_hi"],
        op["power_w_per_gpu"],
        op["power_w_per_gpu_lo"],
        op["power_w_per_gpu_hi"],
        op["in_domain"],
        best,
    )


@pytest.mark.parametrize("robust", [False, True])
def test_operating_points_match_per_candidate_choice(robust: bool) -> None:
    grid, slas = _random_grid(300, seed=7 + robust)
    points = _operating_points(grid.drop("_spec"), slas, robust)
    kinds = set()
    for i, sla in enumerate(slas):
        want = _reference(grid.filter(pl.col("_spec") == i), sla, robust)
        kinds.add(want[0])
        if want[0] == "no-ok":
            got: tuple[Any, ...] = ("no-ok", points.first_error[i])
            assert not points.any_ok[i]
        elif want[0] == "no-meet":
            assert points.any_ok[i] and points.op[i] == -1
            best = points.best_itl_s[i]
            got = (
                "no-meet",
                BATCH_GRID[points.first_ok[i]],
                None if math.isnan(points.itl_s_at_first_ok[i]) else points.itl_s_at_first_ok[i],
                None if math.isinf(best) else best,
            )
        else:
            assert points.any_ok[i]
            got = (
                "op",
                BATCH_GRID[points.op[i]],
                points.itl_s[i],
                points.itl_s_lo[i],
                points.itl_s_hi[i],
                points.power_w_per_gpu[i],
                points.power_w_per_gpu_lo[i],
                points.power_w_per_gpu_hi[i],
                points.in_domain[i],
                points.best_itl_s[i],
            )
        assert got == want, f"spec {i}"
    assert kinds == {"no-ok", "no-meet", "op"}


def _spec(name: str, gpu: str, excluded: str = "") -> CandidateSpec:
    return CandidateSpec(
        name=name,
        model="meta-llama/Llama-3.1-8B-Instruct",
        gpu=gpu,
        tp=1,
        engine="vllm",
        precision="bf16",
        input_tokens=512.0,
        output_tokens=256.0,
        itl_sla_s=0.05,
        ttft_sla_s=None,
        usd_per_hour_per_gpu=2.0,
        excluded_reason=excluded,
    )


def test_excluded_specs_keep_their_place_and_reason() -> None:
    predictor = Predictor.load()
    specs = [
        _spec("a", "H100-SXM5-80GB", excluded="in a.forbidden_gpus"),
        _spec("b", "H100-SXM5-80GB"),
        _spec("c", "A100-SXM4-80GB", excluded="not in c.allowed_gpus"),
        _spec("d", "A100-SXM4-80GB"),
    ]
    got = evaluate_candidates(specs, predictor)
    assert [(c.name, c.gpu) for c in got] == [(s.name, s.gpu) for s in specs]
    assert [c.reason for c in (got[0], got[2])] == ["in a.forbidden_gpus", "not in c.allowed_gpus"]
    assert not got[0].feasible and not got[2].feasible
    assert got[0].usd_per_hour_per_replica == 2.0
    alone = evaluate_candidates([specs[1], specs[3]], predictor)
    assert [got[1], got[3]] == alone
    assert all(c.feasible and c.batch_size in BATCH_GRID for c in alone)
    assert evaluate_candidates([specs[0]], predictor) == [got[0]]
