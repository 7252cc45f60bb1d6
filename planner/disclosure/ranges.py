"""P10–P90 ranges of the energy-proportional disclosure figures.

The seam: :class:`EnergyRanges` holds, for the fleet and per model entry, the P10 and P90 of GPU
energy as multiples of the point estimate, and the fleet's facility energy and carbon from their
own bands (PUE and grid intensity weight regions and periods differently).
:func:`ranges_from_bands` derives them from the plan's uncertainty bands
(:mod:`planner.analysis.uncertainty`); a sweep (when one is given) supplies the same object
with its own percentiles, and every field scales with it unchanged.

From the bands: the bands are the power predictor's central interval at level ``L`` (90 % by
default, i.e. P5–P95). Assuming a normal error on each side, the P10/P90 half-widths are the band
half-widths × z(0.90) / z((1 + L) / 2) (0.779 for L = 0.9).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist

from planner.documents.uncertainty import BandDocument, BandsDocument


@dataclass(frozen=True)
class RangeFactors:
    """P10 and P90 as multiples of the point estimate (p10 <= 1 <= p90)."""

    p10: float = 1.0
    p90: float = 1.0


@dataclass(frozen=True)
class EnergyRanges:
    """Ranges of GPU energy for the fleet and per model entry, and how they were obtained."""

    method: str
    total: RangeFactors | None = None
    models: dict[str, RangeFactors] = field(default_factory=dict)
    facility: RangeFactors | None = None
    """The fleet's facility energy, from its own band (regions at different PUEs weight the
    GPU energy differently); None: :attr:`total`'s."""
    carbon: RangeFactors | None = None
    """The fleet's carbon on its hourly or regional grid, from its own band (the intensity
    weights the periods and regions differently); None: :attr:`total`'s."""

    def of(self, name: str | None) -> RangeFactors | None:
        """The factors of model entry *name* (None: of the fleet)."""
        return self.total if name is None else self.models.get(name)

    def of_facility(self) -> RangeFactors | None:
        """The factors of the fleet's facility energy (and what is proportional to it)."""
        return self.facility or self.total

    def of_carbon(self) -> RangeFactors | None:
        """The factors of the fleet's carbon on its hourly or regional grid."""
        return self.carbon or self.total

    def of_sum(self, parts: list[tuple[str, float]]) -> RangeFactors | None:
        """The factors of Σ *parts* (model entry, its share of the figure), each part at its
        entry's factors (errors fully correlated, as the bands sum them); None when a part has
        none or the sum is not positive."""
        weight = sum(v for _, v in parts)
        factors = [self.models.get(name) for name, _ in parts]
        if weight <= 0 or any(f is None for f in factors):
            return None
        return RangeFactors(
            p10=sum(v * f.p10 for (_, v), f in zip(parts, factors, strict=True) if f) / weight,
            p90=sum(v * f.p90 for (_, v), f in zip(parts, factors, strict=True) if f) / weight,
        )


NO_RANGES = EnergyRanges(method="no uncertainty bands (the plan has no allocations)")


def scale_to_p10_p90(level: float | None) -> float:
    """Half-width ratio of P10–P90 to the central interval at *level* (1 when unknown)."""
    if level is None or not 0.0 < level < 1.0:
        return 1.0
    dist = NormalDist()
    return dist.inv_cdf(0.9) / dist.inv_cdf((1.0 + level) / 2.0)


def _factors(band: BandDocument, k: float) -> RangeFactors | None:
    if band.median <= 0:
        return None
    lo, hi = band.low / band.median, band.high / band.median
    return RangeFactors(p10=max(0.0, 1.0 - (1.0 - lo) * k), p90=1.0 + (hi - 1.0) * k)


def ranges_from_bands(bands: BandsDocument | None) -> EnergyRanges:
    """P10/P90 energy factors from the plan's uncertainty bands."""
    if bands is None:
        return NO_RANGES
    level = bands.interval_level
    k = scale_to_p10_p90(level)
    stated = f"{level:.0%}" if level is not None else "unstated-level"
    method = (
        f"P10–P90 from the power predictor's {stated} uncertainty bands (docs/reports.md), "
        f"half-widths × {k:.3f} = z(0.90)/z((1+L)/2) assuming normal errors; idle power, PUE and "
        "grid-factor uncertainty not included"
    )
    return EnergyRanges(
        method=method,
        total=_factors(bands.total.energy_kwh, k),
        models={
            name: f
            for name, fb in bands.models.items()
            if (f := _factors(fb.energy_kwh, k)) is not None
        },
        facility=_factors(bands.total.facility_energy_kwh, k),
        carbon=_factors(bands.total.carbon_kg, k),
    )
