"""Fill the ``embodied_kg_co2e`` / ``embodied_source`` columns of catalogs/gpus.csv.

No GPU manufacturer publishes a per-GPU product carbon footprint (PCF) in the public data this
project ships (NVIDIA's HGX H100 / HGX B200 PCF summaries give an intensity per exaflop of a
whole 8-GPU board, not a per-GPU total). Every value is therefore **modelled** by one stated
rule, written into the source column of each row:

    embodied_kg_co2e = 318 kg CO2e × tdp_w / 400 W

318 kg CO2e is the per-GPU share (one eighth) of the embodied emissions of an 8 × A100
(400 W) server estimated by Chien et al., "Reducing the Carbon Impact of Generative AI
Inference (today and in 2035)", HotCarbon '23 (GPU, CPU, DRAM, storage and IC packaging);
the board power stands in for silicon area, memory and board size. A published PCF, when one
exists, replaces the row's value in a user overlay (``--user-catalog``).

    python tools/catalog_embodied.py           # print the values
    python tools/catalog_embodied.py --write   # update catalogs/gpus.csv in place
    python tools/catalog_embodied.py --check   # exit 1 when catalogs/gpus.csv differs
"""

from __future__ import annotations

import csv
import io
import sys

from catalog_column import column_tool

REFERENCE_KG_CO2E = 318.0
"""Per-GPU embodied emissions of an 8 × A100 server (Chien et al., HotCarbon '23)."""
REFERENCE_TDP_W = 400.0
"""Board power of the reference GPU (A100 SXM4)."""
COLUMNS = ("embodied_kg_co2e", "embodied_source")


def embodied_kg_co2e(tdp_w: float) -> float:
    """The modelled embodied emissions of one GPU of board power *tdp_w* (kg CO2e)."""
    return round(REFERENCE_KG_CO2E * tdp_w / REFERENCE_TDP_W, 1)


def source_text(tdp_w: float) -> str:
    """The source cell: the rule and its reference."""
    return (
        f"modelled: 318 kg CO2e x tdp_w {tdp_w:g} W / 400 W (per-GPU share of an 8 x A100 "
        "server incl. host, Chien et al., HotCarbon '23); no manufacturer PCF per GPU published"
    )


def updated_text(text: str) -> str:
    """The catalog text with both columns (appended when absent) filled by the rule."""
    rows = list(csv.DictReader(io.StringIO(text)))
    header = list(rows[0].keys()) if rows else []
    header += [c for c in COLUMNS if c not in header]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        tdp = float(row["tdp_w"])
        row["embodied_kg_co2e"] = f"{embodied_kg_co2e(tdp):g}"
        row["embodied_source"] = source_text(tdp)
        writer.writerow(row)
    return out.getvalue()


def main() -> int:
    return column_tool(
        (__doc__ or "").splitlines()[0],
        updated_text,
        lambda row: f"{row['id']}: {row['embodied_kg_co2e']} kg CO2e",
    )


if __name__ == "__main__":
    sys.exit(main())
