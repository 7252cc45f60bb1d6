"""Parallel layouts (predictors.catalog.validity): the rules over the whole catalog, the batch
contract's layout columns, and catalog coverage (every LLM × GPU pair whose weights fit a replica
of at most 8 nodes or 2 NVL72 racks has a valid configuration)."""

from __future__ import annotations

import polars as pl
import pytest

from predictors.api import LAYOUT_OUTPUT_COLUMNS, Predictor
from predictors.catalog.store import Catalog, load_catalog
from predictors.catalog.validity import (
    layout_problems,
    max_replica_gpus,
    resolve_layout,
    tp_domain_gpus,
    tp_fits_heads,
    valid_tp_degrees,
)
from predictors.core.paths import catalogs_dir


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load_catalog(catalog_dir=catalogs_dir())


def _counts(limit: int) -> list[int]:
    return sorted({n for n in (1, 2, 3, 4, 8, 12, 16, 24, 32, 36, 64, 72, 144) if n <= limit})


def test_fabric_facts_have_sources(cat: Catalog) -> None:
    for g in cat.gpus.to_dicts():
        assert g["nvlink_domain_gpus"] >= 1 and g["node_gpus"] >= 1, g["id"]
        assert g["scale_out_gbit_s"] > 0 and g["scale_out_latency_us"] >= 0, g["id"]
        assert g["fabric_source"], g["id"]
    by_id = {g["id"]: g for g in cat.gpus.to_dicts()}
    assert tp_domain_gpus(by_id["GB200"]) == 72 and tp_domain_gpus(by_id["H100-SXM5-80GB"]) == 8
    assert tp_domain_gpus(by_id["L4"]) == 8  # PCIe: NVLink domain 1, TP over PCIe in the node
    assert max_replica_gpus(by_id["H100-SXM5-80GB"]) == 64
    assert max_replica_gpus(by_id["GB300"]) == 144  # two NVL72 racks
    assert (
        by_id["B300"]["scale_out_gbit_s"] == 800
        and by_id["H100-SXM5-80GB"]["scale_out_gbit_s"] == 400
    )


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_default_layout_rule_over_the_whole_catalog(cat: Catalog) -> None:
    """Property over every catalog pair and GPU count up to the replica bound: the usual layout
    is TP inside the domain and PP across whole domains, EP = TP × DP (at most the experts), and
    it is valid exactly when its TP fits the heads and its stages fit the layers."""
    gpus = cat.gpus.to_dicts()
    for llm in cat.llms.to_dicts():
        heads, kv = llm["num_attention_heads"], llm["num_kv_heads"]
        for gpu in gpus:
            domain = tp_domain_gpus(gpu)
            assert not layout_problems(llm, gpu, 1)[1]
            for n in _counts(max_replica_gpus(gpu)):
                layout = resolve_layout(llm, gpu, n)
                assert layout is not None and layout.gpus == n
                assert layout.tp <= domain or n % domain  # TP leaves the domain only if it must
                if layout.pp > 1:
                    assert layout.tp == domain
                if llm["is_moe"]:
                    assert layout.ep <= llm["num_experts"] and layout.tp % layout.ep == 0
                else:
                    assert layout.ep == 1
                ok = tp_fits_heads(layout.tp, heads, kv) and layout.tp <= domain
                ok = ok and layout.pp <= llm["num_layers"]
                assert (not layout_problems(llm, gpu, n)[1]) == ok, (llm["id"], gpu["id"], n)
            over = layout_problems(llm, gpu, max_replica_gpus(gpu) + domain)[1]
            assert over and "exceed the" in over[0]


def test_stated_layouts_and_their_rules(cat: Catalog) -> None:
    ds, llama = cat.llm("deepseek-ai/DeepSeek-V3"), cat.llm("meta-llama/Llama-3.1-8B-Instruct")
    h100, gb200 = cat.gpu("H100"), cat.gpu("GB200")
    layout, problems = layout_problems(ds, h100, 16, data_parallel=16, expert_parallel=16)
    assert not problems and layout is not None and (layout.tp, layout.dp, layout.ep) == (1, 16, 16)
    assert resolve_layout(ds, h100, 16) is not None
    assert (resolve_layout(ds, h100, 16).tp, resolve_layout(ds, h100, 16).pp) == (8, 2)  # type: ignore[union-attr]
    assert not layout_problems(ds, h100, 16, pipeline_parallel=1)[1]  # TP 16 over two domains
    assert not layout_problems(ds, gb200, 64)[1]  # one NVL72 domain
    msg = layout_problems(ds, h100, 16, data_parallel=2, expert_parallel=512)[1]
    assert msg == [
        "expert_parallel: 512 is larger than the 256 experts of deepseek-ai/DeepSeek-V3; use at "
        "most 256"
    ]
    msg = layout_problems(ds, h100, 16, data_parallel=2, expert_parallel=3)[1]
    assert msg and msg[0].startswith("expert_parallel: 3 does not divide")
    msg = layout_problems(llama, h100, 8, expert_parallel=8)[1]
    assert msg and "dense model" in msg[0]
    heads48 = {"id": "x", "num_attention_heads": 48, "num_kv_heads": 12, "num_layers": 40}
    msg = layout_problems(heads48, h100, 12, pipeline_parallel=1)[1]
    assert msg and "larger than the 8-GPU NVLink domain" in msg[0]
    msg = layout_problems(llama, h100, 12, pipeline_parallel=5)[1]
    assert msg and "do not split into" in msg[0]
    msg = layout_problems(llama, h100, 6, data_parallel=2)[1]
    assert msg and "tensor parallelism 3 (= 6 / (pipeline 1 × data 2))" in msg[0]
    assert all("\n" not in m for m in msg)
    assert valid_tp_degrees(32, 8, 8) == [1, 2, 4, 8]


def test_batch_layout_columns_resolved_at_the_end_and_bad_rows_do_not_stop_good_ones() -> None:
    from predictors.rows import OUTPUT_COLUMNS, predict_rows

    predictor = Predictor.load()
    rows = pl.DataFrame(
        {
            "model": ["deepseek-ai/DeepSeek-V3"] * 3
            + ["mistralai/Mixtral-8x7B-Instruct-v0.1", "meta-llama/Llama-3.1-8B-Instruct"],
            "gpu": ["H100", "H100", "H200", "H100", "H100"],
            "gpu_count": ["16", "16", "8", "16", "2"],
            "precision": ["fp8"] * 4 + ["bf16"],
            "pipeline_parallel": ["", "1", "", "", "x"],
            "data_parallel": ["", "16", "", "2", ""],
            "expert_parallel": ["", "", "", "16", ""],
        }
    )
    out = predict_rows(predictor, rows)
    assert out.columns[-7:-3] == list(LAYOUT_OUTPUT_COLUMNS) == list(OUTPUT_COLUMNS[-7:-3])
    errors = out["error"].to_list()
    assert errors[0] == errors[1] == errors[2] == ""
    assert out.row(0)[-7:-3] == (8, 2, 1, 8)
    assert out.row(1)[-7:-3] == (1, 1, 16, 16)
    assert out.row(2)[-7:-3] == (8, 1, 1, 8)
    assert errors[3].startswith("expert_parallel: 16 is larger than the 8 experts")
    assert errors[4].startswith("pipeline_parallel: must be a whole number")
    assert out["itl_s"][3] is None and out["tensor_parallel"][4] is None
    assert all(v is not None and v > 0 for v in out["itl_s"][:3])


def coverage_rows(cat: Catalog) -> pl.DataFrame:
    """Per catalog LLM × GPU pair: the largest valid TP inside the domain at PP 1, 2, 4, … up to
    the replica bound, at the checkpoint precision (fp32 checkpoints served in fp16)."""
    rows = []
    for llm in cat.llms.to_dicts():
        dtype = "fp16" if llm["default_dtype"] == "fp32" else llm["default_dtype"]
        for g in cat.gpus.to_dicts():
            domain, limit = tp_domain_gpus(g), max_replica_gpus(g)
            tp = max(valid_tp_degrees(llm["num_attention_heads"], llm["num_kv_heads"], domain))
            pp = 1
            while tp * pp <= limit and pp <= llm["num_layers"]:
                rows.append((llm["id"], g["id"], str(tp * pp), str(pp), dtype))
                pp *= 2
    names = ["model", "gpu", "gpu_count", "pipeline_parallel", "precision"]
    frame = pl.DataFrame(rows, schema=names, orient="row")
    return frame.with_columns(
        pl.lit("128").alias("input_tokens"), pl.lit("64").alias("output_tokens")
    )


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
def test_catalog_coverage_of_replicas_up_to_eight_nodes_or_two_racks(cat: Catalog) -> None:
    """Every catalog LLM × GPU pair whose weights (checkpoint precision) fit the largest replica
    has a valid configuration that fits memory at batch 1; the others are refused because the
    weights do not fit (issue 18's coverage target)."""
    out = Predictor.load(catalog=cat).predict(coverage_rows(cat))
    verdict = out.group_by("model", "gpu").agg(
        (pl.col("error") == "").any().alias("ok"), pl.col("error").last().alias("largest")
    )
    assert verdict.height == cat.llms.height * cat.gpus.height
    # a checkpoint precision the GPU has no kernels for (fp8 on Volta, fp4 on MI250) is refused
    # for that, not for fitting (predictors/catalog/precision_support.py)
    refused = verdict.filter(~pl.col("ok") & ~pl.col("largest").str.starts_with("precision: "))
    assert refused.height < verdict.height // 50
    assert refused.filter(~pl.col("largest").str.starts_with("does not fit")).height == 0
