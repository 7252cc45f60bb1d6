"""Cross-field rules of catalog rows (clocks, power, sources, prices, parameters, heads,
experts): each gives ``(column, what is wrong, fix)``, applied by
:func:`predictors.catalog.validate.read_table` after every cell has its type."""

from __future__ import annotations

import math
from typing import Any

Row = dict[str, Any]


def gpu_rules(row: Row) -> list[tuple[str, str, str]]:
    """(column, what is wrong, fix) of every cross-field rule a ``gpus.csv`` row breaks."""
    out = []
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
    return out
