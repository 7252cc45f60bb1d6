"""Why no candidate of a model entry is feasible, found without a solver: every reason that
applies (memory, ITL SLA, TTFT SLA, scenario rules, price, prediction errors), built from the
candidates' structured :class:`~planner.inputs.Exclusion` codes and numbers
(:mod:`planner.solve.explain` names the binding limit when each model has a candidate).
"""

from __future__ import annotations

import math

from planner.inputs import Candidate, Exclusion, ModelDemand, PlanningInputs, ms_over, ms_text
from planner.text import apart


def _gpu_list(cands: list[Candidate]) -> str:
    return ", ".join(dict.fromkeys(c.gpu for c in cands))


def _memory_message(cands: list[Candidate]) -> str | None:
    """GPU types on which no tried TP degree holds the weights (None when there are none)."""
    by_gpu: dict[str, list[Candidate]] = {}
    for c in cands:
        by_gpu.setdefault(c.gpu, []).append(c)
    full = [g for g, cs in by_gpu.items() if all(c.exclusion == Exclusion.MEMORY for c in cs)]
    if not full:
        return None
    tried = [c for c in cands if c.gpu in full]
    largest = max(tried, key=lambda c: (c.memory_usable_gb or 0.0, -c.tp, c.gpu))
    needed, usable = largest.memory_needed_gb, largest.memory_usable_gb
    gpus = largest.tp * largest.pipeline_parallel * largest.data_parallel
    where = f"{gpus}× {largest.gpu}" + ("" if gpus == largest.tp else f", TP {largest.layout}")
    if needed is None or usable is None:
        return f"does not fit in memory on {', '.join(full)} (largest TP option {where})"
    need, has = apart(needed, usable)  # 140.0 and 140.0 would say nothing
    return (
        f"does not fit in memory on {', '.join(full)}: needs {need} GB for the weights "
        f"(plus KV cache), has {has} GB usable on the largest TP option ({where})"
    )


#: Exclusions a candidate gets only once it meets the ITL SLA (the ITL is checked first: an
#: aggregated replica's limit, a unit's decode pool), with the limit each names.
AFTER_ITL: dict[Exclusion, str] = {
    Exclusion.TTFT_SLA: "the TTFT SLA",
    Exclusion.NO_PRICE: "a missing $/hour",
}


def _best_itl(m: ModelDemand, missed: list[Candidate], lead: str) -> str:
    """*lead* and the best ITL of the candidates *missed* (each misses the SLA) against it."""
    best = min(missed, key=lambda c: (c.itl_s_at_capacity, c.gpu, c.tp))
    if not math.isfinite(best.itl_s_at_capacity):
        return f"no ITL prediction to compare with the SLA {ms_text(m.itl_sla_s)} ms"
    achieved, limit = ms_over(best.itl_s_at_capacity, m.itl_sla_s)
    why = f"{lead} {achieved} ms ({best.option_text}) > SLA {limit} ms"
    return why + _unit_hint(m.itl_sla_s, "itl_ms") + _layouts_hint(best)


def _itl_messages(m: ModelDemand, cands: list[Candidate]) -> list[str]:
    """The ITL SLA's lines: the GPU types none of whose layouts meets it, with their best ITL;
    and, where layouts meet it but another limit excludes them (:data:`AFTER_ITL`), which
    limit, their best ITL and the best of the layouts that miss it: no "best ITL achievable"
    above the SLA when a layout achieves it."""
    itl = [c for c in cands if c.exclusion == Exclusion.ITL_SLA]
    if not itl:
        return []
    meets = [c for c in cands if c.exclusion in AFTER_ITL]
    meeting = {c.gpu for c in meets}
    missed = [c for c in itl if c.gpu not in meeting]
    out = []
    if missed:
        why = _best_itl(m, missed, "best ITL achievable")
        out.append(f"misses the ITL SLA on {_gpu_list(missed)}: {why}")
    if meets:
        limits = " or ".join(dict.fromkeys(AFTER_ITL[c.exclusion] for c in meets))
        timed = [c for c in meets if math.isfinite(c.itl_s_at_capacity)]
        line = f"meets the ITL SLA only on layouts {limits} excludes"
        if timed:
            best = min(timed, key=lambda c: (c.itl_s_at_capacity, c.gpu, c.tp))
            line += f": best ITL {ms_text(best.itl_s_at_capacity)} ms ({best.option_text})"
        others = [c for c in itl if c.gpu in meeting]
        if others:
            why = _best_itl(m, others, "best")
            line += f"; the other layouts of {_gpu_list(others)} miss it: {why}"
        out.append(line)
    return out


def _sla_messages(m: ModelDemand, cands: list[Candidate]) -> list[str]:
    out = _itl_messages(m, cands)
    ttft = [c for c in cands if c.exclusion == Exclusion.TTFT_SLA and c.ttft_s is not None]
    if ttft and m.ttft_sla_s is not None:
        best = min(ttft, key=lambda c: (c.ttft_s or 0.0, c.gpu, c.tp))
        shown, limit = ms_over(best.ttft_s or 0.0, m.ttft_sla_s)
        out.append(
            f"misses the TTFT SLA on {_gpu_list(ttft)}: best TTFT (lightest load) "
            f"{shown} ms ({best.option_text}) > SLA {limit} ms{_unit_hint(m.ttft_sla_s, 'ttft_ms')}"
        )
    return out


def _layouts_hint(best: Candidate) -> str:
    """For a best ITL on a replica over several nodes: that it is the best of the layouts tried
    (beyond one NVLink domain the planner tries pipeline stages and attention DP, not TP:
    docs/method.md, "Layouts in the planner"), and how to state others, TP across the nodes
    among them."""
    if best.nodes <= 1 or best.pools:
        return ""
    gpus = best.tp * best.pipeline_parallel * best.data_parallel
    tp = (
        f"{{gpu_count: {gpus}, pipeline_parallel: 1}} for TP {gpus} across its {best.nodes} nodes"
        if best.data_parallel == 1 and best.pipeline_parallel > 1
        else "gpu_count with pipeline_parallel, data_parallel, expert_parallel"
    )
    return (
        " among the layouts tried (beyond one NVLink domain the planner tries pipeline stages "
        f"and attention DP, not TP); state others under gpus.{best.gpu}.layouts (e.g. {tp}, "
        "where the layout rules allow it)"
    )


def _unit_hint(sla_s: float, field: str) -> str:
    """A hint when an SLA below a millisecond looks like seconds written in milliseconds: a
    value from 0.001 (1 ms as seconds) on; a smaller one is no latency in either unit (fuzz
    round 27: ``itl_ms: 1e-300`` got "did you mean 1e-297, i.e. 1e-300 s?")."""
    if not 1e-3 <= sla_s * 1000.0 < 1.0:
        return ""
    return (
        f" (sla.{field} is in milliseconds: {sla_s * 1000.0:g} ms; did you mean "
        f"{sla_s * 1e6:g}, i.e. {sla_s * 1000.0:g} s?)"
    )


def _other_messages(m: ModelDemand, cands: list[Candidate]) -> list[str]:
    out = []
    rule = [c for c in cands if c.exclusion == Exclusion.RULE]
    if rule:
        out.append("excluded: " + ", ".join(dict.fromkeys(f"{c.gpu} {c.reason}" for c in rule)))
    price = [c for c in cands if c.exclusion == Exclusion.NO_PRICE]
    if price:
        gpus = _gpu_list(price)
        out.append(f"no $/hour for {gpus}: set gpus.<GPU>.usd_per_hour")
    refused: dict[tuple[str, str], list[str]] = {}  # one line per GPU and reason
    for c in cands:
        if c.exclusion == Exclusion.PREDICTION:
            refused.setdefault((c.gpu, c.reason), []).append(c.option_text)
    for (_, reason), options in refused.items():
        out.append(f"cannot predict {', '.join(dict.fromkeys(options))}: {reason}")
    uncoded = [c for c in cands if not c.feasible and c.exclusion == Exclusion.NONE]
    if uncoded:
        out.append(
            "not usable: "
            + ", ".join(f"{c.option_text} ({c.reason or 'no reason'})" for c in uncoded)
        )
    return out


def unserved_reasons(m: ModelDemand, cands: list[Candidate]) -> list[str]:
    """Why no candidate of model *m* is feasible, one reason per kind, from the candidates'
    :class:`~planner.inputs.Exclusion` codes: memory, ITL SLA, TTFT SLA, scenario rules, price,
    prediction errors; the aggregated replicas' reasons, then the disaggregated units'."""
    if not cands:
        return ["no candidate GPU at all (check allowed GPUs and inventory)"]
    units = [c for c in cands if c.pools]
    if units and len(units) < len(cands):  # both deployments: each with its own reasons
        aggregated = unserved_reasons(m, [c for c in cands if not c.pools])
        return aggregated + [f"disaggregated: {r}" for r in unserved_reasons(m, units)]
    memory = _memory_message(cands)
    return ([memory] if memory else []) + _sla_messages(m, cands) + _other_messages(m, cands)


def no_candidate_messages(inputs: PlanningInputs) -> list[str]:
    """Every model with load (or minimum replicas) and no feasible candidate, with every reason:
    ``NAME: reason`` lines, all lines of one model together, models in input order."""
    messages: list[str] = []
    by_name: dict[str, list[Candidate]] = {}
    for c in inputs.candidates:
        by_name.setdefault(c.name, []).append(c)
    for m in inputs.models:
        if max(m.requests_per_s_by_period) <= 0 and m.min_replicas == 0:
            continue
        cands = by_name.get(m.name, [])
        if any(c.feasible for c in cands):
            continue
        messages.extend(f"{m.name}: {reason}" for reason in unserved_reasons(m, cands))
    return messages
