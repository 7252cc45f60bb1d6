"""What failover costs a plan: per model entry with failover, the capacity it keeps after its
worst losses, the spare at the peak, and whether failover drove its replica count.

Failover *drove* the count when the entry has more replicas than the peak load (and its
``min_replicas``) alone needs of the same deployments: the fewest of its replicas whose
capacities add up to the peak, taken largest first (no smaller set of them covers it). Computed
from the plan JSON alone (:class:`~planner.documents.plan.PlanDocument`), so a saved plan
reports the same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from planner.documents.plan import PlanDocument
from planner.inputs import unit_text
from planner.result import Plan, failover_capacity

#: Relative slack when counting the replicas the peak needs (capacity this close counts).
PEAK_RTOL = 1e-9


@dataclass(frozen=True)
class FailoverRow:
    """One model entry's failover in a plan."""

    name: str
    lost: str
    """What may be down at once: ``1 replica``, ``2 nodes``."""
    replicas: int
    capacity_requests_per_s: float
    """Capacity of all its replicas."""
    left_requests_per_s: float
    """Capacity after the worst losses."""
    peak_requests_per_s: float
    needed_replicas: int
    """Fewest of its replicas that carry the peak without losses (and its min_replicas)."""

    @property
    def spare_requests_per_s(self) -> float:
        """Capacity left after the worst losses, above the peak load."""
        return self.left_requests_per_s - self.peak_requests_per_s

    @property
    def drove(self) -> bool:
        """True when failover added replicas beyond what the load needs."""
        return self.replicas > self.needed_replicas

    @property
    def why(self) -> str:
        """Which requirement set the replica count, in words."""
        if self.drove:
            return f"failover (+{self.replicas - self.needed_replicas})"
        return "load"


def _needed(caps: list[float], peak: float, min_replicas: int) -> int:
    """Fewest replicas of capacities *caps* (one entry per replica) that add up to *peak*."""
    total, count = 0.0, 0
    for cap in sorted(caps, reverse=True):
        if total >= peak * (1 - PEAK_RTOL):
            break
        total += cap
        count += 1
    return max(count, min_replicas)


def _row(
    name: str, lost: str, caps: list[float], left: float, peak: float, min_replicas: int
) -> FailoverRow:
    return FailoverRow(
        name=name,
        lost=lost,
        replicas=len(caps),
        capacity_requests_per_s=sum(caps),
        left_requests_per_s=left,
        peak_requests_per_s=peak,
        needed_replicas=_needed(caps, peak, min_replicas),
    )


def failover_rows(doc: PlanDocument) -> list[FailoverRow]:
    """One row per model entry with failover and a plan (input order), from the plan JSON."""
    rows = []
    for m in doc.models:
        if m.failover is None or m.failover_capacity_requests_per_s is None:
            continue
        caps = []
        for a in doc.allocations:
            if a.name == m.name:
                caps += [doc.candidate(a.key).max_requests_per_s_per_replica] * a.replicas
        lost = unit_text(m.failover.unit, m.failover.count)
        left = m.failover_capacity_requests_per_s
        peak = max(m.requests_per_s_by_period)
        rows.append(_row(m.name, lost, caps, left, peak, m.min_replicas))
    return rows


def plan_failover_rows(plan: Plan) -> list[FailoverRow]:
    """:func:`failover_rows` of a solved plan, without building its JSON."""
    rows = []
    for m in plan.inputs.models:
        left = failover_capacity(plan, m.name)
        if m.failover is None or left is None or not plan.has_solution:
            continue
        caps = []
        for a in plan.allocations:
            if a.candidate.name == m.name:
                caps += [a.candidate.max_requests_per_s_per_replica] * a.replicas
        peak = max(m.requests_per_s_by_period)
        rows.append(_row(m.name, m.failover.text, caps, left, peak, m.min_replicas))
    return rows


#: Column headings of the failover table (report and plan view).
FAILOVER_COLUMNS: tuple[str, ...] = (
    "model entry",
    "down",
    "repl.",
    "cap req/s",
    "left req/s",
    "peak req/s",
    "spare",
    "repl. set by",
)


def failover_cells(row: FailoverRow, num: Callable[[float], str]) -> list[str]:
    """The cells of :data:`FAILOVER_COLUMNS` for *row*, numbers written by *num*."""
    return [
        row.name,
        row.lost,
        str(row.replicas),
        num(row.capacity_requests_per_s),
        num(row.left_requests_per_s),
        num(row.peak_requests_per_s),
        num(row.spare_requests_per_s),
        row.why,
    ]


#: Notes under the failover table.
FAILOVER_NOTE = (
    "down = replicas (or nodes) that may fail at once; left = capacity after the worst such "
    "loss (the largest ones), the same in every period as replicas are fixed over the horizon, "
    "so it carries every period's load within the SLA; spare = left - peak; repl. set by: "
    "failover (+n) when the entry has n replicas more than the peak alone needs of its "
    "deployments, else load. Nodes: each deployment fills whole nodes of its GPU type, not "
    "shared. Energy and cost are those of normal operation (the spares powered and paid)."
)
