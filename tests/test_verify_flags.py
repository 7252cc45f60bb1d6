"""The saved plan's flag check names each allocation by its layout: two allocations of one entry
on one GPU at one TP (pipeline stages apart) are two flags, and older flags without a layout
still match their allocation."""

from __future__ import annotations

from typing import Any

from planner.documents.flags import flag_reasons
from planner.documents.verify_flags import flag_problems
from planner.documents.verify_pools import record_identity

SLA_S = 0.05


def _alloc(pp: int, ep: int = 1) -> dict[str, Any]:
    return {
        "name": "big",
        "gpu": "H100-SXM5-80GB",
        "tp": 8,
        "pipeline_parallel": pp,
        "data_parallel": 1,
        "expert_parallel": ep,
        "replicas": 1,
    }


def _flag(alloc: dict[str, Any], with_layout: bool = True) -> dict[str, Any]:
    flag = {
        "name": alloc["name"],
        "gpu": alloc["gpu"],
        "tp": alloc["tp"],
        "replicas": alloc["replicas"],
        "itl_s_hi_at_capacity": 0.09,
        "itl_sla_s": SLA_S,
        "in_domain": True,
        "reasons": flag_reasons(alloc["gpu"], 0.09, SLA_S, True),
    }
    if with_layout:
        flag |= {k: alloc[k] for k in ("pipeline_parallel", "data_parallel", "expert_parallel")}
    return flag


def _plan(allocs: list[dict[str, Any]], flags: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "models": [{"name": "big", "itl_sla_s": SLA_S}],
        "allocations": allocs,
        "uncertainty_flags": {"flags": flags},
    }


def _by_key(allocs: list[dict[str, Any]]) -> dict[tuple[Any, ...], Any]:
    return {record_identity(a): {"itl_s_hi": 0.09, "in_domain": True} for a in allocs}


def test_two_layouts_at_one_tp_are_two_flags() -> None:
    allocs = [_alloc(1), _alloc(2)]
    plan = _plan(allocs, [_flag(a) for a in allocs])
    assert list(flag_problems(plan, _by_key(allocs))) == []


def test_one_layout_flagged_twice_or_left_out_is_named() -> None:
    allocs = [_alloc(1), _alloc(2)]
    twice = list(flag_problems(_plan(allocs, [_flag(allocs[0])] * 2), _by_key(allocs)))
    assert any("flagged twice" in p for p in twice)
    assert any("PP 2" in p and "is not flagged" in p for p in twice)


def test_flags_written_before_their_layout_still_match() -> None:
    allocs = [_alloc(1, ep=8), _alloc(2, ep=8)]
    plan = _plan(allocs, [_flag(a, with_layout=False) for a in allocs])
    assert list(flag_problems(plan, _by_key(allocs))) == []
