"""Fuzz round 22: saved plans and sweeps whose edits the checks on reading let through.

Each test below failed before its fix. ``assumptions.hours`` was not the sum of ``period_hours``
(4380 h over 8760 h of periods: a report whose totals contradict its forecast; 0 h: an internal
error under ``--trust``); a candidate's power or ITL interval could be swapped or leave
[idle, TDP] (the uncertainty bands collapsed to zero width); a name or the scenario could hold
an ANSI escape or a bidirectional override (sent raw into the text report, the html, ``diff``
and ``pareto``); a sweep's summary quantiles and a flag's SLA probability were not those of its
records; ``grid_region`` could name another region than its factor, and ``optimal`` go with any
gap; a number beyond a float's range (``1e400``) read as ``None is impossible``. Each is now
one ``error:`` line naming the file and the field, exit 1; the plans and the sweep ``wattgpu``
writes still report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import Result, one_error_line, run_cli

SCENARIO = "paper-llama8b-low-load"
Edit = Callable[[dict[str, Any]], None]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, module_cached_predictor: None) -> Path:
    """A folder holding ``plan.json`` freshly written by ``wattgpu plan``."""
    where = tmp_path_factory.mktemp("round22_saved")
    planned = run_cli("plan", SCENARIO, "-f", "json", "-o", str(where / "plan.json"))
    assert planned.code == 0, planned.err
    return where


@pytest.fixture(scope="module")
def swept(folder: Path) -> Path:
    """*folder* with ``sweep.json`` too, freshly written by ``wattgpu sweep`` (8 draws)."""
    result = run_cli(
        "sweep", SCENARIO, "--draws", "8", "-f", "json", "-o", str(folder / "sweep.json")
    )
    assert result.code == 0, result.err
    return folder


def _read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _edited(folder: Path, tmp_path: Path, edit: Edit, name: str = "plan.json") -> Path:
    data = _read(folder / name)
    edit(data)
    out = tmp_path / f"edited-{name}"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def _report(path: Path, tmp_path: Path, *args: str) -> Result:
    return run_cli(
        "report", str(path), "-f", "md", "--pareto-points", "0", "-o", str(tmp_path / "r.md"), *args
    )


def test_the_fresh_plan_and_sweep_report(swept: Path, tmp_path: Path) -> None:
    """The baseline every edit below starts from."""
    result = _report(swept / "plan.json", tmp_path, "--sweep", str(swept / "sweep.json"))
    assert result.code == 0, result.err
    assert "warning" not in result.err


# --- 1. the horizon ----------------------------------------------------------------------------


def test_hours_other_than_the_sum_of_the_periods_are_refused(folder: Path, tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:  # half the horizon, the rent edited to match
        data["assumptions"]["hours"] = 4380.0
        for alloc in data["allocations"]:
            half = alloc["gpu_cost_usd"] / 2
            for record in (alloc, data["totals"]):
                record["gpu_cost_usd"] -= half
                record["cost_usd"] -= half
            data["objective_breakdown"]["gpu_cost_usd"] -= half

    result = _report(_edited(folder, tmp_path, edit), tmp_path)
    one_error_line(result, "assumptions.hours: 4380", "8760", "edited or damaged")


@pytest.mark.parametrize("trust", [(), ("--trust",)], ids=["checked", "trusted"])
def test_zero_hours_are_refused_even_with_trust(
    folder: Path, tmp_path: Path, trust: tuple[str, ...]
) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["assumptions"]["hours"] = 0

    result = _report(_edited(folder, tmp_path, edit), tmp_path, *trust)
    one_error_line(result, "assumptions.hours: 0.0 is impossible", never=("ZeroDivisionError",))


# --- 2. a candidate's intervals ----------------------------------------------------------------


def _swap_power(data: dict[str, Any]) -> None:
    c = data["candidates"][0]
    c["power_w_per_gpu_lo"], c["power_w_per_gpu_hi"] = (
        c["power_w_per_gpu_hi"],
        c["power_w_per_gpu_lo"],
    )


def _itl_below_its_point(data: dict[str, Any]) -> None:
    c = data["candidates"][0]
    c["itl_s_hi"] = c["itl_s_at_capacity"] / 2


def _itl_lo_above_its_point(data: dict[str, Any]) -> None:
    c = data["candidates"][0]
    c["itl_s_lo"] = c["itl_s_at_capacity"] * 2


@pytest.mark.parametrize(
    ("edit", "field", "words"),
    [
        (_swap_power, "candidates[0].power_w_per_gpu_lo", "above power_w_per_gpu_predicted"),
        (_itl_below_its_point, "candidates[0].itl_s_hi", "below itl_s_at_capacity"),
        (_itl_lo_above_its_point, "candidates[0].itl_s_lo", "above itl_s_at_capacity"),
    ],
    ids=["swapped", "itl-hi", "itl-lo"],
)
def test_an_interval_that_does_not_hold_its_point_is_refused(
    folder: Path, tmp_path: Path, edit: Edit, field: str, words: str
) -> None:
    result = _report(_edited(folder, tmp_path, edit), tmp_path)
    assert result.code == 1, result.err
    assert "Traceback" not in result.err and "internal error" not in result.err
    assert result.errors[0].startswith(f"error: {tmp_path / 'edited-plan.json'}: {field}: ")
    assert words in result.errors[0]
    assert "edited or damaged" in result.errors[-1]


# --- 3. control characters and bidirectional overrides -----------------------------------------


def _set_text(path: str, value: str) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        node: Any = data
        keys = [
            int(k) if k.isdigit() else k for k in path.replace("[", ".").replace("]", "").split(".")
        ]
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value

    return edit


def _bad_inventory_key(data: dict[str, Any]) -> None:
    data["inventory"]["L4\x1b[2J"] = 1


@pytest.mark.parametrize(
    ("edit", "field", "char"),
    [
        (_set_text("models[0].name", "chat-8b\x1b[31m"), "models[0].name", "U+001B"),
        (_set_text("scenario", "paper\u202ereversed"), "scenario", "U+202E"),
        (_set_text("description", "bell\x07"), "description", "U+0007"),
        (_set_text("allocations[0].gpu", "L4\x00"), "allocations[0].gpu", "U+0000"),
        (_set_text("allocations[0].name", "chat\n8b"), "allocations[0].name", "U+000A"),
        (_set_text("assumptions.grid_source", "US\x9b31m"), "assumptions.grid_source", "U+009B"),
        (_set_text("candidates[1].reason", "fine\u2066"), "candidates[1].reason", "U+2066"),
        (_bad_inventory_key, "inventory: the key", "U+001B"),
    ],
    ids=["name", "scenario", "description", "gpu", "newline", "c1", "reason", "key"],
)
def test_a_control_character_in_the_text_is_refused(
    folder: Path, tmp_path: Path, edit: Edit, field: str, char: str
) -> None:
    saved = _edited(folder, tmp_path, edit)
    for command in (
        ("report", str(saved), "-f", "text", "-o", str(tmp_path / "r.txt")),
        ("diff", str(folder / "plan.json"), str(saved)),
        ("pareto", str(saved)),
    ):
        result = run_cli(*command)
        line = one_error_line(result, field, char, "edited or damaged")
        assert not any(ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F for ch in line), line
        assert "\u202e" not in line and "\u2066" not in line


@pytest.mark.slow
def test_a_description_with_line_breaks_still_reports(folder: Path, tmp_path: Path) -> None:
    """A scenario's description may hold tabs and line breaks (a YAML block scalar)."""
    saved = _edited(folder, tmp_path, _set_text("description", "First line.\n\tSecond line.\n"))
    for fmt in ("md", "text", "html"):
        result = run_cli("report", str(saved), "-f", fmt, "-o", str(tmp_path / f"r.{fmt}"))
        assert result.code == 0, result.err


# --- 4. a sweep's summary and flags against its records ----------------------------------------


def _summary_quantiles(data: dict[str, Any]) -> None:
    data["summary"]["optimal"]["energy_kwh"] = {"p10": 1.0, "p50": 2.0, "p90": 3.0, "mean": 2.0}


def _flag_probability(data: dict[str, Any]) -> None:
    data["flags"][0]["sla_probability"] = 0.99


def _summary_probability(data: dict[str, Any]) -> None:
    name = next(iter(data["summary"]["sla_probability"]))
    data["summary"]["sla_probability"][name] = 0.99
    for flag in data["flags"]:
        flag["sla_probability"] = 0.99


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (_summary_quantiles, "summary.optimal.energy_kwh: p10 1, p50 2, p90 3, mean 2"),
        (_flag_probability, "flags[0].sla_probability: 0.99"),
        (_summary_probability, "summary.sla_probability.chat-8b: 0.99"),
    ],
    ids=["quantiles", "flag", "probability"],
)
def test_a_sweep_summary_the_records_do_not_give_is_refused(
    swept: Path, tmp_path: Path, edit: Edit, field: str
) -> None:
    sweep = _edited(swept, tmp_path, edit, "sweep.json")
    assert _read(swept / "sweep.json")["flags"], "the sweep no longer flags its allocation"
    result = _report(swept / "plan.json", tmp_path, "--sweep", str(sweep))
    assert result.code == 1, result.err
    assert "Traceback" not in result.err and "internal error" not in result.err
    assert result.errors[0].startswith(f"error: {sweep}: {field}, but ")
    assert "the sweep JSON was edited or damaged" in result.errors[-1]


# --- 5. provenance: the grid region and the solve's status -------------------------------------


def _region_only(data: dict[str, Any]) -> None:
    data["assumptions"]["grid_region"] = "FR"


def _region_and_source(data: dict[str, Any]) -> None:
    a = data["assumptions"]
    a["grid_region"] = "FR"
    a["grid_source"] = a["grid_source"].replace("grid_carbon.csv US:", "grid_carbon.csv FR:")


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (_region_only, "is not that region's catalog row"),
        (_region_and_source, "but grid_g_co2_per_kwh is 369.473"),
    ],
    ids=["region", "region-and-source"],
)
def test_a_grid_region_other_than_its_factors_is_refused(
    folder: Path, tmp_path: Path, edit: Edit, words: str
) -> None:
    assert _read(folder / "plan.json")["assumptions"]["grid_region"] == "US"
    result = _report(_edited(folder, tmp_path, edit), tmp_path)
    one_error_line(result, "assumptions.grid_region: 'FR'", words, "edited or damaged")


def test_optimal_is_refused_beyond_the_relative_gap(folder: Path, tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        assert data["status"] == "optimal"
        data["solve"]["gap"] = 0.5

    result = _report(_edited(folder, tmp_path, edit), tmp_path)
    one_error_line(result, "solve.gap: 0.5", "relative_gap 0.0001", "'optimal'")


# --- 6. numbers beyond a float's range ---------------------------------------------------------


#: (what the plan JSON holds, what the edit writes there, the field named).
OVERFLOWS = [
    ('"pue": 1.58', '"pue": 1e400', "assumptions.pue"),
    ('"carbon_usd_per_kg": null', '"carbon_usd_per_kg": 1E+999', "assumptions.carbon_usd_per_kg"),
    (
        '"power_curve_w_per_replica": [',
        '"power_curve_w_per_replica": [-1e999, ',
        "candidates[0].power_curve_w_per_replica[0]",
    ),
]


@pytest.mark.parametrize(("old", "new", "field"), OVERFLOWS, ids=["pue", "optional", "curve"])
def test_a_number_beyond_a_float_is_an_unusable_number(
    folder: Path, tmp_path: Path, old: str, new: str, field: str
) -> None:
    text = json.dumps(_read(folder / "plan.json"))
    assert old in text
    saved = tmp_path / "overflow.json"
    saved.write_text(text.replace(old, new, 1), encoding="utf-8")
    result = _report(saved, tmp_path)
    one_error_line(result, f"unusable number in JSON ({field}: beyond a float's range)")
