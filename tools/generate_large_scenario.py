"""Write scenarios/large-generated.yaml: a large, deterministic scenario for solver benchmarks.

Hundreds of model entries drawn from the catalog LLMs (dense and MoE up to ``--max-params-b``
billion parameters) × the 39 catalog GPU types of :data:`BENCHMARK_GPUS`, with a 24-value daily
profile per entry. The GPU list is fixed (the catalog when the benchmark was defined), so that
the benchmark's timings stay comparable as the catalog grows. The random generator is seeded, so
the output is byte-for-byte reproducible::

    python tools/generate_large_scenario.py                      # 500 entries, the committed file
    python tools/generate_large_scenario.py --models 50 --output /tmp/s50.yaml
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO / "scenarios" / "large-generated.yaml"
SEED = 20250101
#: The GPU types of the benchmark (every catalog GPU when it was defined, issue 10).
BENCHMARK_GPUS: tuple[str, ...] = (
    "A10",
    "A100-PCIE-40GB",
    "A100-PCIE-80GB",
    "A100-SXM4-40GB",
    "A100-SXM4-80GB",
    "A10G",
    "A30",
    "A40",
    "B200",
    "B300",
    "GAUDI2",
    "GAUDI3",
    "GB200",
    "GB300",
    "GH200-144GB",
    "GH200-96GB",
    "H100-NVL-94GB",
    "H100-PCIE-80GB",
    "H100-SXM5-80GB",
    "H200-NVL-141GB",
    "H200-SXM-141GB",
    "L4",
    "L40",
    "L40S",
    "MAX-1550",
    "MI250",
    "MI250X",
    "MI300X",
    "MI325X",
    "RTX-3090",
    "RTX-4090",
    "RTX-6000-ADA",
    "RTX-PRO-6000-BLACKWELL",
    "T4",
    "V100-PCIE-16GB",
    "V100-PCIE-32GB",
    "V100-SXM2-16GB",
    "V100-SXM2-32GB",
    "V100S-PCIE-32GB",
)


def _profile(rng: random.Random) -> list[float]:
    """A smooth daily curve: a peak hour, a width, a night floor; rounded to 2 decimals."""
    peak = rng.uniform(9, 17)
    width = rng.uniform(3, 6)
    floor = rng.uniform(0.05, 0.4)
    values = []
    for hour in range(24):
        dist = min(abs(hour - peak), 24 - abs(hour - peak))
        values.append(round(floor + (1 - floor) * math.exp(-0.5 * (dist / width) ** 2), 2))
    return values


def build(n_models: int, seed: int = SEED, max_params_b: float = 75.0) -> dict[str, Any]:
    """The scenario mapping (plain YAML-ready data)."""
    from predictors.catalog.store import load_catalog

    catalog = load_catalog(None)
    rng = random.Random(seed)
    llms = sorted(
        row["id"]
        for row in catalog.llms.to_dicts()
        if row["total_params_b"] is not None and row["total_params_b"] <= max_params_b
    )
    known = {str(r["id"]) for r in catalog.gpus.to_dicts()}
    missing = sorted(set(BENCHMARK_GPUS) - known)
    if missing:
        raise SystemExit(f"error: the catalog lacks benchmark GPU type(s) {', '.join(missing)}")
    gpus = sorted(
        (r for r in catalog.gpus.to_dicts() if r["id"] in BENCHMARK_GPUS),
        key=lambda r: str(r["id"]),
    )
    priced = [
        r["usd_per_hour"] / r["memory_bandwidth_gb_s"]
        for r in gpus
        if r["usd_per_hour"] is not None and r["memory_bandwidth_gb_s"]
    ]
    usd_per_gb_s = statistics.median(priced)
    offers: dict[str, Any] = {}
    for row in gpus:
        if row["usd_per_hour"] is not None:
            offers[row["id"]] = {}
        else:
            synthetic = round(usd_per_gb_s * float(row["memory_bandwidth_gb_s"] or 1000.0), 2)
            offers[row["id"]] = {"usd_per_hour": max(synthetic, 0.1)}
    context = {row["id"]: row["max_position_embeddings"] for row in catalog.llms.to_dicts()}
    models = []
    for i in range(n_models):
        llm = rng.choice(llms)
        output_tokens = rng.choice([16, 64, 128, 256, 512, 1024])
        requests_per_s = round(rng.lognormvariate(-0.5, 1.0), 3)
        input_tokens = rng.choice([128, 256, 512, 1024, 2048, 4096])
        window = context.get(llm)
        while window is not None and input_tokens + output_tokens > window:
            # fit the model's context window: halve the prompt, then the completion
            if input_tokens > 16:
                input_tokens //= 2
            else:
                output_tokens //= 2
        models.append(
            {
                "name": f"m{i:04d}-{llm.split('/')[-1].lower()}",
                "model": llm,
                "load": {
                    "requests_per_s": requests_per_s,
                    "input_tokens": input_tokens,
                    "output_tokens": output_tokens,
                    "daily_profile": _profile(rng),
                },
                "sla": {"itl_ms": rng.choice([50, 75, 100, 150, 200])},
            }
        )
    return {
        "name": f"large-generated-{n_models}",
        "description": (
            f"{n_models} generated model entries over {len(llms)} catalog LLMs (<= "
            f"{max_params_b:g}B parameters) x {len(offers)} catalog GPU types x 24 periods; "
            f"seed {seed}. For solver benchmarks, not a real fleet."
        ),
        "horizon_hours": 8760,
        "region": "US",
        "electricity_usd_per_kwh": 0.12,
        "objective": {"minimize": "energy"},
        "time_limit_s": 60,
        "gpus": offers,
        "models": models,
    }


HEADER = """\
# GENERATED by tools/generate_large_scenario.py (seed {seed}) — do not edit by hand.
#
# A benchmark scenario: {n} model entries (catalog LLMs drawn at random, log-normal request
# rates, random token lengths and ITL SLAs, a smooth daily profile each) on the 39 catalog GPU
# types of its definition with unlimited inventory. GPU types without a catalog price get a
# synthetic price: the median catalog $/GPU-hour per GB/s of memory bandwidth x their bandwidth.
# Regenerate: python tools/generate_large_scenario.py [--models N] [--output PATH]
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=500, help="number of model entries")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    data = build(args.models, args.seed)
    text = HEADER.format(seed=args.seed, n=args.models) + yaml.safe_dump(
        data, sort_keys=False, width=100, default_flow_style=None
    )
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output} ({args.models} models, {len(data['gpus'])} GPU types)")


if __name__ == "__main__":
    main()
