"""Hostile plan documents, sixth round: candidate records the optimiser refuses, curves and
per-period lists of the wrong length, and booleans in number fields.

* A candidate that :class:`planner.inputs.Candidate` (or the planning inputs around it) refuses
  — a power curve that falls, ``max_requests_per_s_per_replica: 0`` on a feasible candidate, a
  negative idle power, a layout degree below 1, a model entry, GPU or region the plan does not
  have — stopped ``report`` with ``planning inputs: candidate support-bot,L40S,1: …`` (no file,
  no field), with or without ``--trust``. Each is now ``FILE: candidates[k].FIELD: …``, found
  before anything builds a candidate, and not reportable even with ``--trust``.
* A curve shortened on an allocated candidate (``load_curve_requests_per_s`` and the rest), or a
  per-period list that the periods do not match, ended the check in an internal error (exit 2).
* pydantic's lax mode read ``"replicas": true`` as 1; a plan is now read in strict mode, so a
  boolean (or ``2.0``) in an integer field and a boolean in a number field are refused.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import Result, one_error_line, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from plan_fixtures import REGIONS_SCENARIO, planned

from planner.documents import verify_candidates
from planner.documents.plan import read_plan
from planner.documents.verify import plan_problems
from planner.documents.verify_candidates import candidate_problems
from planner.documents.verify_pools import record_identity
from predictors.api import Predictor

#: Their fixtures plan disaggregated scenarios (about 5 s each): the slow pass runs them.
pytestmark = pytest.mark.slow

Edit = Callable[[dict[str, Any]], None]
REPO = Path(__file__).resolve().parent.parent
EDITED = "the plan was edited or damaged: plan the scenario again"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory, predictor: Predictor) -> dict[str, Any]:
    """``wattgpu plan enterprise-fleet --format json``."""
    return planned(tmp_path_factory, predictor, "enterprise-fleet")


@pytest.fixture(scope="module")
def units(tmp_path_factory: pytest.TempPathFactory, predictor: Predictor) -> dict[str, Any]:
    """``wattgpu plan disagg-tight-sla --format json``: aggregated replicas and units."""
    return planned(tmp_path_factory, predictor, "disagg-tight-sla")


@pytest.fixture(scope="module")
def regional(tmp_path_factory: pytest.TempPathFactory, predictor: Predictor) -> dict[str, Any]:
    """The plan JSON of tests/fixtures/regions.yaml (two regions)."""
    return planned(tmp_path_factory, predictor, REGIONS_SCENARIO)


def _one_error(result: Result, *parts: str) -> str:
    """The single ``error:`` line of a failed command, which holds every one of *parts* and
    never blames the planning inputs."""
    return one_error_line(result, *parts, never=("planning inputs",))


def _allocated(data: dict[str, Any], units_only: bool = False) -> int:
    """The candidate record of the first allocation (of the first unit with *units_only*)."""
    a = next(a for a in data["allocations"] if a.get("pools") or not units_only)
    return next(
        j for j, c in enumerate(data["candidates"]) if record_identity(c) == record_identity(a)
    )


def _saved(tmp_path: Path, data: dict[str, Any], edit: Edit | None = None, name: str = "p") -> Path:
    copy_ = copy.deepcopy(data)
    if edit is not None:
        edit(copy_)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(copy_), encoding="utf-8")
    return path


def _report(path: Path) -> Iterator[Result]:
    for trust in ([], ["--trust"]):
        yield run_cli("report", str(path), "-f", "md", "-o", str(path.with_suffix(".md")), *trust)


def _named_even_with_trust(path: Path, said: str) -> None:
    """``report`` and ``report --trust`` both stop on one line that starts with *said*."""
    plain, trusted = _report(path)
    assert _one_error(plain).startswith(f"error: {path}: {said}"), plain.err
    assert plain.err.rstrip().endswith(EDITED) and "--trust" not in plain.err  # it would not help
    line = _one_error(trusted)
    assert line.startswith(f"error: {path}: {said}") and "not reportable even with --trust" in line


def _field(key: str, value: Callable[[Any], Any]) -> Callable[[dict[str, Any], int], None]:
    def edit(c: dict[str, Any], _k: int) -> None:
        c[key] = value(c.get(key))

    return edit


def _knot(key: str, j: int, value: Callable[[list[float]], float]) -> Callable[..., None]:
    def edit(c: dict[str, Any], _k: int) -> None:
        c[key][j] = value(c[key])

    return edit


# (id, the edit of the allocated candidate, what the line says after ``candidates[k].``)
CANDIDATE_EDITS: list[tuple[str, Callable[[dict[str, Any], int], None], str]] = [
    (
        "power_falls",
        _field("power_curve_w_per_replica", lambda p: p[::-1]),
        "power_curve_w_per_replica[1]: ",
    ),
    (
        "no_capacity",
        _field("max_requests_per_s_per_replica", lambda _: 0),
        "max_requests_per_s_per_replica: 0.0 is impossible for a feasible candidate (above 0)",
    ),
    (
        "negative_idle",
        _field("idle_power_w_per_replica", lambda _: -1.0),
        "idle_power_w_per_replica: -1.0 is impossible (negative or not finite)",
    ),
    (
        "negative_energy",
        _field("energy_j_per_request", lambda v: -v),
        "energy_j_per_request: -",
    ),
    (
        "negative_price",
        _field("usd_per_hour_per_replica", lambda _: -0.5),
        "usd_per_hour_per_replica: -0.5 is impossible",
    ),
    (
        "negative_power_at_capacity",
        _field("power_w_per_gpu_at_capacity", lambda _: -3.0),
        "power_w_per_gpu_at_capacity: -3.0 is impossible",
    ),
    ("negative_batch", _field("batch_size", lambda _: -1), "batch_size: -1 is impossible"),
    ("tp_zero", _field("tp", lambda _: 0), "tp: 0 is impossible (at least 1)"),
    ("no_gpus", _field("gpus_per_replica", lambda _: 0), "gpus_per_replica: 0 is impossible"),
    ("pp_zero", _field("pipeline_parallel", lambda _: 0), "pipeline_parallel: 0 is impossible"),
    ("dp_negative", _field("data_parallel", lambda _: -2), "data_parallel: -2 is impossible"),
    ("ep_zero", _field("expert_parallel", lambda _: 0), "expert_parallel: 0 is impossible"),
    ("nodes_zero", _field("nodes", lambda _: 0), "nodes: 0 is impossible (at least 1)"),
    (
        "layout_beyond_its_gpus",
        _field("pipeline_parallel", lambda _: 8),
        "gpus_per_replica: ",  # fewer than the tp × pipeline_parallel × data_parallel GPUs
    ),
    (
        "no_itl",
        _field("itl_s_at_capacity", lambda _: None),
        "itl_s_at_capacity: null is impossible for a feasible candidate (a finite ITL)",
    ),
    (
        "curve_from_above_zero",
        _knot("load_curve_requests_per_s", 0, lambda _: 0.5),
        "load_curve_requests_per_s[0]: 0.5 is impossible (the curve starts at 0 req/s)",
    ),
    (
        "rates_repeat",
        _knot("load_curve_requests_per_s", 3, lambda xs: xs[2]),
        "load_curve_requests_per_s[3]: ",
    ),
    (
        "unknown_entry",
        _field("name", lambda _: "nobody"),
        "name: 'nobody' is not a model entry of the plan",
    ),
    ("unknown_gpu", _field("gpu", lambda _: "B999"), "gpu: 'B999' is not in the plan's inventory"),
    (
        "region_without_regions",
        _field("region", lambda _: "mars"),
        "region: 'mars', but the plan has no regions",
    ),
]


@pytest.mark.parametrize(
    ("edit", "said"), [e[1:] for e in CANDIDATE_EDITS], ids=[e[0] for e in CANDIDATE_EDITS]
)
def test_a_candidate_the_optimiser_refuses_is_named_by_file_and_field(
    tmp_path: Path, fleet: dict[str, Any], edit: Callable[[dict[str, Any], int], None], said: str
) -> None:
    """Each was ``error: planning inputs: candidate support-bot,L40S,1: …``, even with --trust
    (or, for the falling curve, a list of recomputed figures, then that line with --trust)."""
    k = _allocated(fleet)

    def tamper(d: dict[str, Any]) -> None:
        edit(d["candidates"][k], k)

    _named_even_with_trust(_saved(tmp_path, fleet, tamper), f"candidates[{k}].{said}")


def test_a_falling_power_curve_says_where_and_why(tmp_path: Path, fleet: dict[str, Any]) -> None:
    k = _allocated(fleet)

    def tamper(d: dict[str, Any]) -> None:
        d["candidates"][k]["power_curve_w_per_replica"][2] = 1.0  # below the idle knot

    line = _one_error(next(_report(_saved(tmp_path, fleet, tamper))))
    assert f"candidates[{k}].power_curve_w_per_replica[2]: 1.0 W is impossible (below" in line
    assert "a replica's power does not fall as its load grows" in line


@pytest.mark.parametrize(
    ("key", "other"),
    [
        ("load_curve_requests_per_s", "power_curve_w_per_replica"),
        ("power_curve_w_per_replica", "load_curve_requests_per_s"),
        ("itl_curve_s", "load_curve_requests_per_s"),
    ],
)
def test_a_shortened_curve_of_an_allocated_candidate_is_named_not_an_internal_error(
    tmp_path: Path, fleet: dict[str, Any], key: str, other: str
) -> None:
    """Shortening the load curve ended verify_allocations in ``internal error ValueError: fp and
    xp are not of the same length`` (exit 2); the others in ``planning inputs``."""
    k = _allocated(fleet)
    knots = len(fleet["candidates"][k][key])

    def tamper(d: dict[str, Any]) -> None:
        d["candidates"][k][key] = d["candidates"][k][key][:4]

    path = _saved(tmp_path, fleet, tamper)
    _named_even_with_trust(path, f"candidates[{k}].{key}: 4 knots, but its {other} has {knots}")
    good = _saved(tmp_path, fleet, name="good")
    line = _one_error(run_cli("diff", str(good), str(path)))
    assert (
        line.startswith(f"error: {path}: candidates[{k}].{key}: 4 knots") and str(good) not in line
    )


def test_an_emptied_load_curve_is_named(tmp_path: Path, fleet: dict[str, Any]) -> None:
    k = _allocated(fleet)

    def tamper(d: dict[str, Any]) -> None:
        d["candidates"][k]["load_curve_requests_per_s"] = []

    knots = len(fleet["candidates"][k]["power_curve_w_per_replica"])
    said = f"candidates[{k}].load_curve_requests_per_s: 0 knots, but its power_curve_w_per_replica"
    _named_even_with_trust(_saved(tmp_path, fleet, tamper), f"{said} has {knots}")


def test_a_units_shortened_load_curve_names_the_load_curve_not_its_pools(
    tmp_path: Path, units: dict[str, Any]
) -> None:
    """The pools' curves are held against the knots most of the unit's curves share, so the one
    curve the edit shortened is named (the pools' were blamed for it)."""
    k = _allocated(units, units_only=True)

    def tamper(d: dict[str, Any]) -> None:
        d["candidates"][k]["load_curve_requests_per_s"] = d["candidates"][k][
            "load_curve_requests_per_s"
        ][:3]

    _named_even_with_trust(
        _saved(tmp_path, units, tamper), f"candidates[{k}].load_curve_requests_per_s: 3 knots"
    )


def test_a_candidate_in_a_region_without_its_gpu_is_named(
    tmp_path: Path, regional: dict[str, Any]
) -> None:
    k = _allocated(regional)
    gpu = regional["candidates"][k]["gpu"]
    elsewhere = [r["name"] for r in regional["regions"] if gpu not in r["inventory"]]
    assert elsewhere, "the fixture has a region without the GPU"

    def moved(d: dict[str, Any]) -> None:
        d["candidates"][k]["region"] = elsewhere[0]

    def unknown(d: dict[str, Any]) -> None:
        d["candidates"][k]["region"] = "atlantis"

    _named_even_with_trust(
        _saved(tmp_path, regional, moved),
        f"candidates[{k}].gpu: {gpu!r} is not in the inventory of its region {elsewhere[0]!r}",
    )
    _named_even_with_trust(
        _saved(tmp_path, regional, unknown),
        f"candidates[{k}].region: 'atlantis' is not a region of the plan",
    )


def test_a_candidate_listed_twice_is_not_reportable_with_trust(
    tmp_path: Path, fleet: dict[str, Any]
) -> None:
    """--trust reported it as a warning, then stopped on ``planning inputs: … duplicate``."""

    def tamper(d: dict[str, Any]) -> None:
        d["candidates"].append(copy.deepcopy(d["candidates"][5]))
        d["candidate_counts"]["kept"] += 1
        d["candidate_counts"]["total"] += 1

    path = _saved(tmp_path, fleet, tamper)
    n = len(fleet["candidates"])
    _named_even_with_trust(path, f"candidates[{n}]: the same candidate as candidates[5]")


# --- per-period lists --------------------------------------------------------------------------


def _shorter(*keys: str) -> Edit:
    def edit(d: dict[str, Any]) -> None:
        node: Any = d
        for key in keys[:-1]:
            node = node[int(key)] if key.isdigit() else node[key]
        node[keys[-1]] = node[keys[-1]][:3]

    return edit


PERIOD_EDITS = [
    ("allocation_load", _shorter("allocations", "0", "requests_per_s_by_period"),
     "allocations[0].requests_per_s_by_period: 3 values for 24 periods (one per period)"),
    ("allocation_power", _shorter("allocations", "0", "power_w_by_period"),
     "allocations[0].power_w_by_period: 3 values for 24 periods"),
    ("hours", _shorter("assumptions", "period_hours"),
     "assumptions.period_hours: 3 values for 24 periods"),
    ("entry_load", _shorter("models", "0", "requests_per_s_by_period"),
     "models[0].requests_per_s_by_period: 3 values for 24 periods"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "said"), [e[1:] for e in PERIOD_EDITS], ids=[e[0] for e in PERIOD_EDITS]
)
def test_a_per_period_list_off_the_periods_is_named_not_an_internal_error(
    tmp_path: Path, fleet: dict[str, Any], edit: Edit, said: str
) -> None:
    """The loads and hours ended verify_allocations in an internal error (matmul), the model
    entry's load in ``planning inputs: model …``, the power with --trust in an internal error."""
    assert fleet["assumptions"]["periods"] == 24
    _named_even_with_trust(_saved(tmp_path, fleet, edit), said)


def test_an_edited_period_count_is_named(tmp_path: Path, fleet: dict[str, Any]) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["assumptions"]["periods"] = 5

    said = "assumptions.periods: 5, but the plan's lists hold 24 periods"
    _named_even_with_trust(_saved(tmp_path, fleet, edit), said)


def test_a_regions_grid_profile_off_the_periods_is_named(
    tmp_path: Path, regional: dict[str, Any]
) -> None:
    r = next(i for i, g in enumerate(regional["regions"]) if g["grid_g_co2_per_kwh_by_period"])
    periods = regional["assumptions"]["periods"]

    def edit(d: dict[str, Any]) -> None:
        d["regions"][r]["grid_g_co2_per_kwh_by_period"] = [1.0]

    said = f"regions[{r}].grid_g_co2_per_kwh_by_period: 1 values for {periods} periods"
    _named_even_with_trust(_saved(tmp_path, regional, edit), said)


# --- booleans and integers ---------------------------------------------------------------------


def _set(path: str, value: Any) -> Edit:
    """Set the field at the dotted *path* (list indices as numbers; ``K`` is the allocated
    candidate) to *value*."""

    def edit(d: dict[str, Any]) -> None:
        keys = [str(_allocated(d)) if k == "K" else k for k in path.split(".")]
        node: Any = d
        for key in keys[:-1]:
            node = node[int(key)] if key.isdigit() else node[key]
        node[int(keys[-1]) if keys[-1].isdigit() else keys[-1]] = value

    return edit


BOOLEANS = [
    ("allocations.0.replicas", True, "Input should be a valid integer, got true"),
    ("allocations.0.gpus", True, "Input should be a valid integer, got true"),
    ("allocations.0.replicas", 2.0, "Input should be a valid integer, got 2.0"),
    ("allocations.0.energy_kwh", False, "Input should be a valid number, got false"),
    ("candidates.K.tp", True, "Input should be a valid integer, got true"),
    ("candidates.K.batch_size", False, "Input should be a valid integer, got false"),
    ("candidates.K.max_requests_per_s_per_replica", True, "Input should be a valid number"),
    ("candidates.K.load_curve_requests_per_s.1", True, "Input should be a valid number"),
    ("candidates.K.feasible", 1, "Input should be a valid boolean, got 1"),
    ("models.0.min_replicas", True, "Input should be a valid integer, got true"),
    ("models.0.requests_per_s_by_period.0", True, "Input should be a valid number"),
    ("assumptions.pue", True, "Input should be a valid number, got true"),
    ("assumptions.periods", True, "Input should be a valid integer, got true"),
    ("inventory.L4", True, "Input should be a valid integer, got true"),
    ("totals.gpus.L4", True, "Input should be a valid integer, got true"),
    ("solve.threads", True, "Input should be a valid integer, got true"),
    ("candidate_counts.total", True, "Input should be a valid integer, got true"),
    ("objective_breakdown.gpu_rent_weight", True, "Input should be a valid number, got true"),
]


@pytest.mark.parametrize(
    ("field", "value", "said"), BOOLEANS, ids=[f"{f}={v!r}" for f, v, _ in BOOLEANS]
)
def test_a_boolean_in_a_number_field_is_refused(
    tmp_path: Path, fleet: dict[str, Any], field: str, value: Any, said: str
) -> None:
    """Lax mode read ``"replicas": true`` as 1 (and the plan then checked, or was reported)."""
    path = _saved(tmp_path, fleet, _set(field, value))
    where = re.sub(r"\.(\d+)", r"[\1]", field.replace("K", str(_allocated(fleet))))
    for result in _report(path):
        line = _one_error(result, f"error: {path}: not a valid plan JSON: {where}: {said}")
        assert line.endswith("give a file written by `wattgpu plan SCENARIO --format json`")


def test_a_whole_number_still_reads_as_a_number_and_the_codes_as_codes(
    tmp_path: Path, fleet: dict[str, Any]
) -> None:
    """Strict mode takes an integer for a number (``"hours": 8760``), and the exclusion codes
    (an enum) from their JSON strings; an unknown code lists the known ones."""
    assert fleet["assumptions"]["hours"] == 8760.0
    path = _saved(tmp_path, fleet, _set("assumptions.hours", 8760))
    assert '"hours": 8760,' in path.read_text(encoding="utf-8")
    plain, _ = _report(path)
    assert plain.code == 0, plain.err
    doc, _ = read_plan(path)
    assert {c.exclusion.value for c in doc.candidates} >= {"", "itl_sla"}
    bad = _saved(tmp_path, fleet, _set("candidates.0.exclusion", "too_slow"), name="bad")
    _one_error(next(_report(bad)), "candidates[0].exclusion: Input should be '', 'memory',")


@pytest.mark.parametrize("stem", ["enterprise-fleet", "paper-llama8b-low-load"])
def test_the_golden_plans_read_strictly(tmp_path: Path, stem: str) -> None:
    data = json.loads((REPO / "tests" / "golden" / f"{stem}.json").read_text(encoding="utf-8"))
    data["solve"]["seconds"] = 0.1  # goldens leave out the wall-clock time
    doc, checked = read_plan(_saved(tmp_path, data))
    assert doc.scenario == stem and checked["allocations"]


@pytest.mark.slow
def test_untouched_plans_read_report_and_diff(
    tmp_path: Path, fleet: dict[str, Any], units: dict[str, Any], regional: dict[str, Any]
) -> None:
    for name, data in (("fleet", fleet), ("units", units), ("regional", regional)):
        path = _saved(tmp_path, data, name=name)
        plain, _ = _report(path)
        assert plain.code == 0, (name, plain.err)
        assert run_cli("diff", str(path), str(path)).code == 0


# --- the vectorised pass -----------------------------------------------------------------------


def test_the_vectorised_pass_clears_every_candidate_of_untouched_plans(
    fleet: dict[str, Any], units: dict[str, Any], regional: dict[str, Any]
) -> None:
    """Nothing is left to the field-by-field checks on a sound plan (the 18 MB plan's 9,198
    candidates check in ~22 ms; one by one they took 90 ms)."""
    for data in (fleet, units, regional):
        assert plan_problems(copy.deepcopy(data)) == []
        names = {m["name"] for m in data["models"]}
        stock = {r["name"]: r["inventory"] for r in data.get("regions") or []} or None
        flagged = verify_candidates._flagged(data["candidates"], names, data["inventory"], stock)
        assert flagged == []
    older = copy.deepcopy(fleet)  # plans written before layouts: null degrees (1)
    for c in older["candidates"]:
        c.update(dict.fromkeys(verify_candidates.DEGREES))
    names = {m["name"] for m in older["models"]}
    assert verify_candidates._flagged(older["candidates"], names, older["inventory"], None) == []
    assert candidate_problems(older) == []


def _curve_op(op: str) -> Callable[[list[float]], list[float]]:
    ops: dict[str, Callable[[list[float]], list[float]]] = {
        "reverse": lambda v: v[::-1],
        "shorten": lambda v: v[:-1],
        "empty": lambda v: [],
        "repeat": lambda v: [*v[:2], *v[1:]],
        "raise_first": lambda v: [v[0] + 0.5, *v[1:]] if v else v,
        "shift": lambda v: [x + 0.5 for x in v],
        "lower_last": lambda v: [*v[:-1], v[-1] - 1e3] if v else v,
    }
    return ops[op]


_CURVES = st.tuples(
    st.sampled_from(["load_curve_requests_per_s", "power_curve_w_per_replica", "itl_curve_s"]),
    st.sampled_from(
        ["reverse", "shorten", "empty", "repeat", "raise_first", "shift", "lower_last"]
    ),
).map(lambda t: (t[0], ("curve", t[1])))
_NUMBERS = st.one_of(
    st.tuples(st.sampled_from(verify_candidates.INTEGERS), st.integers(-2, 3) | st.none()),
    st.tuples(
        st.sampled_from(verify_candidates.NUMBERS),
        st.floats(-2.0, 2.0) | st.integers(-1, 1) | st.none(),
    ),
    st.tuples(st.just("feasible"), st.booleans()),
    st.tuples(st.sampled_from(["name", "gpu", "region"]), st.sampled_from(["L4", "x", "", None])),
)
#: What no plan document holds (the vectorised pass leaves these to the checks one by one).
_ODD = st.tuples(
    st.sampled_from([*verify_candidates.INTEGERS, *verify_candidates.NUMBERS, "feasible"]),
    st.sampled_from([True, False, 1.5, "1", 10**400, [], 0]),
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    edits=st.lists(
        st.tuples(st.integers(0, 10**6), _CURVES | _NUMBERS | _ODD), min_size=1, max_size=3
    )
)
def test_the_vectorised_pass_finds_what_the_checks_one_by_one_find(
    fleet: dict[str, Any], edits: list[tuple[int, tuple[str, Any]]]
) -> None:
    data = copy.deepcopy(fleet)
    curved = [c for c in data["candidates"] if c["load_curve_requests_per_s"]]
    for i, (key, value) in edits:
        c = curved[i % len(curved)] if i % 2 else data["candidates"][i % len(data["candidates"])]
        if isinstance(value, tuple):
            c[key] = _curve_op(value[1])(c[key])
        else:
            c[key] = value
    fast = candidate_problems(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(verify_candidates, "_suspects", lambda records, *_: range(len(records)))
        assert fast == candidate_problems(data)
