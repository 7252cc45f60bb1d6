"""Fuzz round 26 (outputs): the reporting window past year 9999, the robust choice's threshold
and its fleets' load split, the sweep's base-plan error, the two per-model CO2e figures, and
`pareto -o`, SPDX decimals, grid GPU counts, GPU-mix labels and the workers' plural.

Each test below failed before its fix. A ``disclosure.reporting_start`` whose window (start +
horizon) ends after 9999-12-31 passed ``validate`` and ``plan``, and every report of the plan
stopped with ``internal error OverflowError``; the robust choice's reason rounded its threshold
(``--sla-probability 0.951`` read "at least 95%" while a fleet meeting everything in 95 % of
the draws was refused) and each re-optimised fleet was evaluated on the load split of the first
draw that chose it, so one deployment got another SLA probability in every fleet; the sweep cut
the solver's fix at 200 characters ("(raise budget_us)"); the report's per-model tables showed
two CO2e figures (the plan's, on the hourly grid profile, and the disclosure's location-based
one) under headers that named no basis; ``pareto`` had no ``-o``; SPDX energy quantities were
written with six decimals (``0.000096`` for 9.62e-05 kWh); grid points wrote GPU counts as
floats, ``gpu_mix_frequency[].fleet`` was always empty and the progress said "(1 workers)".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from planner.disclosure.exports import field_text, spdx_document
from planner.documents.disclosure import FieldDocument
from planner.documents.plan import load_plan
from planner.report.build import make_report
from planner.report.render import render_report
from planner.sweep.aggregate import robust_choice, robust_fleets
from planner.sweep.evaluate import Fleet, fleet_of
from predictors.api import Predictor
from tests.bundled_runs import BundledRuns
from tests.cli_runner import one_error_line, plan_text, run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

PAPER = "paper-llama8b-low-load"
Y9999 = """\
name: y9999
region: US
electricity_usd_per_kwh: 0.1
gpus: {L4: {}}
disclosure:
  reporting_start: "9999-06-01"
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s: 0.3, input_tokens: 512, output_tokens: 128}
    sla: {itl_ms: 100}
"""


def _saved(bundled: BundledRuns, folder: Path, edit: Any = None) -> Path:
    """The bundled paper plan's JSON in *folder*, changed by *edit* (a function of the data)."""
    data = json.loads(bundled.plan_json(PAPER))
    if edit is not None:
        edit(data)
    path = folder / "plan.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# --- F1: a reporting window that ends after 9999-12-31 --------------------------------------


def test_validate_and_plan_refuse_a_window_past_year_9999(tmp_path: Path) -> None:
    path = tmp_path / "y.yaml"
    path.write_text(Y9999, encoding="utf-8")
    fix = "give a reporting_start of 9998-12-31 or earlier, or a shorter horizon_hours"
    for command in ("validate", "plan"):
        one_error_line(run_cli(command, str(path)), "disclosure.reporting_start", "9999-12-31", fix)
    result = run_cli(
        "validate",
        PAPER,
        "--set",
        "disclosure.reporting_start=9990-01-01",
        "--set",
        "horizon_hours=1000000",
    )
    one_error_line(result, "disclosure.reporting_start", "9885-12-02 or earlier")
    from planner.scenario.disclosure import window_bounds

    # the latest start the message names fits, a day later does not
    assert window_bounds("9885-12-02", 1e6) is not None
    assert window_bounds("9885-12-03", 1e6) is None
    fits = run_cli("validate", str(path), "--set", "disclosure.reporting_start=9998-12-31")
    assert fits.code == 0, fits.err


@pytest.mark.parametrize("fmt", ["md", "json", "spdx"])
def test_a_saved_plan_with_such_a_window_is_one_line_not_an_internal_error(
    bundled: BundledRuns, tmp_path: Path, fmt: str
) -> None:
    def late(data: dict[str, Any]) -> None:
        data["assumptions"]["disclosure"] = {"reporting_start": "9999-06-01"}

    plan = _saved(bundled, tmp_path, late)
    for trust in ((), ("--trust",)):
        result = run_cli("report", str(plan), "-f", fmt, "--pareto-points", "0", *trust)
        one_error_line(result, str(plan), "assumptions.disclosure.reporting_start", "9999-12-31")


# --- F2: the robust choice states its threshold as given --------------------------------------


def _fleet(gpu: str) -> Fleet:
    return Fleet(((("chat", gpu, 1, 1, 1, 1, ""), 1),), ((1.0,),))


def _outcome(met: bool, objective: float) -> dict[str, Any]:
    return {
        "sla_met": {"chat": met},
        "power_cap_met": True,
        "budget_met": True,
        "inventory_met": True,
        "objective": objective,
        "cost_usd": objective,
    }


def test_the_robust_reason_never_rounds_its_threshold() -> None:
    fleets = [_fleet("A30"), _fleet("L4")]
    # L4 meets everything in 19 of 20 draws (95 %), A30 in all 20; L4 is cheaper
    records = [{"fleets": [_outcome(True, 2.0), _outcome(i != 0, 1.0)]} for i in range(20)]
    choice = robust_choice(fleets, [0.5, 0.5], records, 0.951, ["chat"])
    assert [c["qualifies"] for c in choice["considered"]] == [True, False]
    assert "in at least 95.1 % of 20 draws (all of them)" in choice["reason"]
    assert "95%" not in choice["reason"] and "95 %" not in choice["reason"]
    low = robust_choice(fleets, [0.5, 0.5], records[:4], 0.004, ["chat"])
    assert "in at least 0.4 % of 4 draws (1 or more of them)" in low["reason"]
    missed = [{"fleets": [_outcome(False, 1.0)] * 2}]
    none = robust_choice(fleets, [0.5, 0.5], missed, 0.955, ["chat"])
    assert none["chosen"] is None
    assert "in at least 95.5 % of the 1 draws (all of them);" in none["reason"]
    from planner.sweep.aggregate import percent_text

    assert [percent_text(p) for p in (0.955, 0.29, 1.0)] == ["95.5 %", "29 %", "100 %"]


# --- F3: a robust fleet's load split is the fleet's, not its first draw's ---------------------


def test_a_robust_fleet_gets_the_split_the_plan_would_route_whatever_the_draw_order(
    bundled: BundledRuns,
) -> None:
    run = bundled[PAPER]
    base = fleet_of(run.plan)
    chat = [
        c.key
        for c in run.inputs.candidates
        if c.feasible and c.name == "chat-8b" and c.gpu in ("L4", "A30") and c.key[2] == 1
    ]
    assert len(chat) == 2
    replicas = ((chat[0], 1), (chat[1], 1))

    def drawn(first: float) -> Fleet:
        """The mixed fleet as a draw that routed *first* of the load to its first deployment."""
        return Fleet(replicas, ((first,), (1.0 - first,)))

    one = robust_fleets([{"fleet": drawn(0.1)}, {"fleet": drawn(0.9)}], base, run.inputs)[0]
    other = robust_fleets([{"fleet": drawn(0.9)}, {"fleet": drawn(0.1)}], base, run.inputs)[0]
    assert one[0] is base and other[0] is base  # the base fleet keeps the plan's own split
    assert len(one) == len(other) == 2  # the two draws chose one fleet
    assert one[1].shares == other[1].shares
    assert sum(s[0] for s in one[1].shares) == pytest.approx(1.0)
    assert one[1].shares not in (drawn(0.1).shares, drawn(0.9).shares)


@pytest.mark.slow
def test_the_planned_split_gives_every_bundled_plan_its_own_split_back(
    bundled: BundledRuns,
) -> None:
    from planner.sweep.split import planned_split

    run = bundled["enterprise-fleet"]  # batch-translation has two deployments, 24 periods
    base = fleet_of(run.plan)
    again = planned_split(base, run.inputs)
    for mine, planned in zip(base.shares, again.shares, strict=True):
        assert np.allclose(mine, planned, atol=1e-9)


# --- F4: the sweep's base-plan error keeps the solver's fix whole ----------------------------


def test_the_sweeps_infeasible_base_plan_error_keeps_the_fix_whole() -> None:
    result = run_cli("sweep", PAPER, "--set", "budget_usd=10", "--draws", "3")
    line = one_error_line(result, "the base plan is infeasible", "a sweep needs a base plan")
    assert "(raise budget_usd to at least that)" in line
    assert "budget_us)" not in line


# --- F5: each per-model CO2e figure names its basis -------------------------------------------


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory, module_cached_predictor: None) -> Path:
    """The paper scenario planned on an hourly grid profile (its one period at 250 g/kWh, not
    the region's annual average)."""
    folder = tmp_path_factory.mktemp("round26_profile")
    scenario = (Path(__file__).resolve().parent.parent / "scenarios" / f"{PAPER}.yaml").read_text(
        encoding="utf-8"
    )
    scenario += "disclosure:\n  grid_profile_g_co2_per_kwh: [250]\n  grid_profile_source: test\n"
    result, out = plan_text(folder, scenario)
    assert result.code == 0, result.err
    return out


def _header(text: str, *parts: str) -> str:
    """The first line of *text* that holds every one of *parts* (a table's header)."""
    return next(line for line in text.splitlines() if all(p in line for p in parts))


@pytest.mark.parametrize("fmt", ["md", "text", "html"])
def test_both_per_model_co2e_columns_name_their_basis(
    bundled: BundledRuns, profiled: Path, tmp_path: Path, fmt: str
) -> None:
    predictor = Predictor.load()
    for plan, basis in ((profiled, "hourly grid"), (_saved(bundled, tmp_path), "location-based")):
        doc, _ = make_report(load_plan(plan), predictor.card, pareto_points=0)
        text = render_report(doc, fmt, None)
        deployment = f"CO2e kg ({basis})"
        disclosure = "CO2e kg (location-based)"
        if fmt == "html":
            assert f"<th>{deployment}</th>" in text or f">{deployment}<" in text
            assert f">{disclosure}<" in text
            continue
        assert deployment in _header(text, "Wh / request", "avg W")
        assert disclosure in _header(text, "model id", "Wh/request")


# --- F7: pareto -o, SPDX decimals, GPU counts, mix labels, plural ----------------------------


def test_pareto_writes_its_front_with_output(bundled: BundledRuns, tmp_path: Path) -> None:
    plan = _saved(bundled, tmp_path)
    out = tmp_path / "sub" / "front.json"
    result = run_cli("pareto", str(plan), "-n", "2", "-f", "json", "-o", str(out))
    assert result.code == 0, result.err
    assert result.out == ""
    assert f"wrote json Pareto front to {out}" in result.err
    front = json.loads(out.read_text(encoding="utf-8"))
    assert front["scenario"] == PAPER and len(front["points"]) >= 1
    table = tmp_path / "front.txt"
    assert run_cli("pareto", str(plan), "-n", "2", "-o", str(table)).code == 0
    assert table.read_text(encoding="utf-8").startswith("Estimated energy ↔ cost Pareto front")
    before = plan.read_text(encoding="utf-8")
    one_error_line(run_cli("pareto", str(plan), "-n", "2", "-o", str(plan)), "--output")
    assert plan.read_text(encoding="utf-8") == before


def test_spdx_energy_quantities_keep_every_digit(bundled: BundledRuns, tmp_path: Path) -> None:
    from planner.disclosure.exports import decimal_text

    assert decimal_text(9.62181e-05) == "0.0000962181"
    assert decimal_text(842.8713) == "842.8713"
    assert decimal_text(1e20) == "100000000000000000000"
    assert decimal_text(5.0) == "5"
    doc, _ = make_report(load_plan(_saved(bundled, tmp_path)), Predictor.load().card)
    assert doc.disclosure is not None
    spdx = spdx_document(doc)
    packages = [n for n in spdx["@graph"] if n.get("type") == "ai_AIPackage"]
    for package, model in zip(packages, doc.disclosure.models, strict=True):
        (given,) = package["ai_energyConsumption"]["ai_inferenceEnergyConsumption"]
        quantity = given["ai_energyQuantity"]
        assert re.fullmatch(r"\d+(\.\d+)?", quantity), quantity
        assert float(quantity) == model.fields["energy_facility_kwh"].value
    ranged = FieldDocument(
        value=9.6e-05, unit="kWh", label="modelled", source="s", p10=7.7e-05, p90=1.1e-04
    )
    assert "P10-P90 7.7e-05 to 0.00011;" in field_text(ranged)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory, module_cached_predictor: None) -> Any:
    """A 2-draw sweep of the paper scenario with a 2-point ``gpu_available`` grid: its JSON, its
    path and the command's result."""
    out = tmp_path_factory.mktemp("round26_sweep") / "sweep.json"
    result = run_cli(
        "sweep",
        PAPER,
        "--draws",
        "2",
        "--set",
        "sweep.grid.gpu_available.L4=[0,2]",
        "-f",
        "json",
        "-o",
        str(out),
    )
    assert result.code == 0, result.err
    return json.loads(out.read_text(encoding="utf-8")), out, result


def test_the_sweep_writes_whole_gpu_counts_and_names_each_gpu_mix(
    swept: Any, bundled: BundledRuns, tmp_path: Path
) -> None:
    data, out, result = swept
    counts = [r["point"]["gpu_available"]["L4"] for r in data["grid"]]
    assert counts == [0, 2] and all(type(n) is int for n in counts)
    assert re.search(r'"gpu_available": \{\s*"L4": 0\s*\}', out.read_text(encoding="utf-8"))
    mixes = data["summary"]["stability"]["gpu_mix_frequency"]
    assert mixes
    for mix in mixes:
        assert mix["fleet"] == ", ".join(f"{g}×{n}" for g, n in mix["gpus"].items())
    assert "(1 worker)" in result.err and "(1 workers)" not in result.err
    # the file still reads back (a report of its base plan with it)
    report = run_cli(
        "report", str(_saved(bundled, tmp_path)), "--sweep", str(out), "--pareto-points", "0"
    )
    assert report.code == 0, report.err
    assert "gpu_available.L4=2" in report.out and "L4×2" in report.out
