"""Generate docs/serving-accuracy.md: the serving model's held-out (LOGO) accuracy.

Inputs: the held-out predictions ``wattgpu evaluate`` writes (docs/accuracy.predictions.csv:
every row predicted by a fold model that never saw its GPU) and the measurements in
``../shared/data/measurements`` (ML.ENERGY v2/v3 and Argonne rows). Two checks:

* **throughput at the measured concurrency**: measured output tokens/s against ``b / τ(b)``,
  where ``τ(b)`` is the serving model's step time at the measured mean concurrency ``b``
  (held-out ITL + the chunked prefill of the arriving prompts, their TP all-reduce included;
  the ITL alone where the source's throughput is ``b / ITL`` by construction: latency / L,
  or ML.ENERGY v2's Little's-law batch), and
  against the plain ``b / ITL(b)``;
* **power at load**: measured power per GPU against the serving model's ``E[P(K)]``,
  ``K ~ Poisson(b)``, with ``P(k)`` the held-out power predictions of the row's group
  (same source, model, GPU, engine, precision, tokens, TP) at its measured batch sizes
  (linear between them, idle at 0), and against the plain at-batch prediction ``P(b)``.

a third on the TTFT of aggregated replicas at the measured concurrency, with predictors
retrained without the row's GPU (:mod:`predictors.training.agg_ttft_accuracy`), and a fourth on
the measured disaggregated (prefill/decode) runs: TTFT, TPOT and throughput per
GPU of the disaggregated serving model with predictors retrained without the row's GPU
(:mod:`predictors.training.disagg_accuracy`).

Run (takes ~6 min: nine fold retrains)::

    .venv/bin/python tools/serving_accuracy.py [--data ../shared/data/measurements]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SOURCES: tuple[str, ...] = ("mlenergy-v2", "mlenergy-v3", "argonne")
KEYS: list[str] = [
    "source",
    "model",
    "gpu",
    "engine",
    "precision",
    "batch_size",
    "input_tokens",
    "output_tokens",
    "gpu_count",
]
OUT = REPO / "docs" / "serving-accuracy.md"


def _cast(frame: pl.DataFrame) -> pl.DataFrame:
    floats = ["batch_size", "input_tokens", "output_tokens", "gpu_count"]
    return frame.with_columns([pl.col(c).cast(pl.Float64) for c in floats])


def held_out(path: Path, target: str) -> pl.DataFrame:
    """LOGO predictions of *target* by our method on the three sources."""
    d = pl.read_csv(path)
    return _cast(
        d.filter(
            (pl.col("target") == target)
            & (pl.col("split") == "logo")
            & (pl.col("method") == "ours")
            & pl.col("source").is_in(SOURCES)
        )
    )


def measured(data_dir: Path) -> pl.DataFrame:
    """Mean measured throughput and power per key (duplicates averaged)."""
    from predictors.measurements.load import load_measurements

    table = _cast(load_measurements(data_dir).table.filter(pl.col("source").is_in(SOURCES)))
    return table.group_by(KEYS).agg(
        pl.col("output_throughput_tok_s").mean(),
        pl.col("power_w_per_gpu").mean(),
        pl.col("itl_includes_prefill").fill_null(False).all(),
    )


def step_time_s(rows: pl.DataFrame, phys: pl.DataFrame) -> np.ndarray:
    """``τ(b)`` of *rows* (held-out ITL ``predicted``): :func:`measured_step_time_s`."""
    from predictors.measurements.schema import step_time_is_itl
    from predictors.serving.grid import measured_step_time_s

    return measured_step_time_s(
        rows["predicted"].to_numpy(),
        phys["prefill_s"].fill_null(0.0).to_numpy(),
        rows["batch_size"].to_numpy(),
        rows["output_tokens"].to_numpy(),
        step_time_is_itl(rows).to_numpy(),
    )


def _ape(pred: np.ndarray, true: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.abs(pred - true) / np.abs(true) * 100.0
    return result


def throughput_table(itl: pl.DataFrame, meas: pl.DataFrame) -> pl.DataFrame:
    """MdAPE of the serving model's and the plain throughput at the measured concurrency."""
    from predictors.api import Predictor
    from predictors.serving.grid import row_physics

    rows = itl.join(meas, on=KEYS, how="inner").filter(
        pl.col("output_throughput_tok_s").is_not_null() & (pl.col("output_throughput_tok_s") > 0)
    )
    phys = row_physics(rows, Predictor.load())
    b = rows["batch_size"].to_numpy()
    tau = step_time_s(rows, phys)
    true = rows["output_throughput_tok_s"].to_numpy()
    frame = rows.select("source").with_columns(
        pl.Series("serving", _ape(b / tau, true)),
        pl.Series("plain", _ape(b / rows["predicted"].to_numpy(), true)),
    )
    return _summary(frame)


#: Fewest rows a (family, dense/MoE, shape) group needs to be listed in the capacity table.
MIN_GROUP_ROWS = 20


def _shape(rows: pl.DataFrame) -> pl.Expr:
    """prompt-heavy (input >= 4 x output), output-heavy (output >= input) or balanced."""
    i, o = pl.col("input_tokens"), pl.col("output_tokens")
    return (
        pl.when(i >= 4 * o)
        .then(pl.lit("prompt-heavy"))
        .when(o >= i)
        .then(pl.lit("output-heavy"))
        .otherwise(pl.lit("balanced"))
    )


def capacity_ratio_table(itl: pl.DataFrame, meas: pl.DataFrame) -> pl.DataFrame:
    """Signed median of predicted / measured throughput at the measured concurrency, per model
    family, dense or MoE and prompt/output shape (groups of at least :data:`MIN_GROUP_ROWS`).

    Above 1 the serving model over-states what a replica carries (the unsafe direction: too few
    GPUs planned); below 1 it under-states it."""
    from predictors.api import Predictor
    from predictors.serving.grid import row_physics

    predictor = Predictor.load()
    rows = itl.join(meas, on=KEYS, how="inner").filter(
        pl.col("output_throughput_tok_s").is_not_null() & (pl.col("output_throughput_tok_s") > 0)
    )
    phys = row_physics(rows, predictor)
    b = rows["batch_size"].to_numpy()
    tau = step_time_s(rows, phys)
    llms = predictor.catalog.llms.select(
        pl.col("id").alias("model"), "family", pl.col("is_moe").cast(pl.Boolean)
    )
    frame = (
        rows.with_columns(pl.Series("ratio", b / tau / rows["output_throughput_tok_s"].to_numpy()))
        .join(llms, on="model", how="left")
        .with_columns(
            pl.when(pl.col("is_moe")).then(pl.lit("MoE")).otherwise(pl.lit("dense")).alias("kind"),
            _shape(rows).alias("shape"),
        )
    )
    groups = (
        frame.group_by("family", "kind", "shape")
        .agg(
            pl.len().alias("rows"),
            pl.col("ratio").median().alias("median_ratio"),
            pl.col("ratio").quantile(0.1).alias("p10_ratio"),
            pl.col("ratio").quantile(0.9).alias("p90_ratio"),
        )
        .filter(pl.col("rows") >= MIN_GROUP_ROWS)
        .sort("family", "kind", "shape")
    )
    total = frame.select(
        pl.lit("all").alias("family"),
        pl.lit("").alias("kind"),
        pl.lit("").alias("shape"),
        pl.len().alias("rows"),
        pl.col("ratio").median().alias("median_ratio"),
        pl.col("ratio").quantile(0.1).alias("p10_ratio"),
        pl.col("ratio").quantile(0.9).alias("p90_ratio"),
    )
    return pl.concat([groups, total.cast(groups.schema)])


def _ratio_md(frame: pl.DataFrame) -> list[str]:
    lines = [
        "| family | dense/MoE | shape | rows | median predicted / measured | P10–P90 | "
        "within 0.85–1.15 |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in frame.iter_rows(named=True):
        within = "yes" if 0.85 <= r["median_ratio"] <= 1.15 else "**no**"
        lines.append(
            f"| {r['family']} | {r['kind']} | {r['shape']} | {r['rows']:,} | "
            f"{r['median_ratio']:.2f} | {r['p10_ratio']:.2f}–{r['p90_ratio']:.2f} | {within} |"
        )
    return lines


def _poisson_mean(curve_b: np.ndarray, curve_p: np.ndarray, idle: float, mean: float) -> float:
    """E[P(K)], K ~ Poisson(mean), P linear between the (batch, power) points, idle at 0."""
    xs = np.concatenate(([0.0], curve_b))
    ps = np.concatenate(([idle], curve_p))
    top = int(mean + 12.0 * math.sqrt(mean) + 30.0)
    k = np.arange(top + 1, dtype=np.float64)
    logpmf = k * math.log(mean) - mean - np.asarray([math.lgamma(v + 1.0) for v in k])
    pmf = np.exp(logpmf)
    return float((pmf * np.interp(k, xs, ps)).sum() / pmf.sum())


def power_table(power: pl.DataFrame) -> pl.DataFrame:
    """MdAPE of the serving model's power at load and of the plain at-batch prediction."""
    from predictors.catalog.store import load_catalog

    catalog = load_catalog()
    group = [k for k in KEYS if k != "batch_size"]
    rows: list[dict[str, object]] = []
    for _, g in power.group_by(group, maintain_order=True):
        g = g.sort("batch_size")
        curve = g.group_by("batch_size", maintain_order=True).agg(pl.col("predicted").mean())
        idle = float(catalog.gpu(g["gpu"][0])["idle_power_w"])
        cb, cp = curve["batch_size"].to_numpy(), np.maximum(curve["predicted"].to_numpy(), idle)
        for r in g.iter_rows(named=True):
            at_load = _poisson_mean(cb, cp, idle, float(r["batch_size"]))
            rows.append(
                {
                    "source": r["source"],
                    "serving": abs(at_load - r["measured"]) / r["measured"] * 100.0,
                    "plain": abs(r["predicted"] - r["measured"]) / r["measured"] * 100.0,
                }
            )
    return _summary(pl.DataFrame(rows))


def _summary(frame: pl.DataFrame) -> pl.DataFrame:
    per = frame.group_by("source").agg(
        pl.len().alias("rows"),
        pl.col("serving").median().alias("serving_mdape_pct"),
        pl.col("plain").median().alias("plain_mdape_pct"),
    )
    total = frame.select(
        pl.lit("all").alias("source"),
        pl.len().alias("rows"),
        pl.col("serving").median().alias("serving_mdape_pct"),
        pl.col("plain").median().alias("plain_mdape_pct"),
    )
    return pl.concat([per.sort("source"), total.cast(per.schema)])


def _md(frame: pl.DataFrame, serving: str, plain: str) -> list[str]:
    lines = [f"| source | rows | {serving} MdAPE | {plain} MdAPE |", "|---|---|---|---|"]
    for r in frame.iter_rows(named=True):
        lines.append(
            f"| {r['source']} | {r['rows']:,} | {r['serving_mdape_pct']:.1f} % "
            f"| {r['plain_mdape_pct']:.1f} % |"
        )
    return lines


def render(
    thr: pl.DataFrame,
    pw: pl.DataFrame,
    cap: pl.DataFrame,
    disagg: list[str] | None = None,
    agg_ttft: list[str] | None = None,
) -> str:
    lines = [
        "# Serving model: held-out accuracy (LOGO)",
        "",
        "Generated by `tools/serving_accuracy.py` from `docs/accuracy.predictions.csv`",
        "(written by `wattgpu evaluate`: every prediction comes from a fold model that never saw",
        "the row's GPU) and the ML.ENERGY v2/v3 and Argonne measurements. MdAPE = median",
        "absolute percentage error. Method: docs/method.md §3.",
        "",
        "## Throughput at the measured concurrency",
        "",
        "Measured output tokens/s against `b / τ(b)` at the measured mean concurrency `b`, with",
        "the serving model's step time `τ(b)` = held-out ITL + chunked prefill of the arriving",
        "prompts (`b · c_p / O`, their TP all-reduce included; for Argonne, whose per-token",
        "latency is latency / L with the prefill included, and ML.ENERGY v2, whose batch is read",
        "by Little's law from its throughput and mean TPOT, the throughput is `b / ITL` by",
        "construction: the ITL alone), and against the plain `b / ITL(b)`.",
        "",
        *_md(thr, "serving model", "plain b/ITL"),
        "",
        "## Capacity: signed ratio by model family",
        "",
        "The same held-out serving-model throughput `b / τ(b)` divided by the measured one, per",
        "model family, dense or MoE and shape (prompt-heavy: input ≥ 4 × output; output-heavy:",
        f"output ≥ input; groups of at least {MIN_GROUP_ROWS} rows). The median is signed: above 1",
        "the planner over-states what a replica carries (the unsafe direction: too few GPUs),",
        "below 1 it under-states it. aiconfigurator rows publish no throughput in this copy, so",
        "they are not in this table.",
        "",
        *_ratio_md(cap),
        "",
        "## Power at load",
        "",
        "Measured power per GPU against the serving model's mean power at mean concurrency `b`,",
        "`E[P(K)]` with `K ~ Poisson(b)` (idle when empty), where `P(k)` interpolates the held-out",
        "predictions of the row's group (source, model, GPU, engine, precision, tokens, TP) at its",
        "measured batch sizes; and against the plain held-out prediction `P(b)`. These benchmark",
        "rows are closed-loop runs at a fixed number of sequences (no Poisson arrivals are",
        "published in these sources), so `P(b)` is the matching quantity for them and the",
        "Poisson column shows how much the arrival model moves the estimate at the same mean",
        "concurrency.",
        "",
        *_md(pw, "serving model (Poisson)", "at-batch P(b)"),
        "",
        *(agg_ttft or []),
        *(disagg or []),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data/measurements")
    parser.add_argument("--predictions", type=Path, default=REPO / "docs/accuracy.predictions.csv")
    parser.add_argument("--output", type=Path, default=OUT)
    ns = parser.parse_args(argv)
    from predictors.catalog.store import load_catalog
    from predictors.core.output import atomic_write
    from predictors.training.agg_ttft_accuracy import section as agg_ttft_section
    from predictors.training.disagg_report import disagg_section

    meas = measured(ns.data)
    itl = held_out(ns.predictions, "itl")
    text = render(
        throughput_table(itl, meas),
        power_table(held_out(ns.predictions, "power")),
        capacity_ratio_table(itl, meas),
        disagg_section(ns.data, load_catalog()),
        agg_ttft_section(ns.data, load_catalog()),
    )
    atomic_write(ns.output, text.encode("utf-8"))
    print(f"wrote {ns.output}")


if __name__ == "__main__":
    main()
