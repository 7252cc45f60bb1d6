"""Errors of ``wattgpu compare`` in the words of its command line.

``compare`` plans a one-model scenario it builds from its options
(:func:`planner.analysis.compare.compare_scenario_dict`); an error raised while that scenario is
read or its candidates are built names scenario fields (``models[0].load.input_tokens``). The
user typed options, so :func:`as_option_error` names those instead and leaves the scenario's name
out (``--input-tokens: …``, as ``compare``'s own errors begin: ``--gpus: …``). The precision is
the checkpoint's when ``--precision`` is not given: a message about it then says so, and how to
choose another, instead of naming an option the user did not give.
"""

from __future__ import annotations

import re

from predictors.core.errors import WattgpuError

#: The name of the built scenario in its errors (``SOURCE: field: …``), left out of them.
SOURCE = "wattgpu compare"
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
#: The ``precision:`` field of a message when ``--precision`` was not given.
CHECKPOINT_PRECISION = "the checkpoint's default precision (choose another with --precision)"


def option_text(message: str, *, precision_given: bool = True) -> str:
    """*message* with the built scenario's field paths replaced by ``compare``'s options; when
    *precision_given* is False, a ``precision:`` field by :data:`CHECKPOINT_PRECISION` and the
    word precision elsewhere left alone."""

    def option(m: re.Match[str]) -> str:
        field = m.group(1)
        if field != "precision" or precision_given:
            return FIELD_OPTIONS[field]
        return CHECKPOINT_PRECISION if m.string.startswith(":", m.end()) else field

    text = _FIELDS.sub(option, message)
    return _BARE_NAMES.sub(lambda m: _BARE[m.group(1)], text)


def as_option_error(exc: WattgpuError, *, precision_given: bool = True) -> WattgpuError:
    """A :class:`WattgpuError` like *exc* whose text names ``compare``'s options
    (:func:`option_text`), each line without the built scenario's name (:data:`SOURCE`): as
    ``compare``'s own errors, ``--input-tokens: …`` as ``--gpus: …``."""
    text = option_text(str(exc), precision_given=precision_given)
    return WattgpuError("\n".join(s.removeprefix(f"{SOURCE}: ") for s in text.split("\n")))
