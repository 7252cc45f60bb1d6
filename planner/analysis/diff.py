"""What changed between two plan JSON files (``wattgpu plan … --format json`` outputs).

Compares the scenario name, status, description and predictors, assumptions (with the GPU
inventory and each region's settings), model loads, allocations (keyed by model entry
name, GPU and TP degree: added, removed, changed replicas/load/energy/cost) and totals (absolute
and relative change, GPUs by type). Pure functions on the JSON contract of issue 5, so plans
from other wattgpu versions compare as long as they follow it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.inputs import CandidateKey, layout_text, record_key
from planner.text import ZERO_BELOW
from predictors.core.errors import WattgpuError
from predictors.core.safe_read import not_regular_problem

#: Totals compared first, in this order; any other number of the totals follows (sorted), so a
#: figure a later version adds is never left out.
TOTAL_KEYS: tuple[str, ...] = (
    "energy_kwh",
    "facility_energy_kwh",
    "cost_usd",
    "energy_cost_usd",
    "gpu_cost_usd",
    "carbon_kg",
    "mean_power_w",
    "carbon_cost_usd",
    "peak_facility_power_kw",
)
ALLOCATION_KEYS: tuple[str, ...] = (
    "replicas",
    "gpus",
    "energy_kwh",
    "cost_usd",
    "carbon_kg",
    "facility_energy_kwh",
    "gpu_cost_usd",
    "energy_cost_usd",
    "carbon_cost_usd",
    "requests_per_s_by_period",
)
#: Top-level records compared in the status / scenario section: what was planned, its result,
#: and where the inputs came from (the predictors that made it).
SCENARIO_KEYS: tuple[str, ...] = ("scenario", "status", "description", "predictors")
RELATIVE_TOLERANCE = 1e-9
#: Last path parts of whole numbers that are labels, not quantities (a year, a seed, an id):
#: printed as written (``2023``, not ``2,023``) with no change or percent (any name ending in
#: ``_year`` or ``_id`` too).
LABEL_KEYS = frozenset({"year", "seed", "id"})


def is_label(where: str) -> bool:
    """True when the value at *where* (``assumptions.grid_year``) is a label-like whole number:
    its last part is in :data:`LABEL_KEYS` or ends in ``_year`` or ``_id``."""
    last = where.replace(": ", ".").rsplit(".", 1)[-1]
    return last in LABEL_KEYS or last.endswith(("_year", "_id"))


def load_plan_json(
    path: str | Path, *, trust: bool = False, warn: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Read, validate and recompute a plan JSON file (:func:`planner.documents.plan.read_plan`:
    the plain JSON values that were checked); one WattgpuError line naming the file, the field
    and the fix when it is not one (with *trust*, recomputation problems are warnings through
    *warn*)."""
    from planner.documents.plan import PLAN_FIX, read_plan

    p = Path(path)
    if not (p.exists() or p.is_symlink()):
        raise WattgpuError(f"{p}: no such file; {PLAN_FIX}")
    problem = not_regular_problem(p)  # a FIFO, a device, a link loop or a dangling link
    if problem:
        raise WattgpuError(f"{p}: {problem}")
    return read_plan(p, trust=trust, warn=warn)[1]


@dataclass(frozen=True)
class Change:
    """One changed value: where, before, after."""

    where: str
    before: Any
    after: Any

    @property
    def delta(self) -> float | None:
        """``after - before`` when both are numbers, else None (units of the value)."""
        if _is_number(self.before) and _is_number(self.after):
            return float(self.after) - float(self.before)
        return None

    @property
    def pct(self) -> float | None:
        """Change relative to ``before`` in percent; None when not numeric or ``before`` is zero."""
        d = self.delta
        if d is None or not self.before:
            return None
        return 100.0 * d / abs(float(self.before))

    def to_dict(self) -> dict[str, Any]:
        """JSON object with ``where``, ``before``, ``after``, ``delta`` and ``pct``."""
        return {
            "where": self.where,
            "before": self.before,
            "after": self.after,
            "delta": self.delta,
            "pct": self.pct,
        }

    def line(self) -> str:
        """One text line ``where: before -> after (+delta, +pct %)``; a label-like whole number
        (:func:`is_label`: ``assumptions.grid_year: 2023 -> 2022``) as written, with no change."""
        if is_label(self.where):
            return f"{self.where}: {_label(self.before)} -> {_label(self.after)}"
        text = f"{self.where}: {_fmt(self.before)} -> {_fmt(self.after)}"
        if self.delta is not None:
            text += f" ({_digits(self.delta, 4, '+')}"
            text += f", {self.pct:+.1f} %)" if self.pct is not None else ")"
        return text


@dataclass(frozen=True)
class PlanDiff:
    """Everything that differs between plan A and plan B."""

    a: str
    b: str
    scenario: list[Change] = field(default_factory=list)
    assumptions: list[Change] = field(default_factory=list)
    models: list[Change] = field(default_factory=list)
    added: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list)
    allocations: list[Change] = field(default_factory=list)
    totals: list[Change] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """True when no section (scenario, assumptions, models, allocations, totals) differs."""
        return not (
            self.scenario
            or self.assumptions
            or self.models
            or self.added
            or self.removed
            or self.allocations
            or self.totals
        )

    def to_json_dict(self) -> dict[str, Any]:
        """Everything as plain JSON values (``wattgpu diff --format json``)."""
        return {
            "a": self.a,
            "b": self.b,
            "identical": self.identical,
            "scenario": [c.to_dict() for c in self.scenario],
            "assumptions": [c.to_dict() for c in self.assumptions],
            "models": [c.to_dict() for c in self.models],
            "allocations_added": self.added,
            "allocations_removed": self.removed,
            "allocations_changed": [c.to_dict() for c in self.allocations],
            "totals": [c.to_dict() for c in self.totals],
        }

    def lines(self) -> list[str]:
        """Human-readable summary, one change a line."""
        out = [f"diff {self.a} -> {self.b}"]
        if self.identical:
            return [*out, "no differences"]
        sections: list[tuple[str, list[str]]] = [
            ("status / scenario", [c.line() for c in self.scenario]),
            ("assumptions", [c.line() for c in self.assumptions]),
            ("model loads", [c.line() for c in self.models]),
            ("allocations added", [_alloc_line("+", a) for a in self.added]),
            ("allocations removed", [_alloc_line("-", a) for a in self.removed]),
            ("allocations changed", [c.line() for c in self.allocations]),
            ("totals", [c.line() for c in self.totals]),
        ]
        for title, items in sections:
            if items:
                out.append(f"{title}:")
                out.extend(f"  {item}" for item in items)
        return out


def _zeroed(v: float) -> float:
    return 0.0 if abs(v) < ZERO_BELOW else v


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _digits(v: float, digits: int, sign: str = "") -> str:
    """*v* to *digits* significant digits, in whole numbers with thousands separators from
    ``10**digits`` on (never scientific notation: 1,214,120, not 1.21412e+06)."""
    if abs(v) >= 10**digits and math.isfinite(v):
        return f"{v:{sign},.0f}"
    return f"{v:{sign},.{digits}g}"


def _fmt(v: Any) -> str:
    """A value for people; floats below :data:`~planner.text.ZERO_BELOW` print as 0."""
    if _is_number(v):
        return _digits(_zeroed(v), 6) if isinstance(v, float) else f"{v:,}"
    if isinstance(v, list) and all(_is_number(x) for x in v):
        return "[" + ", ".join(_digits(_zeroed(x), 6) for x in v) + "]"
    return json.dumps(v, sort_keys=True) if not isinstance(v, str) else v


def _label(v: Any) -> str:
    """A label's value: a whole number as written (``2023``), anything else as :func:`_fmt`."""
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else _fmt(v)


def _deployment(a: dict[str, Any]) -> str:
    """``H100 TP8`` (``TP8×PP2`` with other layouts), or a disaggregated unit's pools in
    brackets."""
    key = record_key(a)
    return f"[{key[1]}]" if a.get("pools") else f"{key[1]} TP{layout_text(*key[2:6])}"


def _alloc_line(sign: str, a: dict[str, Any]) -> str:
    region = a.get("region")
    where = f" in {region}" if region else ""  # an entry that moved reads as such
    gpus = a.get("gpus")
    return (
        f"{sign} {a.get('name')}{where} on {a.get('replicas')}× {_deployment(a)} "
        f"({gpus} GPU{'' if gpus == 1 else 's'}, {_fmt(a.get('energy_kwh'))} kWh, "
        f"{_fmt(a.get('cost_usd'))} $)"
    )


def _same(a: Any, b: Any) -> bool:
    if _is_number(a) and _is_number(b):
        return abs(float(a) - float(b)) <= RELATIVE_TOLERANCE * max(1.0, abs(float(a)))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _compare(where: str, a: Any, b: Any, out: list[Change]) -> None:
    if not _same(a, b):
        out.append(Change(where, a, b))


def _key(alloc: dict[str, Any]) -> CandidateKey:
    return record_key(alloc)


def diff_plans(
    a: dict[str, Any], b: dict[str, Any], a_name: str = "A", b_name: str = "B"
) -> PlanDiff:
    """The differences between plan JSON dicts *a* and *b*."""
    d = PlanDiff(a_name, b_name)
    for key in SCENARIO_KEYS:
        _compare(key, a.get(key), b.get(key), d.scenario)
    a_as, b_as = a.get("assumptions") or {}, b.get("assumptions") or {}
    for key in sorted(set(a_as) | set(b_as)):
        _compare(f"assumptions.{key}", a_as.get(key), b_as.get(key), d.assumptions)
    a_inv, b_inv = a.get("inventory") or {}, b.get("inventory") or {}
    for gpu in sorted(set(a_inv) | set(b_inv), key=str):  # null: unlimited
        _compare(
            f"inventory.{gpu}", a_inv.get(gpu, "absent"), b_inv.get(gpu, "absent"), d.assumptions
        )
    _compare_regions(a.get("regions") or [], b.get("regions") or [], d.assumptions)
    a_models = {m.get("name"): m for m in a.get("models") or []}
    b_models = {m.get("name"): m for m in b.get("models") or []}
    for name in sorted(set(a_models) | set(b_models), key=str):
        ma, mb = a_models.get(name), b_models.get(name)
        if ma is None or mb is None:
            _compare(
                f"models.{name}",
                "present" if ma else "absent",
                "present" if mb else "absent",
                d.models,
            )
            continue
        for key in sorted(set(ma) | set(mb)):
            _compare(f"models.{name}.{key}", ma.get(key), mb.get(key), d.models)
    a_alloc = {_key(x): x for x in a.get("allocations") or []}
    b_alloc = {_key(x): x for x in b.get("allocations") or []}
    for k in sorted(set(a_alloc) - set(b_alloc)):
        d.removed.append(a_alloc[k])
    for k in sorted(set(b_alloc) - set(a_alloc)):
        d.added.append(b_alloc[k])
    for k in sorted(set(a_alloc) & set(b_alloc)):
        if a_alloc[k].get("pools"):  # a disaggregated unit: its pools name it
            label = f"{k[0]} on [{k[1]}]"
        else:
            label = f"{k[0]} on {k[1]} TP{layout_text(k[2], k[3], k[4], k[5])}"
        for key in ALLOCATION_KEYS:
            _compare(f"{label}: {key}", a_alloc[k].get(key), b_alloc[k].get(key), d.allocations)
    _compare_totals("totals", a.get("totals") or {}, b.get("totals") or {}, d.totals)
    a_reg = {r.get("name"): r for r in a.get("regions") or [] if isinstance(r, dict)}
    b_reg = {r.get("name"): r for r in b.get("regions") or [] if isinstance(r, dict)}
    for name in sorted(set(a_reg) & set(b_reg), key=str):  # a region added or removed: above
        a_t, b_t = a_reg[name].get("totals") or {}, b_reg[name].get("totals") or {}
        _compare_totals(f"regions.{name}.totals", a_t, b_t, d.totals)
    return d


def _compare_totals(where: str, a: dict[str, Any], b: dict[str, Any], out: list[Change]) -> None:
    """Every figure of two totals records (:data:`TOTAL_KEYS` first) and their GPUs by type."""
    rest = sorted((set(a) | set(b)) - set(TOTAL_KEYS) - {"gpus"}, key=str)
    for key in (*TOTAL_KEYS, *rest):
        if key in a or key in b:
            _compare(f"{where}.{key}", a.get(key), b.get(key), out)
    a_gpus, b_gpus = a.get("gpus") or {}, b.get("gpus") or {}
    for gpu in sorted(set(a_gpus) | set(b_gpus), key=str):
        _compare(f"{where}.gpus.{gpu}", a_gpus.get(gpu, 0), b_gpus.get(gpu, 0), out)


#: Region record keys that are results, not settings (the fleet's totals are compared).
REGION_RESULTS = frozenset({"name", "totals", "usd_per_facility_kwh_weight", "carbon_kg_weight"})


def _compare_regions(a: list[Any], b: list[Any], out: list[Change]) -> None:
    """Each region's settings (grid, PUE, prices, cap, inventory), regions matched by name."""
    a_by = {r.get("name"): r for r in a if isinstance(r, dict)}
    b_by = {r.get("name"): r for r in b if isinstance(r, dict)}
    for name in sorted(set(a_by) | set(b_by), key=str):
        ra, rb = a_by.get(name), b_by.get(name)
        if ra is None or rb is None:
            where = f"regions.{name}"
            _compare(where, "present" if ra else "absent", "present" if rb else "absent", out)
            continue
        for key in sorted((set(ra) | set(rb)) - REGION_RESULTS):
            _compare(f"regions.{name}.{key}", ra.get(key), rb.get(key), out)


def diff_files(
    a: str | Path,
    b: str | Path,
    *,
    trust: bool = False,
    warn: Callable[[str], None] | None = None,
) -> PlanDiff:
    """:func:`diff_plans` of two plan JSON files (each checked as in :func:`load_plan_json`)."""
    return diff_plans(
        load_plan_json(a, trust=trust, warn=warn),
        load_plan_json(b, trust=trust, warn=warn),
        str(a),
        str(b),
    )
