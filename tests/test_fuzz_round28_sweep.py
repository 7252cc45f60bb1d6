"""Fuzz round 28 (sweep): a ``gpu_available`` range gives the evenly spaced whole numbers it
names.

Before: 0..44 in 23 steps gave 29 GPUs where the range names 30 (44 · 15/22 is
29.999999999999996, rounded down), planned with no word; 0..22 in 23 steps, the most the span
allows, was refused as repeating 14 (984 and 74 of 26,310 whole-number ranges)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner import Predictor
from planner.pipeline import PlanRun, plan_file
from planner.scenario.sweep_block import SweepBlock
from planner.sweep.spec import grid_points
from tests.cli_runner import run_cli
from tests.test_fuzz_round25_sweep_engines import _scenario


@pytest.fixture(scope="module")
def paper_inputs(predictor: Predictor) -> PlanRun:
    return plan_file("paper-llama8b-low-load", predictor=predictor, baselines=False)


def _counts(run: PlanRun, stop: int, steps: int) -> list[int]:
    block = SweepBlock.model_validate(
        {"grid": {"gpu_available": {"L4": {"start": 0, "stop": stop, "steps": steps}}}}
    )
    resolve = run.predictor.catalog.try_resolve_gpu
    _, points = grid_points(block, run.inputs, force=False, resolve_gpu=resolve)
    return [p["gpu_available"]["L4"] for p in points]


def test_an_evenly_spaced_gpu_range_gives_its_whole_numbers(paper_inputs: PlanRun) -> None:
    assert _counts(paper_inputs, 44, 23) == list(range(0, 45, 2))
    assert _counts(paper_inputs, 22, 23) == list(range(23))


def test_the_most_steps_of_a_span_is_accepted(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "gpu_available: {L4: {start: 0, stop: 22, steps: 23}}\n")
    result = run_cli("validate", str(path))
    assert result.code == 0, result.err
    path = _scenario(tmp_path, "gpu_available: {L4: {start: 0, stop: 22, steps: 24}}\n")
    assert "use at most 23 steps" in run_cli("validate", str(path)).err
