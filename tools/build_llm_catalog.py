"""Regenerate ``catalogs/llms.csv`` from the public reference tables and the seed list.

Developer script, never used at runtime or in tests: it reads ``../shared/data/reference/llms``
(verbatim Hugging Face configs, MLC-LLM presets, the normalised architecture table) and
``tools/llm_catalog_seed.py`` (which models, aliases, published parameter counts), fills each
row through :func:`predictors.catalog.hf_config.catalog_row_from_hf_config`, checks published counts
against the parameter counter and the ids/aliases against every model spelling in
``../shared/data/measurements``, and writes the CSV.

Usage: ``python tools/build_llm_catalog.py [--check]`` (``--check`` writes nothing).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm_catalog_seed import ENTRIES, Entry  # noqa: E402

from predictors.catalog.hf_config import (  # noqa: E402
    LLM_COLUMNS,
    arch_spec_from_hf_config,
    catalog_row_from_hf_config,
    family_from_id,
    format_csv_cell,
)
from predictors.catalog.kv_layers import kv_layer_facts, lookup  # noqa: E402
from predictors.catalog.llm_params import count_params  # noqa: E402
from predictors.catalog.quantised import split_scheme  # noqa: E402

SHARED = REPO.parent / "shared" / "data"
REF = SHARED / "reference" / "llms"
ROW_LEVEL = {"default_dtype"}
ARCH_INT = (
    "num_hidden_layers hidden_size num_attention_heads num_key_value_heads head_dim "
    "intermediate_size moe_intermediate_size num_experts num_experts_per_tok n_shared_experts "
    "shared_expert_intermediate_size first_k_dense_replace kv_lora_rank q_lora_rank vocab_size "
    "max_position_embeddings sliding_window"
).split()


def _arch_rows() -> dict[str, dict[str, str]]:
    with (REF / "llm_arch_table.csv").open() as fh:
        return {r["model_id"]: r for r in csv.DictReader(fh)}


def _features() -> dict[str, dict[str, str]]:
    with (REF / "wattgpu_model_features.csv").open() as fh:
        return {r["model_name"]: r for r in csv.DictReader(fh, delimiter=";")}


def _from_arch(
    mid: str, arch: dict[str, dict[str, str]], feats: dict[str, dict[str, str]]
) -> dict[str, Any]:
    row = arch[mid]
    cfg: dict[str, Any] = {"model_type": row["model_type"]}
    for key in ARCH_INT:
        if row.get(key):
            cfg[key] = int(float(row[key]))
    if row.get("tie_word_embeddings"):
        cfg["tie_word_embeddings"] = row["tie_word_embeddings"].strip().lower() == "true"
    dtype = row.get("torch_dtype") or ""
    if dtype in ("", "N/A") and mid in feats:
        dtype = feats[mid].get("dtype", "")
    if dtype and dtype != "N/A":
        cfg["torch_dtype"] = dtype
    if row["model_type"] == "gpt_oss":
        cfg["layer_types"] = ["sliding_attention", "full_attention"]
    return cfg


def _config(
    entry: Entry, done: dict[str, tuple[dict[str, Any], str]], arch: Any, feats: Any
) -> tuple[dict[str, Any], str]:
    kind, ref = entry.src
    if kind == "hf":
        path = REF / "hf_configs" / f"{ref}_config.json"
        return json.loads(path.read_text()), f"hf_configs/{path.name} (aiconfigurator copy)"
    if kind == "mlc":
        presets = json.loads((REF / "mlc_llm_model_presets.json").read_text())
        return dict(presets[ref]), f"mlc_llm_model_presets.json:{ref}"
    if kind == "arch":
        src = arch[ref]["source"]
        return _from_arch(ref, arch, feats), f"llm_arch_table.csv ({src})"
    if kind == "as":
        cfg, src = done[ref]
        return dict(cfg), f"same architecture as {ref}: {src}"
    if kind == "hand":
        return dict(ref), "published config.json (facts written by hand)"
    raise KeyError(kind)


def _special_row(entry: Entry, arch: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Rows the transformer counter cannot describe (encoder-decoder, recurrent, Mamba hybrids)."""
    kind, ref = entry.src
    base: dict[str, Any] = dict.fromkeys(LLM_COLUMNS)
    base.update(id=entry.id, is_moe=False, tie_word_embeddings=False, default_dtype="bf16")
    if kind == "t5":
        base.update(model_type="t5", num_layers=24, hidden_size=2048, num_attention_heads=32,
                    num_kv_heads=32, head_dim=64, intermediate_size=5120, vocab_size=32128,
                    max_position_embeddings=512, default_dtype="fp16",
                    attention_kind="full")  # fmt: skip
        mamba: dict[str, Any] = {}
    elif kind == "rwkv":
        base.update(model_type="rwkv", num_layers=32, hidden_size=4096, num_attention_heads=1,
                    num_kv_heads=1, head_dim=4096, intermediate_size=16384, vocab_size=50277,
                    max_position_embeddings=4096, default_dtype="fp16", attention_kind="sliding",
                    sliding_window=1)  # fmt: skip
        mamba = {}
    elif kind == "mamba":
        base.update(model_type="falcon_mamba", num_layers=64, hidden_size=4096,
                    num_attention_heads=1, num_kv_heads=1, head_dim=65536, intermediate_size=8192,
                    vocab_size=65024, max_position_embeddings=32768, attention_kind="sliding",
                    sliding_window=1)  # fmt: skip
        mamba = {}
    elif kind == "nemotron_h":
        layers, hidden, heads, kv, hd, inter, vocab, max_pos, mamba = ref
        base.update(model_type="nemotron_h", num_layers=layers, hidden_size=hidden,
                    num_attention_heads=heads, num_kv_heads=kv, head_dim=hd,
                    intermediate_size=inter, vocab_size=vocab, max_position_embeddings=max_pos,
                    attention_kind="hybrid")  # fmt: skip
    elif kind == "nemotron_h_moe":
        a = {k: int(float(v)) for k, v in arch[entry.id].items() if k in ARCH_INT and v}
        base.update(model_type="nemotron_h", num_layers=a["num_hidden_layers"],
                    hidden_size=a["hidden_size"], num_attention_heads=a["num_attention_heads"],
                    num_kv_heads=a["num_key_value_heads"], head_dim=a["head_dim"],
                    intermediate_size=a["intermediate_size"],
                    moe_intermediate_size=a["moe_intermediate_size"],
                    num_experts=a["num_experts"], num_experts_per_tok=a["num_experts_per_tok"],
                    num_shared_experts=1, first_k_dense=0, vocab_size=a["vocab_size"],
                    max_position_embeddings=a["max_position_embeddings"], is_moe=True,
                    attention_kind="hybrid")  # fmt: skip
        stem = entry.id.replace("/", "--")
        mamba = json.loads((REF / "hf_configs" / f"{stem}_config.json").read_text())
    else:
        raise KeyError(kind)
    get, num = lookup(mamba)
    base.update(kv_layer_facts(get, num, base["model_type"], base["num_layers"],
                               base["attention_kind"], base["sliding_window"]))  # fmt: skip
    base["family"] = family_from_id(entry.id, base["model_type"])
    base["source"] = "published config.json (facts written by hand)"
    return base


def build() -> tuple[list[dict[str, Any]], list[str]]:
    arch, feats = _arch_rows(), _features()
    done: dict[str, tuple[dict[str, Any], str]] = {}
    rows: list[dict[str, Any]] = []
    report: list[str] = []
    for entry in ENTRIES:
        over = dict(entry.overrides)
        row_over = {k: over.pop(k) for k in list(over) if k in ROW_LEVEL}
        if entry.src[0] in {"t5", "rwkv", "mamba", "nemotron_h", "nemotron_h_moe"}:
            row = _special_row(entry, arch)
            counted = None
        else:
            cfg, src = _config(entry, done, arch, feats)
            cfg.update(over)
            done[entry.id] = (cfg, src)
            row = catalog_row_from_hf_config(cfg, entry.id, src)
            counted = count_params(arch_spec_from_hf_config(cfg, src))
            row["source"] = src
        row.update(row_over)
        row["aliases"] = list(entry.aliases)
        if entry.published:
            total, active, psrc = entry.published
            row["total_params_b"] = total
            row["active_params_b"] = active if (row["is_moe"] and active) else total
            row["source"] += f"; params: {psrc}"
            if counted is not None:
                for label, pub, calc in (("total", total, counted.total_b),
                                         ("active", active, counted.active_b)):  # fmt: skip
                    if pub and (label == "total" or row["is_moe"]):
                        off = (calc - pub) / pub
                        if abs(off) > 0.02:
                            report.append(
                                f"{entry.id}: {label} published {pub} "
                                f"vs counter {calc:.3f} ({off:+.1%})"
                            )
        elif counted is None:
            raise SystemExit(f"{entry.id}: no published count and the counter cannot describe it")
        else:
            row["source"] += "; params: wattgpu counter"
        if entry.note:
            row["source"] += f"; {entry.note}"
        rows.append(row)
    _check_unique(rows)
    return rows, report


def _check_unique(rows: list[dict[str, Any]]) -> None:
    seen: dict[str, str] = {}
    for row in rows:
        for name in [row["id"], *row["aliases"]]:
            key = "".join(ch for ch in name.casefold() if ch.isalnum())
            if key in seen and seen[key] != row["id"]:
                raise SystemExit(f"name {name!r} used by {seen[key]} and {row['id']}")
            seen[key] = row["id"]


def measurement_names() -> set[str]:
    """Every model spelling found in ../shared/data/measurements (LLM tasks only)."""
    meas = SHARED / "measurements"
    names: set[str] = set()
    for path in (meas / "ml-energy-benchmark/data/legacy").glob("*.csv"):
        with path.open() as fh:
            names |= {r["model"] for r in csv.DictReader(fh)}
    v2 = meas / "ml-energy-benchmark/data/llm_text_generation"
    names |= {f"{p.parent.name}/{p.name}" for p in v2.glob("*/*/*/*") if p.is_dir()}
    for path in (meas / "ml-energy-leaderboard-v3/public/data/models").glob("*.json"):
        data = json.loads(path.read_text())
        if data.get("task") in {
            "gpqa",
            "lm-arena-chat",
            "sourcegraph-fim",
            "image-chat",
            "video-chat",
        }:
            names.add(data["model_id"])
    for path in (meas / "argonne-llm-inference-bench").glob("*.csv"):
        with path.open(encoding="utf-8", errors="replace") as fh:
            names |= {r[3].strip() for r in csv.reader(fh) if len(r) > 3 and "/" in r[3]}
    with (meas / "aiconfigurator-silicon/silicon_sample.csv").open() as fh:
        names |= {r["model_path"] for r in csv.DictReader(fh)}
    names.add("Llama-3.1-8B")  # AMD MI300X sample file names
    return names


def _known(name: str, known: set[str]) -> bool:
    """*name* is a catalog id or alias, or a quantised checkpoint of one (resolved at run time
    by :mod:`predictors.catalog.quantised`, as ``nvidia/DeepSeek-R1-NVFP4``)."""
    split = split_scheme(name)
    bases = [name] + ([split[0], split[0].rpartition("/")[2]] if split else [])
    return any(b.lower() in known for b in bases)


def main(argv: list[str]) -> int:
    rows, report = build()
    known = {n.lower() for r in rows for n in [r["id"], *r["aliases"]]}
    missing = sorted(n for n in measurement_names() | set(_features()) if not _known(n, known))
    print(f"{len(rows)} models; published counts > 2 % off the counter: {len(report)}")
    for line in report:
        print("  " + line)
    if missing:
        print("names in ../shared not in the catalog: " + ", ".join(missing))
        return 1
    if "--check" not in argv:
        out = REPO / "catalogs" / "llms.csv"
        with out.open("w", newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(LLM_COLUMNS)
            for row in rows:
                writer.writerow([format_csv_cell(row.get(col)) for col in LLM_COLUMNS])
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
