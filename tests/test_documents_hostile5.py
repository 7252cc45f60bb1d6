"""Hostile plan documents, fifth round: a key stated twice in one JSON object, and a
disaggregated unit or pool that cannot be one.

* pydantic-core's parser (like the standard library's) keeps the last of two equal keys, so
  ``{"status": "infeasible", "status": "optimal"}`` was read as optimal, silently. Every JSON
  input read by :func:`predictors.core.safe_read.load_json` now refuses it, naming the file, the
  object's JSON path and the key; the check compares the members the depth scan counts (``:``
  outside strings) with the entries of the parsed value, so it can never miss a repeat.
* ``allocations[2].pools[1].workers: 0`` was refused with ``planning inputs: decode pool
  H100...``, naming neither the file nor the field; a unit a candidate cannot be (its pools
  against its GPUs, its GPU type, its deployment) and a pool curve off the unit's knots were
  refused the same way with ``--trust``, or ended in an internal error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import Result, one_error_line, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.documents.verify_pools import record_identity
from predictors.core import safe_read
from predictors.core.errors import WattgpuError
from predictors.core.safe_read import json_members, load_json, parse_json, value_members
from tests.bundled_runs import BundledRuns

Edit = Callable[[dict[str, Any]], None]


def _one_error(result: Result, *parts: str) -> str:
    """The single ``error:`` line of a failed command, which holds every one of *parts* and
    never blames the planning inputs."""
    return one_error_line(result, *parts, never=("planning inputs",))


# --- a key stated twice ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def paper_plan(bundled: BundledRuns) -> str:
    """The text of ``wattgpu plan paper-llama8b-low-load --format json``."""
    return bundled.plan_json("paper-llama8b-low-load")


def test_a_repeated_top_level_key_is_refused_not_read_last_one_wins(
    tmp_path: Path, paper_plan: str
) -> None:
    data = json.loads(paper_plan)
    assert data["status"] == "optimal" and data["allocations"]
    path = tmp_path / "plan.json"
    path.write_text(paper_plan.replace("{", '{"status": "infeasible", ', 1), encoding="utf-8")
    assert parse_json(path.read_text(encoding="utf-8"))["status"] == "optimal"  # last one wins
    for args in (["report", str(path)], ["report", str(path), "--trust"]):
        line = _one_error(run_cli(*args, "-f", "json", "--pareto-points", "0"))
        assert line.startswith(
            f'error: {path}: key "status" appears twice in the top-level object — keep one'
        ), line
    untouched = tmp_path / "untouched.json"
    untouched.write_text(paper_plan, encoding="utf-8")
    assert run_cli("report", str(untouched), "-f", "json", "--pareto-points", "0").code == 0


def test_a_repeat_deep_in_the_plan_is_named_by_its_path_and_diff_names_the_file(
    tmp_path: Path, paper_plan: str
) -> None:
    good = tmp_path / "a.json"
    good.write_text(paper_plan, encoding="utf-8")
    bad = tmp_path / "b.json"
    # the first allocation states its replicas three times: 1, 99, then the written count
    text = paper_plan.replace('"replicas": ', '"replicas": 1, "replicas": 99, "replicas": ', 1)
    bad.write_text(text, encoding="utf-8")
    line = _one_error(run_cli("diff", str(good), str(bad)), str(bad))
    assert 'key "replicas" appears 3 times in the object at allocations[0] — keep one' in line
    assert str(good) not in line


def test_the_first_object_in_document_order_is_named(tmp_path: Path) -> None:
    cases = {
        # a repeat inside the value a repeated key drops is reached through its parent
        '{"a": {"x": 1, "x": 2}, "a": 3}': 'key "a" appears twice in the top-level object',
        '{"a": [0, {"b": {"k": 1, "k": 2}}], "z": {"q": 1, "q": 1}}': (
            'key "k" appears twice in the object at a[1].b'
        ),
        '[{"ok": 1}, {"odd key\\n": 1, "odd key\\n": 2}]': (
            'key "odd key\\n" appears twice in the object at [1]'
        ),
        '{"x y": {"": 1, "": 2}}': 'key "" appears twice in the object at ["x y"]',
    }
    for i, (text, said) in enumerate(cases.items()):
        path = tmp_path / f"{i}.json"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(WattgpuError) as err:
            load_json(path)
        assert str(err.value) == f"{path}: {said} — keep one of them"


def test_a_long_or_odd_repeated_key_is_shown_short_and_on_one_line(tmp_path: Path) -> None:
    for key, shown in (
        ("k" * 5000, '"' + "k" * 57 + '…"'),
        ("a\u202e\x1b[31m\n", '"a\\u202e\\u001b[31m\\n"'),
    ):
        path = tmp_path / "odd.json"
        path.write_text(f'{{"x": 1, {json.dumps(key)}: 1, {json.dumps(key)}: 2}}', "utf-8")
        with pytest.raises(WattgpuError) as err:
            load_json(path)
        assert str(err.value) == (
            f"{path}: key {shown} appears twice in the top-level object — keep one of them"
        )


def test_colons_quotes_and_brackets_inside_strings_are_not_members(tmp_path: Path) -> None:
    value = {
        'a:"b"': 'c: d, "e": {f: [1, 2]}',
        "back\\": "slash\\",
        "nested": [{"x:": '\\":'}, {":": ":"}],
    }
    text = json.dumps(value)
    assert json_members(text) == value_members(parse_json(text)) == 5
    path = tmp_path / "colons.json"
    path.write_text(text, encoding="utf-8")
    assert load_json(path) == value


def test_a_repeated_key_in_a_hugging_face_config_is_refused(tmp_path: Path) -> None:
    config = Path(__file__).parent / "fixtures" / "llama8b_config.json"
    text = config.read_text(encoding="utf-8").replace("{", '{\n  "hidden_size": 1024,', 1)
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    user = tmp_path / "uc"
    result = run_cli("catalog", "import-hf", str(path), "--id", "acme/twice-8b",
                     "--user-catalog", str(user))  # fmt: skip
    _one_error(result, str(path), 'key "hidden_size" appears twice in the top-level object')
    assert not (user / "llms.csv").exists()


# keys from a small alphabet (repeats are likely), with the characters the scan must skip
_keys = st.text(alphabet='ab:"\\{[', max_size=3)
_trees = st.recursive(
    st.none() | st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False) | _keys,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(st.tuples(_keys, children), max_size=4).map(lambda pairs: ("object", pairs))
    ),
    max_leaves=16,
)


def _text(tree: Any) -> str:
    """*tree* as JSON text; ``("object", pairs)`` is an object with its pairs as they are."""
    if isinstance(tree, tuple):
        return "{" + ", ".join(f"{json.dumps(k)}: {_text(v)}" for k, v in tree[1]) + "}"
    if isinstance(tree, list):
        return "[" + ", ".join(map(_text, tree)) + "]"
    return json.dumps(tree)


def _repeats(text: str) -> bool:
    found = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found.append(len({k for k, _ in pairs}) != len(pairs))
        return dict(pairs)

    json.loads(text, object_pairs_hook=hook)
    return any(found)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(tree=_trees, chunk=st.integers(1, 7))
@pytest.mark.slow  # about 1 s: the default run stays under 2 minutes
def test_the_member_count_finds_every_repeat_and_only_repeats(tree: Any, chunk: int) -> None:
    text = _text(tree)
    original = safe_read.DEPTH_CHUNK_BYTES
    safe_read.DEPTH_CHUNK_BYTES = chunk  # strings, escapes and colons across chunk edges
    try:
        members = json_members(text)
    finally:
        safe_read.DEPTH_CHUNK_BYTES = original
    repeated = _repeats(text)
    assert (value_members(parse_json(text)) != members) == repeated
    said = safe_read.repeated_key(text)
    assert (said is not None) == repeated, (text, said)


# --- a unit or pool that cannot be one ---------------------------------------------------------


@pytest.fixture(scope="module")
def unit_plan(bundled: BundledRuns) -> dict[str, Any]:
    """``wattgpu plan disagg-tight-sla --format json``: aggregated replicas and units."""
    data: dict[str, Any] = json.loads(bundled.plan_json("disagg-tight-sla"))
    return data


def _unit_allocation(data: dict[str, Any]) -> int:
    return next(i for i, a in enumerate(data["allocations"]) if a.get("pools"))


def _its_candidate(data: dict[str, Any]) -> int:
    """The candidate record of the first unit allocation."""
    a = data["allocations"][_unit_allocation(data)]
    return next(
        j for j, c in enumerate(data["candidates"]) if record_identity(c) == record_identity(a)
    )


def _saved(tmp_path: Path, data: dict[str, Any], edit: Edit | None = None) -> Path:
    copy = json.loads(json.dumps(data))
    if edit is not None:
        edit(copy)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(copy), encoding="utf-8")
    return path


def _report(path: Path, *extra: str) -> Iterator[Result]:
    for trust in ([], ["--trust"]):
        yield run_cli("report", str(path), "-f", "md", "-o", str(path.with_suffix(".md")),
                      *trust, *extra)  # fmt: skip


@pytest.mark.parametrize(
    "key", ["workers", "tp", "pipeline_parallel", "data_parallel", "expert_parallel"]
)
@pytest.mark.parametrize("value", [0, -1])
def test_a_pool_count_below_one_names_the_file_and_the_field(
    tmp_path: Path, unit_plan: dict[str, Any], key: str, value: int
) -> None:
    i = _unit_allocation(unit_plan)

    def edit(d: dict[str, Any]) -> None:
        d["allocations"][i]["pools"][1][key] = value

    path = _saved(tmp_path, unit_plan, edit)
    said = f"error: {path}: allocations[{i}].pools[1].{key}: {value} is impossible (at least 1)"
    plain, trusted = _report(path)
    assert _one_error(plain).startswith(said)
    assert "--trust" not in plain.err  # it would not help
    assert (
        _one_error(trusted).startswith(said) and "not reportable even with --trust" in trusted.err
    )


def _pool(section: str, key: str, value: Any) -> Edit:
    def edit(d: dict[str, Any]) -> None:
        i = _unit_allocation(d) if section == "allocations" else _its_candidate(d)
        d[section][i]["pools"][1][key] = value

    return edit


def _record(section: str, key: str, value: Callable[[dict[str, Any]], Any]) -> Edit:
    def edit(d: dict[str, Any]) -> None:
        i = _unit_allocation(d) if section == "allocations" else _its_candidate(d)
        d[section][i][key] = value(d[section][i])

    return edit


UNIT_EDITS: list[tuple[str, Edit, str]] = [
    (
        "gpus_per_worker",
        _pool("allocations", "gpus_per_worker", 1),
        "pools[1].gpus_per_worker: 1 is impossible (fewer than the",
    ),
    (
        "idle_power",
        _pool("allocations", "idle_power_w", -1.0),
        "pools[1].idle_power_w: -1.0 is impossible",
    ),
    (
        "power_at_capacity",
        _pool("candidates", "power_w_at_capacity", -2.0),
        "pools[1].power_w_at_capacity: -2.0 is impossible",
    ),
    (
        "tp_beyond_its_gpus",
        _pool("candidates", "tp", 10**30),
        "pools[1].gpus_per_worker: 8 is impossible (fewer than the",
    ),
    (
        "gpus_held",
        _pool("candidates", "gpus_per_worker", 64),
        # the numbers follow the plan's first unit candidate (they change with the predictors)
        ".gpus_per_replica: ",
    ),
    (
        "gpus_held_said",
        _pool("candidates", "gpus_per_worker", 64),
        ", but its pools' workers hold ",
    ),
    (
        "decode_gpu",  # a type of the plan's inventory (another one is named as such too)
        _pool("candidates", "gpu", "L40S"),
        ".gpu: 'H100-SXM5-80GB', not the GPU type of its decode pool",
    ),
    (
        "short_curve",
        _pool("candidates", "power_curve_w", [1.0]),
        ".pools[1].power_curve_w: 1 values for the unit's",
    ),
    (
        "no_curve",
        _pool("candidates", "power_curve_w", None),
        ".pools[1].power_curve_w: no values for the unit's",
    ),
    (
        "roles",
        _record("candidates", "pools", lambda c: c["pools"][::-1]),
        ".pools: a unit has a prefill then a decode pool",
    ),
    (
        "aggregated_with_pools",
        _record("candidates", "deployment", lambda c: "aggregated"),
        ".deployment: 'aggregated', but the record has 2 pool(s)",
    ),
    (
        "unit_without_pools",
        _record("allocations", "pools", lambda a: None),
        ".deployment: 'disaggregated', but the record has no pools",
    ),
]


@pytest.mark.parametrize(
    ("edit", "said"), [e[1:] for e in UNIT_EDITS], ids=[e[0] for e in UNIT_EDITS]
)
def test_a_unit_that_cannot_be_one_is_named_even_with_trust(
    tmp_path: Path, unit_plan: dict[str, Any], edit: Edit, said: str
) -> None:
    """Each was a ``planning inputs:`` line (with ``--trust``, or always) or an internal error."""
    path = _saved(tmp_path, unit_plan, edit)
    for result in _report(path):
        line = _one_error(result, f"error: {path}: ", said)
        assert line.startswith((f"error: {path}: candidates[", f"error: {path}: allocations["))


def test_an_aggregated_allocation_given_pools_is_named(
    tmp_path: Path, unit_plan: dict[str, Any]
) -> None:
    """Once an internal error (KeyError) in every command that reads the plan."""
    i = _unit_allocation(unit_plan)
    k = next(j for j, a in enumerate(unit_plan["allocations"]) if not a.get("pools"))

    def edit(d: dict[str, Any]) -> None:
        d["allocations"][k]["pools"] = d["allocations"][i]["pools"]

    path = _saved(tmp_path, unit_plan, edit)
    said = f"error: {path}: allocations[{k}].deployment: 'aggregated', but the record has 2 pool(s)"
    good = tmp_path / "good"
    good.mkdir()
    for result in (*_report(path), run_cli("diff", str(_saved(good, unit_plan)), str(path))):
        assert _one_error(result).startswith(said)


def test_the_untouched_unit_plan_reports_and_diffs(
    tmp_path: Path, unit_plan: dict[str, Any]
) -> None:
    path = _saved(tmp_path, unit_plan)
    plain, _ = _report(path)
    assert plain.code == 0, plain.err
    assert run_cli("diff", str(path), str(path)).code == 0
