"""``wattgpu sweep``: engines agree byte for byte, draws rescale the candidate table within the
physics, the accounting matches the plan's, the summary's numbers follow from the records, and
bad input is one line with nothing written."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.documents import schema_text
from planner.pipeline import PlanRun, plan_file
from planner.sweep.draws import sigmas_from_card, standard_normals
from planner.sweep.evaluate import Item, Shared, evaluate_fleet, fleet_of, run_item
from planner.sweep.executors import open_engine, run_batches
from planner.sweep.run import MAX_BATCH, MIN_BATCH, batches_of, run_sweep
from planner.sweep.spec import settings as sweep_settings
from planner.sweep.table import CandidateTable, build_table, drawn_candidates
from planner.text import to_json
from predictors.api import Predictor
from predictors.training.residuals import decompose
from tests.cli_runner import run_cli
from tests.pool_probe import pid_and_shared

pytestmark = pytest.mark.usefixtures("cached_predictor")
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def base_run(predictor: Predictor) -> PlanRun:
    return plan_file("enterprise-fleet", predictor=predictor, baselines=False)


def _table(run: PlanRun) -> CandidateTable:
    cat = run.predictor.catalog.gpus
    vendor = dict(zip(cat["id"].to_list(), cat["vendor"].to_list(), strict=True))
    gpus = {c.gpu: vendor[c.gpu] for c in run.inputs.candidates}
    return build_table(run.inputs, sigmas_from_card(run.predictor_card, gpus), 0.1, 0.1)


def _sweep_json(run: PlanRun, engine: str, workers: int, draws: int, choose: str) -> str:
    s = sweep_settings(None, draws=draws, seed=7, choose=choose, sla_probability=0.5, force=False)
    doc = run_sweep(run, None, s, engine=engine, workers=workers)
    return to_json(doc.to_json_dict())


@pytest.mark.slow
def test_local_engine_gives_the_same_sweep_with_one_and_two_workers(base_run: PlanRun) -> None:
    one = json.loads(_sweep_json(base_run, "local", 1, 8, "none"))
    two = json.loads(_sweep_json(base_run, "local", 2, 8, "robust"))  # both passes on 2 workers
    assert two.pop("robust")["considered"][0]["is_base"] and one.pop("robust") is None
    assert one == two
    assert one["summary"]["draws"] == 8 and len(one["records"]) == 8


@pytest.mark.slow
def test_forty_draws_are_byte_identical_on_local_dask_and_ray(base_run: PlanRun) -> None:
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    pytest.importorskip("ray", reason="the ray extra is not installed")
    local = _sweep_json(base_run, "local", 2, 40, "robust")
    dask = _sweep_json(base_run, "dask", 2, 40, "robust")  # a real LocalCluster, 2 workers
    ray = _sweep_json(base_run, "ray", 2, 40, "robust")  # a real local ray.init
    assert local == dask == ray
    doc = json.loads(local)
    assert (
        doc["summary"]["draws_with_plan"]
        + doc["summary"]["draws_infeasible"]
        + doc["summary"]["draws_failed"]
        == 40
    )
    assert doc["robust"]["considered"][0]["is_base"]


def test_the_base_fleet_priced_at_the_point_estimate_is_the_plan(base_run: PlanRun) -> None:
    out = evaluate_fleet(fleet_of(base_run.plan), base_run.inputs)
    totals = base_run.plan.totals
    for key in ("energy_kwh", "facility_energy_kwh", "cost_usd", "carbon_kg"):
        assert out[key] == pytest.approx(getattr(totals, key), rel=1e-9)
    assert all(out["sla_met"].values()) and out["power_cap_met"] and out["budget_met"]


def test_a_zero_draw_is_the_point_estimate(base_run: PlanRun) -> None:
    table = _table(base_run)
    record = run_item(
        Shared(table, fleet_of(base_run.plan)), Item("draw", 0, np.zeros(table.layout.dims), {})
    )
    assert record["status"] == "optimal"
    assert record["fleet"].identity == fleet_of(base_run.plan).identity
    totals = base_run.plan.totals
    assert totals is not None
    assert record["optimal"]["cost_usd"] == pytest.approx(totals.cost_usd, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.floats(0.0, 3.0))
def test_drawn_candidates_keep_the_physics(base_run: PlanRun, seed: int, scale: float) -> None:
    """Every candidate of the default scenario (six GPU types) under any draw: capacity never
    above the point estimate's, power non-decreasing in load and within [0, TDP × GPUs], ITL at
    capacity within the SLA, and the ITL curve scaled by one factor."""
    table = _table(base_run)
    z = np.random.default_rng(seed).standard_normal(table.layout.dims) * scale
    drawn = drawn_candidates(table, z)
    sla = {m.name: m.itl_sla_s for m in base_run.inputs.models}
    for base, c in zip(base_run.inputs.candidates, drawn, strict=True):
        if not c.feasible:
            continue
        assert base.feasible
        assert c.max_requests_per_s_per_replica <= base.max_requests_per_s_per_replica * (1 + 1e-12)
        ps = c.power_curve_w_per_replica
        assert all(b >= a for a, b in zip(ps, ps[1:], strict=False))
        assert ps[0] >= 0
        if c.tdp_w_per_gpu is not None:
            assert ps[-1] <= c.tdp_w_per_gpu * c.gpus_per_replica * (1 + 1e-9)
        assert c.itl_s_at_capacity <= sla[c.name] * (1 + 1e-6)
        ratio = np.array(c.itl_curve_s[:-1]) / np.array(base.itl_curve_s[: len(c.itl_curve_s) - 1])
        assert np.allclose(ratio, ratio[0], rtol=1e-9)


@pytest.mark.slow  # 1.3-2 s: the default run stays under 2 minutes
def test_summary_follows_from_the_records(base_run: PlanRun) -> None:
    doc = json.loads(_sweep_json(base_run, "local", 1, 16, "none"))
    records, summary = doc["records"], doc["summary"]
    for model, p in summary["sla_probability"].items():
        met = [r["base"]["sla_met"][model] for r in records if r["base"]]
        assert p == pytest.approx(sum(met) / len(met))
    costs = [r["optimal"]["cost_usd"] for r in records if r["optimal"]]
    assert summary["optimal"]["cost_usd"]["p50"] == pytest.approx(np.percentile(costs, 50))
    # the re-optimised plan is optimal for its draw: never dearer than a base plan that is valid
    if summary["regret_objective"]["p10"] is not None:
        assert summary["regret_objective"]["p10"] >= -1e-6 * abs(
            summary["optimal"]["objective"]["p50"]
        )
    shares = sum(a["share"] for a in summary["stability"]["gpu_mix_frequency"])
    assert shares == pytest.approx(1.0)


def test_a_failed_draw_is_recorded_with_its_error(base_run: PlanRun) -> None:
    table = _table(base_run)
    record = run_item(Shared(table, fleet_of(base_run.plan)), Item("draw", 3, np.zeros(2), {}))
    assert record["status"] == "failed" and record["index"] == 3
    assert record["error"] and "\n" not in record["error"]


def _stop(_: int) -> None:
    raise KeyboardInterrupt


def test_ctrl_c_stops_the_local_pool() -> None:
    import multiprocessing

    with pytest.raises(KeyboardInterrupt):
        run_batches("local", max, 1, list(range(8)), workers=2, done=_stop)
    for child in multiprocessing.active_children():
        child.join(timeout=5)
    assert not [c for c in multiprocessing.active_children() if c.is_alive()]


def test_one_engine_runs_both_passes_on_the_same_workers() -> None:
    """The pool starts once with the shared object (its initializer): a second pass runs on the
    pool of the first, whose workers still hold it. The pool may start its second worker only
    during the second pass (a process pool spawns workers on demand), so the check is that both
    passes together ran on at most `workers` processes, all still alive children of this one."""
    import multiprocessing
    import os

    batches = [[i, i + 1] for i in range(0, 16, 2)]
    with open_engine("local", 7, workers=2) as session:
        first = session.run(pid_and_shared, batches, lambda i: None)
        second = session.run(pid_and_shared, batches, lambda i: None)
        alive = {c.pid for c in multiprocessing.active_children()}
    assert (
        [r[1:] for r in first]
        == [r[1:] for r in second]
        == [(7, 2 * i + 1) for i in range(0, 16, 2)]
    )
    used = {r[0] for r in first} | {r[0] for r in second}
    assert os.getpid() not in used and len(used) <= 2 and used <= alive


@given(st.integers(0, 5000), st.integers(1, 64), st.integers(0, 3))
@settings(max_examples=300, deadline=None)
@pytest.mark.slow
def test_batches_are_balanced_whole_and_within_the_size_limits(
    n: int, workers: int, requested: int
) -> None:
    items = list(range(n))
    batches = batches_of(items, workers, 0 if requested == 0 else 7 * requested)  # type: ignore[arg-type]
    assert [i for b in batches for i in b] == items
    sizes = [len(b) for b in batches]
    if requested:
        assert all(size == 7 * requested for size in sizes[:-1])
        return
    if n:
        assert max(sizes) - min(sizes) <= 1 and max(sizes) <= MAX_BATCH
        assert len(batches) % workers == 0 or len(batches) == n  # fewer items than workers
        if n >= MIN_BATCH * workers:
            assert min(sizes) >= MIN_BATCH


def test_sobol_and_lhs_normals_are_seeded_and_standard() -> None:
    for sampler in ("sobol", "lhs"):
        a = standard_normals(256, 5, 11, sampler)
        assert np.array_equal(a, standard_normals(256, 5, 11, sampler))
        assert not np.array_equal(a, standard_normals(256, 5, 12, sampler))
        assert abs(float(a.mean())) < 0.05 and abs(float(a.std()) - 1.0) < 0.05


def test_residual_decomposition_recovers_known_effects() -> None:
    rng = np.random.default_rng(0)
    gpus, llms = [f"g{i}" for i in range(30)], [f"m{j}" for j in range(30)]
    g_eff = dict(zip(gpus, rng.normal(0, 0.3, 30), strict=True))
    l_eff = dict(zip(llms, rng.normal(0, 0.2, 30), strict=True))
    rows = [(g, m) for g in gpus for m in llms for _ in range(4)]
    r = np.array([g_eff[g] + l_eff[m] for g, m in rows]) + rng.normal(0, 0.1, len(rows))
    frame = pl.DataFrame(
        {
            "gpu": [g for g, _ in rows],
            "model": [m for _, m in rows],
            "measured": np.exp(r),
            "predicted": np.ones(len(rows)),
        }
    )
    out = decompose(frame)
    assert out["gpu_sd"] == pytest.approx(np.std(list(g_eff.values()), ddof=1), rel=0.1)
    assert out["llm_sd"] == pytest.approx(np.std(list(l_eff.values()), ddof=1), rel=0.1)
    assert out["row_sd"] == pytest.approx(0.1, rel=0.1)


def test_the_shipped_card_has_residuals_per_target_and_split(predictor: Predictor) -> None:
    res = predictor.card["residuals"]["targets"]
    for target in ("power", "itl", "ttft"):
        for split in ("logo", "lolo"):
            assert res[target][split]["all"]["rows"] > 100


def test_committed_sweep_schema_is_current() -> None:
    path = REPO / "docs" / "schemas" / "sweep.schema.json"
    assert path.read_text(encoding="utf-8") == schema_text("sweep")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--draws", "100001"), "above the limit of 100,000"),
        (("--set", "sweep.grid.load_growth=[1.0, -0.5]"), "sweep.grid.load_growth[1]"),
        (("--set", "sweep.grid.budget_usd=[.nan]"), "not a finite number"),
        (("--set", "sweep.grid.model_load={chat8b: [1, 2]}"), "did you mean: chat-8b?"),
        (("--engine", "dask", "--address", "tcp://127.0.0.1:9", "--draws", "2"), "cannot reach"),
        (("--draws", "2", "--address", "tcp://127.0.0.1:9"), "only for --engine dask or ray"),
        (("--choose", "robust"), "needs uncertainty draws"),
        ((), "nothing to sweep"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, args: tuple[str, ...], needle: str
) -> None:
    out = tmp_path / "sweep.json"
    result = run_cli("sweep", "paper-llama8b-low-load", *args, "-f", "json", "-o", str(out))
    assert result.code == 1, result.err
    assert len(result.errors) == 1 and needle in result.errors[0], result.err
    assert "Traceback" not in result.err
    assert not out.exists() and not list(tmp_path.iterdir())


def test_a_missing_extra_names_the_pip_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    result = run_cli("sweep", "paper-llama8b-low-load", "--engine", "ray", "--draws", "2")
    assert result.code == 1
    assert 'pip install "wattgpu[ray]"' in result.errors[0]


def test_cli_writes_a_valid_sweep_with_a_grid(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    result = run_cli(
        "sweep",
        "paper-llama8b-low-load",
        "--draws",
        "6",
        "--set",
        "sweep.grid.load_growth={start: 1.0, stop: 1.3, steps: 2}",
        "-f",
        "json",
        "-o",
        str(out),
    )
    assert result.code == 0, result.err
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["grid_axes"] == ["load_growth"] and len(doc["grid"]) == 2
    assert [r["point"]["load_growth"] for r in doc["grid"]] == [1.0, 1.3]
    assert doc["summary"]["draws"] == 6
    assert doc["summary"]["tornado"][0]["source"] == "grid"
    for flag in doc["flags"]:  # the bundled paper example plans an L4, outside the domain
        assert flag["reasons"] and flag["robust_instead"]
        assert 0.0 <= flag["sla_probability"] <= 1.0


@pytest.mark.slow  # 1.3-2 s: the default run stays under 2 minutes
def test_robust_choice_meets_its_probability(base_run: PlanRun) -> None:
    s = sweep_settings(None, draws=24, seed=3, choose="robust", sla_probability=0.2, force=False)
    doc = run_sweep(replace(base_run), None, s)
    assert doc.robust is not None
    for c in doc.robust.considered:
        worst = min([*c.sla_probability.values(), c.power_cap_probability, c.budget_probability])
        # everything at once (in the same draw) holds no more often than each part
        assert c.all_met_probability is not None and c.all_met_probability <= worst + 1e-12
        assert c.qualifies == (c.all_met_probability >= 0.2 - 1e-12)
    if doc.robust.chosen is not None:
        best = min(c.expected_objective for c in doc.robust.considered if c.qualifies)
        assert doc.robust.chosen.expected_objective == best


@pytest.mark.slow
def test_flags_are_exactly_the_allocations_out_of_domain_or_over_the_sla(
    base_run: PlanRun,
) -> None:
    from planner.analysis.flags import uncertainty_flags

    robust = plan_file(
        "enterprise-fleet", ["robust=true"], predictor=base_run.predictor, baselines=False
    ).plan
    doc = uncertainty_flags(base_run)
    assert doc.robust_resolve == "all_entries"  # the inventory links the entries
    flags = {(f.name, f.gpu, f.tp): f for f in doc.flags}
    for a in base_run.plan.allocations:
        c = a.candidate
        over = c.itl_s_hi is not None and c.itl_s_hi > base_run.inputs.model(c.name).itl_sla_s
        key = (c.name, c.gpu, c.tp)  # flag records name the deployment by (name, GPU, TP)
        assert (key in flags) == (over or not c.in_domain)
        if key in flags:
            deployed = [
                (r.candidate.gpu, r.candidate.tp, r.replicas)
                for r in robust.allocations
                if r.candidate.name == c.name
            ]
            got = flags[key].robust_deployments or []
            assert [(d.gpu, d.tp, d.replicas) for d in got] == deployed


def test_grid_gpu_available_takes_a_catalog_alias(base_run: PlanRun) -> None:
    """``sweep.grid.gpu_available`` names a GPU as ``gpus:`` does: a catalog alias resolves to
    its id (the axis and the points use the id); a name that is no GPU of the scenario stays one
    clear line."""
    from planner.scenario.sweep_block import SweepBlock
    from planner.sweep.spec import grid_points
    from predictors.core.errors import WattgpuError

    catalog = base_run.predictor.catalog
    block = SweepBlock.model_validate({"grid": {"gpu_available": {"H100": [0, 8]}}})
    axes, points = grid_points(
        block, base_run.inputs, force=False, resolve_gpu=catalog.try_resolve_gpu
    )
    assert axes == ["gpu_available.H100-SXM5-80GB"]
    assert points == [
        {"gpu_available": {"H100-SXM5-80GB": 0}},
        {"gpu_available": {"H100-SXM5-80GB": 8}},
    ]
    # GPU counts, written as whole numbers in the sweep JSON (fuzz round 24: 0.0)
    assert all(type(p["gpu_available"]["H100-SXM5-80GB"]) is int for p in points)
    bad = SweepBlock.model_validate({"grid": {"gpu_available": {"H10": [0]}}})
    with pytest.raises(WattgpuError, match=r"gpu_available\.H10: GPU 'H10' is not in the scenario"):
        grid_points(bad, base_run.inputs, force=False, resolve_gpu=catalog.try_resolve_gpu)


@pytest.mark.slow
def test_the_sweep_report_states_a_shared_no_plan_once(base_run: PlanRun) -> None:
    """The sweep's flags table names each allocation by its layout (a unit by its pools) and,
    when the robust scenario has no plan, says why once instead of in every row."""
    from planner.documents.flags import FlagDocument
    from planner.documents.sweep import SweepDocument
    from planner.report.sweep_view import sweep_markdown

    doc = SweepDocument.model_validate_json(_sweep_json(base_run, "local", 1, 2, "none"))
    why = "no plan (robust: true is infeasible: inventory: m needs 5 req/s)"
    common = dict(
        replicas=1,
        itl_s_hi_at_capacity=0.1,
        itl_sla_s=0.04,
        in_domain=True,
        reasons=["itl"],
        robust_instead=why,
        sla_probability=0.5,
    )
    flags = [
        FlagDocument(name="a", gpu="H100", tp=4, pipeline_parallel=2, **common),  # type: ignore[arg-type]
        FlagDocument(name="b", gpu="1× B200 TP2 → 2× H100 TP8", tp=8, **common),  # type: ignore[arg-type]
    ]
    text = sweep_markdown(doc.model_copy(update={"flags": flags}))
    assert "| a on H100 tp4×PP2 x1 |" in text and "| b on 1× B200 TP2 → 2× H100 TP8 x1 |" in text
    assert text.count(why) == 1 and text.count("no plan (below)") == 2


REGIONS = Path(__file__).parent / "fixtures" / "regions.yaml"


@pytest.fixture(scope="module")
def regions_run(predictor: Predictor) -> PlanRun:
    return plan_file(REGIONS, predictor=predictor, baselines=False)


def test_a_regions_fleet_is_priced_at_each_sites_figures_as_the_plan(
    regions_run: PlanRun,
) -> None:
    """With regions every deployment's energy is priced at its site's PUE, price and hourly
    grid, each site's power held to its cap and its GPUs to its inventory: the plan's fleet at
    the point estimate is the plan, to the objective; too small a site breaks only its checks."""
    plan, inputs = regions_run.plan, regions_run.inputs
    assert {a.candidate.region for a in plan.allocations} == {"de", "fr"}  # both sites used
    out = evaluate_fleet(fleet_of(plan), inputs)
    for key in ("energy_kwh", "facility_energy_kwh", "cost_usd", "carbon_kg"):
        assert out[key] == pytest.approx(getattr(plan.totals, key), rel=1e-9), key
    assert out["objective"] == pytest.approx(plan.solve.objective, rel=1e-6)
    assert out["power_cap_met"] and out["inventory_met"] and all(out["sla_met"].values())
    used = {a.candidate.region: a.candidate.gpu for a in plan.allocations}
    shrunk = tuple(
        replace(r, inventory={**r.inventory, used[r.name]: 0}) if r.name == "fr" else r
        for r in inputs.regions
    )
    assert not evaluate_fleet(fleet_of(plan), replace(inputs, regions=shrunk))["inventory_met"]
    capped = tuple(replace(r, power_cap_kw=1e-3) if r.name == "fr" else r for r in inputs.regions)
    assert not evaluate_fleet(fleet_of(plan), replace(inputs, regions=capped))["power_cap_met"]


@pytest.mark.slow
def test_a_regions_sweep_runs_and_refuses_site_axes(regions_run: PlanRun) -> None:
    from planner.scenario.sweep_block import SweepBlock
    from predictors.core.errors import WattgpuError

    s = sweep_settings(None, draws=4, seed=3, choose="none", sla_probability=0.5, force=False)
    doc = run_sweep(regions_run, None, s, engine="local", workers=1)
    assert doc.summary is not None and doc.summary.draws_with_plan == 4
    block = SweepBlock.model_validate({"grid": {"electricity_usd_per_kwh": [0.1, 0.2]}})
    with pytest.raises(WattgpuError, match=r"sweep.grid.electricity_usd_per_kwh: the scenario"):
        run_sweep(regions_run, block, s, engine="local", workers=1)
