"""Errors of ``wattgpu compare`` in the words of its command line.

``compare`` plans a one-model scenario it builds from its options
(:func:`planner.analysis.compare.compare_scenario_dict`); an error raised while that scenario is
read or its candidates are built names scenario fields (``models[0].load.input_tokens``). The
user typed options, so :func:`as_option_error` names those instead (``--input-tokens``).
"""

from __future__ import annotations

import re

from predictors.core.errors import WattgpuError

#: Scenario field of the built scenario -> the ``compare`` option it came from.
FIELD_OPTIONS: dict[str, str] = {
    "models[0].load.requests_per_s": "--requests-per-s",
    "models[0].load.input_tokens": "--input-tokens",
    "models[0].load.output_tokens": "--output-tokens",
    "models[0].sla.itl_ms": "--itl-ms",
    "models[0].sla.ttft_ms": "--ttft-ms",
    "sla.itl_ms": "--itl-ms",
    "sla.ttft_ms": "--ttft-ms",
    "horizon_hours": "--hours",
    "electricity_usd_per_kwh": "--electricity-usd-per-kwh",
    "region": "--region",
    "engine": "--engine",
    "precision": "--precision",
}
#: Bare field names in a message's remedy ("lower input_tokens or output_tokens").
_BARE = {"input_tokens": "--input-tokens", "output_tokens": "--output-tokens"}
_FIELDS = re.compile(
    r"(?<![\w.\[\]-])("
    + "|".join(re.escape(f) for f in sorted(FIELD_OPTIONS, key=len, reverse=True))
    + r")(?![\w\[])"
)
_BARE_NAMES = re.compile(r"(?<![\w.\-])(" + "|".join(_BARE) + r")(?![\w])")


def option_text(message: str) -> str:
    """*message* with the built scenario's field paths replaced by ``compare``'s options."""
    text = _FIELDS.sub(lambda m: FIELD_OPTIONS[m.group(1)], message)
    return _BARE_NAMES.sub(lambda m: _BARE[m.group(1)], text)


def as_option_error(exc: WattgpuError) -> WattgpuError:
    """A :class:`WattgpuError` like *exc* whose text names ``compare``'s options."""
    return WattgpuError(option_text(str(exc)))
