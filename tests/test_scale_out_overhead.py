"""The step model's fitted collective latency per cross-domain message (``λ``,
:attr:`predictors.estimators.step.StepParams.scale_out_overhead_s`): it is paid only by messages
that leave the NVLink domain, it never makes communication cheaper, cards written before it
existed read as λ = 0 (the earlier model), and the shipped fit lies inside its bounds."""

from __future__ import annotations

import numpy as np

from predictors.api import Predictor
from predictors.estimators.layout_comm import LayoutInputs, layout_comm_s
from predictors.estimators.step import SCALE_OUT_OVERHEAD_BOUNDS, StepParams


def _layout(tp: float, pp: float, dp: float, moe_layers: float) -> LayoutInputs:
    one = np.ones(1)
    return LayoutInputs(
        tp=one * tp,
        pp=one * pp,
        dp=one * dp,
        moe_layers=one * moe_layers,
        experts_per_token=one * 8.0,
        domain=one * 8.0,
        scale_out_b_s=one * 50e9,
        scale_out_latency_s=one * 5e-6,
        micro=one * pp,
    )


def _comm(lay: LayoutInputs, overhead_s: float) -> float:
    tp, other = layout_comm_s(
        lay, np.ones(1) * 64.0, np.ones(1) * 7168.0, np.ones(1) * 61.0, np.ones(1) * 900e9,
        2e-6, overhead_s,
    )  # fmt: skip
    return float(tp[0] + other[0])


def test_only_cross_domain_messages_pay_it() -> None:
    inside = [_layout(8, 1, 1, 58), _layout(2, 1, 4, 58), _layout(2, 2, 1, 58)]  # 8 GPUs, 1 domain
    for lay in inside:
        assert _comm(lay, 100e-6) == _comm(lay, 0.0)
    # TP over two nodes: 2 all-reduces per layer; pipeline across nodes: 1 hop per boundary;
    # attention DP over two nodes: dispatch + combine per MoE layer
    for lay, messages in (
        (_layout(16, 1, 1, 58), 2 * 61),
        (_layout(8, 2, 1, 0), 1),
        (_layout(1, 1, 16, 58), 2 * 58),
    ):
        extra = _comm(lay, 100e-6) - _comm(lay, 0.0)
        assert np.isclose(extra, messages * 100e-6, rtol=1e-9), (lay, extra)


def test_cards_without_it_read_as_zero_and_round_trip() -> None:
    params = StepParams(scale_out_overhead_s=4e-5)
    data = params.to_json()
    assert StepParams.from_json(data) == params
    del data["scale_out_overhead_s"]
    assert StepParams.from_json(data).scale_out_overhead_s == 0.0


def test_shipped_fit_is_inside_its_bounds() -> None:
    card = Predictor.load().models.card
    step = StepParams.from_json(card["targets"]["itl"]["step_params"])
    lo, hi = SCALE_OUT_OVERHEAD_BOUNDS
    assert lo <= step.scale_out_overhead_s <= hi
