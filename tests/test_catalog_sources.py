"""Every shipped price and idle-power figure in catalogs/gpus.csv traces to a public source row.

Prices: ``price_source`` names the file and, per provider, the instance row used; each of those
rows must exist in ``../shared/data/reference/prices`` with the stated per-GPU price and date,
be that provider's cheapest counted row for the GPU, and ``usd_per_hour`` / ``usd_per_hour_min``
must be the median / minimum across providers (and agree with gpu_price_summary.csv). Idle: the
10 measured GPUs carry the nvidia-smi figure of idle_power_measured_wattgpu.csv, every other row
the stated rule 0.15 × TDP. Tests that read ../shared skip with the reason when it is absent; the
repository never copies those files.
"""

from __future__ import annotations

import csv
import importlib.util
import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

from predictors.catalog.store import Catalog, load_catalog, normalize_name
from predictors.core.paths import catalogs_dir

REPO = Path(__file__).resolve().parent.parent
IDLE_RULE_PREFIX = "rule: 0.15 x tdp_w"
MIN_PRICED_GPUS = 28  # what the public price tables cover (see catalogs/README.md, Prices)


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load_catalog(catalog_dir=catalogs_dir())


@pytest.fixture(scope="module")
def prices_dir(shared_data_dir: Path) -> Path:
    path = shared_data_dir / "reference" / "prices"
    if not (path / "cloud_gpu_prices.csv").is_file():
        pytest.skip(f"price tables not found at {path}")
    return path


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _pairs(cell: str) -> dict[str, str]:
    """'aws=3.06; gcp=2.48' -> {'aws': '3.06', 'gcp': '2.48'}."""
    return dict(part.split("=", 1) for part in cell.split("; "))


def _labels_with_size() -> dict[str, str]:
    """Price-table labels marked "not a catalog id" whose catalog id omits the memory size the
    label states (the entries of tools/catalog_prices.py ``EXTRA_NAMES`` whose label is not the
    id, e.g. RTX-A6000-48GB): the one board of that name. Read from the tool, so the mapping is
    written once; every other label must name its id on its own."""
    return {
        label: gpu_id
        for label, gpu_id in _prices_tool().EXTRA_NAMES.items()
        if normalize_name(label.split(" (")[0]) != normalize_name(gpu_id)
    }


def _names_id(accelerator_name: str, gpu_id: str) -> bool:
    """Does a price-table GPU label name this catalog id (exactly, or marked 'not a catalog id'
    by the table although this catalog has the id, or a RunPod short name)?"""
    label = accelerator_name.split(" (")[0]
    counted = "form factor not stated" not in accelerator_name
    if _LABELS_WITH_SIZE.get(accelerator_name) == gpu_id:
        return True
    return counted and normalize_name(label) == normalize_name(gpu_id)


# --- prices -----------------------------------------------------------------------------------


def test_priced_rows_have_every_price_column(cat: Catalog) -> None:
    priced = [r for r in cat.gpus.to_dicts() if r["usd_per_hour"] is not None]
    assert len(priced) >= MIN_PRICED_GPUS
    for r in priced:
        for col in ("usd_per_hour_min", "price_n_providers", "price_providers"):
            assert r[col] is not None, (r["id"], col)
        assert r["price_source"] and r["price_date"], r["id"]
        assert 0 < r["usd_per_hour_min"] <= r["usd_per_hour"]
        assert r["price_n_providers"] == len(_pairs(r["price_providers"]))
        assert set(_pairs(r["price_date"])) == set(_pairs(r["price_providers"]))
        assert "; price: " not in r["source"]  # prices are sourced in price_source only
    unpriced = [r for r in cat.gpus.to_dicts() if r["usd_per_hour"] is None]
    for r in unpriced:
        assert r["usd_per_hour_min"] is None and r["price_source"] is None, r["id"]


@pytest.mark.shared_data
def test_every_price_traces_to_its_source_rows(cat: Catalog, prices_dir: Path) -> None:
    tables = {p.name: _read(p) for p in prices_dir.glob("*.csv")}
    for r in cat.gpus.to_dicts():
        if r["usd_per_hour"] is None:
            continue
        file, _, used = r["price_source"].partition(": cheapest on-demand row per provider: ")
        assert file in tables, (r["id"], file)
        table = tables[file]
        providers, dates = _pairs(r["price_providers"]), _pairs(r["price_date"])
        for item in used.split(", "):
            provider, instance = item.split(" ", 1)
            rows = [
                s
                for s in table
                if s["provider"] == provider and _names_id(s["accelerator_name"], r["id"])
            ]
            chosen = [s for s in rows if s["instance_type"] == instance]
            assert len(chosen) == 1, (r["id"], item)
            price = chosen[0]["on_demand_usd_per_gpu_hour"]
            assert price == providers[provider], (r["id"], provider)
            assert float(price) == min(float(s["on_demand_usd_per_gpu_hour"]) for s in rows)
            if "snapshot_date" in chosen[0]:
                assert dates[provider] == (chosen[0]["snapshot_date"] or "unknown")
        values = [float(v) for v in providers.values()]
        assert r["usd_per_hour"] == pytest.approx(statistics.median(values), abs=5e-4), r["id"]
        assert r["usd_per_hour_min"] == pytest.approx(min(values), abs=5e-4), r["id"]


@pytest.mark.shared_data
def test_prices_agree_with_the_published_summary(cat: Catalog, prices_dir: Path) -> None:
    summary = {s["accelerator_name"]: s for s in _read(prices_dir / "gpu_price_summary.csv")}
    for gid, s in summary.items():
        row = cat.gpu(gid)
        if int(s["n_providers"]) == 0:
            continue
        assert row["usd_per_hour"] == pytest.approx(float(s["median_on_demand_usd_per_gpu_hour"]))
        assert row["usd_per_hour_min"] == pytest.approx(float(s["min_on_demand_usd_per_gpu_hour"]))
        assert row["price_n_providers"] == int(s["n_providers"])
        ours = {k: float(v) for k, v in _pairs(row["price_providers"]).items()}
        theirs = {k: float(v) for k, v in _pairs(s["providers_lowest_usd_per_gpu_hour"]).items()}
        assert ours.keys() == theirs.keys(), gid
        for provider, value in theirs.items():
            assert ours[provider] == pytest.approx(value, abs=1e-3), (gid, provider)


@pytest.mark.shared_data
def test_no_price_is_invented(cat: Catalog, prices_dir: Path) -> None:
    """A GPU without a counted row in any price table has no price."""
    rows = _read(prices_dir / "cloud_gpu_prices.csv")
    indicative = _read(prices_dir / "indicative_gpu_prices_skypilot_catalog.csv")
    for r in cat.gpus.to_dicts():
        offered = any(_names_id(s["accelerator_name"], r["id"]) for s in rows + indicative)
        if r["usd_per_hour"] is not None:
            assert offered, r["id"]
        else:
            assert not any(_names_id(s["accelerator_name"], r["id"]) for s in rows), r["id"]


def _prices_tool() -> Any:
    spec = importlib.util.spec_from_file_location(
        "catalog_prices", REPO / "tools" / "catalog_prices.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


_LABELS_WITH_SIZE = _labels_with_size()


@pytest.mark.shared_data
def test_shipped_prices_are_what_the_tool_derives(prices_dir: Path) -> None:
    tool = _prices_tool()
    text = (catalogs_dir() / "gpus.csv").read_text(encoding="utf-8")
    ids = {r["id"] for r in csv.DictReader(text.splitlines())}
    assert tool.updated_csv(text, tool.derive_prices(prices_dir, ids)) == text, (
        "regenerate: python tools/catalog_prices.py --write"
    )


# --- idle power -------------------------------------------------------------------------------


def test_idle_rule_rows_follow_the_stated_rule(cat: Catalog) -> None:
    for r in cat.gpus.to_dicts():
        source = r["idle_power_source"]
        assert source.startswith(("measured: ", IDLE_RULE_PREFIX)), r["id"]
        if source.startswith(IDLE_RULE_PREFIX):
            assert r["idle_power_w"] == pytest.approx(0.15 * r["tdp_w"], abs=0.01), r["id"]


@pytest.mark.shared_data
def test_every_measured_idle_figure_traces_to_its_row(cat: Catalog, shared_data_dir: Path) -> None:
    path = shared_data_dir / "reference" / "gpus" / "idle_power_measured_wattgpu.csv"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    measured = _read(path)
    assert len(measured) == 10
    by_id = {m["catalog_id_guess"]: m for m in measured}
    for r in cat.gpus.to_dicts():
        m = by_id.get(r["id"])
        if m is None:
            assert r["idle_power_source"].startswith(IDLE_RULE_PREFIX), r["id"]
            continue
        assert r["idle_power_w"] == pytest.approx(float(m["idle_power_w"]), abs=1e-9), r["id"]
        assert r["idle_power_source"].startswith("measured: "), r["id"]
        assert f"'{m['nvidia_smi_name']}'" in r["idle_power_source"]
        assert m["source"] in r["idle_power_source"]
        assert cat.resolve_gpu(m["nvidia_smi_name"]) == r["id"]
    assert sum(r["idle_power_source"].startswith("measured") for r in cat.gpus.to_dicts()) == 10
