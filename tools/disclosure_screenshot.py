"""Write docs/images/report-disclosure.png: the disclosure part of the enterprise-fleet report
(the same HTML and CSS as ``wattgpu report --format html``, that part alone) in headless
Chromium, 1280 px wide; and docs/images/report-enterprise-fleet.png, the top of the whole HTML
report (README), the same size.

    python tools/disclosure_screenshot.py PLAN.json   # a plan of scenarios/enterprise-fleet.yaml
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from html import escape
from pathlib import Path

from planner.documents.plan import load_plan
from planner.report.build import make_report
from planner.report.disclosure_part import disclosure_part
from planner.report.html import CSS, parts_to_html
from predictors.api import Predictor

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs" / "images" / "report-disclosure.png"
FULL = REPO / "docs" / "images" / "report-enterprise-fleet.png"


def _shoot(browser: str, page: Path, out: Path, profile: Path) -> None:
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--window-size=1280,1800",
            f"--screenshot={out}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    print(f"wrote {out}")


def main(argv: list[str]) -> int:
    report, _ = make_report(load_plan(Path(argv[0])), Predictor.load().card)
    part = disclosure_part(report)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if part is None or browser is None:
        print("error: no disclosure (infeasible plan) or no chromium on the PATH")
        return 1
    body = parts_to_html([part], [])
    html = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>'
        f"{escape(part.title)}</title><style>{CSS}</style></head><body><main>{body}</main>"
        "</body></html>"
    )
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "disclosure.html"
        page.write_text(html, encoding="utf-8")
        _shoot(browser, page, OUT, Path(tmp) / "profile")
        full = Path(tmp) / "report.html"
        subprocess.run(
            [sys.executable, "-m", "planner.cli.app", "report", argv[0], "--format", "html"]
            + ["-o", str(full)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        _shoot(browser, full, FULL, Path(tmp) / "profile")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
