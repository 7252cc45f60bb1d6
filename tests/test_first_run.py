"""First-run experience: bundled examples by name from any directory, ``user_catalog`` honoured by
every command, every unservable model explained (memory and SLA apart), output polish (zero
round-off, compact table, feasible alternatives, progress on stderr only), exit codes, and the
README's and docs/cli.md's usage commands run from an empty directory.

Commands run in-process (``CliRunner`` or :func:`planner.cli.app.main`) from an empty temporary
directory; ``Predictor.load`` returns one cached instance so the tests pay only for planning.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from planner.analysis.alternatives import alternatives
from planner.analysis.diff import _fmt as diff_fmt
from planner.analysis.pareto import pareto_front
from planner.cli.app import app, bare_optional_values, main
from planner.inputs import Candidate, Exclusion, ModelDemand, PlanningInputs, ms_over, ms_text
from planner.paths import scenarios_dir
from planner.pipeline import PlanRun, plan_file
from planner.report import blocks
from planner.report.plan_view import (
    ALLOCATION_COLUMNS,
    COMPACT_ALLOCATION_COLUMNS,
    plan_sections,
)
from planner.result import PlanStatus
from planner.scenario.bundled import bundled_paths, find_scenario
from planner.solve.explain import no_candidate_messages
from planner.text import COMPACT_WIDTH, num, sections_to_text
from predictors.api import Predictor
from predictors.core.errors import WattgpuError
from predictors.core.escape import md_text
from predictors.core.progress import Progress, progress_enabled
from tests.bundled_runs import BundledRuns

REPO = Path(__file__).resolve().parent.parent
runner = CliRunner()
LLAMA_CONFIG = {
    "model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
    "vocab_size": 128256, "max_position_embeddings": 131072, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}  # fmt: skip
USER_MODEL = "acme/llama-like-8b"


pytestmark = pytest.mark.usefixtures("cached_predictor")


@pytest.fixture
def empty_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory with no ``scenarios/`` beside it."""
    work = tmp_path / "empty"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("WATTGPU_USER_CATALOG", raising=False)
    return work


def _invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


def _main_exit(args: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(args)
    code = info.value.code
    return 0 if code is None else int(code)


# --- bundled examples --------------------------------------------------------------------------


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_scenarios_lists_every_bundled_example(empty_cwd: Path) -> None:
    files = sorted(p for p in scenarios_dir().iterdir() if p.suffix in (".yaml", ".yml"))
    result = _invoke("scenarios", "--format", "json")
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [e["name"] for e in listed] == [p.stem for p in files]
    for entry, path in zip(listed, files, strict=True):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert entry["model_entries"] == len(data["models"])
        assert entry["models"] == sorted({m["model"] for m in data["models"]})
        assert entry["gpus"] == (list(data["gpus"]) if data.get("gpus") is not None else None)
        first = " ".join(str(data["description"]).split())
        assert entry["description"] and first.startswith(entry["description"])
    text = _invoke("scenarios")
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert all(len(line) <= 100 for line in lines)
    for path in files:
        assert any(line.startswith(path.stem + " ") for line in lines)


def test_scenarios_copy_makes_an_identical_file_and_never_overwrites(
    empty_cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = next(p for p in bundled_paths() if p.stem == "eu-power-cap-carbon")
    result = _invoke("scenarios", "--copy", "eu-power-cap-carbon", "mine")
    assert result.exit_code == 0, result.output
    target = empty_cwd / "mine" / "eu-power-cap-carbon.yaml"
    assert target.read_bytes() == source.read_bytes()
    target.write_text("edited", encoding="utf-8")
    assert _main_exit(["scenarios", "--copy", "eu-power-cap-carbon.yaml", "mine"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--force" in err
    assert target.read_text(encoding="utf-8") == "edited"
    assert _invoke("scenarios", "--copy", "eu-power-cap-carbon", "mine", "--force").exit_code == 0
    assert target.read_bytes() == source.read_bytes()
    assert _main_exit(["scenarios", "--copy", "eu-power-cap-carbn"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did you mean: eu-power-cap-carbon" in err[0]
    assert _main_exit(["scenarios", "mine"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "wattgpu scenarios --copy NAME mine" in err[0]


def test_find_scenario_forms(empty_cwd: Path) -> None:
    bundled = {p.stem: p for p in bundled_paths()}
    for name, path in bundled.items():
        assert find_scenario(name) == path
        assert find_scenario(f"{name}.yaml") == path
        assert find_scenario(f"scenarios/{name}.yaml") == path
    local = empty_cwd / "paper-llama8b-low-load.yaml"
    local.write_text("name: mine\n", encoding="utf-8")
    assert find_scenario("paper-llama8b-low-load.yaml") == Path("paper-llama8b-low-load.yaml")
    with pytest.raises(WattgpuError, match="did you mean: enterprise-fleet"):
        find_scenario("enterprise-flet")
    elsewhere = empty_cwd / "sub" / "missing.yaml"
    assert find_scenario(elsewhere) == elsewhere


@pytest.mark.slow
def test_every_scenario_command_accepts_a_bundled_name(empty_cwd: Path) -> None:
    result = _invoke("plan", "paper-llama8b-low-load", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["scenario"] == "paper-llama8b-low-load"
    result = _invoke("validate", "scenarios/eu-power-cap-carbon.yaml")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith("ok (5 models, 4 GPU types)")
    result = _invoke("report", "paper-llama8b-low-load.yaml", "-f", "json", "--pareto-points", "0")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["plan"]["status"] == "optimal"
    result = _invoke("pareto", "paper-llama8b-low-load", "--points", "2", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["points"]
    assert list(empty_cwd.iterdir()) == []


# --- user catalog ------------------------------------------------------------------------------


def _user_catalog_scenario(root: Path) -> Path:
    config = root / "config.json"
    config.write_text(json.dumps(LLAMA_CONFIG), encoding="utf-8")
    args = ["catalog", "import-hf", str(config), "--id", USER_MODEL, "--user-catalog"]
    result = _invoke(*args, str(root / "my-catalog"))
    assert result.exit_code == 0, result.output
    scenario = {
        "name": "user-catalog",
        "region": "US",
        "electricity_usd_per_kwh": 0.12,
        "user_catalog": "my-catalog",
        "gpus": {"L4": {}, "H100-SXM5-80GB": {}},
        "models": [
            {
                "name": "mine",
                "model": USER_MODEL,
                "load": {"requests_per_s": 1.0, "input_tokens": 1024, "output_tokens": 256},
                "sla": {"itl_ms": 80},
            }
        ],
    }
    path = root / "scenario.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.slow  # 1.3-2 s: the default run stays under 2 minutes
def test_user_catalog_is_honoured_by_every_command(empty_cwd: Path) -> None:
    scenario = _user_catalog_scenario(empty_cwd.parent)
    result = _invoke("validate", str(scenario))
    assert result.exit_code == 0, result.output
    result = _invoke("plan", str(scenario), "--format", "json")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["status"] == "optimal" and plan["models"][0]["model"] == USER_MODEL
    assert plan["allocations"] and plan["allocations"][0]["model"] == USER_MODEL
    result = _invoke("report", str(scenario), "--format", "json", "--pareto-points", "0")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["plan"]["status"] == "optimal"
    result = _invoke("pareto", str(scenario), "--points", "2", "--format", "json")
    assert result.exit_code == 0, result.output
    result = _invoke(
        "compare", "--model", USER_MODEL, "--requests-per-s", "1", "--itl-ms", "80",
        "--gpus", "L4,H100-SXM5-80GB", "--format", "json",
        "--user-catalog", str(empty_cwd.parent / "my-catalog"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model"] == USER_MODEL
    catalog_dir = str(empty_cwd.parent / "my-catalog")
    result = _invoke("predict", "--model", USER_MODEL, "--gpu", "L4", "--user-catalog", catalog_dir)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{USER_MODEL} on 1× L4 (vllm")
    rows = empty_cwd.parent / "rows.csv"
    rows.write_text(f"model,gpu\n{USER_MODEL},H100-SXM5-80GB\n", encoding="utf-8")
    result = _invoke("predict", "--input", str(rows), "--user-catalog", catalog_dir)
    assert result.exit_code == 0, result.output
    (row,) = csv.DictReader(io.StringIO(result.stdout))
    assert row["error"] == "" and float(row["itl_s"]) > 0
    # Without the overlay the same model is unknown: the catalog really came from the scenario.
    assert _main_exit(["plan", str(scenario), "--set", "user_catalog="]) == 1


@pytest.mark.slow
def test_user_catalog_plan_run_carries_the_bound_predictor(
    empty_cwd: Path, predictor: Predictor
) -> None:
    run = plan_file(_user_catalog_scenario(empty_cwd.parent))
    assert run.predictor.catalog is not predictor.catalog
    assert run.predictor.catalog.resolve_llm(USER_MODEL) == USER_MODEL
    assert run.predictor.models is predictor.models


# --- infeasibility -----------------------------------------------------------------------------

INFEASIBLE = {
    "name": "three-unservable",
    "region": "US",
    "electricity_usd_per_kwh": 0.1,
    "gpus": {"L4": {"tp_degrees": [1, 2]}, "H100-SXM5-80GB": {}},
    "models": [
        {
            "name": "too-big",
            "model": "meta-llama/Llama-3.1-70B-Instruct",
            "allowed_gpus": ["L4"],
            "load": {"requests_per_s": 1, "input_tokens": 1024, "output_tokens": 256},
            "sla": {"itl_ms": 50},
        },
        {
            "name": "too-fast",
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "load": {"requests_per_s": 1, "input_tokens": 1024, "output_tokens": 256},
            "sla": {"itl_ms": 0.1},
        },
        {
            "name": "servable",
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "load": {"requests_per_s": 1, "input_tokens": 1024, "output_tokens": 256},
            "sla": {"itl_ms": 100},
        },
        {
            "name": "also-too-fast",
            "model": "Qwen/Qwen2.5-7B-Instruct",
            "load": {"requests_per_s": 1, "input_tokens": 1024, "output_tokens": 256},
            "sla": {"itl_ms": 0.25},
        },
    ],
}


@pytest.fixture(scope="module")
def infeasible_run(tmp_path_factory: pytest.TempPathFactory, predictor: Predictor) -> PlanRun:
    path = tmp_path_factory.mktemp("infeasible") / "s.yaml"
    path.write_text(yaml.safe_dump(INFEASIBLE), encoding="utf-8")
    return plan_file(path, predictor=predictor)


def test_every_unservable_model_is_explained(infeasible_run: PlanRun) -> None:
    plan = infeasible_run.plan
    assert plan.status == PlanStatus.INFEASIBLE
    messages = plan.solve.messages
    named = [m.split(":", 1)[0] for m in messages]
    assert set(named) == {"too-big", "too-fast", "also-too-fast"}
    assert named == sorted(named, key=["too-big", "too-fast", "also-too-fast"].index)
    cands = infeasible_run.inputs.candidates
    # Memory: the weights fit no tried TP degree of L4; numbers from the largest option (2× L4).
    big = [c for c in cands if c.name == "too-big" and c.gpu == "L4"]
    assert big and all(c.exclusion == Exclusion.MEMORY for c in big)
    largest = max(big, key=lambda c: c.tp)
    assert largest.memory_needed_gb is not None and largest.memory_usable_gb is not None
    assert largest.memory_needed_gb > largest.memory_usable_gb
    memory = [m for m in messages if m.startswith("too-big: does not fit in memory on L4")]
    assert memory == [
        f"too-big: does not fit in memory on L4: needs {largest.memory_needed_gb:,.1f} GB for the "
        f"weights (plus KV cache), has {largest.memory_usable_gb:,.1f} GB usable on the largest "
        "TP option (2× L4)"
    ]
    assert not any(m.startswith("too-big: misses") for m in messages)
    # SLA: a separate reason, with the best ITL over the candidates and the SLA as given.
    for name, sla in (("too-fast", "0.1"), ("also-too-fast", "0.25")):
        # (TP degrees the model's heads do not allow are excluded as unpredictable configurations)
        mine = [c for c in cands if c.name == name and c.exclusion != Exclusion.PREDICTION]
        assert mine and all(c.exclusion == Exclusion.ITL_SLA for c in mine)
        best = min(mine, key=lambda c: c.itl_s_at_capacity)
        (line,) = [m for m in messages if m.startswith(f"{name}: ")]
        assert f"best ITL achievable {ms_text(best.itl_s_at_capacity)} ms ({best.gpu} TP" in line
        assert f"> SLA {sla} ms" in line  # then, below 1 ms, the unit hint (fuzz 19d)
        assert all(f"SLA {sla} ms" in c.reason for c in mine)


def test_infeasible_plan_cli_exits_1_and_prints_every_model(
    infeasible_run: PlanRun, tmp_path: Path
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(INFEASIBLE), encoding="utf-8")
    result = _invoke("plan", str(path), "--format", "md")
    assert result.exit_code == 1
    for message in infeasible_run.plan.solve.messages:  # as Markdown text (escaped)
        assert md_text(message) in result.stdout


def _cand(gpu: str, tp: int, code: Exclusion, needed: float, usable: float) -> Candidate:
    return Candidate(
        name="m", model="org/m", gpu=gpu, tp=tp, gpus_per_replica=tp, feasible=False,
        reason="needs more memory", batch_size=0, itl_s_at_capacity=float("inf"),
        max_requests_per_s_per_replica=0.0, idle_power_w_per_replica=0.0,
        energy_j_per_request=0.0, usd_per_hour_per_replica=1.0, power_w_per_gpu_at_capacity=0.0,
        exclusion=code, memory_needed_gb=needed, memory_usable_gb=usable,
    )  # fmt: skip


def test_memory_reason_uses_the_largest_option_and_skips_gpus_that_fit() -> None:
    cands = (
        _cand("small", 1, Exclusion.MEMORY, 140.0, 20.0),
        _cand("small", 2, Exclusion.MEMORY, 140.0, 40.0),
        _cand("mid", 4, Exclusion.MEMORY, 140.0, 120.0),
        _cand("fits", 1, Exclusion.MEMORY, 140.0, 70.0),
        _cand("fits", 2, Exclusion.ITL_SLA, 0.0, 0.0),
    )
    demand = ModelDemand(
        name="m", model="org/m", requests_per_s_by_period=(1.0,), itl_sla_s=0.0001,
        min_replicas=0, input_tokens=512, output_tokens=256,
    )  # fmt: skip
    inputs = PlanningInputs(
        scenario="t", models=(demand,), candidates=cands, period_hours=(1.0,),
        inventory={"small": None, "mid": None, "fits": None},
        pue=1.0, electricity_usd_per_kwh=0.1, grid_g_co2_per_kwh=100.0, carbon_usd_per_kg=None,
        power_cap_kw=None, budget_usd=None,
    )  # fmt: skip
    messages = no_candidate_messages(inputs)
    assert messages[0] == (
        "m: does not fit in memory on small, mid: needs 140.0 GB for the weights (plus KV cache), "
        "has 120.0 GB usable on the largest TP option (4× mid)"
    )
    assert messages[1:] == [
        "m: misses the ITL SLA on fits: no ITL prediction to compare with the SLA 0.1 ms"
    ]


def test_each_exclusion_code_gives_its_own_reason() -> None:
    def excluded(gpu: str, code: Exclusion, reason: str, **extra: Any) -> Candidate:
        return dataclasses.replace(
            _cand(gpu, 1, code, 0.0, 0.0),
            reason=reason,
            memory_needed_gb=None,
            memory_usable_gb=None,
            **extra,
        )

    cands = (
        excluded("slow", Exclusion.TTFT_SLA, "TTFT 2,500 ms > SLA 500 ms", ttft_s=2.5),
        excluded("slower", Exclusion.TTFT_SLA, "TTFT 3,000 ms > SLA 500 ms", ttft_s=3.0),
        excluded("banned", Exclusion.RULE, "in m.forbidden_gpus"),
        excluded("unpriced", Exclusion.NO_PRICE, "no $/hour"),
        excluded("odd", Exclusion.PREDICTION, "unknown engine"),
    )
    demand = ModelDemand(
        name="m", model="org/m", requests_per_s_by_period=(1.0,), itl_sla_s=0.05,
        ttft_sla_s=0.5, min_replicas=0, input_tokens=512, output_tokens=256,
    )  # fmt: skip
    inputs = PlanningInputs(
        scenario="t", models=(demand,), candidates=cands, period_hours=(1.0,),
        inventory={c.gpu: None for c in cands},
        pue=1.0, electricity_usd_per_kwh=0.1, grid_g_co2_per_kwh=100.0, carbon_usd_per_kg=None,
        power_cap_kw=None, budget_usd=None,
    )  # fmt: skip
    assert no_candidate_messages(inputs) == [
        "m: misses the TTFT SLA on slow, slower: best TTFT (lightest load) 2,500 ms (slow TP1) "
        "> SLA 500 ms",
        "m: excluded: banned in m.forbidden_gpus",
        "m: no $/hour for unpriced: set gpus.<GPU>.usd_per_hour",
        "m: cannot predict odd TP1: unknown engine",
    ]


def test_ms_text_keeps_sub_millisecond_slas() -> None:
    assert ms_text(0.0001) == "0.1"
    assert ms_text(0.00025) == "0.25"
    assert ms_text(0.00551) == "5.51"
    assert ms_text(0.05) == "50"
    assert ms_text(0.0876) == "88"
    assert ms_text(2.5) == "2,500"
    for k in range(1, 200):
        seconds = k * 1e-5
        assert float(ms_text(seconds).replace(",", "")) > 0


def test_a_value_above_its_limit_never_reads_as_the_limit() -> None:
    """``ITL 30 ms > SLA 30 ms`` read as a contradiction: the value gets the digits it needs."""
    assert ms_over(0.0301, 0.030) == ("30.1", "30")
    assert ms_over(0.03000004, 0.030) == ("30.00004", "30")
    assert ms_over(0.035, 0.030) == ("35", "30")
    assert ms_over(0.00551, 0.0055) == ("5.51", "5.5")
    rng = random.Random(0)
    for _ in range(2000):
        limit = 10 ** rng.uniform(-4, 1)
        value = limit * (1 + 10 ** rng.uniform(-6, 0))
        shown, said = ms_over(value, limit)
        assert float(shown.replace(",", "")) > float(said.replace(",", "")), (value, limit)


# --- output polish -----------------------------------------------------------------------------


def test_round_off_below_1e_9_prints_as_zero() -> None:
    for value in (1.1e-14, -3e-10, 9.99e-10, 0.0):
        assert num(value) == "0" and blocks.num(value) == "0"
    assert num(2e-9) != "0" and blocks.num(2e-9) != "0"
    assert diff_fmt(1.1e-14) == "0" and diff_fmt([1.1e-14, 2.5]) == "[0, 2.5]"


@pytest.fixture(scope="module")
def bundled_runs(bundled: BundledRuns) -> dict[str, PlanRun]:
    names = ("enterprise-fleet", "eu-power-cap-carbon", "paper-llama8b-low-load")
    return {n: bundled[n] for n in names}


def test_compact_table_fits_100_columns_and_wide_has_every_column(
    bundled_runs: dict[str, PlanRun],
) -> None:
    for name, run in bundled_runs.items():
        compact = sections_to_text(plan_sections(run.plan, wide=False), width=400)
        table_lines = [line for line in compact.splitlines() if line[:1] in "┏┃┡│├└"]
        assert table_lines, name
        assert max(len(line) for line in table_lines) <= COMPACT_WIDTH, name
        assert all(len(line) <= COMPACT_WIDTH for line in compact.splitlines()[:8]), name
        wide = sections_to_text(plan_sections(run.plan, wide=True), width=400)
        for column in ALLOCATION_COLUMNS:
            assert column in wide, (name, column)
        for _, heading in COMPACT_ALLOCATION_COLUMNS:
            assert heading in compact, (name, heading)


def test_plan_cli_wide_flag(empty_cwd: Path) -> None:
    compact = _invoke("plan", "paper-llama8b-low-load")
    wide = _invoke("plan", "paper-llama8b-low-load", "--wide")
    assert compact.exit_code == wide.exit_code == 0
    assert "mean W/GPU" in wide.stdout and "CO2e kg" in wide.stdout
    assert "mean W/GPU" not in compact.stdout and "--wide" in compact.stdout
    assert max(len(line) for line in compact.stdout.splitlines()) <= COMPACT_WIDTH


def test_alternatives_are_feasible_and_never_beat_an_optimal_plan(
    bundled_runs: dict[str, PlanRun],
) -> None:
    for name, run in bundled_runs.items():
        plan = run.plan
        assert plan.has_solution and plan.solve.objective is not None
        slack = (plan.solve.gap or 0.0) * abs(plan.solve.objective) + 1e-6 * max(
            1.0, abs(plan.solve.objective)
        )
        found = alternatives(plan)
        served = {a.candidate.name for a in plan.allocations}
        assert set(found) == served, name
        for model, options in found.items():
            assert options, (name, model)
            assert all(o.candidate.feasible and o.candidate.name == model for o in options)
            for o in options:
                if o.chosen:
                    assert abs(o.delta) <= 1e-6 * max(1.0, abs(o.objective)), (name, model)
                elif not o.breaks:
                    assert o.delta >= -slack, (name, model, o.candidate.key, o.delta)
            others = [o.delta for o in options if not o.chosen]
            assert others == sorted(others)


def test_candidates_flag_shows_alternatives_with_delta(empty_cwd: Path) -> None:
    result = _invoke("plan", "paper-llama8b-low-load", "--candidates", "--format", "md")
    assert result.exit_code == 0, result.output
    assert "## best feasible alternatives" in result.stdout
    assert "## excluded candidates" in result.stdout
    rows = [
        line
        for line in result.stdout.split("## best feasible alternatives")[1].splitlines()
        if line.startswith("| chat-8b") or line.startswith("|  |")
    ]
    assert len(rows) >= 2
    assert "planned" in rows[0] and "| 0 |" in rows[0]
    assert all(re.search(r"\| \+[\d,.]+ \|", row) for row in rows[1:])


def test_progress_is_off_without_a_terminal_or_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("WATTGPU_NO_PROGRESS", raising=False)

    class Tty:
        def isatty(self) -> bool:
            return True

        def write(self, text: str) -> int:
            return len(text)

        def flush(self) -> None:
            pass

    monkeypatch.setattr(sys, "stderr", Tty())
    assert progress_enabled()
    monkeypatch.setenv("CI", "true")
    assert not progress_enabled()
    monkeypatch.setenv("CI", "false")
    monkeypatch.setenv("WATTGPU_NO_PROGRESS", "1")
    assert not progress_enabled()
    monkeypatch.setattr(sys, "stderr", __import__("io").StringIO())
    monkeypatch.delenv("WATTGPU_NO_PROGRESS")
    assert not progress_enabled()


@pytest.mark.slow
def test_progress_never_writes_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    import time

    with Progress("working", delay_s=0.0, enabled=True) as progress:
        time.sleep(0.3)
        progress.update("still working")
        time.sleep(0.2)
    assert capsys.readouterr().out == ""


def test_pareto_reports_each_solved_plan(bundled_runs: dict[str, PlanRun]) -> None:
    run = bundled_runs["paper-llama8b-low-load"]
    calls: list[tuple[int, int]] = []
    pareto_front(run.inputs, 3, run.plan, on_point=lambda done, of: calls.append((done, of)))
    assert calls == [(k, 5) for k in range(1, 6)]


# --- exit codes and the README -------------------------------------------------------------------


@pytest.mark.slow
def test_exit_codes_are_as_the_docs_say(
    empty_cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    rules = reference.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    assert "Add `--debug` anywhere on the command line for a traceback." in reference
    assert "[exit codes](docs/cli.md#exit-codes)" in (REPO / "README.md").read_text("utf-8")
    assert "- `1`: a problem with what you gave" in rules
    assert "- `2`: the command line itself is malformed" in rules
    assert _main_exit(["plan", "paper-llama8b-low-load", "--bogus"]) == 2
    assert _main_exit(["plan", "paper-llama8b-low-load", "--format", "xml"]) == 2
    assert _main_exit(["validate"]) == 2
    capsys.readouterr()
    assert _main_exit(["validate", "missing.yaml"]) == 1
    assert capsys.readouterr().err.startswith("error: missing.yaml: ")
    assert _main_exit(["plan", "no-such-example"]) == 1
    assert "wattgpu scenarios" in capsys.readouterr().err
    assert _main_exit(["plan", "paper-llama8b-low-load", "--set", "models[0].sla.itl_ms=0.1"]) == 1
    assert _main_exit(["plan", "paper-llama8b-low-load", "--format", "json"]) == 0

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr("planner.pipeline.plan_file", broken)
    capsys.readouterr()
    assert _main_exit(["plan", "paper-llama8b-low-load"]) == 2
    assert capsys.readouterr().err.startswith("error: internal error RuntimeError: boom")


def _usage_commands(page: str = "README.md", heading: str = "## Usage") -> list[list[str]]:
    """The ``wattgpu`` commands of the first bash block after *heading* in *page*."""
    text = (REPO / page).read_text(encoding="utf-8")
    usage = text.split(f"\n{heading}\n", 1)[1]
    block = usage.split("```bash", 1)[1].split("```", 1)[0]
    joined = block.replace("\\\n", " ")
    commands = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            assert words[0] == "wattgpu", line
            commands.append(words[1:])
    return commands


def _documented_commands() -> list[list[str]]:
    """The commands of docs/cli.md (the full reference), then any of the README's usage block
    that docs/cli.md lacks (none should: the README's block is a subset)."""
    reference = _usage_commands("docs/cli.md", "## Commands")
    return reference + [c for c in _usage_commands() if c not in reference]


def test_readme_usage_commands_are_in_the_command_reference() -> None:
    readme, reference = _usage_commands(), _usage_commands("docs/cli.md", "## Commands")
    assert 8 <= len(readme) < len(reference)
    assert [c for c in readme if c not in reference] == []
    assert {c[0] for c in reference} >= {
        "scenarios", "plan", "validate", "compare", "report", "schema", "pareto", "diff",
        "predict", "catalog", "data", "train", "evaluate",
    }  # fmt: skip


#: Usage commands that need measurement data or a file the user makes.
NEEDS_USER_FILES = ("rows.csv", "config.json", "../shared/data/measurements", "my-measurements")
#: Commands only parsed here (each solves the 12-model scenario many times: tens of seconds);
#: `report` and `pareto` run on a bundled name above and in test_report.py.
PARSED_ONLY = ("report", "pareto")
SCENARIO_COMMANDS = ("plan", "validate", "report", "pareto")


def _parses(args: list[str]) -> None:
    """Parse *args* like the CLI does (options, choices, arguments, bare optional values such as
    ``--candidates``) without running them."""
    command: Any = typer.main.get_command(app)
    ctx = command.context_class(command, info_name="wattgpu")
    rest = bare_optional_values(list(args))
    while hasattr(command, "list_commands"):  # a group: descend into the named subcommand
        name, rest = rest[0], rest[1:]
        command = command.get_command(ctx, name)
        assert command is not None, args
        ctx = command.context_class(command, info_name=name, parent=ctx)
    command.make_context(ctx.info_name, rest, parent=ctx.parent)


@pytest.mark.slow
def test_readme_usage_commands_run_from_an_empty_directory(empty_cwd: Path) -> None:
    commands = _documented_commands()
    assert len(commands) >= 15
    ran = 0
    for args in commands:
        _parses(args)
        if any(word in NEEDS_USER_FILES for word in args):
            continue
        if args[0] in SCENARIO_COMMANDS and len(args) > 1 and not args[1].startswith("-"):
            assert find_scenario(args[1]).is_file(), args
        if args[0] in PARSED_ONLY:
            continue
        result = runner.invoke(app, args, catch_exceptions=False)
        assert result.exit_code == 0, (args, result.output)
        ran += 1
    assert ran >= 10
    assert json.loads((empty_cwd / "plan.json").read_text(encoding="utf-8"))["status"] == "optimal"
    with (empty_cwd / "my-scenarios" / "eu-power-cap-carbon.yaml").open(encoding="utf-8") as fh:
        assert "eu-power-cap-carbon" in fh.read()
    assert {p.name for p in empty_cwd.iterdir()} >= {"plan.json", "what-if.json", "my-scenarios"}
