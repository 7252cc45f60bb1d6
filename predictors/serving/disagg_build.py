"""Disaggregated units (rows of a DataFrame) -> :class:`predictors.serving.disagg.DisaggTable`.

Input columns of a unit (one row each; :data:`UNIT_COLUMNS`): ``model, engine, precision,
input_tokens, output_tokens`` and, per side ``s`` in ``prefill`` / ``decode``: ``s_gpu`` (catalog
id or alias), ``s_gpu_count`` (GPUs per worker = TP × PP × DP), ``s_workers`` and the optional
layout ``s_tp, s_pp, s_dp, s_ep`` (empty: the engines' usual layout, as in the batch contract;
``s_tp``, when given, must equal ``s_gpu_count / (s_pp · s_dp)``).

Each side is validated like a batch-predict row (names, engine, precision, ranges, the layout
rules of :mod:`predictors.catalog.validity`, memory at one sequence); a unit's refusal is one
line per problem, prefixed with the side (``prefill_gpu_count: ...``), in ``DisaggTable.error``,
never an exception (a missing column is a caller error: ``ValueError``).

From the predictors and the physics, per side: the prefill occupancy ``s`` = the prompt's
compute ``c_p`` of :func:`predictors.serving.grid.row_physics`, the lone-prompt TTFT ``T_1`` =
the predictors' TTFT on a prefill worker at ``batch_size`` 1, the busy prefill power = the
power curve of the prefill worker at a batch of ``I`` tokens (a forward pass over the prompt's
tokens), the decode
worker's aggregated serving curves with the prefill chunks removed
(:func:`predictors.serving.disagg.decode_curves`).
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import polars as pl

from predictors import physics
from predictors.api import Predictor
from predictors.catalog.validity import tp_domain_gpus
from predictors.features import DECODE_WORKERS_COLUMN, join_specs
from predictors.serving.curves import FloatArray, interp_rows
from predictors.serving.disagg import (
    DEFAULT_SETTINGS,
    DisaggSettings,
    DisaggTable,
    KvTransfer,
    PrefillPool,
    decode_curves,
    refused_table,
)
from predictors.serving.disagg_table import PowerBands
from predictors.serving.grid import (
    ALLREDUCE_LATENCY_S,
    DEFAULT_INTERCONNECT_GB_S,
    ServingTable,
    serving_table,
)

SIDES: tuple[str, str] = ("prefill", "decode")
SHARED_COLUMNS: tuple[str, ...] = (
    "model",
    "engine",
    "precision",
    "input_tokens",
    "output_tokens",
)
#: Required per side (``{side}_{name}``).
SIDE_COLUMNS: tuple[str, ...] = ("gpu", "gpu_count", "workers")
#: Optional per side (empty or absent: the engines' usual layout).
SIDE_LAYOUT: tuple[str, ...] = ("tp", "pp", "dp", "ep")
UNIT_COLUMNS: tuple[str, ...] = (
    *SHARED_COLUMNS,
    *(f"{s}_{c}" for s in SIDES for c in (*SIDE_COLUMNS, *SIDE_LAYOUT)),
)
#: Scale-out network where the catalog has none (as the layout physics assume).
DEFAULT_SCALE_OUT_GBIT_S = 100.0
DEFAULT_SCALE_OUT_LATENCY_US = 5.0
_LAYOUT_INPUT = {"pp": "pipeline_parallel", "dp": "data_parallel", "ep": "expert_parallel"}


def _side_rows(units: pl.DataFrame, side: str) -> pl.DataFrame:
    """The batch-predict rows (batch 1) of one worker of *side* of every unit."""
    opt = {
        c: (
            units[f"{side}_{c}"].cast(pl.Float64, strict=False)
            if f"{side}_{c}" in units.columns
            else pl.Series(f"{side}_{c}", [None] * units.height, dtype=pl.Float64)
        )
        for c in SIDE_LAYOUT
    }
    return pl.DataFrame(
        {
            "model": units["model"].cast(pl.String),
            "gpu": units[f"{side}_gpu"].cast(pl.String),
            "gpu_count": units[f"{side}_gpu_count"].cast(pl.Float64, strict=False),
            "engine": units["engine"].cast(pl.String),
            "precision": units["precision"].cast(pl.String),
            "batch_size": np.ones(units.height),
            "input_tokens": units["input_tokens"].cast(pl.Float64, strict=False),
            "output_tokens": units["output_tokens"].cast(pl.Float64, strict=False),
            **{_LAYOUT_INPUT[c]: opt[c] for c in ("pp", "dp", "ep")},
            "_tp": opt["tp"],
        }
    )


#: Batch-contract fields -> the unit's column of a side.
_FIELD = {
    "gpu": "gpu",
    "gpu_count": "gpu_count",
    "pipeline_parallel": "pp",
    "data_parallel": "dp",
    "expert_parallel": "ep",
}


_FIELD_PREFIX = re.compile(r"^([a-z_]+: |does not fit: )")


def _problems(error: str) -> list[str]:
    """The problems of a batch-predict error text ('; '-joined; a problem's own '; ' kept: a
    piece that does not start with ``field: `` continues the one before)."""
    out: list[str] = []
    for piece in error.split("; ") if error else []:
        if out and not _FIELD_PREFIX.match(piece):
            out[-1] += "; " + piece
        else:
            out.append(piece)
    return out


def _side_problem(side: str, problem: str) -> str:
    """A batch-predict problem of a side's worker row, named by the unit's column."""
    field, sep, rest = problem.strip().partition(": ")
    if sep and field in _FIELD:
        return f"{side}_{_FIELD[field]}: {rest}"
    return f"{side} worker: {problem.strip()}"


def _side_errors(
    side: str, rows: pl.DataFrame, pred: pl.DataFrame, workers: pl.Series
) -> list[str]:
    """The side's problems of every unit, each prefixed ``{side}_``, '; '-joined."""
    out = []
    for err, tp_given, tp, w in zip(
        pred["error"].to_list(),
        rows["_tp"].to_list(),
        pred["tensor_parallel"].to_list(),
        workers.cast(pl.Float64, strict=False).to_list(),
        strict=True,
    ):
        problems = [_side_problem(side, p) for p in _problems(err)]
        if w is None or not np.isfinite(w) or w < 1 or w != int(w):
            problems.append(
                f"{side}_workers: {'empty' if w is None else format(w, 'g')} is not a whole "
                "number of workers; give 1 or more"
            )
        if not err and tp_given is not None and tp is not None and tp_given != tp:
            problems.append(
                f"{side}_tp: {tp_given:g} does not match {side}_gpu_count / ({side}_pp × "
                f"{side}_dp) = {tp:g}; give {tp:g} or leave it empty"
            )
        out.append("; ".join(problems))
    return out


def _resolved(predictor: Predictor, rows: pl.DataFrame) -> pl.DataFrame:
    cat = predictor.catalog
    models = {m: cat.try_resolve_llm(m) for m in rows["model"].drop_nulls().unique().to_list()}
    gpus = {g: cat.try_resolve_gpu(g) for g in rows["gpu"].drop_nulls().unique().to_list()}
    return rows.with_columns(
        pl.col("model").replace_strict(models, default=None, return_dtype=pl.String),
        pl.col("gpu").replace_strict(gpus, default=None, return_dtype=pl.String),
    )


def _fabric(predictor: Predictor, gpus: list[str]) -> dict[str, dict[str, float]]:
    out = {}
    for g in set(gpus):
        spec = predictor.catalog.gpu(g)
        out[g] = {
            "domain": float(tp_domain_gpus(spec)),
            "nvlink_b_s": float(spec.get("interconnect_gb_s") or DEFAULT_INTERCONNECT_GB_S)
            / 2.0
            * 1e9,
            "net_b_s": float(spec.get("scale_out_gbit_s") or DEFAULT_SCALE_OUT_GBIT_S) / 8.0 * 1e9,
            "net_latency_s": float(spec.get("scale_out_latency_us") or DEFAULT_SCALE_OUT_LATENCY_US)
            * 1e-6,
        }
    return out


def kv_transfer(
    predictor: Predictor,
    pre: pl.DataFrame,
    dec: pl.DataFrame,
    pair_gpus: FloatArray,
    links: FloatArray,
) -> KvTransfer:
    """The KV transfer of every unit (*pre*/*dec*: resolved side rows of valid units;
    *pair_gpus*: the GPUs of one prefill and one decode worker). It stays inside an NVLink
    domain when both sides are one GPU type and a prefill worker fits one domain beside a
    decode worker (the deployment places each prefill worker it can beside a decode worker
    and routes its prompts' KV there), whatever the number of workers, so adding a worker never
    moves the transfers to the network; inside a domain it takes the faster of NVLink and the
    network (a GPU reaches its domain's peers through either)."""
    prompt = pre.select("model", "gpu", "precision", pl.col("input_tokens").cast(pl.Float64))
    kv = join_specs(prompt, predictor.catalog).select(
        physics.kv_bytes_per_sequence(pl.col("input_tokens")).cast(pl.Float64)
    )
    bytes_ = kv.to_series().fill_null(0.0).to_numpy()
    fab = _fabric(predictor, pre["gpu"].to_list() + dec["gpu"].to_list())
    pg, dg = pre["gpu"].to_list(), dec["gpu"].to_list()
    same = np.asarray(
        [p == d and t <= fab[p]["domain"] for p, d, t in zip(pg, dg, pair_gpus, strict=True)]
    )
    nv_bw = np.asarray([fab[p]["nvlink_b_s"] for p in pg])
    net_bw = np.asarray(
        [min(fab[p]["net_b_s"], fab[d]["net_b_s"]) for p, d in zip(pg, dg, strict=True)]
    )
    net_lat = np.asarray(
        [max(fab[p]["net_latency_s"], fab[d]["net_latency_s"]) for p, d in zip(pg, dg, strict=True)]
    )
    links = np.maximum(links, 1.0)
    # inside a domain: the faster path of the two for this transfer's bytes
    over_nv = ALLREDUCE_LATENCY_S + bytes_ / (links * nv_bw)
    over_net = net_lat + bytes_ / (links * net_bw)
    nv_path = same & (over_nv <= over_net)
    return KvTransfer(
        bytes_per_request=bytes_,
        links=links,
        link_bytes_per_s=np.where(nv_path, nv_bw, net_bw),
        latency_s=np.where(nv_path, ALLREDUCE_LATENCY_S, net_lat),
        nvlink=same,
    )


def _check_columns(units: pl.DataFrame) -> None:
    need = [*SHARED_COLUMNS, *(f"{s}_{c}" for s in SIDES for c in SIDE_COLUMNS)]
    missing = [c for c in need if c not in units.columns]
    if missing:
        raise ValueError(f"disaggregated units lack the column(s) {', '.join(missing)}")


def on_decode_workers(predictor: Predictor) -> Predictor:
    """*predictor* predicting the decode step of a disaggregated decode worker, which runs no
    prefill: the ITL trees' ``decode_workers_only`` flag set, as training reads the measured
    disaggregated runs (:mod:`predictors.training.decode_rows`)."""
    card = {**predictor.models.card, DECODE_WORKERS_COLUMN: True}
    return Predictor(replace(predictor.models, card=card), predictor.catalog)


def disagg_curves(
    predictor: Predictor,
    units: pl.DataFrame,
    *,
    robust: bool = False,
    settings: DisaggSettings = DEFAULT_SETTINGS,
) -> DisaggTable:
    """The :class:`DisaggTable` of every unit (module docstring); *robust*: the decode side on
    the ITL upper-bound curves, as :func:`predictors.serving.grid.serving_table`; *settings*:
    the prefill queue's choices (:class:`predictors.serving.disagg.DisaggSettings`)."""
    _check_columns(units)
    n = units.height
    rows = {s: _side_rows(units, s) for s in SIDES}
    side_predictor = {"prefill": predictor, "decode": on_decode_workers(predictor)}
    preds = {
        s: side_predictor[s].predict(r.drop("_tp"), with_ttft=True, with_fit=True)
        for s, r in rows.items()
    }
    errs = {s: _side_errors(s, rows[s], preds[s], units[f"{s}_workers"]) for s in SIDES}
    error = ["; ".join(e for e in pair if e) for pair in zip(*errs.values(), strict=True)]
    ok = np.asarray([e == "" for e in error])
    if predictor.models.targets.get("ttft") is None:
        error = [e or "the predictors have no TTFT model: cannot time the prefill" for e in error]
        ok[:] = False
    # placeholders for refused units: a valid unit's own values are never mixed in
    ok_idx = np.flatnonzero(ok)
    safe = ok_idx[0] if ok_idx.size else None
    pick = np.where(ok, np.arange(n), safe if safe is not None else 0)
    if safe is None:
        return refused_table(error)
    side = {}
    for s in SIDES:
        r = _resolved(predictor, rows[s].drop("_tp"))[pick]
        lay = preds[s][pick].select(
            "tensor_parallel", "pipeline_parallel", "data_parallel", "expert_parallel"
        )
        # the engine and precision as the predictors read them (aliases and case mapped, an
        # empty cell filled: the engine's default, the checkpoint's precision), so the batch
        # limit and KV budget below follow the same engine and bytes as the validation above
        r = r.with_columns(
            *(preds[s][pick][c] for c in ("engine", "precision")),
            *(
                lay[c].cast(pl.Float64).alias(c)
                for c in ("pipeline_parallel", "data_parallel", "expert_parallel")
            ),
        )
        side[s] = (r, lay)
    tables = {
        s: serving_table(side[s][0].drop("batch_size"), side_predictor[s], robust=robust)
        for s in SIDES
    }
    pre_i, dec_i = np.arange(n), np.arange(n, 2 * n)
    pre_c, dec_c = tables["prefill"].curves, tables["decode"].curves
    tdp = np.concatenate([np.asarray(tables[s].tdp_w, dtype=np.float64) for s in SIDES])
    inp = side["prefill"][0]["input_tokens"].to_numpy().astype(np.float64)
    at_prompt = np.minimum(inp, pre_c.batch[-1])[:, None]
    top = np.maximum(tdp[pre_i], pre_c.idle_w)
    busy, busy_lo, busy_hi = (
        np.clip(interp_rows(pre_c.batch, c.power_w, at_prompt)[:, 0], pre_c.idle_w, top)
        for c in (pre_c, tables["prefill"].curves_lo, tables["prefill"].curves_hi)
    )
    lone = preds["prefill"][pick]["ttft_s"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    service = np.maximum(tables["prefill"].pool_prefill_s, 1e-9)
    dec_curves = decode_curves(dec_c)
    gcount = {s: side[s][0]["gpu_count"].to_numpy().astype(np.float64) for s in SIDES}
    for j in range(n):
        if ok[j] and not np.isfinite(lone[j]):
            error[j] = "prefill: the predictors give no prefill time for this configuration"
        elif ok[j] and dec_curves.max_batch[j] < 1:
            error[j] = (
                "decode_gpu_count: the weights leave no room for one sequence's KV cache on a "
                f"{gcount['decode'][j]:g}-GPU decode worker; use more GPUs per decode worker "
                "or a lower precision"
            )
    workers = {
        s: units[f"{s}_workers"].cast(pl.Float64, strict=False).fill_null(1.0).to_numpy()[pick]
        for s in SIDES
    }
    pair_gpus = gcount["prefill"] + gcount["decode"]
    links = np.minimum(
        *(
            side[s][1]["tensor_parallel"].cast(pl.Float64).to_numpy()
            * side[s][1]["pipeline_parallel"].cast(pl.Float64).to_numpy()
            for s in SIDES
        )
    )
    kv = kv_transfer(predictor, side["prefill"][0], side["decode"][0], pair_gpus, links)
    latency = np.where(np.isfinite(lone), np.maximum(lone, service), 1.0)
    ranks = side["prefill"][1]["data_parallel"].cast(pl.Float64).fill_null(1.0).to_numpy()
    peak = (
        join_specs(side["prefill"][0], predictor.catalog)
        .select(physics.prefill_peak_s().cast(pl.Float64).fill_null(0.0))
        .to_series()
        .to_numpy()
    )
    prefill = PrefillPool(
        workers=workers["prefill"],
        gpus_per_worker=gcount["prefill"],
        service_s=settings.service_s(service, latency, ranks, peak),
        latency_s=latency,
        servers=settings.servers(workers["prefill"], ranks),
        compute_s=service,
        ranks=ranks,
        peak_s=peak,
        busy_power_w=busy,
        idle_w=pre_c.idle_w,
        tdp_w=tdp[pre_i],
    )
    dom = [
        bool(a and b)
        for a, b in zip(preds["prefill"]["in_domain"], preds["decode"]["in_domain"], strict=True)
    ]
    return DisaggTable(
        prefill=prefill,
        decode=dec_curves,
        decode_workers=workers["decode"],
        decode_gpus_per_worker=gcount["decode"],
        decode_tdp_w=tdp[dec_i],
        kv=kv,
        output_tokens=side["decode"][0]["output_tokens"].to_numpy().astype(np.float64),
        error=error,
        in_domain=dom,
        power_bands=_power_bands(busy, busy_lo, busy_hi, tables["decode"]),
    )


def _power_bands(
    busy: FloatArray, busy_lo: FloatArray, busy_hi: FloatArray, decode: ServingTable
) -> PowerBands | None:
    """Both pools' power intervals around their points (None where the predictors give none:
    a bound that is not a number)."""
    d_lo, d_hi = decode.curves_lo.power_w, decode.curves_hi.power_w
    if not all(np.isfinite(a).all() for a in (busy_lo, busy_hi, d_lo, d_hi)):
        return None
    point = decode.curves.power_w
    return PowerBands(
        prefill_busy_lo_w=np.minimum(busy_lo, busy),
        prefill_busy_hi_w=np.maximum(busy_hi, busy),
        decode_lo_w=np.minimum(d_lo, point),
        decode_hi_w=np.maximum(d_hi, point),
    )
