"""Fuzz round 29 (validate, finding 5): ``compare`` words a problem as ``plan`` and a scenario do.

Each test failed before its fix:

* at a load that needs more than the 256 replicas a plan may use on every GPU type, the closing
  error blamed the SLA ("no GPU type meets ITL ≤ 100 ms … — relax the SLA"), which was met; it
  classified the rows by matching their reason text, and now reads a reason kind carried beside
  the rows (in no JSON key or CSV column);
* ``--region Atlantis`` suggested ids (AL, MW, LV) where a scenario's ``region: Atlantis``
  suggests names (Albania, Malawi, Latvia), with another fix;
* ``--gpus H100,H100-SXM5-80GB`` merged an alias and its id into one row without a word, where a
  scenario refuses them ("names the same GPU as gpus.H100 — list it once");
* errors of the built scenario began ``error: wattgpu compare: --input-tokens:`` where compare's
  own began ``error: --gpus:``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from planner.analysis.compare import COMPARE_CSV_COLUMNS, CompareRequest, CompareResult
from planner.analysis.compare_rows import CompareRow, unfit_row
from planner.scenario.names import canonicalize
from predictors.api import Predictor
from tests.cli_runner import run_cli

if TYPE_CHECKING:
    from planner.analysis.compare_rows import UnfitKind

pytestmark = pytest.mark.usefixtures("cached_predictor")

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"


def _last_error(*args: str) -> str:
    result = run_cli("compare", *args)
    assert result.code == 1, (result.out, result.err)
    return result.err.strip().splitlines()[-1]


# --- the closing error says what the rows say -------------------------------------------------


@pytest.mark.slow
def test_a_load_over_the_replica_limit_is_named_not_the_sla() -> None:
    args = ("-m", LLAMA_8B, "--requests-per-s", "1e6", "--itl-ms", "100")
    for gpus in ("H100-SXM5-80GB", "H100-SXM5-80GB,L4"):
        result = run_cli("compare", *args, "--gpus", gpus, "-f", "json")
        assert result.code == 1, result.err
        rows = json.loads(result.out)["rows"]
        assert rows and all("replicas even of" in r["reason"] for r in rows), rows
        assert result.err.strip().splitlines()[-1] == (
            f"error: {LLAMA_8B} at 1e+06 req/s needs more than the 256 replicas a plan may use "
            "on every GPU type listed (each row says how many) — split the load: compare a share "
            "of it with a lower --requests-per-s"
        ), result.err


@pytest.mark.slow
def test_a_replica_limit_beside_another_reason_is_named_with_it() -> None:
    last = _last_error(
        "-m", "meta-llama/Llama-3.1-405B-Instruct", "--requests-per-s", "1e6", "--itl-ms",
        "1000", "--gpus", "T4,H200", "--engine", "sglang",
    )  # fmt: skip
    assert last == (
        "error: no GPU type listed can serve meta-llama/Llama-3.1-405B-Instruct at bf16 with "
        "sglang (engine, replica limit: each row says why) — allow other GPU types, or pass "
        "another --precision or --engine, or split the load (a lower --requests-per-s)"
    ), last


def test_the_closing_error_reads_the_kinds_not_the_reason_text() -> None:
    from planner.analysis.compare_view import no_fit_message

    request = CompareRequest(LLAMA_8B, 1.0, 50.0, gpus=("L4", "T4"))
    rows = tuple(unfit_row(g, "some reason", True, "aggregated") for g in ("L4", "T4"))

    def message(*kinds: UnfitKind) -> str:
        unfit = {("aggregated", g): k for g, k in zip(("L4", "T4"), kinds, strict=True)}
        return no_fit_message(CompareResult(request, LLAMA_8B, "bf16", 1.3, 369.0, rows, unfit))

    assert "does not fit in memory on any GPU type listed" in message("memory", "memory")
    assert "engine vllm runs on none of the GPU types listed" in message("engine", "engine")
    assert "needs more than the 256 replicas" in message("replicas", "replicas")
    assert "(memory, precision: each row says why)" in message("precision", "memory")
    assert "relax the SLA" in message("memory", "sla")
    assert "relax the SLA" not in message("precision", "other")


def test_the_reason_kinds_are_in_no_output() -> None:
    assert tuple(CompareRow.__dataclass_fields__) == COMPARE_CSV_COLUMNS
    assert COMPARE_CSV_COLUMNS == (
        "gpu", "fits", "reason", "priced", "deployment", "tp", "replicas", "gpus", "itl_ms",
        "power_w_per_gpu", "wh_per_1k_output_tokens", "usd_per_million_output_tokens",
        "energy_kwh", "cost_usd", "in_domain", "itl_ms_at_served_load", "layout", "nodes",
        "deployment_kind", "carbon_kg",
    )  # fmt: skip
    result = run_cli(
        "compare", "-m", LLAMA_8B, "--requests-per-s", "1e6", "--itl-ms", "100", "--gpus",
        "L4", "-f", "json",
    )  # fmt: skip
    data = json.loads(result.out)
    assert set(data) == {
        "request", "model", "precision", "pue", "grid_g_co2_per_kwh", "output_tokens_total",
        "assumptions", "rows",
    }  # fmt: skip
    assert "unfit" not in result.out


# --- an unknown --region: the scenario's suggestions -------------------------------------------


def test_an_unknown_region_is_suggested_as_a_scenario_suggests_it(predictor: Predictor) -> None:
    last = _last_error("-m", LLAMA_8B, "--requests-per-s", "1", "--itl-ms", "100",
                       "--region", "Atlantis")  # fmt: skip
    _, problems = canonicalize({"region": "Atlantis"}, predictor.catalog)
    scenario = problems[0][1]  # unknown region 'Atlantis' (did you mean: …) — fix
    assert scenario.startswith("unknown region 'Atlantis' (did you mean: Albania"), scenario
    assert last == (
        f"error: --region: {scenario.rpartition(' — ')[0]} — use a region `wattgpu catalog "
        "regions` lists (catalogs/grid_carbon.csv)"
    ), last


# --- one GPU named twice --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gpus", "line"),
    [
        ("H100,H100-SXM5-80GB", "--gpus: H100-SXM5-80GB names the same GPU as H100"),
        ("H100-SXM5-80GB,L4,H100", "--gpus: H100 names the same GPU as H100-SXM5-80GB"),
        ("NVIDIA H100 80GB HBM3,H100",
         "--gpus: H100 names the same GPU as NVIDIA H100 80GB HBM3 (H100-SXM5-80GB)"),
        ("L4,L4", "--gpus: L4 is listed twice"),
    ],
)  # fmt: skip
def test_one_gpu_named_twice_is_refused(gpus: str, line: str) -> None:
    result = run_cli("compare", "-m", LLAMA_8B, "--requests-per-s", "1", "--itl-ms", "100",
                     "--gpus", gpus)  # fmt: skip
    assert result.code == 1 and result.out == "", result.out
    assert result.err.strip().splitlines() == [f"error: {line} — list it once"], result.err


# --- one prefix for every option error ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (("--input-tokens", "1000000"), "error: --input-tokens: 1,000,256 tokens"),
        (("--engine", "foo"), "error: --engine: 'foo' is not allowed"),
        (("--precision", "fp3"), "error: --precision: unknown 'fp3'"),
        (("--gpus", "H999"), "error: --gpus: unknown gpu 'H999'"),
        (("--region", "Atlantis"), "error: --region: unknown region 'Atlantis'"),
    ],
)
def test_every_option_error_starts_with_the_option(args: tuple[str, ...], start: str) -> None:
    result = run_cli("compare", "-m", LLAMA_8B, "--requests-per-s", "1", "--itl-ms", "100", *args)
    assert result.code == 1
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(start), result.err
    assert "wattgpu compare:" not in result.err
