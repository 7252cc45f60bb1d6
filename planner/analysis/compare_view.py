"""The ranked table of ``wattgpu compare`` (format-neutral, :mod:`planner.text`)."""

from __future__ import annotations

from planner.analysis.compare import CompareResult
from planner.text import Section, num

COMPARE_COLUMNS: tuple[str, ...] = (
    "rank",
    "GPU",
    "fits",
    "replicas",
    "GPUs",
    "ITL ms at capacity",
    "W/GPU",
    "Wh/1k tok",
    "$/M tok",
    "energy kWh",
    "cost $",
    "in domain",
    "ITL ms at served load",
    "kg CO2e",
)


def compare_section(result: CompareResult) -> Section:
    """The ranked table (format-neutral; see :mod:`planner.text`)."""
    rows = []
    for rank, r in enumerate(result.rows, start=1):
        no_price = "no price"
        rows.append(
            (
                str(rank) if r.fits else "",
                r.gpu,
                r.deployment if r.fits else f"no — {r.reason}",
                str(r.replicas) if r.fits else "",
                str(r.gpus) if r.fits else "",
                num(r.itl_ms),
                num(r.power_w_per_gpu),
                num(r.wh_per_1k_output_tokens),
                num(r.usd_per_million_output_tokens) if r.priced or not r.fits else no_price,
                num(r.energy_kwh),
                num(r.cost_usd) if r.priced or not r.fits else no_price,
                "" if r.in_domain is None else ("yes" if r.in_domain else "no"),
                num(r.itl_ms_at_served_load),
                num(r.carbon_kg),
            )
        )
    return Section(
        f"wattgpu compare: {result.model}",
        COMPARE_COLUMNS,
        tuple(rows),
        numeric=frozenset({0, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13}),
        whole=frozenset({1}),
        notes=tuple(result.assumptions()),
    )
