"""The least peak facility power of any plan: columns that meet a power cap, or a proof that
none can.

When the power cap is the only row linking the models, a plan exists exactly when the least
*peak* facility power over all plans is at most the cap. Its Lagrangian dual is a column
generation of its own (a phase 1 before the cost is looked at):

* master LP (GLOP): ``min σ`` s.t. ``Σ_c λ_c·P_c,t − σ <= 0`` per period, one convex combination
  of known replica vectors per model (``P_c,t``: facility kW of column c in period t);
* its duals ``y_t >= 0`` sum to 1 (σ's column); each model's pricing problem is
  ``min_n Σ_t y_t·P_m,t(n)``, the exact search of :mod:`planner.solve.search` with replicas priced
  at their idle facility kW and watts above idle at ``PUE/1000 · y_t``;
* for any plan ``max_t power_t >= Σ_t y_t·power_t >= Σ_m ℓ_m(y)``, ``ℓ_m`` the pricing problem's
  valid lower bound: a **valid lower bound on the peak of every plan**. Above the cap it proves
  that no plan exists; the rounds stop there, when the LP's σ is within the cap (its columns
  combine, fractionally, under it: they go to the cost phase, :mod:`planner.solve.colgen`), or
  when the LP and the bound meet or time runs out.

Rounds alternate as in the cost phase: a fast round prices each model with the merit-order DP
(new columns only, no bound), an exact round with the search (columns and the bound).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from planner.solve.advice import raise_to
from planner.solve.columns import Column, Decomposition
from planner.solve.decompose import FloatArray
from planner.solve.pricing import round_column

GAP_RTOL = 1e-4
"""The rounds stop when the LP's peak and the bound are this close (relative)."""


@dataclass(frozen=True)
class PeakBound:
    """Outcome of :func:`least_peak`."""

    bound_kw: float
    """A valid lower bound on the peak facility power of every plan (kW; -inf: none)."""
    lp_kw: float
    """Peak of the last master LP (its columns' best convex combination, kW)."""
    columns: list[Column]
    """Every column generated (for the cost phase)."""


class PeakMaster:
    """The phase-1 master LP of the module docstring."""

    def __init__(self, dec: Decomposition) -> None:
        from ortools.linear_solver import pywraplp

        s = pywraplp.Solver.CreateSolver("GLOP")
        self.solver, self.dec = s, dec
        inf = s.infinity()
        self.sigma = s.NumVar(-inf, inf, "peak_kw")
        self.conv = [s.Constraint(1.0, 1.0, f"conv[{b}]") for b in range(len(dec.blocks))]
        self.rows = []
        for t in range(dec.inputs.periods):
            row = s.Constraint(-inf, 0.0, f"peak[{t}]")
            row.SetCoefficient(self.sigma, -1.0)
            self.rows.append(row)
        s.Objective().SetCoefficient(self.sigma, 1.0)
        s.Objective().SetMinimization()
        self.columns: list[Column] = []
        self.seen: set[tuple[int, bytes]] = set()

    def add(self, col: Column) -> bool:
        """Add *col* unless it is there already; True when added."""
        key = (col.block, col.n.tobytes())
        if key in self.seen:
            return False
        self.seen.add(key)
        var = self.solver.NumVar(0.0, self.solver.infinity(), f"lambda[{len(self.columns)}]")
        self.conv[col.block].SetCoefficient(var, 1.0)
        for row, kw in zip(self.rows, col.power_kw, strict=True):
            row.SetCoefficient(var, float(kw))
        self.columns.append(col)
        return True

    def solve(self) -> tuple[float, FloatArray, list[float]] | None:
        """(LP peak kW, y per period, σ_m per model), None on failure."""
        from ortools.linear_solver import pywraplp

        if self.solver.Solve() != pywraplp.Solver.OPTIMAL:
            return None
        y = np.asarray([max(0.0, -row.dual_value()) for row in self.rows], dtype=np.float64)
        return self.sigma.solution_value(), y, [ct.dual_value() for ct in self.conv]


def _prices(dec: Decomposition, b: int, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Replica and per-period watt prices of ``Σ_t y_t·P_t(n)`` for block *b*."""
    return dec.kw_n[b] * float(y.sum()), dec.kw_per_e * y


def least_peak(
    dec: Decomposition,
    start: list[Column],
    cap_kw: float,
    deadline: float,
    tight: bool = False,
    clock: Callable[[], float] = time.perf_counter,
) -> PeakBound | None:
    """Phase 1 (module docstring) from the columns *start*; None when a model has no vector.
    *tight*: a bound above the cap does not stop the rounds (an explanation's bound, the least
    power to raise the cap to, not the first proof: 0.081 kW for a cap of 1e-300 kW where every
    plan draws 0.0971 kW). *deadline* is a time of *clock* (an explanation's: CPU seconds)."""
    master = PeakMaster(dec)
    for col in start:
        master.add(col)
    bound, exact = -math.inf, False
    lp_kw = math.inf
    while True:
        solved = master.solve()
        if solved is None:
            return None
        lp_kw, y, sigma = solved
        if y.sum() > 0:  # the duals sum to 1 (σ's column); made exact so the bound is valid
            scale = float(y.sum())
            y, sigma = y / scale, [v / scale for v in sigma]
        if lp_kw <= cap_kw * (1 - GAP_RTOL):
            break  # the columns meet the cap (fractionally): the cost phase takes over
        total, new, cut = 0.0, 0, False
        for b, block in enumerate(dec.blocks):
            if exact and clock() > deadline:
                cut = True
                break
            price_n, price_t = _prices(dec, b, y)
            priced = round_column(block, price_n, price_t, sigma[b], exact)
            if priced is None:
                return None
            n, value, floor = priced
            total += floor if exact else 0.0
            if n is not None and value < sigma[b] - 1e-9 * max(1.0, abs(sigma[b])):
                new += master.add(dec.column(b, n))
        if exact and not cut:
            bound = max(bound, total)
        late = clock() > deadline
        if (bound > cap_kw * (1 + 1e-9) and not tight) or late:
            break
        if exact and (new == 0 or lp_kw - bound <= GAP_RTOL * max(1.0, abs(lp_kw))):
            break
        exact = not exact if exact else new == 0
    return PeakBound(bound, lp_kw, master.columns)


def peak_message(bound_kw: float, cap_kw: float) -> str:
    """The proof of :func:`least_peak` in words (the cap to raise to rounded up)."""
    enough, cap = raise_to(bound_kw, cap_kw)
    return (
        f"power cap: every plan draws at least {bound_kw:,.6g} kW facility power in its busiest "
        f"period (a valid lower bound: the least power of each model on its curves, the periods "
        f"weighted by the column generation's duals), above the cap of {cap} kW (raise "
        f"power_cap_kw to at least {enough})"
    )
