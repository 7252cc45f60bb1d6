"""``wattgpu compare``: one model, one load, one SLA — the best fleet of each GPU type, ranked.

No scenario file: :func:`compare_scenario_dict` builds a one-model scenario (region, horizon,
electricity price and the objective stated in the output) and :func:`compare` plans it once per
GPU type with the same capacity model (:func:`planner.build.planning_inputs`, one predictor call
for all types) and the same solver (:func:`planner.solve.optimize.solve` on the candidates of that
type only). Each row is therefore "the best fleet of this GPU type": how many replicas of which
tensor-parallel degree, their ITL, power, energy per 1,000 output tokens and $ per million output
tokens. GPU types named with ``--gpus`` that have no catalog price are planned by energy with a
price of 0 and their cost columns read "no price".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from planner.inputs import UNIT_NOTE, pools_gpu_cell, pools_layout_cell
from planner.text import num
from predictors.core.errors import UnknownIdError, WattgpuError

if TYPE_CHECKING:
    from planner.inputs import Candidate, ModelDemand, PlanningInputs
    from planner.result import Plan
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
class CompareRow:
    """The best fleet of one GPU type (or why there is none)."""

    gpu: str
    fits: bool
    reason: str
    priced: bool
    deployment: str
    """e.g. ``2 × TP1``, ``1 × TP2 + 1 × TP1`` or ``1 × TP8×PP2 on 2 nodes``; empty when it
    does not fit."""
    tp: int | None
    replicas: int
    gpus: int
    itl_ms: float | None
    power_w_per_gpu: float | None
    wh_per_1k_output_tokens: float | None
    usd_per_million_output_tokens: float | None
    energy_kwh: float | None
    cost_usd: float | None
    in_domain: bool | None
    itl_ms_at_served_load: float | None = None
    """Mean ITL at the load each replica serves (``itl_ms`` is the ITL at capacity)."""
    layout: str = ""
    """The layout of the largest deployment's replica (``8`` for TP 8, ``8×PP2``; empty when it
    does not fit)."""
    nodes: int | None = None
    """Nodes one replica of that deployment spans (1 inside one node)."""
    deployment_kind: str = "aggregated"
    """``aggregated``, ``disaggregated`` (then ``gpu`` is the unit's GPU type, or its
    ``prefill → decode`` types) or, with ``--deployment both``, ``mixed`` (replicas and units on
    one GPU type, when the best fleet mixes them); only in the output of ``--deployment`` other
    than aggregated."""


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
                f"ranked by {r.by}; each row is the best fleet of that GPU type alone",
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
    """GPU id -> None (catalog price) or 0.0 (no price: planned by energy only)."""
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
    return {g: (None if catalog.gpu(g).get("usd_per_hour") is not None else 0.0) for g in ids}


def _why_not(demand: ModelDemand, cands: list[Candidate]) -> str:
    """Why no TP degree of this GPU type serves the model: memory and SLA as separate reasons
    (:func:`planner.solve.explain.unserved_reasons`)."""
    from planner.solve.explain import unserved_reasons

    if not cands:
        return "no candidate (check --gpus)"
    return "; ".join(unserved_reasons(demand, cands))


def _row(
    gpu: str, priced: bool, plan: Plan, cands: list[Candidate], tokens: float, kind: str
) -> CompareRow:
    t = plan.totals
    if not plan.has_solution or t is None:
        reason = (
            _why_not(plan.inputs.models[0], cands)
            if not any(c.feasible for c in cands)
            else "; ".join(plan.solve.messages) or plan.status.value
        )
        return CompareRow(
            gpu, False, reason, priced, "", None, 0, 0, None, None, None, None, None, None, None,
            deployment_kind=kind,
        )  # fmt: skip
    allocs = sorted(plan.allocations, key=lambda a: (-a.replicas, a.candidate.tp))
    gpus = sum(a.gpus for a in allocs)
    cost = t.cost_usd if priced else None
    return CompareRow(
        gpu=gpu,
        fits=True,
        reason="" if priced else f"no $/hour for {gpu} in the catalog: cost not ranked",
        priced=priced,
        deployment=" + ".join(f"{a.replicas} × {_layout(a.candidate)}" for a in allocs),
        tp=allocs[0].candidate.tp,
        replicas=sum(a.replicas for a in allocs),
        gpus=gpus,
        itl_ms=1000.0 * max(a.candidate.itl_s_at_capacity for a in allocs),
        power_w_per_gpu=t.mean_power_w / gpus if gpus else None,
        wh_per_1k_output_tokens=t.energy_kwh * 1000.0 / (tokens / 1000.0) if tokens else None,
        usd_per_million_output_tokens=cost / tokens * 1e6 if cost is not None and tokens else None,
        energy_kwh=t.energy_kwh,
        cost_usd=cost,
        in_domain=all(a.candidate.in_domain for a in allocs),
        itl_ms_at_served_load=1000.0 * max(a.itl_s_at_served_load for a in allocs),
        layout=allocs[0].candidate.layout,
        nodes=allocs[0].candidate.nodes,
        deployment_kind=kind,
    )


def _layout(c: Candidate) -> str:
    """A replica's layout with the nodes it spans when more than one: ``8×PP2 on 2 nodes``; a
    unit's pools (``[P 3×2 → D 2×8]``)."""
    if c.pools:
        return f"[{pools_layout_cell(c.pools)}]"
    return "TP" + c.layout + (f" on {c.nodes} nodes" if c.nodes > 1 else "")


def _rank_key(by: RankBy) -> Any:
    def key(row: CompareRow) -> tuple[Any, ...]:
        if not row.fits:
            return (2, 0.0, 0.0, row.gpu, row.deployment_kind)
        if by == "cost":
            return (0 if row.priced else 1, row.cost_usd or 0.0, row.energy_kwh, row.gpu)
        cost = row.cost_usd if row.priced else float("inf")
        return (0, row.energy_kwh, cost, row.gpu, row.deployment_kind)

    return key


#: The row kind of a GPU type's best fleet mixing replicas and units (``--deployment both``).
MIXED = "mixed"


def _row_groups(
    request: CompareRequest, cands: tuple[Candidate, ...], prices: dict[str, float | None]
) -> dict[tuple[str, str], list[Candidate]]:
    """The candidates of every row: (deployment kind, GPU type or a unit's types) -> them."""
    out: dict[tuple[str, str], list[Candidate]] = {}
    if request.deployment != "disaggregated":
        for gpu in prices:
            out[("aggregated", gpu)] = [c for c in cands if not c.pools and c.gpu == gpu]
    for c in cands:
        if c.pools and request.deployment != "aggregated":
            out.setdefault(("disaggregated", pools_gpu_cell(c.pools)), []).append(c)
    if request.deployment == "both":  # the planner mixes the two kinds on one GPU type
        for gpu in prices:
            units = out.get(("disaggregated", gpu), [])
            if units and out.get(("aggregated", gpu)):
                out[(MIXED, gpu)] = [*out[("aggregated", gpu)], *units]
    return out


def compare(request: CompareRequest, predictor: Predictor | None = None) -> CompareResult:
    """Plan the request on every GPU type separately and rank the fleets."""
    from planner.build import planning_inputs
    from planner.scenario.load import scenario_from_dict
    from planner.solve.optimize import solve
    from predictors.api import Predictor
    from predictors.catalog import quantised

    predictor = predictor or Predictor.load()
    catalog = predictor.catalog
    checkpoint = quantised.resolve_checkpoint(catalog, request.model)  # FP8/AWQ/… -> base
    model_id = checkpoint.model_id
    region = catalog.resolve_region(request.region)
    request = CompareRequest(**{**asdict(request), "region": region})
    prices = _gpu_prices(request, catalog)
    precision = (
        checkpoint.precision
        if request.precision is None and checkpoint.precision is not None
        else _precision(request, catalog, model_id)
    )
    data = compare_scenario_dict(request, model_id, prices, precision)
    try:  # the scenario is built from the options: its errors name them
        scenario = scenario_from_dict(data, "wattgpu compare", catalog)
        inputs: PlanningInputs = planning_inputs(scenario, predictor)
    except WattgpuError as exc:
        from planner.analysis.compare_errors import as_option_error

        raise as_option_error(exc) from None
    tokens = request.requests_per_s * 3600.0 * request.hours * request.output_tokens
    rows = []
    for (kind, gpu), cands in _row_groups(request, inputs.candidates, prices).items():
        plan = solve(inputs.with_candidates(cands), baselines=False)
        if kind == MIXED and len({bool(a.candidate.pools) for a in plan.allocations}) < 2:
            continue  # its best fleet is one kind: that kind's row already shows it
        priced = all(prices.get(g) is None for g in gpu.split(" → "))
        rows.append(_row(gpu, priced, plan, cands, tokens, kind))
    rows.sort(key=_rank_key(request.by))
    return CompareResult(
        request, model_id, precision, inputs.pue, inputs.grid_g_co2_per_kwh, tuple(rows)
    )


#: Columns of ``compare --format csv`` (the row fields).
COMPARE_CSV_COLUMNS: tuple[str, ...] = tuple(CompareRow.__dataclass_fields__)
