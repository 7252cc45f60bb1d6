"""The plan JSON check (:mod:`planner.documents.verify`) of each model entry against its
candidates and allocations: the model they are of, and the SLA its feasible candidates meet.

Every candidate of a model entry is built for the entry's model (``model``), and a candidate is
feasible because it meets the entry's SLA at its capacity (:mod:`planner.capacity`): its ITL at
capacity at most ``itl_sla_s`` (in a robust plan its upper 90 % bound ``itl_s_hi`` too, the ITL
the capacity is sized on), its TTFT at the lightest load (``ttft_s``) at most ``ttft_sla_s``
when the entry has one. An edited ``models[i].model`` made the report describe another model on
the plan's GPUs; a tightened SLA made it claim an SLA its deployment breaks. Both are now one
line naming the entry's field. Works on the plain JSON mapping, like the rest of the check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planner.documents.json_values import is_number
from planner.result import LOAD_TOLERANCE
from predictors.core.escape import short_repr


def _records(data: dict[str, Any]) -> dict[Any, list[tuple[str, dict[str, Any]]]]:
    """Model entry name -> (JSON path, record) of its candidates, then its allocations."""
    out: dict[Any, list[tuple[str, dict[str, Any]]]] = {}
    for kind in ("candidates", "allocations"):
        for j, record in enumerate(data.get(kind) or []):
            if isinstance(record, dict):
                out.setdefault(record.get("name"), []).append((f"{kind}[{j}]", record))
    return out


def model_problems(data: dict[str, Any]) -> list[str]:
    """Each model entry whose ``model`` is not that of its candidates and allocations (the
    entry's field when none of them is of it; else each record that differs)."""
    by_name = _records(data)
    out = []
    for i, m in enumerate(data.get("models") or []):
        if not isinstance(m, dict):
            continue
        mine = by_name.get(m.get("name"), [])
        other = [(where, r.get("model")) for where, r in mine if r.get("model") != m.get("model")]
        if not other:
            continue
        if len(other) == len(mine):
            out.append(
                f"models[{i}].model: {short_repr(m.get('model'))}, but its candidates and "
                f"allocations are of {short_repr(other[0][1])}"
            )
            continue
        out.extend(
            f"{where}.model: {short_repr(value)} is not the model of its entry models[{i}] "
            f"({short_repr(m.get('model'))})"
            for where, value in other
        )
    return out


def _over(value: Any, sla: Any) -> bool:
    """True when *value* is above *sla* beyond the planner's own tolerance (both numbers)."""
    if not (is_number(value) and is_number(sla)):
        return False
    return float(value) > float(sla) * (1 + LOAD_TOLERANCE)


def _label(where: str, c: dict[str, Any]) -> str:
    return f"its feasible candidate {where} ({c.get('gpu')} TP {c.get('tp')})"


def _sla_lines(
    i: int, m: dict[str, Any], where: str, c: dict[str, Any], robust: bool
) -> Iterator[str]:
    itl, ttft = m.get("itl_sla_s"), m.get("ttft_sla_s")
    meets = "a feasible candidate meets its entry's SLA"
    if _over(c.get("itl_s_at_capacity"), itl):
        yield (
            f"models[{i}].itl_sla_s: {short_repr(itl)} s, but {_label(where, c)} has an ITL of "
            f"{c['itl_s_at_capacity']:.6g} s at capacity ({meets})"
        )
    if robust and _over(c.get("itl_s_hi"), itl):
        yield (
            f"models[{i}].itl_sla_s: {short_repr(itl)} s, but {_label(where, c)} has an upper "
            f"90 % ITL bound of {c['itl_s_hi']:.6g} s at capacity (a robust plan's candidate "
            "meets the SLA at its bound)"
        )
    if ttft is not None and _over(c.get("ttft_s"), ttft):
        yield (
            f"models[{i}].ttft_sla_s: {short_repr(ttft)} s, but {_label(where, c)} has a TTFT "
            f"of {c['ttft_s']:.6g} s at the lightest load ({meets})"
        )


def sla_problems(data: dict[str, Any]) -> Iterator[str]:
    """Each model entry SLA that one of its feasible candidates does not meet (module doc)."""
    robust = (data.get("assumptions") or {}).get("robust") is True
    by_name = _records(data)
    for i, m in enumerate(data.get("models") or []):
        if not isinstance(m, dict):
            continue
        for where, c in by_name.get(m.get("name"), []):
            if where.startswith("candidates[") and c.get("feasible") is not False:
                yield from _sla_lines(i, m, where, c, robust)
