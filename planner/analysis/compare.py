"""``wattgpu compare``: one model, one load, one SLA — the best fleet of each GPU type, ranked.

No scenario file: :func:`compare_scenario_dict` builds a one-model scenario (region, horizon,
electricity price and the objective stated in the output) and :func:`compare` plans it once per
GPU type with the same capacity model (:func:`planner.build.planning_inputs`, one predictor call
for all types) and the same solver (:func:`planner.solve.optimize.solve` on the candidates of that
type only). Each row is therefore "the best fleet of this GPU type": how many replicas of which
tensor-parallel degree, their ITL, power, energy per 1,000 output tokens and $ per million output
tokens. GPU types named with ``--gpus`` that have no rental price are costed on TCO from their
catalog list price, as ``plan`` costs them; those with neither are planned by energy with a price
of 0 and their cost columns read "no price". Each row's fleet size is checked on its own
candidates (:mod:`planner.analysis.compare_rows`), so a row never depends on the other types
listed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from planner.analysis.compare_rows import CompareRow
from planner.inputs import UNIT_NOTE
from planner.scenario.engines import disaggregated_reason
from planner.text import num
from predictors.catalog import engine_support
from predictors.core.errors import UnknownIdError, WattgpuError

if TYPE_CHECKING:
    from planner.inputs import PlanningInputs
    from predictors.api import Predictor
    from predictors.catalog.store import Catalog

RankBy = Literal["energy", "cost"]
DeploymentMode = Literal["aggregated", "disaggregated", "both"]

#: Defaults of the quick comparison, stated in its output.
DEFAULT_REGION = "US"
DEFAULT_HOURS = 8760.0
DEFAULT_ELECTRICITY_USD_PER_KWH = 0.12
DEFAULT_INPUT_TOKENS = 1024.0
DEFAULT_OUTPUT_TOKENS = 256.0


@dataclass(frozen=True)
class CompareRequest:
    """What ``wattgpu compare`` was asked (names as typed; resolved by :func:`compare`)."""

    model: str
    requests_per_s: float
    itl_ms: float
    ttft_ms: float | None = None
    input_tokens: float = DEFAULT_INPUT_TOKENS
    output_tokens: float = DEFAULT_OUTPUT_TOKENS
    gpus: tuple[str, ...] | None = None
    by: RankBy = "energy"
    precision: str | None = None
    engine: str = "vllm"
    region: str = DEFAULT_REGION
    hours: float = DEFAULT_HOURS
    electricity_usd_per_kwh: float = DEFAULT_ELECTRICITY_USD_PER_KWH
    deployment: DeploymentMode = "aggregated"
    """Rows of aggregated replicas (the default), of disaggregated units (one row per GPU type
    of both pools, or per prefill → decode pair of types) or both."""


@dataclass(frozen=True)
class CompareResult:
    """Ranked rows and the assumptions behind them."""

    request: CompareRequest
    model: str
    precision: str
    pue: float
    grid_g_co2_per_kwh: float
    rows: tuple[CompareRow, ...]

    @property
    def output_tokens_total(self) -> float:
        """Output tokens generated over the horizon."""
        r = self.request
        return r.requests_per_s * 3600.0 * r.hours * r.output_tokens

    def assumptions(self) -> list[str]:
        """One line per assumption, printed with every format."""
        r = self.request
        ttft = "" if r.ttft_ms is None else f", TTFT ≤ {num(r.ttft_ms)} ms"
        return (
            [
                f"{self.model} ({self.precision}, {r.engine}) at {num(r.requests_per_s)} req/s, "
                f"{num(r.input_tokens)} input / {num(r.output_tokens)} output tokens, "
                f"ITL ≤ {num(r.itl_ms)} ms{ttft}",
                f"horizon {num(r.hours)} h; region {r.region} ({num(self.grid_g_co2_per_kwh)} "
                f"gCO2e/kWh); PUE {self.pue:g}; electricity {r.electricity_usd_per_kwh:g} $/kWh",
                "tok = output tokens; energy = GPU energy (facility energy = × PUE); "
                "$ = GPU rent + electricity",
                f"ranked by {r.by}; each row is the best fleet of that GPU type alone, at least "
                "one replica (min_replicas 1)"
                + (
                    ": with no load, the standing cost of one idle replica kept ready (`plan` "
                    "of a 0 req/s entry deploys none unless its min_replicas says so)"
                    if r.requests_per_s == 0
                    else ""
                ),
            ]
            + ([f"[…]: {UNIT_NOTE}"] if r.deployment != "aggregated" else [])
            + (
                [f"{r.model} resolved to {self.model} (quantised checkpoint or alias)"]
                if r.model != self.model
                else []
            )
        )

    def to_json_dict(self) -> dict[str, Any]:
        """Request, assumptions and ranked rows (stable keys)."""
        r = self.request
        return {
            "request": _without_default(asdict(r), r),
            "model": self.model,
            "precision": self.precision,
            "pue": self.pue,
            "grid_g_co2_per_kwh": self.grid_g_co2_per_kwh,
            "output_tokens_total": self.output_tokens_total,
            "assumptions": self.assumptions(),
            "rows": [_without_default(asdict(row), r) for row in self.rows],
        }


def _without_default(values: dict[str, Any], request: CompareRequest) -> dict[str, Any]:
    """*values* without the deployment keys when the request is aggregated (today's output)."""
    if request.deployment == "aggregated":
        values.pop("deployment_kind", None)
        if "requests_per_s" in values:
            values.pop("deployment", None)
    return values


def compare_csv_columns(result: CompareResult) -> tuple[str, ...]:
    """Columns of ``compare --format csv``: the row fields (``deployment_kind`` only for
    ``--deployment`` other than aggregated)."""
    if result.request.deployment == "aggregated":
        return tuple(c for c in COMPARE_CSV_COLUMNS if c != "deployment_kind")
    return COMPARE_CSV_COLUMNS


def _precision(request: CompareRequest, catalog: Catalog, model_id: str) -> str:
    if request.precision is not None:
        return request.precision
    from predictors.catalog import quantised

    return quantised.checkpoint_precision(catalog, model_id)


def compare_scenario_dict(
    request: CompareRequest, model_id: str, gpus: dict[str, float | None], precision: str
) -> dict[str, Any]:
    """The one-model scenario mapping (``gpus``: id -> $/GPU-hour, None = catalog price)."""
    sla: dict[str, Any] = {"itl_ms": request.itl_ms}
    if request.ttft_ms is not None:
        sla["ttft_ms"] = request.ttft_ms
    return {
        "name": f"compare {model_id}",
        "horizon_hours": request.hours,
        "region": request.region,
        "electricity_usd_per_kwh": request.electricity_usd_per_kwh,
        "objective": {"minimize": request.by},
        "engine": request.engine,
        "precision": precision,
        "gpus": {
            g: ({} if price is None else {"usd_per_hour": price}) for g, price in gpus.items()
        },
        "models": [
            {
                "name": "compare",
                "model": model_id,
                "load": {
                    "requests_per_s": request.requests_per_s,
                    "input_tokens": request.input_tokens,
                    "output_tokens": request.output_tokens,
                },
                "sla": sla,
                "min_replicas": 1,
            }
        ],
    } | ({} if request.deployment == "aggregated" else {"deployment": request.deployment})


def _gpu_prices(request: CompareRequest, catalog: Catalog) -> dict[str, float | None]:
    """GPU id -> None (the price a plan gives it: the catalog's rental price, else TCO from its
    list price) or 0.0 (no price at all: planned by energy only)."""
    if request.gpus is None:
        ids = [
            str(g)
            for g in catalog.gpus["id"].to_list()
            if catalog.gpu(g).get("usd_per_hour") is not None
        ]
    else:
        try:
            ids = list(dict.fromkeys(catalog.resolve_gpu(g) for g in request.gpus))
        except UnknownIdError as exc:
            raise WattgpuError(f"--gpus: {exc}") from None
    return {g: (None if _price_note(catalog, g) != NO_PRICE else 0.0) for g in ids}


#: The note of a GPU type with neither a rental nor a list price.
NO_PRICE = "no price"


def _price_note(catalog: Catalog, gpu: str) -> str | None:
    """None for a catalog rental price; what the cost rests on otherwise."""
    row = catalog.gpu(gpu)
    if row.get("usd_per_hour") is not None:
        return None
    if row.get("list_price_usd") is not None:
        return f"no rental $/hour for {gpu}: costed on TCO from its catalog list price, as in plan"
    return NO_PRICE


def compare(request: CompareRequest, predictor: Predictor | None = None) -> CompareResult:
    """Plan the request on every GPU type separately and rank the fleets."""
    from planner.analysis.compare_errors import as_option_error
    from planner.analysis.compare_rows import (
        MIXED,
        plan_row,
        rank_key,
        row_groups,
        too_many_replicas,
        unfit_row,
        why_not,
    )
    from planner.build import planning_inputs
    from planner.scenario.load import scenario_from_dict
    from planner.solve.optimize import solve
    from predictors.api import Predictor
    from predictors.catalog import quantised
    from predictors.core.vocab import DISAGG_ENGINES

    if request.deployment != "aggregated" and request.engine not in DISAGG_ENGINES:
        raise WattgpuError(
            f"--deployment {request.deployment}: engine {request.engine} serves no disaggregated "
            f"prefill/decode ({', '.join(DISAGG_ENGINES)} do) — pass --engine one of them, or "
            "--deployment aggregated"
        )
    predictor = predictor or Predictor.load()
    catalog = predictor.catalog
    try:
        checkpoint = quantised.resolve_checkpoint(catalog, request.model)  # FP8/AWQ/… -> base
    except WattgpuError as exc:
        raise WattgpuError(f"--model: {exc}") from None
    model_id = checkpoint.model_id
    try:
        region = catalog.resolve_region(request.region)
    except WattgpuError as exc:
        raise WattgpuError(f"--region: {exc}") from None
    request = CompareRequest(**{**asdict(request), "region": region})
    prices = _gpu_prices(request, catalog)
    precision = (
        checkpoint.precision
        if request.precision is None and checkpoint.precision is not None
        else _precision(request, catalog, model_id)
    )
    data = compare_scenario_dict(request, model_id, prices, precision)
    given = request.precision is not None  # else the checkpoint's: no option to blame
    try:  # the scenario is built from the options: its errors name them
        scenario = scenario_from_dict(data, "wattgpu compare", catalog)
        # each row's fleet size is checked on its own candidates below
        inputs: PlanningInputs = planning_inputs(scenario, predictor, check_size=False)
    except WattgpuError as exc:
        raise as_option_error(exc, precision_given=given) from None
    tokens = request.requests_per_s * 3600.0 * request.hours * request.output_tokens
    demand = inputs.models[0]
    rows = []
    groups = row_groups(request.deployment, inputs.candidates, list(prices))
    for (kind, gpu), cands in groups.items():
        types = gpu.split(" → ")
        note = next((n for n in (_price_note(catalog, g) for g in types) if n), None)
        priced = note != NO_PRICE
        if kind == "disaggregated" and not any(c.pools for c in cands):
            wrong = [  # the engines it suggests: those of disaggregated units
                disaggregated_reason(line, request.engine, catalog.gpu(g)).replace(
                    "engine: ", "--engine: ", 1
                )
                for g in types
                for line in engine_support.accelerator_problems(request.engine, catalog.gpu(g))
            ]
            why = (
                wrong[0]
                if wrong
                else why_not(demand, cands, precision_given=given)
                if cands and not any(c.feasible for c in cands)
                else "no worker layout of it holds the model and meets the SLA "
                "(--deployment aggregated shows why for its replicas)"
            )
            rows.append(unfit_row(gpu, f"no prefill/decode unit on {gpu}: {why}", priced, kind))
            continue
        too_many = too_many_replicas(demand, cands)
        if too_many is not None:
            rows.append(unfit_row(gpu, too_many, priced, kind))
            continue
        plan = solve(inputs.with_candidates(cands), baselines=False)
        if kind == MIXED and len({bool(a.candidate.pools) for a in plan.allocations}) < 2:
            continue  # its best fleet is one kind: that kind's row already shows it
        rows.append(plan_row(gpu, priced, note, plan, cands, tokens, kind, precision_given=given))
    rows.sort(key=rank_key(request.by))
    return CompareResult(
        request, model_id, precision, inputs.pue, inputs.grid_g_co2_per_kwh, tuple(rows)
    )


def no_fit_message(result: CompareResult) -> str:
    """The error when no row fits: memory when that is every row's reason, else the SLA."""
    r = result.request
    if result.rows and all("does not fit in memory" in row.reason for row in result.rows):
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
    if result.rows and all(f"{r.engine} does not run on" in row.reason for row in result.rows):
        return (
            f"engine {r.engine} runs on none of the GPU types listed (each row says why) — pass "
            "another --engine, or allow GPU types it runs on"
        )
    unfit = {
        "memory": lambda reason: "does not fit in memory" in reason,
        "engine": lambda reason: f"{r.engine} does not run on" in reason,
        "precision": lambda reason: (
            f"{result.precision} needs an " in reason and " or newer; " in reason
        ),
    }
    why = {k for row in result.rows for k, hit in unfit.items() if hit(row.reason)}
    if result.rows and all(any(hit(row.reason) for hit in unfit.values()) for row in result.rows):
        # no row misses the SLA: relaxing it cannot help (fuzz round 28: fp4 on Volta)
        return (
            f"no GPU type listed can serve {result.model} at {result.precision} with "
            f"{r.engine} ({', '.join(sorted(why))}: each row says why) — allow other GPU types, "
            "or pass another --precision or --engine"
        )
    ttft = "" if r.ttft_ms is None else f" and TTFT ≤ {r.ttft_ms:g} ms"
    return (
        f"no GPU type meets ITL ≤ {r.itl_ms:g} ms{ttft} for {result.model} (each row says "
        "why) — relax the SLA or allow more GPU types"
    )


#: Columns of ``compare --format csv`` (the row fields).
COMPARE_CSV_COLUMNS: tuple[str, ...] = tuple(CompareRow.__dataclass_fields__)
