"""The engine capability table (predictors.catalog.engine_support): which accelerators and parallel
layouts each serving engine runs, enforced by the validity rules that `predict`, `compare`,
`plan` and `validate` share."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import polars as pl
import pytest

from planner.layouts import ladder
from predictors.api import Predictor
from predictors.catalog import engine_support, validity
from predictors.catalog.store import Catalog, load_catalog
from predictors.core.vocab import ENGINES, canonical_engine
from predictors.measurements import load_measurements
from tests.cli_runner import one_error_line, plan_text, run_cli

MODELS = (
    "deepseek-ai/DeepSeek-V3",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "meta-llama/Llama-3.1-70B-Instruct",
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def test_every_engine_has_a_capability_row_and_every_catalog_gpu_a_platform(
    catalog: Catalog,
) -> None:
    assert set(engine_support.ENGINE_SUPPORT) == set(ENGINES)
    assert all(s.source for s in engine_support.ENGINE_SUPPORT.values())
    assert engine_support.FULL_ENGINES == ("vllm", "sglang", "tensorrt-llm")
    platforms = {
        row["id"]: engine_support.platform(row) for row in catalog.gpus.iter_rows(named=True)
    }
    assert None not in platforms.values()
    assert platforms["GAUDI3"] == "hpu" and platforms["MAX-1550"] == "xpu"
    assert platforms["MI325X"] == "rocm" and platforms["GB300"] == "cuda"


def _grid(
    llm: dict[str, object], gpu: dict[str, object]
) -> list[tuple[int, int | None, int | None, int | None]]:
    """(GPUs, PP, DP, EP) to try: every power of two up to two domains, stated or usual."""
    top = validity.max_replica_gpus(gpu)
    counts = [n for n in (1, 2, 4, 8, 16, 32, 64, 72, 144) if n <= top]
    eps: list[int | None] = [None, 1, 8] if llm.get("is_moe") else [None]
    return [
        (n, pp, dp, ep)
        for n, pp, dp, ep in itertools.product(counts, [None, 1, 2], [None, 1, 2, 8], eps)
    ]


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_a_valid_configuration_is_one_its_engine_runs_over_the_whole_catalog(
    catalog: Catalog,
) -> None:
    """Property over every catalog GPU × engine × (MoE, dense) model × layout grid: the
    validity rules accept a configuration only where the engine ships for the GPU's platform
    and runs each parallel dimension it uses, inside one node where it has no multi-node
    serving; and the usual layout of an engine without EP shards the experts (EP 1)."""
    checked = accepted = 0
    for model in MODELS:
        llm = catalog.llm(model)
        for gpu in catalog.gpus.iter_rows(named=True):
            for engine in ENGINES:
                s = engine_support.ENGINE_SUPPORT[engine]
                for n, pp, dp, ep in _grid(llm, gpu):
                    layout, problems = validity.layout_problems(
                        llm, gpu, n, pp, dp, ep, engine=engine
                    )
                    checked += 1
                    if layout is None or problems:
                        continue
                    accepted += 1
                    where = (model, gpu["id"], engine, n, pp, dp, ep)
                    assert engine_support.platform(gpu) in s.platforms, where
                    assert s.pipeline or layout.pp == 1, where
                    assert s.data_parallel or layout.dp == 1, where
                    assert s.expert_parallel or layout.ep == 1, where
                    assert s.multi_node or layout.gpus <= validity.node_gpus(gpu), where
                    if ep is None and llm.get("is_moe") and layout.tp * layout.dp > 1:
                        assert (layout.ep > 1) == s.expert_parallel, where
    assert checked > 50_000 and accepted > 5_000


def test_the_planner_ladder_offers_only_layouts_the_engine_runs(catalog: Catalog) -> None:
    """Every layout of the planner's automatic ladder is valid for the engine, except the pure
    TP of a ``tp_degrees`` entry the rules refuse, which the predictors refuse with the reason."""
    for model in MODELS:
        llm = catalog.llm(model)
        for gpu in catalog.gpus.iter_rows(named=True):
            for engine in ENGINES:
                for group in ladder(llm, gpu, [1, 2, 4, 8], engine=engine):
                    for shape in group:
                        layout, problems = validity.layout_problems(
                            llm, gpu, shape.gpus, shape.pp, shape.dp, shape.ep, engine=engine
                        )
                        valid = layout is not None and not problems
                        assert valid or (shape.pp, shape.dp) == (1, 1), (model, gpu["id"], engine)


def test_predict_refuses_what_the_engine_does_not_run_one_line_each(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "model,gpu,gpu_count,engine,batch_size,input_tokens,output_tokens,"
        "pipeline_parallel,data_parallel,expert_parallel\n"
        "meta-llama/Llama-3.1-8B-Instruct,MI300X,1,trtllm,8,512,256,,,\n"
        "meta-llama/Llama-3.1-8B-Instruct,V100-SXM2-32GB,1,deepspeed-mii,8,512,256,,,\n"
        "meta-llama/Llama-3.1-8B-Instruct,GAUDI2,1,llama.cpp,8,512,256,,,\n"
        "meta-llama/Llama-3.1-70B-Instruct,H100-SXM5-80GB,16,llama.cpp,8,512,256,,,\n"
        "mistralai/Mixtral-8x7B-Instruct-v0.1,H100-SXM5-80GB,4,llama.cpp,8,512,256,,,\n"
        "mistralai/Mixtral-8x7B-Instruct-v0.1,H100-SXM5-80GB,4,llama.cpp,8,512,256,,,4\n"
        "mistralai/Mixtral-8x7B-Instruct-v0.1,H100-SXM5-80GB,4,vllm,8,512,256,,,\n"
        "deepseek-ai/DeepSeek-V3,H200-SXM-141GB,8,hf-transformers,8,512,256,,8,\n"
        "meta-llama/Llama-3.1-70B-Instruct,H100-SXM5-80GB,4,deepspeed-mii,8,512,256,2,,\n"
        "meta-llama/Llama-3.1-70B-Instruct,H100-SXM5-80GB,4,llama.cpp,8,512,256,2,,\n"
    )
    out_path = tmp_path / "out.csv"
    result = run_cli("predict", "--input", str(rows), "--output", str(out_path))
    assert result.code == 0, result.err
    out = pl.read_csv(out_path, infer_schema_length=0)
    errors = out["error"].fill_null("").to_list()
    assert errors[0].startswith(
        "engine: tensorrt-llm does not run on MI300X (AMD ROCm; tensorrt-llm ships for NVIDIA "
        "CUDA); use vllm, sglang, hf-transformers or llama.cpp on MI300X"
    )
    assert errors[1].startswith(
        "engine: deepspeed-mii does not run on V100-SXM2-32GB (Volta; deepspeed-mii needs an "
        "NVIDIA GPU of the Ampere generation or newer, compute capability 8.0); use vllm, "
        "hf-transformers or llama.cpp on V100-SXM2-32GB"
    )
    assert errors[2].startswith("engine: llama.cpp does not run on GAUDI2 (Intel Gaudi;")
    assert errors[3].startswith(
        "gpu_count: 16 GPUs of H100-SXM5-80GB span 2 nodes of 8; llama.cpp serves a replica "
        "inside one node; use at most 8 GPUs per replica"
    )
    assert errors[4] == "" and out["expert_parallel"][4] == "1"  # experts sharded by TP
    assert (out["tensor_parallel"][4], out["pipeline_parallel"][4]) == ("1", "4")  # layer split
    assert errors[5].startswith("expert_parallel: llama.cpp has no expert parallelism")
    assert errors[6] == "" and out["expert_parallel"][6] == "4"  # vLLM's usual EP = TP
    assert errors[7].startswith("data_parallel: hf-transformers has no attention data")
    assert errors[8].startswith("pipeline_parallel: deepspeed-mii has no pipeline parallelism")
    assert errors[9] == "" and out["pipeline_parallel"][9] == "2"  # llama.cpp's layer split
    assert all("\n" not in e for e in errors)


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_every_measured_configuration_runs_on_its_engine(
    measurements_dir: Path, catalog: Catalog
) -> None:
    """No configuration measured running in ../shared (every source, every engine the table
    knows) is refused by the capability table: Argonne's llama.cpp over 4 GPUs of MI250,
    MI300X and Max 1550, DeepSpeed-MII on A100, the aiconfigurator and ML.ENERGY layouts."""
    table = load_measurements(measurements_dir, catalog).table
    keys = [
        "model",
        "gpu",
        "gpu_count",
        "engine",
        "pipeline_parallel",
        "data_parallel",
        "expert_parallel",
    ]
    cfg = table.filter(~pl.col("note").fill_null("").str.contains("mode=disagg"))
    cfg = cfg.select(keys).unique()
    engines = {e: canonical_engine(e) for e in cfg["engine"].unique().to_list()}
    checked: set[str] = set()
    for model, gpu, n, engine, pp, dp, ep in cfg.iter_rows():
        name = engines[engine]
        if name is None:
            continue  # a source's own engine name (Argonne's deepspeed on Gaudi)
        checked.add(name)
        llm, spec = catalog.llm(model), catalog.gpu(gpu)
        wrong = engine_support.accelerator_problems(name, spec)
        assert not wrong, (model, gpu, engine, wrong)
        layout = validity.resolve_layout(llm, spec, int(n), pp, dp, ep, engine=name)
        assert layout is not None, (model, gpu, n, engine)
        degrees = (layout.tp, layout.pp, layout.dp, layout.ep)
        problems = engine_support.layout_problems(name, spec, degrees, validity.node_gpus(spec))
        assert not problems, (model, gpu, n, engine, problems)
    assert {"llama.cpp", "deepspeed-mii", "vllm", "sglang", "tensorrt-llm"} <= checked


SCENARIO = """name: engine-{engine}
horizon_hours: 8760
region: US
electricity_usd_per_kwh: 0.12
engine: {engine}
gpus:
  H100-SXM5-80GB: {{}}
  GB200: {{}}
  GAUDI2: {{}}
models:
  - name: ds
    model: deepseek-ai/DeepSeek-V3
    load: {{requests_per_s: 0.5, input_tokens: 1024, output_tokens: 256}}
    sla: {{itl_ms: 150}}
"""


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_a_plan_keeps_an_engine_inside_what_it_runs(tmp_path: Path) -> None:
    """llama.cpp: DeepSeek-V3 on replicas of one GB200 tray each (4 GPUs; no two-node H100
    replica, no attention DP or EP, nothing on Gaudi); vLLM may span two H100 nodes."""
    result, path = plan_text(tmp_path, SCENARIO.format(engine="llama.cpp"), "--candidates", "all")
    assert result.code == 0, result.err
    plan = json.loads(path.read_text())
    (alloc,) = plan["allocations"]
    per_replica = alloc["gpus"] // alloc["replicas"]
    assert (alloc["gpu"], per_replica, alloc["expert_parallel"]) == ("GB200", 4, 1)
    for c in plan["candidates"]:
        assert c["data_parallel"] == 1 and c["expert_parallel"] == 1, c
        if c["nodes"] > 1:  # a tp_degrees entry over two GB200 trays, refused with the rule
            assert not c["feasible"] and "llama.cpp serves a replica inside one node" in c["reason"]
        if c["gpu"] == "GAUDI2":
            assert not c["feasible"] and "llama.cpp does not run on GAUDI2" in c["reason"]
    vllm_dir = tmp_path / "vllm"
    vllm_dir.mkdir()
    result, path = plan_text(vllm_dir, SCENARIO.format(engine="vllm"), "--candidates", "all")
    assert result.code == 0, result.err
    feasible = [c for c in json.loads(path.read_text())["candidates"] if c["feasible"]]
    assert any(c["gpu"] == "H100-SXM5-80GB" and c["nodes"] == 2 for c in feasible)
    assert any(c["gpu"] == "GAUDI2" for c in feasible)


def test_validate_names_a_stated_layout_the_engine_does_not_run(tmp_path: Path) -> None:
    text = SCENARIO.format(engine="llama.cpp").replace(
        "  GB200: {}", "  GB200:\n    layouts: [{gpu_count: 8, data_parallel: 8}]"
    )
    path = tmp_path / "s.yaml"
    path.write_text(text)
    result = run_cli("validate", str(path))
    assert result.code == 1
    assert "gpus.GB200.layouts[0]: gpu_count: 8 GPUs of GB200 span 2 nodes of 4; llama.cpp" in (
        result.out + result.err
    )


def test_compare_says_once_per_gpu_why_the_engine_cannot_run_there() -> None:
    result = run_cli(
        "compare", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--gpus", "MI300X,GAUDI2",
        "--engine", "tensorrt-llm", "--requests-per-s", "2", "--itl-ms", "80", "--format", "csv",
    )  # fmt: skip
    line = one_error_line(result, "engine tensorrt-llm runs on none of the GPU types listed")
    assert "--engine" in line
    rows = pl.read_csv(result.out.encode())
    reasons = dict(zip(rows["gpu"], rows["reason"], strict=True))
    assert reasons["MI300X"].startswith(
        "cannot predict MI300X TP1, MI300X TP2, MI300X TP4, MI300X TP8: --engine: tensorrt-llm "
        "does not run on MI300X"
    )
    assert reasons["MI300X"].count("does not run on") == 1


def test_measurement_engine_names_outside_the_table_are_not_checked(catalog: Catalog) -> None:
    gaudi = catalog.gpu("GAUDI2")
    assert engine_support.accelerator_problems("deepspeed", gaudi) == []
    assert engine_support.accelerator_problems(None, gaudi) == []
    assert Predictor.load(catalog=catalog) is not None


def test_engines_that_split_the_layers_run_every_gpu_as_a_pipeline_stage(
    predictor: Predictor, catalog: Catalog
) -> None:
    """llama.cpp (``--split-mode layer``) and hf-transformers (``device_map``) pass a token
    through the GPUs in turn: their usual layout is PP = the GPUs, TP 1, so their ITL never
    beats one GPU's read of all the weights; vLLM's is TP over the GPUs."""
    model, gpu = "meta-llama/Llama-2-7b-hf", "A100-SXM4-40GB"
    rows = pl.DataFrame(
        {
            "model": [model] * 6,
            "gpu": [gpu] * 6,
            "gpu_count": [1, 2, 4] * 2,
            "engine": ["llama.cpp"] * 3 + ["vllm"] * 3,
            "precision": ["fp16"] * 6,
        }
    )
    out = predictor.predict(rows)
    assert out["error"].to_list() == [""] * 6
    layouts = out.select("tensor_parallel", "pipeline_parallel").rows()
    assert layouts == [(1, 1), (1, 2), (1, 4), (1, 1), (2, 1), (4, 1)]
    llm, spec = catalog.llm(model), catalog.gpu(gpu)
    one_gpu_read_s = llm["total_params_b"] * 1e9 * 2 / (spec["memory_bandwidth_gb_s"] * 1e9)
    assert all(itl >= one_gpu_read_s for itl in out["itl_s"][:3])
    resolved = validity.resolve_layout(llm, spec, 4, engine="hf-transformers")
    assert resolved == validity.Layout(1, 4, 1, 1)
