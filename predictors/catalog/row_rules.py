"""Cross-field rules of catalog rows (clocks, power, sources, prices, parameters, heads,
experts): each gives ``(column, what is wrong, fix)``, applied by
:func:`predictors.catalog.validate.read_table` after every cell has its type."""

from __future__ import annotations

import math
from typing import Any

Row = dict[str, Any]

#: Per GPU column: (least, most, unit, the fix for a value outside). The bounds are far outside
#: every real accelerator's (bundled: 70-1,400 W, 16-288 GB, 300-8,000 GB/s), so a value beyond
#: them is a unit mistake (kW for W, bytes for GB, TB/s for GB/s), not a new chip.
GPU_RANGES: dict[str, tuple[float, float, str, str]] = {
    "tdp_w": (10.0, 10_000.0, "W", "give the board power per GPU in watts (700 for 0.7 kW)"),
    "memory_gb": (
        2.0,  # tests/test_catalog.py: above the runtime reserve over the memory utilisation
        100_000.0,
        "GB",
        "give the memory per GPU in GB (80, not 85899345920 bytes); below 2 GB the engine's "
        "runtime reserve (1.5 GB, predictors.physics) leaves nothing for weights",
    ),
    "memory_bandwidth_gb_s": (10.0, 1e6, "GB/s", "give GB/s (3350 for 3.35 TB/s)"),
    "fp16_tflops_dense": (0.1, 1e6, "TFLOPS", "give dense TFLOPS (989.4 for 989.4 TFLOPS)"),
    "fp8_tflops_dense": (0.1, 1e6, "TFLOPS", "give dense TFLOPS"),
    "int8_tops_dense": (0.1, 1e6, "TOPS", "give dense TOPS"),
    "fp4_tflops_dense": (0.1, 1e6, "TFLOPS", "give dense TFLOPS"),
    "interconnect_gb_s": (1.0, 1e5, "GB/s", "give the GPU-to-GPU bandwidth in GB/s (900)"),
    # bundled: 100-800 Gb/s per GPU, 2-5 µs; 1.6 Tb/s NICs are the next step
    "scale_out_gbit_s": (
        1.0,
        20_000.0,
        "Gb/s",
        "give the scale-out network bandwidth per GPU in Gb/s (400 for one 400G NIC per GPU)",
    ),
    "scale_out_latency_us": (
        0.1,
        1_000.0,
        "µs",
        "give the network latency in microseconds (5 for 5 µs, not 5000 ns or 0.000005 s)",
    ),
}
#: Parameters above this (billions) are a raw count in a column of billions.
MOST_PARAMS_B = 1e5


def _ranges(
    row: Row, ranges: dict[str, tuple[float, float, str, str]]
) -> list[tuple[str, str, str]]:
    out = []
    for col, (least, most, unit, fix) in ranges.items():
        v = row.get(col)
        if v is None or not math.isfinite(v) or least <= v <= most:
            continue
        side = f"below {least:g}" if v < least else f"above {most:,.0f}"
        out.append((col, f"{v:.6g} {unit} is {side} {unit}: a unit mistake?", fix))
    return out


#: ``grid_carbon.csv``: the bound of a scenario's ``grid_g_co2_per_kwh`` (docs/scenarios.md;
#: bundled 0-1,306 g/kWh) and the years grid data can describe (bundled 2009-2023).
MOST_G_CO2_PER_KWH = 5_000.0
GRID_YEARS = (1990, 2100)


def grid_rules(row: Row) -> list[tuple[str, str, str]]:
    """(column, what is wrong, fix) of every rule a ``grid_carbon.csv`` row breaks: a carbon
    intensity above what any grid emits (a unit mistake: g/MWh, or kg for g) and a year outside
    the years of grid data."""
    out = []
    g = row.get("g_co2_per_kwh")
    if g is not None and math.isfinite(g) and g > MOST_G_CO2_PER_KWH:
        out.append(
            (
                "g_co2_per_kwh",
                f"{g:.6g} g CO2e/kWh is above {MOST_G_CO2_PER_KWH:,.0f}, more than any grid emits",
                "give grams of CO2e per kWh from 0 to 5000 (400, not 400000 g/MWh or 0.4 kg)",
            )
        )
    year, (first, last) = row.get("year"), GRID_YEARS
    if year is not None and not first <= year <= last:
        out.append(("year", f"{year:g} is outside {first}-{last}", "give the data's year"))
    return out


def gpu_rules(row: Row) -> list[tuple[str, str, str]]:
    """(column, what is wrong, fix) of every cross-field rule a ``gpus.csv`` row breaks."""
    out = _ranges(row, GPU_RANGES)
    base, boost = row.get("base_clock_mhz"), row.get("boost_clock_mhz")
    if base is not None and boost is not None and boost < base:
        out.append(
            (
                "boost_clock_mhz",
                f"boost clock {boost:g} MHz is below base clock {base:g} MHz",
                "swap the two clocks or correct the value",
            )
        )
    idle, tdp = row.get("idle_power_w"), row.get("tdp_w")
    if idle is not None and tdp is not None and idle >= tdp:
        out.append(
            (
                "idle_power_w",
                f"idle power {idle:g} W is not below tdp_w {tdp:g} W",
                "give the idle draw, which is a fraction of TDP",
            )
        )
    if row.get("embodied_kg_co2e") is not None and not row.get("embodied_source"):
        out.append(
            (
                "embodied_source",
                "embodied_kg_co2e given without its source",
                "name the product carbon footprint or the estimation method",
            )
        )
    fabric = ("nvlink_domain_gpus", "node_gpus", "scale_out_gbit_s", "scale_out_latency_us")
    if any(row.get(c) is not None for c in fabric) and not row.get("fabric_source"):
        out.append(
            (
                "fabric_source",
                "NVLink domain / node / scale-out facts given without their source",
                "name the system datasheet or the stated rule",
            )
        )
    median, low = row.get("usd_per_hour"), row.get("usd_per_hour_min")
    if low is not None and median is None:
        out.append(
            ("usd_per_hour", "usd_per_hour_min given without usd_per_hour", "fill usd_per_hour")
        )
    elif low is not None and median is not None and low > median:
        out.append(
            (
                "usd_per_hour_min",
                f"minimum price {low:g} exceeds the median usd_per_hour {median:g}",
                "usd_per_hour_min must be <= usd_per_hour",
            )
        )
    return out


def llm_rules(row: Row) -> list[tuple[str, str, str]]:
    """(column, what is wrong, fix) of every cross-field rule an ``llms.csv`` row breaks."""
    out = []
    for col in ("total_params_b", "active_params_b"):
        v = row.get(col)
        if v is not None and v > MOST_PARAMS_B:
            out.append(
                (
                    col,
                    f"{v:.6g} billion parameters: a raw count in a column of billions?",
                    f"give billions ({v / 1e9:.4g} for {v:.6g} parameters)",
                )
            )
    total, active = row.get("total_params_b"), row.get("active_params_b")
    if total is not None and active is not None:
        if active > total * 1.0001:
            out.append(
                (
                    "active_params_b",
                    f"active parameters {active:g} B exceed total {total:g} B",
                    "active_params_b must be <= total_params_b",
                )
            )
        elif row.get("is_moe") is False and not math.isclose(active, total, rel_tol=5e-3):
            out.append(
                (
                    "active_params_b",
                    f"dense model with active {active:g} B != total {total:g} B",
                    "for dense models set active_params_b = total_params_b",
                )
            )
    heads, kv = row.get("num_attention_heads"), row.get("num_kv_heads")
    if heads is not None and kv is not None and kv > heads:
        out.append(
            (
                "num_kv_heads",
                f"{kv} KV heads exceed {heads} attention heads",
                "num_kv_heads must be <= num_attention_heads",
            )
        )
    elif heads is not None and kv is not None and kv > 0 and heads % kv:
        out.append(
            (
                "num_kv_heads",
                f"{kv} KV heads do not divide {heads} attention heads (grouped-query attention "
                "shares each KV head among a whole number of query heads)",
                "num_kv_heads must divide num_attention_heads (config.json num_key_value_heads)",
            )
        )
    if row.get("attention_kind") == "sliding" and row.get("sliding_window") is None:
        out.append(
            (
                "sliding_window",
                f"attention_kind {row['attention_kind']} without its window",
                "give the window in tokens (config.json sliding_window), or attention_kind full",
            )
        )
    moe_cols = ("num_experts", "num_experts_per_tok", "moe_intermediate_size")
    if row.get("is_moe") is True and row.get("num_experts") is None:
        out.append(("num_experts", "MoE model without num_experts", "fill num_experts"))
    if row.get("is_moe") is False:
        for col in moe_cols:
            if row.get(col) is not None:
                out.append((col, "MoE field filled for a dense model", "empty it or set is_moe"))
    n, k = row.get("num_experts"), row.get("num_experts_per_tok")
    if n is not None and k is not None and k > n:
        out.append(
            (
                "num_experts_per_tok",
                f"{k} experts per token exceed {n} experts",
                "num_experts_per_tok must be <= num_experts",
            )
        )
    elif row.get("is_moe") is True and n and k and total is not None and active is not None:
        out += _routed_share_rules(total, active, n, k)
    return out + _layer_rules(row)


def _routed_share_rules(total: float, active: float, n: int, k: int) -> list[tuple[str, str, str]]:
    """An MoE row's parameters against its routing: with shared parameters S >= 0 and routed R,
    total = S + R and active = S + R·k/n, so active >= total·k/n, and equal to total when every
    expert is active (k = n)."""
    if k >= n and not math.isclose(active, total, rel_tol=5e-3):
        return [
            (
                "active_params_b",
                f"every expert is active ({k} of {n} per token) but active {active:g} B != total "
                f"{total:g} B",
                "set active_params_b = total_params_b, or correct num_experts_per_tok",
            )
        ]
    if k < n and active < total * k / n * (1.0 - 5e-3):
        return [
            (
                "active_params_b",
                f"active {active:g} B is below total × experts per token / experts "
                f"({total:g} × {k}/{n} = {total * k / n:.4g} B): the routed experts alone "
                "give more",
                "check active_params_b, num_experts and num_experts_per_tok against the model card",
            )
        ]
    return []


def _layer_rules(row: Row) -> list[tuple[str, str, str]]:
    """MLA's cache dimensions and the dense-layer count against the layers."""
    out = []
    if row.get("attention_kind") == "mla":
        for col in ("kv_lora_rank", "qk_rope_head_dim"):
            if not row.get(col):
                out.append(
                    (
                        col,
                        f"attention_kind mla without {col}: its KV cache would be read as empty",
                        f"give {col} (config.json {col}), or the model's own attention_kind",
                    )
                )
    dense, layers = row.get("first_k_dense"), row.get("num_layers")
    if row.get("is_moe") is True and dense is not None and layers is not None and dense >= layers:
        out.append(
            (
                "first_k_dense",
                f"first_k_dense {dense} leaves no MoE layer of {layers}",
                "give the number of leading dense layers (config.json first_k_dense_replace), "
                "below num_layers",
            )
        )
    return out
