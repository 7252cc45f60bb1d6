"""Fill ``list_price_usd`` / ``list_price_source`` of catalogs/gpus.csv for the TCO price basis.

Published list (launch) prices exist for 16 catalog GPUs (Epoch AI, in ``list_price_usd``
already; the RTX-5090's is NVIDIA's launch price, and a row whose ``list_price_source`` names
another publisher keeps it). For every other GPU the price is **modelled** by one stated rule,
written into its ``list_price_source``:

    list_price_usd = median(list price / memory bandwidth) × memory_bandwidth_gb_s, to $100

where the median runs over the data-centre GPUs (not GeForce) with a published price. Memory
bandwidth stands in for the HBM stacks and interposer that weigh heavily in these parts' cost;
the rule is crude (3.2 k$ for a T4, 20 k$ for an H100 PCIe, 77 k$ for a B200, 60 k$ for an
MI325X against 15 k$ published for the MI300X). A user overlay (``--user-catalog``) or a
scenario ``purchase_price_usd`` replaces it.

    python tools/catalog_list_prices.py           # print the values
    python tools/catalog_list_prices.py --write   # update catalogs/gpus.csv in place
    python tools/catalog_list_prices.py --check   # exit 1 when catalogs/gpus.csv differs
"""

from __future__ import annotations

import csv
import io
import statistics
import sys

from catalog_column import column_tool

PUBLISHED = "published: Epoch AI ML hardware dataset (launch/list price; some analyst estimates)"


def _published(row: dict[str, str]) -> bool:
    return bool(row["list_price_usd"]) and not row.get("list_price_source", "").startswith(
        "modelled"
    )


def usd_per_gb_s(rows: list[dict[str, str]]) -> float:
    """Median published list price per GB/s of memory bandwidth (data-centre parts)."""
    ratios = [
        float(r["list_price_usd"]) / float(r["memory_bandwidth_gb_s"])
        for r in rows
        if _published(r) and not r["id"].startswith("RTX-")
    ]
    return statistics.median(ratios)


def updated_text(text: str) -> str:
    """The catalog text with every GPU's list price and its source."""
    rows = list(csv.DictReader(io.StringIO(text)))
    header = list(rows[0].keys())
    if "list_price_source" not in header:
        header.append("list_price_source")
    rate = usd_per_gb_s(rows)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        if _published(row):  # a row naming another publisher (a vendor's launch price) keeps it
            if not row.get("list_price_source", "").startswith("published"):
                row["list_price_source"] = PUBLISHED
        else:
            bw = float(row["memory_bandwidth_gb_s"])
            row["list_price_usd"] = f"{round(rate * bw, -2):.0f}"
            row["list_price_source"] = (
                f"modelled: {rate:.3f} $ per GB/s (median published list price / bandwidth of "
                f"the data-centre GPUs with one) x {bw:g} GB/s; no published list price"
            )
        writer.writerow(row)
    return out.getvalue()


def main() -> int:
    return column_tool(
        (__doc__ or "").splitlines()[0],
        updated_text,
        lambda row: f"{row['id']}: {row['list_price_usd']} $ ({row['list_price_source'][:9]})",
    )


if __name__ == "__main__":
    sys.exit(main())
