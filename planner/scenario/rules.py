"""The scenario sections' cross-field rules, and validating a scenario with them put off.

A rule that ties the fields of one section together (``minimize: weighted`` needs ``weights``,
a failover gives ``replicas`` or ``nodes``, a load gives one rate, …) is a pydantic
after-validator; pydantic skips the after-validators of every model that holds a section whose
own validation failed, so one broken section rule would hide the scenario's rules that tie
sections together (a GPU under ``allowed_gpus`` not under ``gpus``, …) and the layout rules the
loader checks against the catalog (fuzz round 29). :func:`section_rule` marks such a rule, and
:data:`DEFER_RULES` as the validation context puts every marked rule off: validated with it, a
scenario whose fields all hold values of their type and range validates, and the loader
(:func:`planner.scenario.load.scenario_from_dict`) checks the rules that tie sections together
on it, so that every problem is listed at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationInfo, model_validator

M = TypeVar("M")

#: The validation context under which the rules marked :func:`section_rule` do not run.
DEFER_RULES: dict[str, bool] = {"defer_rules": True}


def deferred(info: ValidationInfo) -> bool:
    """True when the validation runs with the section rules put off (:data:`DEFER_RULES`)."""
    return isinstance(info.context, dict) and bool(info.context.get("defer_rules"))


def section_rule(check: Callable[[M], M]) -> Any:
    """*check* (a model's cross-field rule, raising a ``rule`` error) as the model's
    after-validator, which does not run under :data:`DEFER_RULES`."""

    def run(self: M, info: ValidationInfo) -> M:
        return self if deferred(info) else check(self)

    # not functools.wraps: pydantic reads the signature (self, info) to pass the context
    run.__name__, run.__qualname__, run.__doc__ = check.__name__, check.__qualname__, check.__doc__
    return model_validator(mode="after")(run)
