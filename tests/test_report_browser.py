"""The HTML report in headless Chromium: loads without console errors, shows the headline totals,
holds its inline SVG charts in the rendered DOM, and the page paints them (the screenshot is not
blank where they are). Skipped when Debian's ``chromium`` is not installed."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli.app import app
from planner.report.blocks import num

pytestmark = pytest.mark.browser

SCENARIO = """\
name: browser-test
horizon_hours: 720
region: FR
pue: 1.3
electricity_usd_per_kwh: 0.15
objective: {minimize: energy}
gpus:
  L4: {}
  A100-SXM4-80GB: {}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s_by_period: [2.0, 0.5], input_tokens: 512, output_tokens: 256}
    sla: {itl_ms: 60}
"""
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium not installed (Debian: apt-get install chromium)")


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.slow  # starts headless Chromium (~5 s)
def test_html_report_renders_in_chromium(tmp_path: Path) -> None:
    browser = _chromium()
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    html = tmp_path / "report.html"
    json_out = tmp_path / "report.json"
    runner = CliRunner()
    for fmt, out in (("html", html), ("json", json_out)):
        result = runner.invoke(
            app,
            ["report", str(scenario), "-f", fmt, "-o", str(out), "--pareto-points", "2"],
        )
        assert result.exit_code == 0, result.output
    import json

    headline = json.loads(json_out.read_text())["headline"]
    proc = subprocess.run(
        [browser, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", html.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    assert not console, console
    dom = proc.stdout
    for ident, key in (
        ("headline-energy", "estimated_energy_kwh"),
        ("headline-facility-energy", "estimated_facility_energy_kwh"),
        ("headline-co2e", "estimated_co2e_kg"),
        ("headline-cost", "estimated_cost_usd"),
    ):
        assert f'id="{ident}">{num(headline[key])}<' in dom, ident
    # the disclosure part renders with its fields and the report's JSON values
    disclosure = json.loads(json_out.read_text())["disclosure"]
    assert "Disclosure fields (EU AI Act, SCI, GHG Protocol, AI Energy Score)" in dom
    for key in ("energy_gpu_kwh", "sci_g_co2e_per_1m_output_tokens", "embodied_kg_co2e"):
        assert f'<td>{key}</td><td class="n">{num(disclosure["fields"][key]["value"])}<' in dom
    charts = re.findall(r'<figure id="chart-([a-z_]+)"><svg viewBox="0 0 ([0-9.]+) ([0-9.]+)"', dom)
    assert {key for key, _, _ in charts} >= {"energy_cost", "gpu_mix", "power_load", "pareto"}
    assert all(float(w) > 0 and float(h) > 0 for _, w, h in charts)
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [
            browser,
            *FLAGS,
            f"--user-data-dir={tmp_path / 'profile2'}",
            "--window-size=1200,2000",
            f"--screenshot={shot}",
            html.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _png_size(shot.read_bytes()) == (1200, 2000)
    from PIL import Image  # matplotlib's dependency

    histogram = Image.open(shot).convert("L").histogram()  # pixels per grey level
    assert sum(histogram[:128]) > 0.01 * sum(histogram)  # text, tables and charts drawn
