"""Fuzz round 27 (merged scenarios): where a problem found after loading was set, and what an
error line's origin prefix prints.

* F3: the replica-limit error ("needs 101,095 replicas … split the load over several entries")
  named the scenario file even when a ``--set`` or an overlay set the load; it now names the
  origin as every other field problem of a merged scenario does (docs/scenarios.md, "What-if
  overrides"). ``validate`` does not predict candidates, so it still cannot find this one.
* F6: a bidirectional override (U+202E) in a file name or ``--set`` text reached the terminal
  raw in the origin prefix while the message body escaped it; the prefix escapes it too.
* F7: ``--set 'gpus."L4".available=1'`` read the key ``"L4"`` quotes included and gave a
  duplicate-GPU error at the garbled path ``gpus[""L4""]``; a key quoted whole is now that key,
  and a key holding a ``"`` is shown as its ``repr``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.build import FleetSizeError, check_fleet_size
from planner.scenario.errors import as_error, format_path
from planner.scenario.load import load_scenario
from planner.scenario.overrides import parse_path
from tests.cli_runner import run_cli

BASE = """\
name: t
region: US
electricity_usd_per_kwh: 0.12
gpus:
  L4: {}
  A30: {}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s: 0.33, input_tokens: 1024, output_tokens: 256}
    sla: {itl_ms: 100}
"""

OVERLAY = """\
models:
  - name: chat
    load: {requests_per_s: 1000000}
"""

RPS = "models[0].load.requests_per_s"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# --- F3: the replica-limit error names where the load was set ----------------------------------


class _Demand:
    name = "chat"
    requests_per_s_by_period = (1e6,)


class _Cand:
    name, feasible, gpu, layout = "chat", True, "A30", "8"
    max_requests_per_s_per_replica = 10.0
    gpu_use = (("A30", 8),)


def test_fleet_size_error_names_the_origin_it_is_given() -> None:
    def origin(field: str) -> str:
        return f"s.yaml --set {field}=1e6"

    with pytest.raises(FleetSizeError) as bare:
        check_fleet_size([_Demand()], [_Cand()])  # type: ignore[list-item]
    assert str(bare.value).startswith(f"{RPS}: peak 1e+06 req/s for chat needs 100,000 ")
    with pytest.raises(Exception) as placed:
        check_fleet_size([_Demand()], [_Cand()], origin=origin)  # type: ignore[list-item]
    assert str(placed.value).startswith(f"s.yaml --set {RPS}=1e6: {RPS}: peak 1e+06 req/s")
    assert "split the load over several entries" in str(placed.value)


def test_loaded_scenario_knows_where_each_field_was_set(tmp_path: Path) -> None:
    base = _write(tmp_path, "base.yaml", BASE)
    overlay = _write(tmp_path, "ov.yaml", OVERLAY)
    plain = load_scenario(base).field_origin()
    assert plain is not None and plain(RPS) == str(base)
    via_set = load_scenario(base, [f"{RPS}=1e6"]).field_origin()
    assert via_set is not None and via_set(RPS) == f"{base} --set {RPS}=1e6"
    via_overlay = load_scenario(base, overlays=[overlay]).field_origin()
    assert via_overlay is not None and via_overlay(RPS) == str(overlay)
    assert via_overlay("models[0].sla.itl_ms") == str(base)


def test_origin_is_dropped_when_the_entries_change(tmp_path: Path) -> None:
    """A copy with other entries (the robust re-plan of some of them) has other indices."""
    scenario = load_scenario(_write(tmp_path, "base.yaml", BASE))
    same = scenario.model_copy(update={"robust": True})
    assert same.field_origin() is not None
    fewer = scenario.model_copy(update={"models": []})
    assert fewer.field_origin() is None


@pytest.mark.slow
def test_plan_names_the_set_and_the_overlay_that_set_the_load(tmp_path: Path) -> None:
    base = _write(tmp_path, "base.yaml", BASE)
    overlay = _write(tmp_path, "ov.yaml", OVERLAY)
    by_set = run_cli("plan", str(base), "--set", f"{RPS}=1e6")
    assert by_set.code == 1
    assert by_set.errors == [by_set.errors[0]]
    assert by_set.errors[0].startswith(f"error: {base} --set {RPS}=1e6: {RPS}: peak 1e+06 req/s")
    by_overlay = run_cli("plan", str(base), "--overlay", str(overlay))
    assert by_overlay.code == 1
    assert by_overlay.errors[0].startswith(f"error: {overlay}: {RPS}: peak 1e+06 req/s")


# --- F6: no raw bidirectional override in the origin prefix ------------------------------------


def test_bidi_override_in_file_name_is_escaped_in_the_prefix(tmp_path: Path) -> None:
    path = _write(tmp_path, "a\u202elmay.yaml", BASE)
    result = run_cli("validate", str(path), "--set", "models[0].sla.itl_ms=-1")
    assert result.code == 1
    assert "\u202e" not in result.err
    shown = str(path).replace("\u202e", "\\u202e")
    assert result.errors == [
        f"error: {shown} --set models[0].sla.itl_ms=-1: models[0].sla.itl_ms: -1 is out of "
        "range — give a value greater than 0"
    ]


def test_bidi_override_in_set_text_is_escaped_in_the_prefix(tmp_path: Path) -> None:
    path = _write(tmp_path, "base.yaml", BASE)
    result = run_cli("validate", str(path), "--set", "models[0].name=chat\u202ex")
    assert result.code == 1
    assert "\u202e" not in result.err
    assert result.errors[0].startswith(f"error: {path} --set models[0].name=chat\\u202ex: ")


def test_as_error_escapes_bidi_overrides_and_isolates() -> None:
    text = str(as_error(lambda _: "s\u2066.yaml --set x=\u202d", [("name", "bad")]))
    assert text == "s\\u2066.yaml --set x=\\u202d: name: bad"


# --- F7: a quoted --set key -------------------------------------------------------------------


def test_key_quoted_whole_is_that_key() -> None:
    assert parse_path('gpus."L4".available') == ["gpus", "L4", "available"]
    assert parse_path('gpus."a.b".x') == ["gpus", "a.b", "x"]
    assert parse_path('"gpus".L4') == ["gpus", "L4"]


@pytest.mark.parametrize("path", ['gpus.L"4.available', 'gpus."L4"x.available', 'gpus."L4'])
def test_stray_quote_in_a_path_is_refused(path: str) -> None:
    with pytest.raises(Exception, match="cannot read the path"):
        parse_path(path)


def test_quoted_set_key_works_like_the_bare_key(tmp_path: Path) -> None:
    path = _write(tmp_path, "base.yaml", BASE)
    result = run_cli("validate", str(path), "--set", 'gpus."L4".available=1')
    assert result.code == 0, result.err
    assert load_scenario(path, ['gpus."L4".available=1']).gpus["L4"].available == 1  # type: ignore[index]


def test_stray_quote_in_set_is_one_line_naming_the_set(tmp_path: Path) -> None:
    path = _write(tmp_path, "base.yaml", BASE)
    result = run_cli("validate", str(path), "--set", 'gpus.L"4.available=1')
    assert result.code == 1
    assert result.errors == [
        f"error: {path}: --set gpus.L\"4.available=1: cannot read the path at '\"4.available' — "
        "write it like models[0].load.input_tokens"
    ]


def test_key_holding_a_quote_is_shown_as_its_repr() -> None:
    assert format_path(["gpus", '"L4"']) == "gpus['\"L4\"']"
    assert format_path(["gpus", "a.b", "x"]) == 'gpus["a.b"].x'


def test_the_seconds_hint_is_given_only_for_a_latency_in_seconds() -> None:
    """``itl_ms: 0.05`` reads as 50 ms written in seconds; ``itl_ms: 1e-300`` is no latency in
    either unit and got "did you mean 1e-297, i.e. 1e-300 s?"."""
    from planner.solve.unserved import _unit_hint

    assert "did you mean 50, i.e. 0.05 s?" in _unit_hint(0.05e-3, "itl_ms")
    assert "did you mean 1, i.e. 0.001 s?" in _unit_hint(1e-6, "itl_ms")
    assert _unit_hint(1e-303, "itl_ms") == ""
    assert _unit_hint(2e-3, "itl_ms") == ""
