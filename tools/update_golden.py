"""Regenerate the golden plan JSON files in tests/golden/ (run after retraining the predictors).

Each golden file is the plan's JSON contract (:func:`planner.documents.plan.plan_json` with
its uncertainty flags, as ``wattgpu plan FILE --format json`` writes it) without
``solve.seconds`` (wall-clock time).
tests/test_golden_plans.py compares status, allocations and totals against these files::

    python tools/update_golden.py            # every scenario of GOLDEN_SCENARIOS
    python tools/update_golden.py --check    # exit 1 when a file differs byte for byte
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GOLDEN_DIR = REPO / "tests" / "golden"
#: Example scenarios (file stems in scenarios/) with a golden plan.
GOLDEN_SCENARIOS: tuple[str, ...] = ("paper-llama8b-low-load", "enterprise-fleet")


def golden_dict(plan_json: dict[str, Any]) -> dict[str, Any]:
    """The plan's JSON without the run-dependent ``solve.seconds``, NaN-free."""
    from planner.text import json_safe

    data = json.loads(json.dumps(json_safe(plan_json)))
    data["solve"].pop("seconds", None)
    return dict(data)


def golden_text(stem: str) -> str:
    """The golden JSON text of scenarios/<stem>.yaml planned with the trained predictors."""
    from planner.analysis.flags import uncertainty_flags
    from planner.documents.plan import plan_json
    from planner.pipeline import plan_file
    from planner.text import to_json

    run = plan_file(REPO / "scenarios" / f"{stem}.yaml")
    return to_json(golden_dict(plan_json(run.plan, flags=uncertainty_flags(run))))


def main(argv: list[str] | None = None) -> int:
    """Write (or with --check, compare) every golden file; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report out-of-date files")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    stale = 0
    for stem in GOLDEN_SCENARIOS:
        path = GOLDEN_DIR / f"{stem}.json"
        text = golden_text(stem)
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if args.check:
            if current != text:
                stale += 1
                print(f"{path.relative_to(REPO)}: out of date")
            continue
        path.write_text(text, encoding="utf-8")
        status = json.loads(text)["status"]
        print(f"wrote {path.relative_to(REPO)} (status {status})")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
