"""The check of a saved plan's uncertainty flags (:mod:`planner.documents.verify`): every
allocation the flag rule (:func:`planner.documents.flags.flag_reasons`) flags is flagged once,
with the candidate's ITL bound, the entry's SLA, the domain and the reasons, and nothing else is.
A flag names its allocation by model entry, GPU (or a unit's pools) and layout."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planner.documents.flags import flag_reasons
from planner.documents.verify_pools import differs, record_identity


def _flag_fields(
    where: str, flag: dict[str, Any], alloc: dict[str, Any], again: dict[str, Any]
) -> Iterator[str]:
    """The derivable fields of one flag against what the allocation and candidate give."""
    if flag.get("replicas") != alloc.get("replicas"):
        yield f"{where}.replicas: {flag.get('replicas')!r}, the allocation has {alloc['replicas']}"
    for key in ("in_domain", "reasons"):
        if flag.get(key) != again[key]:
            yield f"{where}.{key}: {flag.get(key)!r}, but the candidate gives {again[key]!r}"
    for key in ("itl_s_hi_at_capacity", "itl_sla_s"):
        if again[key] is None:
            if flag.get(key) is not None:
                yield f"{where}.{key}: {flag.get(key)!r}, but the plan has none"
        elif differs(flag.get(key), again[key]):
            yield f"{where}.{key}: {flag.get(key)!r}, but the plan gives {again[key]:.6g}"


#: A flag's layout fields after ``tp`` (absent in plans written before them).
_FLAG_DEGREES = ("pipeline_parallel", "data_parallel", "expert_parallel")


def _flag_key(
    flag: dict[str, Any], expected: dict[tuple[Any, ...], Any], seen: set[tuple[Any, ...]]
) -> tuple[Any, ...]:
    """The allocation key (name, GPU or pools, TP, PP, DP, EP) a flag names. A flag written
    before flags carried their layout names (name, GPU, TP) only: it is the one allocation of
    that prefix the rule flags and no earlier flag took (as such plans were checked)."""
    head = (flag.get("name"), flag.get("gpu"), flag.get("tp"))
    if any(flag.get(d) is not None for d in _FLAG_DEGREES):
        return (*head, *(flag.get(d) or 1 for d in _FLAG_DEGREES))
    open_keys = [k for k in expected if k[:3] == head and k not in seen]
    return open_keys[0] if open_keys else (*head, 1, 1, 1)


def flag_problems(data: dict[str, Any], by_key: dict[tuple[Any, ...], Any]) -> Iterator[str]:
    """``uncertainty_flags`` (when present) against the rule applied to the allocations: every
    allocation the rule flags is flagged, with the candidate's ITL bound, the entry's SLA, the
    domain and the reasons; nothing else is flagged. What ``robust: true`` deploys instead
    needs the predictors and is not recomputed."""
    block = data.get("uncertainty_flags")
    if not isinstance(block, dict):
        return
    sla = {m.get("name"): m.get("itl_sla_s") for m in data.get("models") or []}
    expected = {}
    for alloc in data.get("allocations") or []:
        key = (
            alloc.get("name"),
            *record_identity(alloc)[1:6],
        )  # (name, GPU or pools, TP, PP, DP, EP)
        c = by_key[record_identity(alloc)]
        hi, in_domain = c.get("itl_s_hi"), bool(c.get("in_domain", True))
        reasons = flag_reasons(str(key[1]), hi, float(sla[key[0]]), in_domain)
        if reasons:
            again = {"itl_s_hi_at_capacity": hi, "itl_sla_s": sla[key[0]]}
            expected[key] = (alloc, {**again, "in_domain": in_domain, "reasons": reasons})
    seen: set[tuple[Any, ...]] = set()
    for i, flag in enumerate(block.get("flags") or []):
        key = _flag_key(flag, expected, seen)
        where = f"uncertainty_flags.flags[{i}]"
        if key not in expected or key in seen:
            yield (
                f"{where}: {key[0]!r} on {key[1]!r} TP {key[2]!r} PP {key[3]!r} DP {key[4]!r} "
                f"EP {key[5]!r} is not an allocation the rule flags (or is flagged twice)"
            )
            continue
        seen.add(key)
        yield from _flag_fields(where, flag, *expected[key])
    for key in (k for k in expected if k not in seen):
        yield (
            f"uncertainty_flags.flags: the allocation {key[0]!r} on {key[1]!r} TP {key[2]!r} PP "
            f"{key[3]!r} DP {key[4]!r} EP {key[5]!r} is not flagged, but "
            f"{expected[key][1]['reasons'][0]}"
        )
