"""The price of one GPU-hour: rental (a catalog provider price) or total cost of ownership.

``price_basis: tco`` (or any GPU without a rental price) costs a GPU-hour as

    purchase price / (amortisation_years × 8760 h)
    + (hosting_usd_per_kw_month × TDP kW + hosting_usd_per_gpu_month) / 730 h

with the purchase price from the GPU offer's ``purchase_price_usd`` or the catalog's
``list_price_usd`` (published or modelled, its ``list_price_source`` says which). Electricity is
not in it: the plan already costs every facility kWh at ``electricity_usd_per_kwh``.
:func:`gpu_price` returns the price and one line saying which basis it used, which the plan JSON
carries (``assumptions.price_basis_by_gpu``) and the report states per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field

from planner.scenario.limits import MAX_USD_PER_GPU_HOUR
from planner.scenario.sections import StrictModel
from predictors.core.errors import WattgpuError

HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0
#: Amortisation period when the scenario does not give one (years; as the embodied lifetime).
DEFAULT_AMORTISATION_YEARS = 5.0
#: Catalog column of each rental ``price_basis``.
RENTAL_COLUMN: dict[str, str] = {"median": "usd_per_hour", "min": "usd_per_hour_min"}


class Tco(StrictModel):
    """Total cost of ownership of owned GPUs (``price_basis: tco``, and GPUs without a rental
    price)."""

    amortisation_years: float = Field(default=DEFAULT_AMORTISATION_YEARS, ge=0.25, le=30)
    """Years over which the purchase price is written off (straight line; at least a quarter:
    a shorter write-off is not an ownership cost). A TCO GPU-hour above 10,000 $/h (purchase
    price, amortisation and hosting together) is refused with the GPU named, never capped."""
    hosting_usd_per_kw_month: float = Field(default=0.0, ge=0, le=1e5)
    """Colocation / data-centre space and power provisioning per kW of GPU TDP per month
    (USD); 0 = not given (the report says so)."""
    hosting_usd_per_gpu_month: float = Field(default=0.0, ge=0, le=1e6)
    """Per-GPU monthly cost of the server share, maintenance and support (USD); 0 = not given."""


@dataclass(frozen=True)
class GpuPrice:
    """A GPU-hour price and the basis it was computed on."""

    usd_per_hour: float
    basis: str


def tco_price(row: dict[str, Any], purchase_usd: float | None, tco: Tco) -> GpuPrice | None:
    """The TCO GPU-hour of catalog *row* (None when no purchase price is known)."""
    price = purchase_usd if purchase_usd is not None else row.get("list_price_usd")
    if price is None:
        return None
    where = (
        "scenario purchase_price_usd"
        if purchase_usd is not None
        else f"catalog list_price_usd ({row.get('list_price_source') or 'source not stated'})"
    )
    capex = float(price) / (tco.amortisation_years * HOURS_PER_YEAR)
    tdp_kw = float(row["tdp_w"]) / 1000.0
    hosting = (tco.hosting_usd_per_kw_month * tdp_kw + tco.hosting_usd_per_gpu_month) / (
        HOURS_PER_MONTH
    )
    hosted = (
        f"hosting {tco.hosting_usd_per_kw_month:g} $/kW·month × {tdp_kw:g} kW + "
        f"{tco.hosting_usd_per_gpu_month:g} $/GPU·month"
        if tco.hosting_usd_per_kw_month or tco.hosting_usd_per_gpu_month
        else "hosting not given (0)"
    )
    usd = capex + hosting
    if not usd <= MAX_USD_PER_GPU_HOUR:  # never capped silently: the plan would cost another price
        raise WattgpuError(
            f"gpus.{row.get('id')}: its TCO GPU-hour is {usd:.4g} $/h ({where}, "
            f"{tco.amortisation_years:g} y, {hosted}), above the {MAX_USD_PER_GPU_HOUR:,.0f} $/h "
            "a GPU-hour may cost; check purchase_price_usd, tco.amortisation_years and the "
            "hosting costs"
        )
    return GpuPrice(
        usd,
        f"tco: {float(price):,.0f} $ from {where} / {tco.amortisation_years:g} y = "
        f"{capex:.4g} $/h, {hosted}; electricity costed per kWh in the plan",
    )


def gpu_price(
    row: dict[str, Any],
    basis: str,
    offer_usd_per_hour: float | None,
    purchase_usd: float | None,
    tco: Tco | None,
) -> GpuPrice | None:
    """The GPU-hour price of catalog *row* on *basis* (``median``, ``min`` or ``tco``): the
    offer's own price, else the rental price (rental bases), else TCO; None when none is known."""
    if offer_usd_per_hour is not None:
        return GpuPrice(offer_usd_per_hour, "scenario usd_per_hour")
    settings = tco or Tco()
    if basis in RENTAL_COLUMN:
        rent = row.get(RENTAL_COLUMN[basis])
        if rent is not None:
            providers = row.get("price_n_providers")
            return GpuPrice(
                float(rent),
                f"rental ({basis} on-demand price of {providers or 'unstated'} provider(s), "
                f"catalog {RENTAL_COLUMN[basis]}; {row.get('price_date') or 'date not stated'})",
            )
        found = tco_price(row, purchase_usd, settings)
        if found is None:
            return None
        return GpuPrice(found.usd_per_hour, f"{found.basis} (no rental price in the catalog)")
    return tco_price(row, purchase_usd, settings)
