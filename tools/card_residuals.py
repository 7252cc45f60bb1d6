"""Add the held-out residuals (``residuals``) to a model card from the evaluation's predictions.

    python tools/card_residuals.py [--predictions docs/accuracy.predictions.csv]
                                   [--card predictors/trained/model_card.json]

The predictions are what ``wattgpu evaluate`` writes beside its report; the card keeps every
other key (:func:`predictors.training.residuals.add_residuals`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from predictors.catalog.store import load_catalog
from predictors.training.residuals import add_residuals

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--predictions", type=Path, default=REPO / "docs/accuracy.predictions.csv")
    parser.add_argument("--card", type=Path, default=REPO / "predictors/trained/model_card.json")
    args = parser.parse_args()
    catalog = load_catalog()
    vendors = dict(zip(catalog.gpus["id"].to_list(), catalog.gpus["vendor"].to_list(), strict=True))
    summary = add_residuals(args.card, pl.read_csv(args.predictions), vendors)
    print(f"wrote residuals of {', '.join(summary['targets'])} into {args.card}")


if __name__ == "__main__":
    main()
