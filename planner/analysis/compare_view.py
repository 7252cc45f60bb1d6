"""The ranked table of ``wattgpu compare`` (format-neutral, :mod:`planner.text`).

Two layouts: compact (the default: rank, GPU, deployment, GPUs, ITL, energy and cost per token
and in all, within 80 columns for usual numbers) and wide (every column). Numbers are never cut:
every numeric column and the GPU ids are whole (:attr:`planner.text.Section.whole`), only the
deployment column wraps, and :func:`planner.text.least_width` is the least width that shows the
table so; the CLI prints on a console at least that wide. Why a GPU type does not fit is a
numbered note under the table (``no (1)`` in its row), so a long reason never squeezes the
numbers. When no row fits, :func:`no_fit_message` is the closing error.
"""

from __future__ import annotations

from planner.analysis.compare import CompareResult
from planner.inputs import MAX_REPLICAS_PER_CANDIDATE
from planner.text import Section, num
from predictors.catalog import engine_support

#: Marker of a row whose predictions lie outside the predictors' training domain (compact).
OUT_OF_DOMAIN_MARK = "†"

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

#: Headings of the wide layout on two lines (numeric headings never wrap, so they are broken
#: here rather than made wider than their numbers).
WIDE_HEADINGS: dict[str, str] = {
    "ITL ms at capacity": "ITL ms\nat capacity",
    "Wh/1k tok": "Wh/1k\ntok",
    "$/M tok": "$/M\ntok",
    "energy kWh": "energy\nkWh",
    "in domain": "in\ndomain",
    "ITL ms at served load": "ITL ms at\nserved load",
    "kg CO2e": "kg\nCO2e",
}

#: The compact layout: (column of :data:`COMPARE_COLUMNS`, its short heading).
COMPACT_COMPARE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("rank", "#"),
    ("GPU", "GPU"),
    ("fits", "fits"),
    ("GPUs", "GPUs"),
    ("ITL ms at capacity", "ITL ms"),
    ("Wh/1k tok", "Wh/1k"),
    ("$/M tok", "$/M"),
    ("energy kWh", "kWh"),
    ("cost $", "cost $"),
)
_COMPACT_NOTE = (
    "ITL ms = ITL at capacity; Wh/1k = Wh per 1,000 output tokens; $/M = $ per million output "
    "tokens; kWh = GPU energy; --wide for every column (power, CO2e, ITL at the served load)"
)
_NUMERIC = frozenset({"rank", "replicas", "GPUs", "W/GPU", "Wh/1k tok", "$/M tok", "cost $"})
_NUMERIC |= {"ITL ms at capacity", "energy kWh", "ITL ms at served load", "kg CO2e"}
#: Columns that wrap when the table is narrow (every other one is shown whole).
_WRAPPING = frozenset({"fits"})


def _cells(result: CompareResult) -> tuple[list[dict[str, str]], list[str]]:
    """Every row's cells by column, and the numbered notes of the rows that do not fit."""
    rows: list[dict[str, str]] = []
    reasons: list[str] = []
    for rank, r in enumerate(result.rows, start=1):
        no_price = "no price"
        if not r.fits:
            reasons.append(f"({len(reasons) + 1}) {r.gpu}: {r.reason}")
        values = (
            str(rank) if r.fits else "",
            r.gpu,
            r.deployment if r.fits else f"no ({len(reasons)})",
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
        rows.append(dict(zip(COMPARE_COLUMNS, values, strict=True)))
    return rows, reasons


def compare_section(result: CompareResult, *, wide: bool = True) -> Section:
    """The ranked table (format-neutral; see :mod:`planner.text`): every column when *wide*,
    else the columns of :data:`COMPACT_COMPARE_COLUMNS` (a GPU out of the predictors' domain
    marked †)."""
    rows, reasons = _cells(result)
    keep = [(c, WIDE_HEADINGS.get(c, c)) for c in COMPARE_COLUMNS]
    if not wide:
        keep = list(COMPACT_COMPARE_COLUMNS)
    notes = [] if wide else [_COMPACT_NOTE]
    if not wide and any(r.fits and r.in_domain is False for r in result.rows):
        for row, r in zip(rows, result.rows, strict=True):
            if r.fits and r.in_domain is False:
                row["GPU"] += f" {OUT_OF_DOMAIN_MARK}"
        notes.append(f"{OUT_OF_DOMAIN_MARK} outside the predictors' training domain")
    return Section(
        f"wattgpu compare: {result.model}",
        tuple(heading for _, heading in keep),
        tuple(tuple(row[c] for c, _ in keep) for row in rows),
        numeric=frozenset(k for k, (c, _) in enumerate(keep) if c in _NUMERIC),
        whole=frozenset(k for k, (c, _) in enumerate(keep) if c not in _WRAPPING),
        notes=(*notes, *reasons, *result.assumptions()),
    )


#: How the closing error names each reason a row has no fleet (``other``: the rows say it).
_KIND_WORDS = {
    "memory": "memory",
    "engine": "engine",
    "precision": "precision",
    "replicas": "replica limit",
}


def no_fit_message(result: CompareResult) -> str:
    """The error when no row fits, saying what the rows say (:meth:`CompareResult.unfit_kind`,
    never their text): memory, the engine or the replica limit when that is every row's reason;
    the reasons when none is the SLA (relaxing it cannot help); else the SLA."""
    r = result.request
    kinds = {result.unfit_kind(row) for row in result.rows}
    if kinds == {"memory"}:
        fix = "allow GPU types with more memory, or a lower --precision"
        if r.engine in engine_support.single_node_engines():
            others = engine_support.listed(list(engine_support.FULL_ENGINES), "or")
            return (
                f"{result.model} at {result.precision} does not fit in memory in one node of "
                f"any GPU type listed, and {r.engine} serves a replica inside one node — pass "
                f"--engine {others} to span nodes, {fix}"
            )
        return (
            f"{result.model} at {result.precision} does not fit in memory on any GPU type "
            f"listed — {fix}"
        )
    if kinds == {"engine"}:
        return (
            f"engine {r.engine} runs on none of the GPU types listed (each row says why) — pass "
            "another --engine, or allow GPU types it runs on"
        )
    if kinds == {"replicas"}:  # as plan says it of an entry (planner.build.check_fleet_size)
        return (
            f"{result.model} at {r.requests_per_s:,.6g} req/s needs more than the "
            f"{MAX_REPLICAS_PER_CANDIDATE:,} replicas a plan may use on every GPU type listed "
            "(each row says how many) — split the load: compare a share of it with a lower "
            "--requests-per-s"
        )
    if kinds and "sla" not in kinds:  # no row misses the SLA: relaxing it cannot help
        why = ", ".join(sorted(_KIND_WORDS[k] for k in kinds if k in _KIND_WORDS))
        split = ", or split the load (a lower --requests-per-s)" if "replicas" in kinds else ""
        return (
            f"no GPU type listed can serve {result.model} at {result.precision} with "
            f"{r.engine} ({why + ': ' if why else ''}each row says why) — allow other GPU "
            f"types, or pass another --precision or --engine{split}"
        )
    ttft = "" if r.ttft_ms is None else f" and TTFT ≤ {r.ttft_ms:g} ms"
    return (
        f"no GPU type meets ITL ≤ {r.itl_ms:g} ms{ttft} for {result.model} (each row says "
        "why) — relax the SLA or allow more GPU types"
    )
