"""Multi-node and rack-scale layouts in the planner (issue 18 item 4): the layout ladder, whole-node
inventory, the largest models on H100/H200/B200/GB200, one- vs two-node choices, stated layouts
and the plan JSON's layout keys."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from planner.documents.plan import load_plan, plan_json
from planner.inputs import Candidate
from planner.layouts import MULTI_DOMAIN_COUNTS, held_gpus, ladder
from planner.pipeline import PlanRun, plan_file
from planner.text import to_json
from predictors.api import Predictor
from predictors.catalog import validity
from tests.cli_runner import run_cli

LAYOUT_KEYS = ["tensor_parallel", "pipeline_parallel", "data_parallel", "expert_parallel", "nodes"]
BIG = ("deepseek-ai/DeepSeek-V3", "moonshotai/Kimi-K2-Instruct", "meta-llama/Llama-3.1-405B")
BIG_GPUS = ("H100-SXM5-80GB", "H200-SXM-141GB", "B200", "GB200")


def _scenario(
    tmp_path: Path, name: str, gpus: dict[str, Any], models: list[dict[str, Any]]
) -> Path:
    data = {
        "name": name,
        "horizon_hours": 8760,
        "region": "US",
        "electricity_usd_per_kwh": 0.12,
        "objective": {"minimize": "energy"},
        "engine": "vllm",
        "gpus": gpus,
        "models": models,
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML
    return path


def _entry(name: str, model: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "model": model,
        "load": {"requests_per_s": 1.0, "input_tokens": 1024, "output_tokens": 256},
        "sla": {"itl_ms": 100},
        **extra,
    }


def _gpus(c: Candidate) -> int:
    return c.tp * c.pipeline_parallel * c.data_parallel


def test_held_gpus_are_whole_nodes_and_domains_for_every_catalog_gpu(
    predictor: Predictor,
) -> None:
    for gid in predictor.catalog.gpus["id"].to_list():
        row = predictor.catalog.gpu(gid)
        node, domain = validity.node_gpus(row), validity.tp_domain_gpus(row)
        for n in range(1, validity.max_replica_gpus(row) + 1):
            held, nodes = held_gpus(row, n)
            assert held >= n, (gid, n)
            if n <= node:
                assert (held, nodes) == (n, 1), (gid, n)
            elif n <= domain:
                # whole nodes, and replicas of this size fit whole domains (none crosses one)
                spans = math.ceil(n / node) * node
                assert nodes == spans // node and held >= spans, (gid, n, held)
                per_domain = domain // spans
                for racks in (1, 2, 3):  # counted in GPUs, k domains hold what k domains can
                    assert (racks * domain) // held == racks * per_domain, (gid, n, held, racks)
            else:
                assert held % domain == 0 and held - n < domain, (gid, n, held)
                assert nodes == math.ceil(held / node), (gid, n)


@pytest.mark.parametrize("model", ["meta-llama/Llama-3.1-70B-Instruct", BIG[0], BIG[1]])
def test_ladder_is_valid_ascending_and_bounded_on_every_catalog_gpu(
    predictor: Predictor, model: str
) -> None:
    llm = predictor.catalog.llm(model)
    heads, kv = int(llm["num_attention_heads"]), int(llm["num_kv_heads"])
    degrees = [t for t in (1, 2, 4, 8) if validity.tp_fits_heads(t, heads, kv)]
    for gid in predictor.catalog.gpus["id"].to_list():
        row = predictor.catalog.gpu(gid)
        groups = ladder(llm, row, degrees)
        counts = [g[0].gpus for g in groups]
        assert counts == sorted(set(counts)), (gid, counts)
        assert all(s.gpus == g[0].gpus for g in groups for s in g)
        extra = [s for g in groups for s in g if s.gpus > max(degrees)]
        rack_scale = int(math.log2(max(1, validity.tp_domain_gpus(row) // max(degrees))))
        per_count = 2 if llm.get("is_moe") else 1
        assert len(extra) <= rack_scale + per_count * len(MULTI_DOMAIN_COUNTS), (gid, extra)
        for s in extra:  # every generated layout passes the predictors' validity rules
            layout, problems = validity.layout_problems(llm, row, s.gpus, s.pp, s.dp, s.ep)
            assert not problems and layout is not None and layout.gpus == s.gpus, (gid, s)
            assert (s.held, s.nodes) == held_gpus(row, s.gpus)


@pytest.mark.parametrize(
    ("model", "with_dp"),
    [
        ("deepseek-ai/DeepSeek-V3", (2, 4, 8)),  # MLA: TP copies its one latent head
        ("Qwen/Qwen3-30B-A3B", (8,)),  # 4 KV heads: TP 8 holds each twice
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", ()),  # 8 KV heads: no copy up to TP 8
        ("meta-llama/Llama-3.1-8B-Instruct", ()),  # dense: no attention-DP rung
    ],
)
def test_attention_dp_in_the_node_where_tp_would_copy_the_kv_cache(
    predictor: Predictor, model: str, with_dp: tuple[int, ...]
) -> None:
    llm = predictor.catalog.llm(model)
    gpu = predictor.catalog.gpu("H200-SXM-141GB")
    shapes = [s for g in ladder(llm, gpu, [1, 2, 4, 8]) for s in g if s.nodes == 1]
    dp = sorted(s.gpus for s in shapes if s.dp > 1)
    assert tuple(dp) == with_dp
    for s in shapes:
        if s.dp > 1:  # TP 1 x DP t, experts over all t GPUs, valid by the predictors' rules
            assert (s.tp, s.pp, s.ep) == (1, 1, s.dp)
            layout, problems = validity.layout_problems(llm, gpu, s.gpus, s.pp, s.dp, s.ep)
            assert layout is not None and not problems


@pytest.fixture(scope="module")
def big_run(predictor: Predictor, tmp_path_factory: pytest.TempPathFactory) -> PlanRun:
    models = [_entry(f"{m.split('/')[1]}@{g}", m, allowed_gpus=[g]) for m in BIG for g in BIG_GPUS]
    path = _scenario(tmp_path_factory.mktemp("big"), "big", {g: {} for g in BIG_GPUS}, models)
    return plan_file(path, predictor=predictor)


def test_largest_models_are_plannable_on_h100_h200_b200_gb200(big_run: PlanRun) -> None:
    plan = big_run.plan
    assert plan.has_solution, plan.solve.messages
    by_name = {a.candidate.name: a for a in plan.allocations}
    for m in big_run.inputs.models:
        a = by_name.get(m.name)
        assert a is not None, f"{m.name} has no allocation"
        c = a.candidate
        assert c.feasible and c.gpu == m.name.split("@")[1]
        assert a.gpus == a.replicas * c.gpus_per_replica >= a.replicas * _gpus(c)
    dsv3 = next(m for m in big_run.inputs.models if m.name.startswith("DeepSeek-V3@"))
    assert dsv3.precision == "fp8"  # the checkpoint's precision
    # DeepSeek-V3 fp8 needs two nodes of H100 and fits one node of H200 and B200
    fits = {g: c for (n, g), c in _smallest(big_run).items() if n.startswith("DeepSeek-V3@")}
    assert fits["H100-SXM5-80GB"].nodes == 2 and _gpus(fits["H100-SXM5-80GB"]) == 16
    assert fits["H200-SXM-141GB"].nodes == 1 and fits["B200"].nodes == 1


def _smallest(run: PlanRun) -> dict[tuple[str, str], Candidate]:
    from planner.layouts import smallest_fitting

    return smallest_fitting(run.inputs.candidates)


def test_plan_says_when_a_model_needs_more_than_one_node(big_run: PlanRun) -> None:
    from planner.report.plan_view import render_plan

    text = render_plan(big_run.plan, "table", wide=True)
    assert "DeepSeek-V3@H100-SXM5-80GB needs more than one node of H100-SXM5-80GB" in " ".join(
        text.split()
    )
    assert "DeepSeek-V3@H200-SXM-141GB needs more than one node" not in " ".join(text.split())


def _two(tmp_path: Path, **h200: Any) -> Path:
    return _scenario(
        tmp_path,
        "one-or-two",
        {"H100-SXM5-80GB": {}, "H200-SXM-141GB": h200},
        [_entry("dsv3", "deepseek-ai/DeepSeek-V3")],
    )


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_plan_chooses_one_or_two_nodes_by_objective_and_inventory(
    predictor: Predictor, tmp_path: Path
) -> None:
    """One node of H200 uses less energy than two nodes of H100; two H100 nodes cost less."""
    path = _two(tmp_path)
    picks = {}
    for objective in ("energy", "cost"):
        run = plan_file(path, [f"objective.minimize={objective}"], predictor=predictor)
        (a,) = run.plan.allocations
        picks[objective] = a.candidate
        others = [c for c in run.inputs.candidates if c.feasible and c.gpu != a.candidate.gpu]
        assert others, "both GPU types must offer a feasible layout"
    assert picks["energy"].gpu == "H200-SXM-141GB" and picks["energy"].nodes == 1
    assert picks["cost"].gpu == "H100-SXM5-80GB" and picks["cost"].nodes == 2
    run = plan_file(_two(tmp_path, available=0), predictor=predictor)
    (a,) = run.plan.allocations
    assert a.candidate.gpu == "H100-SXM5-80GB" and a.candidate.nodes == 2


@pytest.mark.slow
def test_stated_layouts_take_whole_nodes_and_round_trip(
    predictor: Predictor, tmp_path: Path
) -> None:
    layouts = [{"gpu_count": 12, "pipeline_parallel": 3}]
    path = _scenario(
        tmp_path,
        "stated",
        {"H100-SXM5-80GB": {"layouts": layouts}},
        [_entry("dsv3", "deepseek-ai/DeepSeek-V3")],
    )
    run = plan_file(path, predictor=predictor)
    (c,) = [c for c in run.inputs.candidates if c.pipeline_parallel == 3]
    assert (c.tp, _gpus(c), c.gpus_per_replica, c.nodes) == (4, 12, 16, 2)
    price = float(predictor.catalog.gpu("H100-SXM5-80GB")["usd_per_hour"])
    assert c.usd_per_hour_per_replica == pytest.approx(16 * price)
    assert c.idle_power_w_per_replica == pytest.approx(16 * (c.idle_power_w_per_gpu or 0.0))
    assert not any(x.pipeline_parallel == 2 for x in run.inputs.candidates)  # stated: no auto
    (a,) = run.plan.allocations
    assert a.candidate == c and a.gpus == 16 * a.replicas
    data = plan_json(run.plan, "all")
    for record in (*data["candidates"], *data["allocations"]):
        assert list(record)[-5:] == LAYOUT_KEYS
    (alloc,) = data["allocations"]
    assert [alloc[k] for k in LAYOUT_KEYS] == [4, 3, 1, c.expert_parallel, 2]
    saved = tmp_path / "plan.json"
    saved.write_text(to_json(data), encoding="utf-8")
    assert load_plan(saved).allocations[0].layout == "4×PP3"
    # the report's deployment column and JSON keep the layout, not only its TP degree
    from planner.report.build import build_report
    from planner.report.markdown import render_markdown

    report = build_report(load_plan(saved), predictor.card)
    (dep,) = report.models[0].deployments
    assert (dep.layout, dep.pipeline_parallel, dep.data_parallel) == ("4×PP3", 3, None)
    assert f"{a.replicas}× H100-SXM5-80GB TP4×PP3" in render_markdown(report)
    # a plan written before layouts (no layout keys) still reads as pure tensor parallelism
    old = json.loads(to_json(plan_json(plan_file(_two(tmp_path), predictor=predictor).plan)))
    # pure TP only (one node, no attention DP: DeepSeek's MLA cache also gets TP 1 x DP n)
    old["candidates"] = [
        c for c in old["candidates"] if c["nodes"] == 1 and c["data_parallel"] == 1
    ]
    old["candidate_counts"]["kept"] = len(old["candidates"])
    for record in (*old["candidates"], *old["allocations"]):
        assert [record[k] for k in LAYOUT_KEYS[1:3]] == [1, 1]
        for key in LAYOUT_KEYS:
            del record[key]
    old_path = tmp_path / "old.json"
    old_path.write_text(to_json(old), encoding="utf-8")
    doc = load_plan(old_path)
    assert all(c.key[3:6] == (1, 1, 1) for c in doc.candidates)


@pytest.mark.parametrize(
    ("layout", "words"),
    [
        ({"gpu_count": 16, "data_parallel": 2, "expert_parallel": 3}, "use a divisor of 16"),
        ({"gpu_count": 6}, "does not divide the 128 attention heads"),
        ({"gpu_count": 128}, "exceed the 64 of one replica"),
    ],
)
def test_invalid_stated_layout_is_one_line_naming_the_rule(
    tmp_path: Path, layout: dict[str, int], words: str
) -> None:
    path = _scenario(
        tmp_path,
        "bad",
        {"H100-SXM5-80GB": {"layouts": [{"gpu_count": 16}, layout]}},
        [_entry("dsv3", "deepseek-ai/DeepSeek-V3")],
    )
    result = run_cli("plan", str(path))
    assert result.code == 1
    (line,) = result.errors
    assert line.startswith(f"error: {path}: gpus.H100-SXM5-80GB.layouts[1]: ") and words in line
    assert "Traceback" not in result.err
    # `validate` finds what `plan` would stop on (it said 'ok' before)
    checked = run_cli("validate", str(path))
    assert checked.code == 1 and "ok" not in checked.out, checked.out
    (said,) = checked.errors
    assert said.startswith(f"error: {path}: gpus.H100-SXM5-80GB.layouts[1]: ") and words in said
    assert said.endswith("(model deepseek-ai/DeepSeek-V3, entry dsv3)"), said


def test_compare_shows_the_layout_per_gpu_type(predictor: Predictor) -> None:
    from planner.analysis.compare import CompareRequest, compare

    request = CompareRequest(
        model="deepseek-ai/DeepSeek-V3", requests_per_s=1.0, itl_ms=100, gpus=BIG_GPUS[:3]
    )
    rows = {r.gpu: r for r in compare(request, predictor).rows}
    assert all(r.fits for r in rows.values()), {g: r.reason for g, r in rows.items()}
    h100 = rows["H100-SXM5-80GB"]
    assert h100.nodes == 2 and h100.gpus == 16 * h100.replicas
    assert h100.deployment.endswith(f"× TP{h100.layout} on 2 nodes") and "×" in h100.layout
    for gpu in BIG_GPUS[1:3]:  # one node of H200 or B200
        assert rows[gpu].nodes == 1 and "nodes" not in rows[gpu].deployment
