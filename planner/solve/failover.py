"""Failover in the solver: replica vectors that survive k lost units, and the MILP rows for it.

The condition (:mod:`planner.inputs.failover`): a model entry's capacity left after losing its
k largest loss units carries its peak load,

    Σ_d n_d·cap_d − (sum of the k largest unit capacities) >= P.

The decomposition and column generation check it on each replica vector (:func:`survives`);
the merit-order start vector is topped up with spare replicas until it holds
(:func:`repaired`). The branch and bound of :mod:`planner.solve.search` keeps the k largest
units chosen so far and bounds with the capacity left after losing them (adding a replica of
capacity c grows one unit by c, so the capacity left grows by at most c).

The MILP (:func:`add_failover`). The sum of the k largest units is a linear programme,
``max Σ_u c_u·z_u`` s.t. ``Σ z_u <= k``, ``0 <= z_u <= 1``, with the dual
``min_{τ>=0} k·τ + Σ_u max(0, c_u − τ)``; so the condition holds exactly when for some τ >= 0

    Σ_u min(c_u, τ) − k·τ >= P,

and the left side, concave and piecewise linear in τ, is largest at a unit capacity (τ = 0
gives 0 and only serves P = 0, where nothing is needed). Units: deployment d with ``r_d``
replicas per unit has ``f_d`` full units of ``F_d = r_d·cap_d`` and one of ``p_d·cap_d``
replicas (``n_d = r_d·f_d + p_d``, ``0 <= p_d <= r_d − 1``, f and p integer, so they are the
exact quotient and remainder; for replicas ``r_d = 1``, ``f_d = n_d``, ``p_d = 0``). With τ
restricted to the finite set T of possible unit capacities and one binary ``y_τ`` choosing it
(``Σ_τ y_τ = 1``):

    failover[m,τ]:  Σ_d f_d·min(F_d, τ) + Σ_d v_{d,τ} − k·τ >= P − (P + k·τ)·(1 − y_τ),
                    0 <= v_{d,τ} <= cap_d·p_d,  v_{d,τ} <= τ,

exact: with ``y_τ = 0`` the row is implied (its left side is at least −k·τ), with ``y_τ = 1`` it
is the condition at τ (``v = min(cap·p, τ)`` is the partial unit's term at best).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from planner.inputs import Candidate, PlanningInputs, surviving_capacity
from planner.solve.routing import LOAD_TOL, load_slack

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

CAPACITY_RTOL = LOAD_TOL
"""Capacity within this relative distance of the peak counts as covering it."""


class MilpRows(Protocol):
    """What :func:`add_failover` needs of :class:`planner.solve.milp.MilpModel`."""

    inputs: PlanningInputs
    solver: Any
    candidates: list[Candidate]
    n: list[Any]

    def slack(self, family: str, what: str, limit: float) -> Any | None:
        """A slack variable when *family* is elastic (None otherwise)."""


def survives(
    cap: FloatArray, per_unit: IntArray, k: int, peak: float, rows: npt.ArrayLike
) -> BoolArray:
    """Per replica vector (row): its capacity left after the worst k losses carries *peak*."""
    tol = load_slack(peak)
    left: BoolArray = surviving_capacity(cap, per_unit, k, rows) >= peak - tol
    return left


def repaired(
    cap: FloatArray,
    per_unit: IntArray,
    k: int,
    ub: IntArray,
    peak: float,
    n: IntArray,
    price_n: FloatArray,
) -> IntArray | None:
    """*n* with spare replicas added until it survives k losses (None when even the replica
    bounds *ub* do not): each step adds the replica with the least price per req/s of capacity
    it leaves after the losses, or, when no single replica raises that, one whole unit of the
    candidate with the least price per unit capacity. A first plan for the search, not an
    optimum."""
    if not survives(cap, per_unit, k, peak, ub)[0]:
        return None
    n = np.minimum(np.asarray(n, dtype=np.int64).copy(), ub)
    while not survives(cap, per_unit, k, peak, n)[0]:
        room = np.flatnonzero(n < ub)
        rows = np.repeat(n[None, :], room.size, axis=0)
        rows[np.arange(room.size), room] += 1
        gain = surviving_capacity(cap, per_unit, k, rows) - surviving_capacity(cap, per_unit, k, n)
        if (gain > 1e-12).any():
            score = np.full(room.size, np.inf)
            useful = gain > 1e-12  # divide only there: price / ~0 would overflow
            score[useful] = price_n[room][useful] / gain[useful]
            n[room[int(np.argmin(score))]] += 1
            continue
        unit_cap = per_unit[room] * cap[room]
        with np.errstate(over="ignore"):  # a type without capacity ranks last (inf)
            per_cap = price_n[room] * per_unit[room] / np.maximum(unit_cap, 1e-300)
        d = room[int(np.argmin(per_cap))]
        n[d] = min(int(ub[d]), int(n[d] + per_unit[d]))
    return n


def merge_units(top: FloatArray, m: IntArray, cap: float, per_unit: int, k: int) -> FloatArray:
    """The k largest unit capacities of each state (rows of *top*, descending) after adding *m*
    replicas of one candidate (``m // per_unit`` units of ``per_unit·cap``, one of the rest)."""
    full = m // per_unit
    units = np.zeros((m.size, k + 1))
    units[:, :k] = np.where(np.arange(k)[None, :] < full[:, None], per_unit * cap, 0.0)
    units[:, k] = (m - full * per_unit) * cap
    both = np.concatenate([top, units], axis=1)
    merged: FloatArray = -np.sort(-both, axis=1)[:, :k]
    return merged


def _thresholds(caps: list[float], per_unit: list[int]) -> list[float]:
    """Every capacity a loss unit can have: ``j·cap_d`` for ``1 <= j <= r_d``."""
    values = {j * c for c, r in zip(caps, per_unit, strict=True) for j in range(1, r + 1)}
    return sorted(values)


def add_failover(mm: MilpRows) -> None:
    """The rows of the module docstring for every model entry with failover and load."""
    s = mm.solver
    inputs = mm.inputs
    for m in inputs.models:
        peak = max(m.requests_per_s_by_period)
        if m.failover is None or peak <= 0:
            continue
        k = m.failover.count
        idx = [i for i, c in enumerate(mm.candidates) if c.name == m.name]
        if not idx:
            continue
        caps = [mm.candidates[i].max_requests_per_s_per_replica for i in idx]
        per_unit = [inputs.replicas_per_unit(mm.candidates[i]) for i in idx]
        full, part = _unit_counts(mm, m.name, idx, per_unit)
        slack = mm.slack("failover", m.name, peak)
        taus = _thresholds(caps, per_unit)
        picks = [s.BoolVar(f"failover_tau[{m.name},{j}]") for j in range(len(taus))]
        one = s.Constraint(1.0, 1.0, f"failover_pick[{m.name}]")
        for var in picks:
            one.SetCoefficient(var, 1.0)
        for j, (tau, pick) in enumerate(zip(taus, picks, strict=True)):
            big = peak + k * tau
            row = s.Constraint(peak - big + k * tau, s.infinity(), f"failover[{m.name},{j}]")
            row.SetCoefficient(pick, -big)
            if slack is not None:
                row.SetCoefficient(slack, 1.0)
            for d, cap in enumerate(caps):
                row.SetCoefficient(full[d], min(per_unit[d] * cap, tau))
                if part[d] is None:
                    continue
                if tau >= (per_unit[d] - 1) * cap:  # min(cap·p, τ) = cap·p for every p
                    row.SetCoefficient(part[d], cap)
                    continue
                v = s.NumVar(0.0, tau, f"failover_v[{m.name},{d},{j}]")
                bound = s.Constraint(-s.infinity(), 0.0, f"failover_part[{m.name},{d},{j}]")
                bound.SetCoefficient(v, 1.0)
                bound.SetCoefficient(part[d], -cap)
                row.SetCoefficient(v, 1.0)


def _unit_counts(
    mm: MilpRows, name: str, idx: list[int], per_unit: list[int]
) -> tuple[list[Any], list[Any | None]]:
    """Per deployment, its full-unit count (n itself for single-replica units) and the
    replicas of its partial unit (None for single-replica units): n = r·f + p."""
    s = mm.solver
    full: list[Any] = []
    part: list[Any | None] = []
    for d, (i, r) in enumerate(zip(idx, per_unit, strict=True)):
        if r == 1:
            full.append(mm.n[i])
            part.append(None)
            continue
        ub = int(mm.n[i].ub())
        f = s.IntVar(0.0, float(ub // r), f"failover_full[{name},{d}]")
        p = s.IntVar(0.0, float(r - 1), f"failover_rest[{name},{d}]")
        link = s.Constraint(0.0, 0.0, f"failover_units[{name},{d}]")
        link.SetCoefficient(mm.n[i], 1.0)
        link.SetCoefficient(f, -float(r))
        link.SetCoefficient(p, -1.0)
        full.append(f)
        part.append(p)
    return full, part
