"""Fill the price columns of catalogs/gpus.csv from the public price tables in ../shared.

Reads ``../shared/data/reference/prices/cloud_gpu_prices.csv`` (one row per provider instance
type) and, for two GPUs that table does not cover, ``indicative_gpu_prices_skypilot_catalog.csv``
(older RunPod rows). Never copies those files: it writes only the derived per-GPU figures, each
with the rows it comes from.

Rule (the same as ``gpu_price_summary.csv``): a row counts for a catalog id when its
``accelerator_name`` is that id, or is one of :data:`EXTRA_NAMES` (labels the price table marks
"not a catalog id" that are ids of this catalog). Rows whose form factor the source does not state
(``... (form factor not stated in source)``) never count. Per provider the LOWEST on-demand
$/GPU-hour among its rows is taken; ``usd_per_hour`` is the median across providers (rounded to
3 decimals, as the summary does), ``usd_per_hour_min`` the minimum.

    python tools/catalog_prices.py           # print the derived prices
    python tools/catalog_prices.py --write   # update catalogs/gpus.csv in place
    python tools/catalog_prices.py --check   # exit 1 when catalogs/gpus.csv differs
"""

from __future__ import annotations

import argparse
import csv
import io
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GPUS_CSV = REPO / "catalogs" / "gpus.csv"
PRICES_DIR = REPO.parent / "shared" / "data" / "reference" / "prices"
DETAIL = "cloud_gpu_prices.csv"
INDICATIVE = "indicative_gpu_prices_skypilot_catalog.csv"

#: Price-table labels marked "not a catalog id" there that ARE ids of this catalog.
EXTRA_NAMES: dict[str, str] = {
    "B300 (not a catalog id)": "B300",  # AWS p6-b300, OCI BM.GPU.B300.8, Verda *B300* (HGX B300)
    "GB300 (not a catalog id)": "GB300",  # OCI BM.GPU.GB300.4 (4 GPUs), per GPU like GB200
    "V100-PCIE-16GB (not a catalog id)": "V100-PCIE-16GB",  # Azure NCv3 (V100 PCIe 16GB)
    "RTX-A6000-48GB (not a catalog id)": "RTX-A6000",  # Lambda, Cudo, Hyperstack, Seeweb
    "MI355X (not a catalog id)": "MI355X",  # OCI BM.GPU.MI355X.8
}
#: Older indicative RunPod rows, used only for ids without any row in the detail table.
INDICATIVE_NAMES: dict[str, str] = {"RTX3090": "RTX-3090", "RTX4090": "RTX-4090"}

PRICE_COLUMNS = (
    "usd_per_hour",
    "usd_per_hour_min",
    "price_n_providers",
    "price_providers",
    "price_source",
    "price_date",
)


@dataclass(frozen=True)
class Offer:
    """The cheapest row of one provider for one catalog id."""

    provider: str
    instance_type: str
    usd_per_gpu_hour: str
    snapshot_date: str


@dataclass(frozen=True)
class Price:
    """Derived price columns of one catalog id."""

    gpu: str
    offers: tuple[Offer, ...]
    file: str

    @property
    def median(self) -> float:
        return round(statistics.median(float(o.usd_per_gpu_hour) for o in self.offers), 3)

    @property
    def minimum(self) -> float:
        return round(min(float(o.usd_per_gpu_hour) for o in self.offers), 3)

    def cells(self) -> dict[str, str]:
        rows = ", ".join(f"{o.provider} {o.instance_type}" for o in self.offers)
        return {
            "usd_per_hour": f"{self.median:g}",
            "usd_per_hour_min": f"{self.minimum:g}",
            "price_n_providers": str(len(self.offers)),
            "price_providers": "; ".join(f"{o.provider}={o.usd_per_gpu_hour}" for o in self.offers),
            "price_source": f"{self.file}: cheapest on-demand row per provider: {rows}",
            "price_date": "; ".join(f"{o.provider}={o.snapshot_date}" for o in self.offers),
        }


def _cheapest(rows: list[dict[str, str]]) -> tuple[Offer, ...]:
    best: dict[str, Offer] = {}
    for r in rows:
        offer = Offer(
            r["provider"],
            r["instance_type"],
            r["on_demand_usd_per_gpu_hour"],
            r.get("snapshot_date") or "unknown",
        )
        old = best.get(offer.provider)
        if old is None or float(offer.usd_per_gpu_hour) < float(old.usd_per_gpu_hour):
            best[offer.provider] = offer
    return tuple(sorted(best.values(), key=lambda o: (float(o.usd_per_gpu_hour), o.provider)))


def derive_prices(prices_dir: Path, catalog_ids: set[str]) -> dict[str, Price]:
    """Catalog id -> derived price, for every id that any counted row prices."""
    with (prices_dir / DETAIL).open(encoding="utf-8", newline="") as fh:
        detail = list(csv.DictReader(fh))
    by_id: dict[str, list[dict[str, str]]] = {}
    for r in detail:
        gid = EXTRA_NAMES.get(r["accelerator_name"], r["accelerator_name"])
        if gid in catalog_ids and r["on_demand_usd_per_gpu_hour"]:
            by_id.setdefault(gid, []).append(r)
    out = {g: Price(g, _cheapest(rows), DETAIL) for g, rows in by_id.items()}
    with (prices_dir / INDICATIVE).open(encoding="utf-8", newline="") as fh:
        indicative = list(csv.DictReader(fh))
    extra: dict[str, list[dict[str, str]]] = {}
    for r in indicative:
        gid = INDICATIVE_NAMES.get(r["accelerator_name"])
        if gid is not None and gid in catalog_ids and gid not in out:
            commit = r["source_commit"][:8]
            path = r["source_path"].split("/")[1]  # catalogs/v6/runpod/vms.csv -> v6
            dated = {**r, "snapshot_date": f"unknown (skypilot-catalog {path} @ {commit})"}
            extra.setdefault(gid, []).append(dated)
    out.update({g: Price(g, _cheapest(rows), INDICATIVE) for g, rows in extra.items()})
    return out


def updated_csv(text: str, prices: dict[str, Price]) -> str:
    """The gpus.csv text with the price columns set from *prices* (emptied elsewhere)."""
    rows = list(csv.DictReader(io.StringIO(text)))
    header = next(csv.reader(io.StringIO(text)))
    missing = [c for c in PRICE_COLUMNS if c not in header]
    if missing:
        raise SystemExit(f"{GPUS_CSV}: columns {missing} missing from the header; add them")
    for row in rows:
        price = prices.get(row["id"])
        cells = price.cells() if price else dict.fromkeys(PRICE_COLUMNS, "")
        row.update(cells)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prices-dir", type=Path, default=PRICES_DIR)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="update catalogs/gpus.csv")
    group.add_argument("--check", action="store_true", help="exit 1 when gpus.csv differs")
    args = parser.parse_args(argv)
    if not (args.prices_dir / DETAIL).is_file():
        print(f"{args.prices_dir / DETAIL}: not found; fix: pass --prices-dir", file=sys.stderr)
        return 1
    text = GPUS_CSV.read_text(encoding="utf-8")
    ids = {r["id"] for r in csv.DictReader(io.StringIO(text))}
    prices = derive_prices(args.prices_dir, ids)
    new = updated_csv(text, prices)
    if args.write:
        GPUS_CSV.write_text(new, encoding="utf-8")
        print(f"wrote prices for {len(prices)} of {len(ids)} GPUs to {GPUS_CSV}")
    elif args.check:
        if new != text:
            print(f"{GPUS_CSV}: prices differ; fix: python tools/catalog_prices.py --write")
            return 1
        print(f"ok: {len(prices)} of {len(ids)} GPUs priced as derived")
    else:
        for gid in sorted(prices):
            cells = prices[gid].cells()
            print(
                f"{gid}: median {cells['usd_per_hour']}, min {cells['usd_per_hour_min']}, "
                f"{cells['price_n_providers']} providers ({cells['price_providers']})"
            )
        unpriced = sorted(ids - set(prices))
        print(f"{len(prices)} of {len(ids)} priced; no price: {', '.join(unpriced)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
