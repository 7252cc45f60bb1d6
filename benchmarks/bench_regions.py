"""The 10× scale benchmark of issue 23 item 4: 100 model entries × 39 GPU types × 24 periods × 3
regions, each region with its own grid (one hourly), PUE, electricity price, power cap and
inventory; a fifth of the entries restricted to the EU regions, a seventh to the US one.

Targets: solved to a proven gap <= 0.1 % in <= 60 s on 2 cores; a power cap below what the
entries need explained (infeasible, with a valid bound) in <= 10 s. The entries are those of
``tools/generate_large_scenario.py`` (catalog LLMs, log-normal loads, daily profiles, random
SLAs) at 100 entries; the GPU types are the 39 of that tool's ``BENCHMARK_GPUS`` (every
catalog type when the issue asked for "40 GPU types"; fixed since, so timings stay
comparable). Run::

    .venv/bin/python benchmarks/bench_regions.py        # plan, tight caps, infeasible caps
    .venv/bin/python benchmarks/bench_regions.py --only plan

Each run is timed in-process: the scenario load, the candidate build (predictions and the
serving model for every (entry, GPU, layout), then placed in every allowed region) and the
solve (without baselines, the figure the target is about), with the process's CPU time.

Measured 2026-12-01 (benchmarks/README.md, "Regions", has the table; load average 1-2): the plan
optimal, gap 0.0046 %, solve 19.8 s; caps × 0.25 proven infeasible in 2.9 s (the regions' exact
least-power proof). Tighter feasible caps (× 0.7) end at the time limit with a gap of 0.42 %
(× 0.55: 0.79 %): the 0.1 % target is missed there.
Measured 2026-12-05 (load average about 0.5; the ITL model retrained that day): the plan optimal,
gap 0.0021 %, solve 8.0 s; caps × 0.7 still end at the 60 s limit (solve 60.0-60.9 s, so the
check says MISSED) but at a gap of 0.054-0.079 %, under the 0.1 % (the same code with the model
before: 61.3 s, 0.35 %); caps × 0.25 explained in 1.0 s.
Measured 2026-12-05 (late; the power curves' 58 knots and SLA-free capacity chord): the plan
optimal, gap 0.002 %, solve 8.0 s; caps × 0.7 end at the limit, 61.2 s, at 0.103 % (the same
machine's run of the code before, f8d604d: 60.05 s, 0.050 %; with 58 knots and no chord 0.098 %,
with 46 knots and the chord 0.109 %): the 0.1 % target is missed by 0.003 points there; caps ×
0.25 explained in 1.05 s.
Measured 2026-12-05 (evening), after column generation's time shares (the first master MILP a
third of the time left; benchmarks/README.md, "Regions"): the plan optimal, gap 0.002 %, solve
7.8 s; caps × 0.7 optimal at 0.0089 % in 59.1 s (target met); caps × 0.25 explained in 0.9 s.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from generate_large_scenario import build  # noqa: E402

N_MODELS = 100
"""Model entries (10× the issue's bundled examples)."""
FR_HOURLY: tuple[float, ...] = (
    38,
    36,
    34,
    33,
    33,
    35,
    42,
    52,
    60,
    58,
    54,
    50,
    47,
    46,
    47,
    51,
    58,
    68,
    74,
    70,
    61,
    52,
    45,
    41,
)
"""France's hourly grid intensity (g CO2e/kWh; shaped like RTE's daily curve, mean ~50)."""
REGIONS: dict[str, dict[str, Any]] = {
    "us-east": {
        "region": "US",
        "pue": 1.35,
        "electricity_usd_per_kwh": 0.09,
        "power_cap_kw": 18.0,
    },
    "eu-west": {
        "region": "FR",
        "grid_profile_g_co2_per_kwh": list(FR_HOURLY),
        "pue": 1.2,
        "electricity_usd_per_kwh": 0.16,
        "power_cap_kw": 6.0,
    },
    "eu-central": {
        "region": "DE",
        "pue": 1.15,
        "electricity_usd_per_kwh": 0.22,
        "power_cap_kw": 10.0,
    },
}
"""The three regions. The power caps bind: the plan without them draws more in us-east and
eu-west (see README)."""
SCARCE: dict[str, dict[str, int]] = {
    "eu-west": {"H100-SXM5-80GB": 16, "H200-SXM-141GB": 8, "L40S": 16, "L4": 24},
    "eu-central": {"H100-SXM5-80GB": 8, "A100-SXM4-80GB": 16, "L4": 16},
}
"""GPU types in short supply in the EU regions (the other types unlimited there)."""


def scenario(*, caps: bool = True, cap_scale: float = 1.0) -> dict[str, Any]:
    """The benchmark scenario mapping: the generated entries with the three regions."""
    data = build(N_MODELS)
    data["name"] = f"regions-{N_MODELS}x{len(data['gpus'])}x24x{len(REGIONS)}"
    data["objective"] = {"minimize": "cost"}
    data["carbon_usd_per_tonne"] = 80
    regions: dict[str, Any] = {}
    for name, spec in REGIONS.items():
        spec = dict(spec)
        if not caps:
            spec.pop("power_cap_kw")
        else:
            spec["power_cap_kw"] = spec["power_cap_kw"] * cap_scale
        if name in SCARCE:  # every type offered; the scarce ones counted
            spec["gpus"] = {
                g: ({"available": SCARCE[name][g]} if g in SCARCE[name] else None)
                for g in data["gpus"]
            }
        regions[name] = spec
    data["regions"] = regions
    for i, entry in enumerate(data["models"]):
        if i % 5 == 0:
            entry["regions"] = ["eu-west", "eu-central"]  # EU data residency
        elif i % 7 == 0:
            entry["regions"] = ["us-east"]
    return data


def run(label: str, data: dict[str, Any], relative_gap: float | None = None) -> dict[str, Any]:
    """Load, build and solve *data* (at the solver's *relative_gap*; None: the planner's
    default, 1e-4); the seconds of each stage and the plan's outcome."""
    from planner.build import planning_inputs
    from planner.scenario.load import scenario_from_dict
    from planner.solve.optimize import solve
    from predictors.api import Predictor

    cpu0, t0 = time.process_time(), time.perf_counter()
    predictor = Predictor.load()
    s = scenario_from_dict(data, label, predictor.catalog, base_dir=REPO)
    t1 = time.perf_counter()
    inputs = planning_inputs(s, predictor)
    if relative_gap is not None:
        inputs = replace(inputs, relative_gap=relative_gap)
    t2, cpu2 = time.perf_counter(), time.process_time()
    plan = solve(inputs, baselines=False)
    t3, cpu3 = time.perf_counter(), time.process_time()
    out: dict[str, Any] = {
        "run": label,
        "entries": len(inputs.models),
        "gpu_types": len(s.gpu_offers),
        "periods": inputs.periods,
        "regions": len(inputs.regions),
        "candidates": len(inputs.candidates),
        "feasible": len(inputs.feasible_candidates()),
        "load_s": round(t1 - t0, 2),
        "build_s": round(t2 - t1, 2),
        "solve_s": round(t3 - t2, 2),
        "solve_cpu_s": round(cpu3 - cpu2, 2),
        "wall_s": round(t3 - t0, 2),
        "cpu_s": round(time.process_time() - cpu0, 2),
        "status": plan.status.value,
        "gap_pct": None if plan.solve.gap is None else round(100 * plan.solve.gap, 4),
        "objective": plan.solve.objective,
        "bound": plan.solve.bound,
        "solver": plan.solve.solver,
        "messages": [m[:240] for m in plan.solve.messages],
    }
    if plan.totals is not None:
        from planner.result import region_totals

        out["peak_kw_by_region"] = {
            r: round(t.peak_facility_power_kw, 2)
            for r, t in region_totals(plan.allocations, inputs).items()
        }
        out["caps_kw"] = {r.name: r.power_cap_kw for r in inputs.regions}
    return out


RUNS = {
    "uncapped": lambda: ("uncapped", scenario(caps=False)),
    "plan": lambda: ("plan", scenario()),
    "tight": lambda: ("tight (caps × 0.7)", scenario(cap_scale=0.7)),
    "infeasible": lambda: ("infeasible (caps × 0.25)", scenario(cap_scale=0.25)),
}
"""``plan``: the caps above; ``tight``: 0.7 × them (feasible, harder); ``infeasible``: 0.25 ×
them (below what the entries need); ``uncapped``: no caps (where the entries go freely)."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", choices=list(RUNS), default=None)
    args = parser.parse_args(argv)
    for key in [args.only] if args.only else ["plan", "tight", "infeasible"]:
        label, data = RUNS[key]()
        result = run(label, data)
        for k, v in result.items():
            print(f"{k:>18}: {v}")
        if key in ("plan", "tight"):
            ok = result["status"] in ("optimal", "feasible") and (result["gap_pct"] or 0) <= 0.1
            ok = ok and result["solve_s"] <= 60
            print(f"{'target':>18}: {'met' if ok else 'MISSED'} (gap <= 0.1 % in <= 60 s)")
        elif key == "infeasible":
            ok = result["status"] == "infeasible" and result["solve_s"] <= 10
            print(f"{'target':>18}: {'met' if ok else 'MISSED'} (explained in <= 10 s)")
        print()


if __name__ == "__main__":
    main()
