"""Scenario ``price_basis`` (median | min) and quantised model ids in scenarios."""

from __future__ import annotations

from typing import Any

import pytest

from planner.scenario.load import scenario_from_dict
from predictors.catalog.store import Catalog, load_catalog
from predictors.core.errors import WattgpuError
from predictors.core.paths import catalogs_dir


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load_catalog(catalog_dir=catalogs_dir())


def scenario(**extra: Any) -> dict[str, Any]:
    return {
        "name": "prices",
        "region": "US",
        "electricity_usd_per_kwh": 0.1,
        "gpus": {"H100": {}, "L4": {"usd_per_hour": 0.5}},
        "models": [
            {
                "name": "chat",
                "model": "meta-llama/Llama-3.1-8B-Instruct",
                "load": {"requests_per_s": 1, "input_tokens": 512, "output_tokens": 128},
                "sla": {"itl_ms": 50},
            }
        ],
        **extra,
    }


def test_default_basis_is_the_median(cat: Catalog) -> None:
    s = scenario_from_dict(scenario(), "test", cat)
    assert s.price_basis == "median"
    assert s.gpu_offers["H100-SXM5-80GB"].usd_per_hour == cat.gpu("H100")["usd_per_hour"]
    assert s.gpu_offers["L4"].usd_per_hour == 0.5  # an explicit price is kept


def test_min_basis_takes_the_cheapest_provider(cat: Catalog) -> None:
    s = scenario_from_dict(scenario(price_basis="min"), "test", cat)
    h100 = cat.gpu("H100")
    assert s.gpu_offers["H100-SXM5-80GB"].usd_per_hour == h100["usd_per_hour_min"]
    assert h100["usd_per_hour_min"] < h100["usd_per_hour"]
    assert s.gpu_offers["L4"].usd_per_hour == 0.5
    every = scenario_from_dict({**scenario(price_basis="min"), "gpus": None}, "test", cat)
    for gpu, offer in every.gpu_offers.items():
        assert offer.usd_per_hour == cat.gpu(gpu)["usd_per_hour_min"]


def test_unknown_basis_is_one_clear_error(cat: Catalog) -> None:
    with pytest.raises(WattgpuError, match=r"price_basis.*'median' or 'min'"):
        scenario_from_dict(scenario(price_basis="max"), "test", cat)


def test_unpriced_gpu_needs_a_price(cat: Catalog) -> None:
    data = scenario()
    data["gpus"] = {"MI250": {}}
    with pytest.raises(WattgpuError, match=r"gpus\.MI250\.usd_per_hour.*no price for MI250"):
        scenario_from_dict(data, "test", cat)


def test_quantised_model_in_a_scenario_gets_its_precision(cat: Catalog) -> None:
    data = scenario()
    data["models"][0]["model"] = "nvidia/Llama-3.1-8B-Instruct-FP8"
    s = scenario_from_dict(data, "test", cat)
    assert s.models[0].model == "meta-llama/Llama-3.1-8B-Instruct"
    assert s.models[0].precision == "fp8"
    data["models"][0]["precision"] = "bf16"  # explicit wins
    assert scenario_from_dict(data, "test", cat).models[0].precision == "bf16"
