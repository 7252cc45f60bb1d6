"""Fuzz round 28 (scenario input): percentiles next to 100, overlays that repeat an entry,
YAML 1.1 merge keys, loose ``--set`` paths and the origin of a context-window error.

* F1: ``sla.percentile: 99.99999999999998`` validated, but ``plan`` ended in status ``error``
  (exit 2): the Poisson quantile thresholds came from ``P(K <= k) >= p``, a sum that rounds
  within 1e-16 of 1, so they were noise (not even ascending) and the capacity search accepted a
  replica whose ITL at that percentile broke the SLA. They now come from the upper tail
  ``P(K > k) <= 1 − p``, exact to rounding for every double percentile below 100.
* F2: an ``--overlay`` that lists one entry name twice merged both into the same entry (last
  wins); it is refused.
* F5: ``<<`` merge keys (YAML 1.1) were honoured, conflicting keys of a merge list picked by a
  PyYAML quirk; files are YAML 1.2, so ``<<`` is refused with its line.
* F6: ``--set`` read ``models[٠]`` (a non-ASCII digit) as ``models[0]`` and
  ``models[0]min_replicas`` (no dot) as ``models[0].min_replicas``; both are refused.
* F7: the context-window error of ``--set models[0].load.output_tokens=1e7`` named
  ``input_tokens`` and the scenario file; it names the field set last and its ``--set``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from planner.scenario.overrides import parse_path
from planner.scenario.yaml12 import load_yaml_text
from predictors.core.errors import WattgpuError
from predictors.serving import poisson
from tests.cli_runner import plan_text, run_cli

BASE = """\
name: t
region: US
electricity_usd_per_kwh: 0.12
gpus:
  L4: {}
  A30: {}
  H100-SXM5-80GB: {}
models:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {requests_per_s: 0.33, input_tokens: 1024, output_tokens: 256}
    sla: {itl_ms: 100}
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _upper_tail(k: int, mean: float) -> float:
    """P(K > k) for K ~ Poisson(mean), summed term by term (exact to rounding)."""
    terms = (math.exp(j * math.log(mean) - mean - math.lgamma(j + 1)) for j in range(k + 1, 600))
    return math.fsum(terms)


# --- F1: percentiles next to 100 ----------------------------------------------------------------

#: ... up to 99.99999999999998, the largest double below 100 (also written 99.99999999999999)
NEAR_100 = [99.9999999999999, 99.99999999999997, 99.99999999999998]


@pytest.mark.parametrize("pct", NEAR_100)
def test_quantile_thresholds_ascend_next_to_100(pct: float) -> None:
    t = poisson._quantile_thresholds(pct / 100.0)
    assert (np.diff(t[3:]) > 0).all()


@pytest.mark.parametrize("pct", [90.0, 99.99, 99.9999999999, *NEAR_100])
def test_poisson_quantile_is_exact_next_to_100(pct: float) -> None:
    p = pct / 100.0
    means = np.linspace(0.05, 24.0, 60)
    got = poisson.poisson_quantile(means, p)
    for mean, k in zip(means, got, strict=True):
        k = int(k)
        assert _upper_tail(k, float(mean)) <= 1.0 - p, (mean, k)
        assert k == 0 or _upper_tail(k - 1, float(mean)) > 1.0 - p, (mean, k)


def test_normal_quantile_does_not_saturate_next_to_100() -> None:
    # Φ⁻¹(1 − 2⁻⁵³) = 8.2095…; 1 + erf rounds to 2 from about 8.1, so the old bisection stalled
    assert poisson._normal_ppf(0.9999999999999999) == pytest.approx(8.209536151601387, abs=1e-9)
    assert poisson._normal_ppf(0.9) == pytest.approx(1.2815515655446004, abs=1e-12)


@pytest.mark.slow
def test_a_percentile_next_to_100_plans_consistently(tmp_path: Path) -> None:
    result, out = plan_text(tmp_path, BASE, "--set", "models[0].sla.percentile=99.99999999999998")
    assert result.code == 0, result.err
    plan = json.loads(out.read_text(encoding="utf-8"))
    assert plan["status"] == "optimal"


# --- F2: an overlay that repeats an entry name ---------------------------------------------------

DUP_OVERLAY = """\
models:
  - name: chat
    load: {requests_per_s: 5, input_tokens: 1024, output_tokens: 256}
  - name: chat
    load: {requests_per_s: 0.1, input_tokens: 1024, output_tokens: 256}
"""


def test_overlay_repeating_an_entry_name_is_refused(tmp_path: Path) -> None:
    base = _write(tmp_path, "base.yaml", BASE)
    overlay = _write(tmp_path, "ov.yaml", DUP_OVERLAY)
    result = run_cli("validate", str(base), "--overlay", str(overlay))
    assert result.code == 1
    assert result.errors == [
        f"error: {overlay}: models[1].name: 'chat' already given by models[0] of this overlay "
        "— list each entry once"
    ]
    assert "Traceback" not in result.err


def test_overlay_repeating_a_new_entry_name_is_refused(tmp_path: Path) -> None:
    base = _write(tmp_path, "base.yaml", BASE)
    entry = "  - {name: new, model: meta-llama/Llama-3.1-8B-Instruct}\n"
    overlay = _write(tmp_path, "ov.yaml", "models:\n" + entry + entry)
    result = run_cli("validate", str(base), "--overlay", str(overlay))
    assert result.code == 1
    assert result.errors[0].startswith(f"error: {overlay}: models[1].name: 'new' already given")


# --- F5: YAML 1.1 merge keys ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "g:\n  L4: {<<: [{x: 0}, {x: 3}]}\n",
        "g:\n  L4: {available: 0, <<: {available: 3}}\n",
        "a: &d {x: 1}\nb:\n  <<: *d\n  y: 2\n",
        "b:\n  !!merge <<: {x: 1}\n",
    ],
)
def test_merge_keys_are_refused(text: str) -> None:
    with pytest.raises(yaml.YAMLError, match=r"merge key '<<' \(YAML 1\.1\) is not read"):
        load_yaml_text(text)


def test_quoted_double_angle_is_an_ordinary_key() -> None:
    assert load_yaml_text('"<<": 1\n') == {"<<": 1}


def test_merge_key_in_a_scenario_is_one_line_with_its_line(tmp_path: Path) -> None:
    text = BASE.replace("  L4: {}", "  L4: {available: 0, <<: {available: 3}}")
    path = _write(tmp_path, "m.yaml", text)
    result = run_cli("validate", str(path))
    assert result.code == 1
    assert result.errors == [
        f"error: {path}: line 5, column 22: merge key '<<' (YAML 1.1) is not read — write the "
        "merged keys out in this mapping"
    ]


# --- F6: --set paths -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["models[٠].min_replicas", "models[𝟎].min_replicas", "x[١]"])
def test_non_ascii_digit_index_is_refused(path: str) -> None:
    with pytest.raises(WattgpuError, match=r"cannot read the path at '\["):
        parse_path(path)


@pytest.mark.parametrize(
    ("path", "rest"),
    [
        ("models[0]min_replicas", "min_replicas"),
        ('models[0]"min_replicas"', '"min_replicas"'),
        ('gpus["a.b"]x', "x"),
    ],
)
def test_key_after_an_index_without_a_dot_is_refused(path: str, rest: str) -> None:
    with pytest.raises(WattgpuError) as caught:
        parse_path(path)
    assert str(caught.value) == (
        f"cannot read the path at '{rest}' — write it like models[0].load.input_tokens"
    )


def test_well_formed_paths_still_read() -> None:
    assert parse_path("models[0].min_replicas") == ["models", 0, "min_replicas"]
    assert parse_path("models[0][1]") == ["models", 0, 1]
    assert parse_path('gpus["a.b"].x') == ["gpus", "a.b", "x"]
    assert parse_path('models[0]."x"') == ["models", 0, "x"]


def test_missing_dot_in_set_is_one_line_naming_the_set(tmp_path: Path) -> None:
    path = _write(tmp_path, "base.yaml", BASE)
    result = run_cli("validate", str(path), "--set", "models[0]min_replicas=3")
    assert result.code == 1
    assert result.errors == [
        f"error: {path}: --set models[0]min_replicas=3: cannot read the path at 'min_replicas' "
        "— write it like models[0].load.input_tokens"
    ]


# --- F7: the context-window error names what was set last ----------------------------------------

CONTEXT = (
    "exceed the 131,072-token context of meta-llama/Llama-3.1-8B-Instruct — lower input_tokens "
    "or output_tokens"
)


def test_context_error_names_the_output_tokens_set(tmp_path: Path) -> None:
    path = _write(tmp_path, "base.yaml", BASE)
    item = "models[0].load.output_tokens=1e7"
    result = run_cli("validate", str(path), "--set", item)
    assert result.code == 1
    assert result.errors == [
        f"error: {path} --set {item}: models[0].load.output_tokens: 10,001,024 tokens "
        f"(input 1,024 + output 10,000,000) {CONTEXT}"
    ]


def test_context_error_names_the_input_tokens_set(tmp_path: Path) -> None:
    path = _write(tmp_path, "base.yaml", BASE)
    item = "models[0].load.input_tokens=131000"
    result = run_cli("validate", str(path), "--set", item)
    assert result.errors == [
        f"error: {path} --set {item}: models[0].load.input_tokens: 131,256 tokens "
        f"(input 131,000 + output 256) {CONTEXT}"
    ]


def test_context_error_names_the_later_of_two_sets(tmp_path: Path) -> None:
    path = _write(tmp_path, "base.yaml", BASE)
    first, last = "models[0].load.input_tokens=131000", "models[0].load.output_tokens=1000"
    result = run_cli("validate", str(path), "--set", first, "--set", last)
    assert result.errors[0].startswith(f"error: {path} --set {last}: models[0].load.output_tokens")


def test_context_error_names_the_overlay_that_set_the_output(tmp_path: Path) -> None:
    path = _write(tmp_path, "base.yaml", BASE)
    overlay = _write(
        tmp_path, "ov.yaml", "models:\n  - name: chat\n    load: {output_tokens: 2e5}\n"
    )
    result = run_cli("validate", str(path), "--overlay", str(overlay))
    assert result.errors[0].startswith(f"error: {overlay}: models[0].load.output_tokens: 201,024")


def test_context_error_in_the_file_itself_keeps_input_tokens(tmp_path: Path) -> None:
    path = _write(tmp_path, "base.yaml", BASE.replace("output_tokens: 256", "output_tokens: 2e5"))
    result = run_cli("validate", str(path))
    assert result.errors[0].startswith(f"error: {path}: models[0].load.input_tokens: 201,024")
