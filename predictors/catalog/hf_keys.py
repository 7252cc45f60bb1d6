"""Key look-ups over a raw Hugging Face ``config.json`` dict, with one-line errors that name the
file and the key: whole numbers within limits (:func:`as_int`), flags (:func:`opt_bool`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from predictors.core.errors import WattgpuError
from predictors.core.escape import short_repr

#: Keys holding structure, with the JSON kind each must be: a value of another kind (a list as
#: ``text_config``, a number as ``attn_type_list``) is refused naming the key, never read as
#: something else.
_NESTED_KINDS: dict[str, tuple[type, str]] = {
    "text_config": (Mapping, "an object"),
    "rope_scaling": (Mapping, "an object"),
    "layer_types": (list, "a list"),
    "attn_type_list": (list, "a list"),
    "mlp_only_layers": (list, "a list"),
    "layers_block_type": (list, "a list"),
    "no_rope_layers": (list, "a list"),
    "hybrid_override_pattern": (str, "a string"),
}


def _check_kinds(raw: Mapping[str, Any], source: str, where: str = "") -> None:
    """Refuse a structural key of the wrong JSON kind, naming the key and the file."""
    for key, (kind, what) in _NESTED_KINDS.items():
        value = raw.get(key)
        if value is not None and not isinstance(value, kind):
            raise WattgpuError(
                f"{source}: {where + key!r} must be {what}, got {short_repr(value, 40)}; "
                "fix it in the config.json"
            )


class HfConfig:
    """Key look-ups over a config dict with errors that name the file and the key."""

    def __init__(self, raw: Mapping[str, Any], source: str) -> None:
        if not isinstance(raw, Mapping):
            raise WattgpuError(f"{source}: a Hugging Face config.json must be a JSON object")
        merged: dict[str, Any] = dict(raw)
        _check_kinds(raw, source)
        text = raw.get("text_config")
        if isinstance(text, Mapping):
            _check_kinds(text, source, "text_config.")
            merged.update({k: v for k, v in text.items() if v is not None})
        self.raw = merged
        self.source = source
        self.model_type = str(raw.get("model_type") or merged.get("model_type") or "")

    def get(self, *keys: str) -> Any:
        """The value of the first of *keys* the config states (None when none)."""
        for key in keys:
            value = self.raw.get(key)
            if value is not None:
                return value
        return None

    def need_int(self, *keys: str) -> int:
        """A required size (at least 1)."""
        value = self.get(*keys)
        if value is None:
            raise WattgpuError(
                f"{self.source}: config has no {keys[0]!r}"
                + (f" (nor {', '.join(repr(k) for k in keys[1:])})" if len(keys) > 1 else "")
                + "; add it to the config.json"
            )
        return as_int(value, self.key_of(keys, value), self.source, minimum=1)

    def opt_int(self, *keys: str) -> int | None:
        """An optional whole number (None when absent)."""
        value = self.get(*keys)
        return None if value is None else as_int(value, self.key_of(keys, value), self.source)

    def key_of(self, keys: tuple[str, ...], value: Any) -> str:
        """The key that holds *value* (named in messages)."""
        return next((k for k in keys if self.raw.get(k) is value), keys[0])


#: Largest integer accepted in a config (a 32-bit size), and tighter limits where a size drives a
#: loop (the parameter counter walks the layers).
MAX_CONFIG_INT = 2**31 - 1
MAX_CONFIG_VALUE: dict[str, int] = {
    "num_hidden_layers": 10_000,
    "n_layer": 10_000,
    "num_layers": 10_000,
    "n_layers": 10_000,
}


def as_int(value: Any, key: str, source: str, minimum: int = 0) -> int:
    """*value* as a whole number in [minimum, the key's limit]; WattgpuError naming key and file
    otherwise (NaN, Infinity, text, fractions, booleans and huge numbers included)."""
    limit = MAX_CONFIG_VALUE.get(key, MAX_CONFIG_INT)
    shown = short_repr(value, 40)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WattgpuError(f"{source}: {key!r} must be a whole number, got {shown}")
    if isinstance(value, float) and not math.isfinite(value):
        raise WattgpuError(f"{source}: {key!r} must be a finite whole number, got {shown}")
    if not minimum <= value <= limit or value != int(value):
        raise WattgpuError(
            f"{source}: {key!r} must be a whole number from {minimum} to {limit:,}, got {shown}"
        )
    return int(value)


def opt_bool(cfg: HfConfig, *keys: str) -> bool | None:
    """A flag (JSON true/false; 0 and 1 as transformers reads them), None when absent; a
    WattgpuError naming the key for anything else (the text "false" is not false)."""
    value = cfg.get(*keys)
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    key = cfg.key_of(keys, value)
    raise WattgpuError(
        f"{cfg.source}: {key!r} must be true or false, got {short_repr(value, 40)}; "
        "write it as a JSON boolean"
    )
