"""The grid's carbon intensity per planning period and the carbon of facility energy on it.

A scenario gives one flat factor (``grid_g_co2_per_kwh``) and, optionally, a grid profile with
one intensity per period (``grid_g_co2_per_kwh_by_period``). Carbon over the horizon is then

    carbon_kg = Σ_t facility_kwh_t × g_t / 1000

and with one intensity for every period (no profile, or a constant one) it is the horizon's
facility kWh × that intensity / 1000, computed in that form so a flat plan is the same, to the
last bit, as before periods had factors. The optimiser's objective, the plan's accounting, its
re-verification from JSON, the forecast, the bands and the sweep all use these two functions.
"""

from __future__ import annotations

from collections.abc import Sequence


def grid_by_period(
    flat_g_co2_per_kwh: float, profile: Sequence[float] | None, periods: int
) -> tuple[float, ...]:
    """The intensity of every period (g CO2e per facility kWh): *profile*, or the flat factor
    repeated when there is none."""
    if profile is None:
        return (float(flat_g_co2_per_kwh),) * periods
    return tuple(float(g) for g in profile)


def is_flat_grid(g_co2_per_kwh_by_period: Sequence[float]) -> bool:
    """True when every period has the same intensity (one factor covers the horizon)."""
    return all(g == g_co2_per_kwh_by_period[0] for g in g_co2_per_kwh_by_period)


def grid_carbon_kg(
    facility_kwh_by_period: Sequence[float],
    facility_kwh: float,
    g_co2_per_kwh_by_period: Sequence[float],
) -> float:
    """kg CO2e of facility energy: Σ_t kWh_t × g_t / 1000; when the intensity is flat,
    *facility_kwh* (the horizon total) × g / 1000."""
    if not g_co2_per_kwh_by_period:
        return 0.0
    if is_flat_grid(g_co2_per_kwh_by_period):
        return facility_kwh * g_co2_per_kwh_by_period[0] / 1000.0
    return (
        sum(e * g for e, g in zip(facility_kwh_by_period, g_co2_per_kwh_by_period, strict=True))
        / 1000.0
    )


def drawn_grid_g_co2_per_kwh(
    energy_by_period: Sequence[float], g_co2_per_kwh_by_period: Sequence[float]
) -> float:
    """The one intensity that gives energy drawn as *energy_by_period* its carbon on the
    periods' intensities: on a flat grid that intensity, else the energy-weighted mean
    Σ_t e_t × g_t / Σ_t e_t (the flat mean of the profile when no energy is drawn)."""
    if is_flat_grid(g_co2_per_kwh_by_period):
        return g_co2_per_kwh_by_period[0]
    energy = sum(energy_by_period)
    if energy <= 0:
        return sum(g_co2_per_kwh_by_period) / len(g_co2_per_kwh_by_period)
    weighted = zip(energy_by_period, g_co2_per_kwh_by_period, strict=True)
    return sum(e * g for e, g in weighted) / energy
