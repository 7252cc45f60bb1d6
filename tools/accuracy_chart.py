"""Draw the held-out accuracy chart of ``docs/accuracy-summary.md`` from evaluation predictions.

    python tools/accuracy_chart.py [--predictions docs/accuracy.predictions.csv]
                                   [--output docs/images/accuracy-held-out.svg]

The chart is the report's own (:func:`planner.report.svg_charts.accuracy_chart`: predicted
against measured, unseen GPUs and unseen LLMs), so the docs and ``wattgpu report`` show the same
picture; run it after ``wattgpu evaluate`` has rewritten the predictions CSV. The write is atomic.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from planner.report.svg_charts import accuracy_chart
from predictors.core.output import atomic_write

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--predictions", type=Path, default=REPO / "docs/accuracy.predictions.csv")
    parser.add_argument("--output", type=Path, default=REPO / "docs/images/accuracy-held-out.svg")
    args = parser.parse_args()
    svg, note = accuracy_chart(args.predictions)
    if svg is None:
        print(f"accuracy_chart: {note}", file=sys.stderr)
        return 1
    if "xmlns=" not in svg.split(">", 1)[0]:  # inline SVG needs none; a standalone file does
        svg = svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
    atomic_write(args.output, svg.encode())
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
