"""The layouts of batch rows: each row's stated degrees checked and resolved by
:func:`predictors.catalog.validity.layout_problems`, memoised per catalog."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from predictors.catalog.validity import Layout, layout_problems

#: Largest stated layout degree (two NVL72 racks); larger ones are range errors of row_checks.
MAX_DEGREE = 144


def _out_of_range(value: float | None) -> bool:
    return value is not None and not (1 <= value <= MAX_DEGREE and value == int(value))


def _whole(value: float | None) -> int | None:
    return None if value is None or not math.isfinite(value) else int(value)


def row_layouts(
    catalog: Any,
    models: Sequence[str | None],
    gpus: Sequence[str | None],
    gpu_counts: Sequence[float | None],
    stated: Sequence[tuple[float | None, float | None, float | None]] | None = None,
    engines: Sequence[str | None] | None = None,
    precisions: Sequence[str | None] | None = None,
) -> tuple[list[str], list[Layout | None]]:
    """One error text per row ('' when valid or not checkable: unresolved names, bad counts) and
    the resolved layout (None where not valid). *stated* holds each row's ``pipeline_parallel``,
    ``data_parallel``, ``expert_parallel`` (None: not stated); *engines* each row's canonical
    engine (None: not checked); *precisions* each row's canonical precision (None: not checked).
    *catalog* is a :class:`predictors.catalog.store.Catalog`;
    *models* and *gpus* are resolved ids."""
    cache: dict[tuple[Any, ...], tuple[str, Layout | None]] = catalog.memo("layouts")
    llms: dict[str, dict[str, Any]] = {}
    gpu_rows: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    layouts: list[Layout | None] = []
    degrees = stated or [(None, None, None)] * len(models)
    engine_of = engines or [None] * len(models)
    precision_of = precisions or [None] * len(models)
    for model, gpu, count, given, engine, precision in zip(
        models, gpus, gpu_counts, degrees, engine_of, precision_of, strict=True
    ):
        if model is None or gpu is None or count is None or not math.isfinite(count):
            errors.append("")  # unresolved names and NaN/inf counts are reported by other checks
            layouts.append(None)
            continue
        if count < 1 or count != int(count) or any(_out_of_range(g) for g in given):
            errors.append("")  # reported by the positive-whole-number checks
            layouts.append(None)
            continue
        pp, dp, ep = (_whole(g) for g in given)
        key = (model, gpu, int(count), pp, dp, ep, engine, precision)
        if key not in cache:
            llm = llms.get(model) or llms.setdefault(model, catalog.llm(model))
            spec = gpu_rows.get(gpu) or gpu_rows.setdefault(gpu, catalog.gpu(gpu))
            layout, problems = layout_problems(
                llm, spec, key[2], pp, dp, ep, engine=engine, precision=precision
            )
            cache[key] = ("; ".join(problems), layout)
        errors.append(cache[key][0])
        layouts.append(cache[key][1])
    return errors, layouts
