"""The load split a robust-choice fleet is evaluated with: the one the plan would give it.

A re-optimised fleet comes from one draw, with the least-watts split of that draw's loads over
that draw's curves. The robust choice evaluates each fleet on every draw with a fixed split, as
the base plan keeps its own (docs/method.md, "The base plan under a draw"); taking the split of
the first draw that chose a fleet made its SLA probability depend on the draw order (two fleets
that deploy a model entry alike got different probabilities for it, fuzz round 26). Here every
fleet but the base gets the split the plan would route for it: per model entry, the exact
least-watts routing (:func:`planner.solve.routing.route`) of the entry's point-estimate load per
period over the fleet's replicas, on the point-estimate curves and capacities — which is how the
base plan's own split came about. A period whose load is above the fleet's capacity is split as
its capacity (every deployment full), so that the draws judge the excess as not carried.
"""

from __future__ import annotations

import numpy as np

from planner.inputs import Candidate, PlanningInputs
from planner.solve.routing import route
from planner.sweep.evaluate import Fleet


def _routed_shares(
    candidates: list[Candidate], replicas: list[int], loads: np.ndarray
) -> list[tuple[float, ...]] | None:
    """Per deployment of one model entry, its share of the entry's load per period under the
    least-watts routing at the point estimate (None when it cannot be routed)."""
    cap = np.asarray(
        [c.max_requests_per_s_per_replica if c.feasible else 0.0 for c in candidates],
        dtype=np.float64,
    )
    n = np.asarray(replicas, dtype=np.int64)
    carried = np.minimum(loads, float(n @ cap))
    xs = tuple(np.asarray(c.curve[0], dtype=np.float64) for c in candidates)
    ds = tuple(
        np.asarray(c.curve[1], dtype=np.float64) - c.idle_power_w_per_replica for c in candidates
    )
    try:
        routed = route(xs, ds, cap, n, carried).loads
    except ValueError:  # not expected: the load is cut to the capacity
        return None
    return [
        tuple(
            float(s) for s in np.divide(row, carried, out=np.zeros_like(carried), where=carried > 0)
        )
        for row in routed
    ]


def planned_split(fleet: Fleet, inputs: PlanningInputs) -> Fleet:
    """*fleet* with the load split the plan would give its replicas at the point estimate
    *inputs* (module doc); a model entry that cannot be routed keeps the split it had."""
    by_key = {c.key: c for c in inputs.candidates}
    rows: dict[str, list[int]] = {}
    for i, (key, _) in enumerate(fleet.replicas):
        rows.setdefault(key[0], []).append(i)
    shares = list(fleet.shares)
    for name, idx in rows.items():
        loads = np.asarray(inputs.model(name).requests_per_s_by_period, dtype=np.float64)
        routed = _routed_shares(
            [by_key[fleet.replicas[i][0]] for i in idx],
            [fleet.replicas[i][1] for i in idx],
            loads,
        )
        for i, share in zip(idx, routed or (), strict=False):
            shares[i] = share
    return Fleet(fleet.replicas, tuple(shares), fleet.gpu_use)
