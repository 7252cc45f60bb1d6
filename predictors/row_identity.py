"""What each predicted row is about: the catalog ids its names resolve to and the definition of
its latency numbers (the batch contract's last columns, :data:`IDENTITY_COLUMNS`).

* ``model_id`` / ``gpu_id``: the catalog ids the row's ``model`` and ``gpu`` resolve to (an
  alias such as ``h100`` is the SXM part, a quantised checkpoint's name its base model); empty
  where the name resolves to nothing (the row's ``error`` says so).
* ``metric_definition``: which ITL the row's ``itl_s`` is. Sources define ITL differently
  (docs/data.md); a prediction is always a decode ITL without prefill, in the reference source's
  protocol (the model card's ``reference_source``): at ``batch_size`` the median ITL at steady
  state with that many sequences running; at ``requests_per_s`` the mean over the requests of a
  Poisson stream (``itl_s_p90`` its 90th percentile, ``ttft_s_at_load`` the mean TTFT). Empty on
  a row with an error (it has no prediction).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from predictors.catalog.quantised import resolve_llm
from predictors.core.errors import WattgpuError

IDENTITY_COLUMNS: tuple[str, ...] = ("model_id", "gpu_id", "metric_definition")


def metric_definition(reference_source: str, at_rate: bool) -> str:
    """The ``metric_definition`` text of a row predicted at a batch or at a Poisson rate."""
    protocol = f"; {reference_source} protocol" if reference_source else ""
    if at_rate:
        return f"decode ITL without prefill, mean over requests at requests_per_s{protocol}"
    return f"decode ITL without prefill, median at steady state at batch_size{protocol}"


def _resolved(names: pl.Series, resolve: Callable[[str], str]) -> pl.Series:
    """Each name's id by *resolve* (one call per distinct name); null where it resolves to none."""
    ids: dict[str, str | None] = {}
    for name in names.drop_nulls().unique().to_list():
        try:
            ids[name] = resolve(str(name).strip())
        except WattgpuError:
            ids[name] = None
    return names.replace_strict(ids, default=None, return_dtype=pl.String)


def identity_columns(
    catalog: Any, rows: pl.DataFrame, reference_source: str, at_rate: pl.Series, ok: pl.Series
) -> pl.DataFrame:
    """:data:`IDENTITY_COLUMNS` of *rows* (their ``model`` and ``gpu`` as given), *at_rate* true
    where a row is predicted at a rate, *ok* true where it was predicted (no error)."""
    model = rows["model"].cast(pl.String)
    gpu = rows["gpu"].cast(pl.String)
    definition = pl.Series(
        "metric_definition",
        [
            metric_definition(reference_source, bool(r)) if good else ""
            for r, good in zip(at_rate.to_list(), ok.to_list(), strict=True)
        ],
        dtype=pl.String,
    )
    return pl.DataFrame(
        [
            _resolved(model, lambda n: resolve_llm(catalog, n)).alias("model_id"),
            _resolved(gpu, catalog.resolve_gpu).alias("gpu_id"),
            definition,
        ]
    )
