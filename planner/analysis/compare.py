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

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from planner.analysis.compare_rows import CompareRow, UnfitKind
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
    unfit_kinds: dict[tuple[str, str], UnfitKind] = field(
        default_factory=dict, repr=False, compare=False
    )
    """Why each row with no fleet has none, by (``deployment_kind``, ``gpu``): internal, in no
    output (the rows' JSON and CSV are :class:`CompareRow`'s fields alone); the closing error
    (:func:`planner.analysis.compare_view.no_fit_message`) is worded from it."""

    def unfit_kind(self, row: CompareRow) -> UnfitKind:
        """Why *row* has no fleet (``other`` for a row this result did not build)."""
        return self.unfit_kinds.get((row.deployment_kind, row.gpu), "other")

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
        named: dict[str, str] = {}  # id -> the name it was given first
        for name in request.gpus:
            try:
                gpu = catalog.resolve_gpu(name)
            except UnknownIdError as exc:
                raise WattgpuError(f"--gpus: {exc}") from None
            first = named.get(gpu)
            if first is not None:  # as a scenario's gpus refuses an alias beside its id
                same = (
                    "is listed twice"
                    if name == first
                    else f"names the same GPU as {first}"
                    + ("" if gpu in (name, first) else f" ({gpu})")
                )
                raise WattgpuError(f"--gpus: {name} {same} — list it once")
            named[gpu] = name
        ids = list(named)
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


def _region(request: CompareRequest, catalog: Catalog) -> str:
    """The catalog id of ``--region``; an unknown one is refused as a scenario's ``region`` is
    (:func:`planner.scenario.names.canonicalize`: the same did-you-mean of region names), with
    the fix ``compare`` can take (it has no ``grid_g_co2_per_kwh``)."""
    from planner.scenario.names import canonicalize

    resolved, problems = canonicalize({"region": request.region}, catalog)
    if problems:
        unknown = problems[0][1].rpartition(" — ")[0]  # the scenario's fix names its fields
        raise WattgpuError(f"--region: {unknown} — {REGION_FIX}")
    return str(resolved["region"])


#: The fix of an unknown ``--region``.
REGION_FIX = "use a region `wattgpu catalog regions` lists (catalogs/grid_carbon.csv)"


def compare(request: CompareRequest, predictor: Predictor | None = None) -> CompareResult:
    """Plan the request on every GPU type separately and rank the fleets."""
    from planner.analysis.compare_errors import SOURCE, as_option_error
    from planner.build import planning_inputs
    from planner.scenario.load import scenario_from_dict
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
    request = CompareRequest(**{**asdict(request), "region": _region(request, catalog)})
    prices = _gpu_prices(request, catalog)
    precision = (
        checkpoint.precision
        if request.precision is None and checkpoint.precision is not None
        else _precision(request, catalog, model_id)
    )
    data = compare_scenario_dict(request, model_id, prices, precision)
    given = request.precision is not None  # else the checkpoint's: no option to blame
    try:  # the scenario is built from the options: its errors name them
        scenario = scenario_from_dict(data, SOURCE, catalog)
        # each row's fleet size is checked on its own candidates below
        inputs: PlanningInputs = planning_inputs(scenario, predictor, check_size=False)
    except WattgpuError as exc:
        raise as_option_error(exc, precision_given=given) from None
    rows, kinds = _rows(request, inputs, catalog, prices, precision, given=given)
    return CompareResult(
        request, model_id, precision, inputs.pue, inputs.grid_g_co2_per_kwh, rows, kinds
    )


def _rows(
    request: CompareRequest,
    inputs: PlanningInputs,
    catalog: Catalog,
    prices: dict[str, float | None],
    precision: str,
    *,
    given: bool,
) -> tuple[tuple[CompareRow, ...], dict[tuple[str, str], UnfitKind]]:
    """The ranked rows, and why each row without a fleet has none (by its kind and GPU)."""
    from planner.analysis.compare_rows import (
        MIXED,
        plan_row,
        rank_key,
        row_groups,
        too_many_replicas,
        unfit_kind,
        unfit_row,
        why_not,
    )
    from planner.solve.optimize import solve

    tokens = request.requests_per_s * 3600.0 * request.hours * request.output_tokens
    demand = inputs.models[0]
    rows = []
    kinds: dict[tuple[str, str], UnfitKind] = {}
    groups = row_groups(request.deployment, inputs.candidates, list(prices))
    for (kind, gpu), cands in groups.items():
        types = gpu.split(" → ")
        note = next((n for n in (_price_note(catalog, g) for g in types) if n), None)
        priced = note != NO_PRICE
        blocked = not any(c.feasible for c in cands)
        why_kind = unfit_kind(cands, request.engine, precision, [catalog.gpu(g) for g in types])
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
                if cands and blocked
                else "no worker layout of it holds the model and meets the SLA "
                "(--deployment aggregated shows why for its replicas)"
            )
            kinds[(kind, gpu)] = why_kind if wrong or (cands and blocked) else "sla"
            rows.append(unfit_row(gpu, f"no prefill/decode unit on {gpu}: {why}", priced, kind))
            continue
        too_many = too_many_replicas(demand, cands)
        if too_many is not None:
            kinds[(kind, gpu)] = "replicas"
            rows.append(unfit_row(gpu, too_many, priced, kind))
            continue
        plan = solve(inputs.with_candidates(cands), baselines=False)
        if kind == MIXED and len({bool(a.candidate.pools) for a in plan.allocations}) < 2:
            continue  # its best fleet is one kind: that kind's row already shows it
        row = plan_row(gpu, priced, note, plan, cands, tokens, kind, precision_given=given)
        if not row.fits:  # no feasible candidate (why_not), or the solver's own reason
            kinds[(kind, gpu)] = why_kind if blocked else "other"
        rows.append(row)
    rows.sort(key=rank_key(request.by))
    return tuple(rows), kinds


#: Columns of ``compare --format csv`` (the row fields).
COMPARE_CSV_COLUMNS: tuple[str, ...] = tuple(CompareRow.__dataclass_fields__)
