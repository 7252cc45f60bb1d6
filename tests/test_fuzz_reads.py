"""Hostile-input round 3, reads: bounded memory, no hangs, no silent skips.

* The JSON depth check is one streaming pass: it agrees with a plain reference scanner on any
  text and at any chunk boundary, and a long string field costs no more memory than a short one.
* The fast JSON parser (:func:`predictors.core.safe_read.parse_json`) accepts what the standard
  library accepts, with the same values (every float rounded alike), and refuses the rest with
  the standard library's message.
* Scenario, config and catalog paths must be regular files, checked before opening: a FIFO
  (which would block forever), a device, a symbolic-link loop or a dangling link each get one
  clean line and exit 1, within seconds; user-catalog files of those kinds are not skipped.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_bounded, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from predictors.catalog.validate import GPU_SCHEMA, LLM_SCHEMA
from predictors.core import safe_read
from predictors.core.paths import catalogs_dir
from predictors.core.safe_read import json_depth


def _reference_depth(text: str) -> int:
    """Character by character: brackets outside strings, backslash escapes inside them."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


@contextlib.contextmanager
def _chunks_of(size: int) -> Iterator[None]:
    """Scan in chunks of *size* bytes, so that chunk boundaries fall everywhere."""
    original = safe_read.DEPTH_CHUNK_BYTES
    safe_read.DEPTH_CHUNK_BYTES = size
    try:
        yield
    finally:
        safe_read.DEPTH_CHUNK_BYTES = original


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\[]{}\n'),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(alphabet='k"\\[{', max_size=3), children, max_size=3)
    ),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(value=json_values, chunk=st.integers(min_value=1, max_value=7))
@pytest.mark.slow
def test_streaming_depth_equals_json_nesting_at_every_chunk_size(value: object, chunk: int) -> None:
    text = json.dumps(value)
    with _chunks_of(chunk):
        assert json_depth(text) == _reference_depth(text)


def _rule_depth(text: str) -> int:
    """The scanner's stated rule on any text: a quote preceded by an even run of backslashes
    opens or closes a string (in valid JSON this is exactly JSON's own rule)."""
    depth = deepest = run = 0
    in_string = False
    for ch in text:
        if ch == '"' and run % 2 == 0:
            in_string = not in_string
        elif not in_string and ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif not in_string and ch in "]}":
            depth -= 1
        run = run + 1 if ch == "\\" else 0
    return deepest


@settings(max_examples=150, deadline=None, derandomize=True)
@given(text=st.text(alphabet='"\\[]{}a', max_size=40), chunk=st.integers(1, 5))
@pytest.mark.slow
def test_streaming_depth_on_arbitrary_text(text: str, chunk: int) -> None:
    """Also on text that is not JSON (unbalanced quotes, stray backslashes), at any chunk size."""
    with _chunks_of(chunk):
        assert json_depth(text) == _rule_depth(text)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    runs=st.lists(st.tuples(st.sampled_from('"\\[]{}a'), st.integers(1, 9)), max_size=12),
    chunk=st.integers(1, 8),
)
@pytest.mark.slow
def test_streaming_depth_across_backslash_runs(runs: list[tuple[str, int]], chunk: int) -> None:
    """Runs of up to 9 equal bytes (backslashes above all) that straddle chunk boundaries."""
    text = "".join(ch * n for ch, n in runs)
    with _chunks_of(chunk):
        assert json_depth(text) == _rule_depth(text)


def _outcome(parse: Any, text: str) -> tuple[str, str]:
    """('ok', repr of the value: exact floats, int vs float) or ('error', the message)."""
    try:
        return "ok", repr(parse(text))
    except ValueError as exc:  # JSONDecodeError is one
        return "error", str(exc)


def _stdlib(text: str) -> Any:
    return json.loads(text, parse_constant=safe_read._reject_constant)


json_documents = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),  # any code point, lone surrogates included
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(value=json_documents, ascii_only=st.booleans())
@pytest.mark.slow  # about 1 s: the default run stays under 2 minutes
def test_fast_json_parser_gives_the_standard_librarys_values(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert _outcome(safe_read.parse_json, text) == _outcome(_stdlib, text)


numbers = st.from_regex(
    r"-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,40})?([eE][+-]?[0-9]{1,3})?", fullmatch=True
)


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
@settings(max_examples=400, deadline=None, derandomize=True)
@given(number=numbers | st.floats().map(repr) | st.floats().map(lambda x: f"{x:.17e}"))
def test_fast_json_parser_rounds_every_number_as_the_standard_library(number: str) -> None:
    """Decimal strings of up to 40 digits and exponents to ±999, and every float's repr."""
    text = f'[{number}, {{"x": {number}}}]'
    assert _outcome(safe_read.parse_json, text) == _outcome(_stdlib, text)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(text=st.text(alphabet='0123456789.eE+-"\\/u[]{},: \t\n\x0cnultrfasNIiy\x00é', max_size=24))
def test_fast_json_parser_accepts_and_refuses_as_the_standard_library(text: str) -> None:
    """On text that is mostly not JSON: the same value, or the same error message."""
    assert _outcome(safe_read.parse_json, text) == _outcome(_stdlib, text)


@pytest.mark.parametrize("was_on", [True, False])
def test_collector_pause_restores_the_collector_even_on_error(was_on: bool) -> None:
    import gc

    before = gc.isenabled()
    (gc.enable if was_on else gc.disable)()
    try:
        with pytest.raises(KeyError), safe_read.collector_paused():
            assert not gc.isenabled()
            raise KeyError("x")
        assert gc.isenabled() == was_on
    finally:
        (gc.enable if before else gc.disable)()


def _peak_rss_mb(script: str, *args: str) -> float:
    """Peak resident memory (MB) of ``python -c script args`` in a fresh child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(after, before) / 1024.0  # ru_maxrss is in KiB on Linux


@pytest.mark.slow
def test_a_long_string_field_costs_memory_in_proportion_to_its_size_only(tmp_path: Path) -> None:
    """A 7 MB config.json with one long string used to need 0.88 GB in the depth check."""
    script = (
        "import sys; from pathlib import Path; from predictors.core.safe_read import load_json; "
        "load_json(Path(sys.argv[1]))"
    )
    small, large = tmp_path / "small.json", tmp_path / "large.json"
    small.write_text(json.dumps({"model_type": "llama", "note": "x"}), encoding="utf-8")
    large.write_text(json.dumps({"model_type": "llama", "note": "x" * 7_000_000}), "utf-8")
    base = _peak_rss_mb(script, str(small))
    grown = _peak_rss_mb(script, str(large)) - base
    # the file itself is held a few times over (bytes, text, the parsed string): about 30 MB
    assert grown < 80, f"reading a 7 MB JSON string took {grown:.0f} MB more than a tiny file"


@pytest.fixture
def odd_paths(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    loop_a, loop_b = tmp_path / "loop_a.yaml", tmp_path / "loop_b.yaml"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    dangling = tmp_path / "dangling.yaml"
    dangling.symlink_to(tmp_path / "missing.yaml")
    return {
        "FIFO": fifo,
        "symbolic link loop": loop_a,
        "dangling symbolic link": dangling,
        "device": Path("/dev/zero"),
    }


@pytest.mark.parametrize(
    "kind",
    [
        "FIFO",
        "device",
        # the other two are refused by the same regular-file check (~1 s per fresh process)
        pytest.param("symbolic link loop", marks=pytest.mark.slow),
        pytest.param("dangling symbolic link", marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize(
    "command",
    [
        "validate",
        # plan and report share validate's check; each case is a fresh process (~1.5 s)
        pytest.param("plan", marks=pytest.mark.slow),
        pytest.param("report", marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow
def test_scenario_path_that_is_not_a_regular_file(
    odd_paths: dict[str, Path], kind: str, command: str, tmp_path: Path
) -> None:
    result = run_bounded(command, str(odd_paths[kind]), cwd=tmp_path, timeout_s=60)
    assert result.code == 1, result.err
    assert len(result.errors) == 1 and kind in result.errors[0], result.err


@pytest.mark.parametrize(
    "kind",
    [
        "FIFO",
        "dangling symbolic link",
        # each a CLI run of ~1 s; the same read path as the FIFO's (in the slow run)
        pytest.param("symbolic link loop", marks=pytest.mark.slow),
        pytest.param("device", marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_diff_of_a_plan_path_that_is_not_a_regular_file(
    odd_paths: dict[str, Path], kind: str, tmp_path: Path
) -> None:
    """``diff`` said "no such file" of each (it checked ``is_file`` only)."""
    args = (str(odd_paths[kind]), str(tmp_path / "missing.json"))
    result = run_bounded("diff", *args, cwd=tmp_path, timeout_s=60)
    assert result.code == 1 and len(result.errors) == 1, result.err
    assert kind in result.errors[0] and "no such file" not in result.errors[0], result.err


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_a_dangling_link_of_any_name_is_named_as_one(tmp_path: Path) -> None:
    """A bare name without a scenario suffix was looked up as a bundled example ("no such file
    and no bundled example") when it was a dangling link."""
    (tmp_path / "pl.json").symlink_to(tmp_path / "gone.json")
    result = run_bounded("report", "pl.json", cwd=tmp_path, timeout_s=60)
    assert result.code == 1 and len(result.errors) == 1, result.err
    assert "dangling symbolic link" in result.errors[0], result.err


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["FIFO", "symbolic link loop", "dangling symbolic link", "device"])
def test_config_json_that_is_not_a_regular_file(
    odd_paths: dict[str, Path], kind: str, tmp_path: Path
) -> None:
    args = ["catalog", "import-hf", str(odd_paths[kind]), "--id", "a/b"]
    result = run_bounded(*args, "--user-catalog", str(tmp_path / "uc"), cwd=tmp_path)
    assert result.code == 1 and len(result.errors) == 1 and kind in result.errors[0], result.err


@pytest.mark.parametrize("kind", ["FIFO", "symbolic link loop", "dangling symbolic link", "device"])
def test_user_catalog_file_that_is_not_a_regular_file_is_reported(
    odd_paths: dict[str, Path], kind: str, tmp_path: Path
) -> None:
    user = tmp_path / "uc"
    user.mkdir()
    source = odd_paths[kind]
    target = user / "gpus.csv"
    if kind == "FIFO":
        os.mkfifo(target)
    elif kind == "device":
        target.symlink_to(source)
    else:
        target.symlink_to(source.resolve(strict=False) if kind != "symbolic link loop" else source)
    result = run_cli("catalog", "gpus", "--user-catalog", str(user))
    assert result.code == 1, result.err
    assert any("gpus.csv" in line for line in result.errors), result.err
    expected = "device" if kind == "device" else kind
    assert any(expected in line for line in result.errors), result.err


def _int_columns(schema: Any) -> list[str]:
    return [c.name for c in schema.columns if c.kind == "int"]


@pytest.mark.slow  # measured among the slowest of the default run (round 29)
@pytest.mark.parametrize(
    ("schema", "column"),
    [(GPU_SCHEMA, c) for c in _int_columns(GPU_SCHEMA)]
    + [(LLM_SCHEMA, c) for c in _int_columns(LLM_SCHEMA)],
    ids=lambda v: v if isinstance(v, str) else v.file_name,
)
def test_user_catalog_integer_above_int64_is_a_clean_error(
    schema: Any, column: str, tmp_path: Path
) -> None:
    with (catalogs_dir() / schema.file_name).open(encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        row = next(reader)
        header = list(reader.fieldnames or [])
    row.update({"id": "acme/huge", "aliases": "", column: "9" * 23})
    user = tmp_path / "uc"
    user.mkdir()
    with (user / schema.file_name).open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, header)
        writer.writeheader()
        writer.writerow(row)
    kind = "gpus" if schema is GPU_SCHEMA else "llms"
    result = run_cli("catalog", kind, "--user-catalog", str(user), "--format", "csv")
    assert result.code == 1 and result.errors, result.err
    assert "internal error" not in result.err
    assert any(f"column '{column}'" in line for line in result.errors), result.err


@pytest.mark.parametrize("name", ["[a, b]", "{x: 1}", "[]", "7"])
def test_overlay_entry_with_a_name_that_is_not_text(tmp_path: Path, name: str) -> None:
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(
        f"models:\n  - name: {name}\n    load: {{requests_per_s: 2}}\n", encoding="utf-8"
    )
    result = run_cli("validate", "paper-llama8b-low-load", "--overlay", str(overlay))
    assert result.code == 1 and "internal error" not in result.err, result.err
    assert any(".name" in line for line in result.errors), result.err


def test_set_chain_copies_the_scenario_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """N ``--set`` items cost one copy of the scenario, not N (was O(N x size))."""
    import copy

    from planner.scenario import overrides

    calls: list[int] = []
    real = copy.deepcopy

    def counting(value: Any, memo: Any = None) -> Any:
        calls.append(1)
        return real(value, memo)

    monkeypatch.setattr(overrides.copy, "deepcopy", counting)
    data = {"models": [{"name": f"m{i}", "load": {"requests_per_s": 1}} for i in range(200)]}
    items = [f"models[{i}].load.requests_per_s={i + 1}" for i in range(200)]
    changed, problems = overrides.apply_overrides(data, items)
    assert problems == [] and len(calls) == 1
    assert [m["load"]["requests_per_s"] for m in changed["models"]] == list(range(1, 201))
    assert data["models"][5]["load"]["requests_per_s"] == 1  # the input is left as it was


def test_a_bad_set_path_changes_nothing() -> None:
    from planner.scenario.overrides import apply_overrides

    data = {"gpus": {"L4": {"available": 2}}}
    changed, problems = apply_overrides(data, ["new.branch[0].x=1", "gpus.L4.available=3"])
    assert len(problems) == 1 and "cannot index" in problems[0][1]
    assert changed == {"gpus": {"L4": {"available": 3}}}  # no half-made 'new' mapping


@pytest.mark.parametrize("command", ["validate", "plan", "report"])
def test_an_empty_path_argument_says_so(command: str) -> None:
    """``wattgpu validate ''`` read the empty path as the current directory and said only
    '.: is a directory'."""
    result = run_cli(command, "")
    assert result.code == 1, result.err
    assert len(result.errors) == 1 and "an empty path names it" in result.errors[0], result.err
