"""Fuzz round 22 (carried from round 21d and 21a): inputs named where they go wrong.

Each test failed before its fix: an empty model cell of an aiconfigurator or ML.ENERGY v1 CSV
was dropped as ``model is empty (required)`` without its line; a measurements CSV saved as
UTF-16 was skipped as if it were no measurement file (``no measurement files of a known format
found``); ``--itl-ms nan`` and other non-finite float options read ``Input should be less than
or equal to 3600000``, a bound the user did not cross."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

_AICONF = "aiconfigurator-silicon/silicon_sample.csv"


def _aiconfigurator_lines(measurements_dir: Path, n: int) -> list[list[str]]:
    with (measurements_dir / _AICONF).open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        return [row for _, row in zip(range(n), reader, strict=False)]


def test_an_empty_model_cell_is_dropped_naming_its_line(
    tmp_path: Path, measurements_dir: Path
) -> None:
    rows = _aiconfigurator_lines(measurements_dir, 6)
    rows[3][rows[0].index("model_path")] = ""  # the CSV's line 4
    target = tmp_path / "data" / _AICONF
    target.parent.mkdir(parents=True)
    with target.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    legacy = tmp_path / "data" / "ml-energy-benchmark" / "data" / "legacy"
    legacy.mkdir(parents=True)
    (legacy / "A40_chat-concise_benchmark.csv").write_text(
        "model,throughput,response_length,latency,energy\n"
        "lmsys/vicuna-7B,29.8,271.9,9.13,2143.5\n"
        ",26.5,255.5,9.40,2439.3\n",
        encoding="utf-8",
    )
    result = run_cli("data", "summary", "--data", str(tmp_path / "data"))
    assert result.code == 0, result.err
    assert "silicon_sample.csv line 4: model_path is empty (required)" in result.out
    assert "A40_chat-concise_benchmark.csv line 3: model is empty (required)" in result.out


@pytest.mark.parametrize(
    ("folder", "name", "text"),
    [
        ("aiconfigurator-silicon", "silicon_sample.csv", None),
        (
            "ml-energy-benchmark/data/legacy",
            "A40_chat-concise_benchmark.csv",
            "model,throughput,response_length,latency,energy\nlmsys/vicuna-7B,29.8,271.9,9.1,2143\n",
        ),
    ],
)
def test_a_utf16_measurements_csv_is_named_with_its_encoding(
    tmp_path: Path, measurements_dir: Path, folder: str, name: str, text: str | None
) -> None:
    if text is None:
        lines = _aiconfigurator_lines(measurements_dir, 3)
        text = "\n".join(",".join(f'"{c}"' for c in row) for row in lines) + "\n"
    target = tmp_path / "data" / folder / name
    target.parent.mkdir(parents=True)
    target.write_bytes(text.encode("utf-16"))
    result = run_cli("data", "summary", "--data", str(tmp_path / "data"))
    assert result.code == 1
    assert f"{name}: the file is UTF-16 encoded; save it as UTF-8" in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        (
            "--requests-per-s",
            "nan",
            "--requests-per-s nan: not a finite number; give a number from 0 to 1,000,000",
        ),
        (
            "--itl-ms",
            "-inf",
            "--itl-ms -inf: not a finite number; give a number from 0.001 to 3,600,000",
        ),
        ("--hours", "Infinity", "--hours Infinity: not a finite number"),
    ],
)
def test_a_non_finite_number_option_is_named_as_such(
    option: str, value: str, expected: str
) -> None:
    args = {"--requests-per-s": "2", "--itl-ms": "50", "--hours": "8760", option: value}
    flat = [x for kv in args.items() for x in kv]
    result = run_cli("compare", "--model", "meta-llama/Llama-3.1-8B-Instruct", *flat)
    assert result.code == 1
    assert result.err.strip().startswith(f"error: {expected}")
    assert len(result.err.strip().splitlines()) == 1
    assert "less than or equal" not in result.err


def _scenario_with(tmp_path: Path, old: str, new: str, extra: str = "") -> Path:
    text = (Path(__file__).parents[1] / "scenarios" / "paper-llama8b-low-load.yaml").read_text(
        encoding="utf-8"
    )
    assert old in text
    path = tmp_path / "s.yaml"
    path.write_text(text.replace(old, new, 1) + extra, encoding="utf-8")
    return path


def test_a_400_digit_number_is_named_too_large_not_no_number(tmp_path: Path) -> None:
    """Was: ``expected a number, got an integer of about 400 digits — give a number``."""
    path = _scenario_with(tmp_path, "requests_per_s: 0.33", "requests_per_s: 1" + "0" * 400)
    result = run_cli("validate", str(path))
    assert result.code == 1
    assert (
        "models[0].load.requests_per_s: an integer of about 400 digits is too large for a number"
        " — give a smaller value" in result.err
    )


def test_a_400_digit_draw_count_is_not_printed_in_full(tmp_path: Path) -> None:
    """Was: the count printed with 133 thousands separators on one line."""
    path = _scenario_with(tmp_path, "x", "x", "\nsweep:\n  draws: 1" + "0" * 400 + "\n")
    result = run_cli("sweep", str(path))
    assert result.code == 1
    # above the ceiling even --force allows (fuzz round 23): the field's range, digits counted
    assert "sweep.draws: an integer of about" in result.err
    assert "digits is out of range — give a value less than or equal to 1000000" in result.err
    assert len(result.err) < 300


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["dask", "ray"])
def test_a_dead_dask_or_ray_worker_is_one_error_line(engine: str) -> None:
    """Was: Dask's ``FutureCancelledError … already forgotten`` and Ray's ``WorkerCrashedError``
    as internal errors (exit 2). A real local cluster; the task ends its worker process."""
    from planner.sweep.executors import open_engine
    from predictors.core.errors import WattgpuError
    from tests.pool_probe import die

    pytest.importorskip("distributed" if engine == "dask" else "ray")
    with pytest.raises(WattgpuError) as caught:
        with open_engine(engine, None, workers=1) as session:
            session.run(die, [[0], [1]], lambda i: None)
    message = str(caught.value)
    assert message.startswith(f"--engine {engine}: a worker process died during the sweep")
    assert "nothing was written" in message and "\n" not in message


def test_region_suggestions_with_commas_are_quoted(tmp_path: Path) -> None:
    """Was: ``(did you mean: US Texas, Texas, US, ES?)``, which reads as suggesting the name it
    just refused (the alias is the one name 'Texas, US')."""
    path = _scenario_with(tmp_path, "x", "x")
    result = run_cli("validate", str(path), "--set", "region=Texas")
    assert result.code == 1
    assert "'Texas, US'" in result.err
    assert ", Texas," not in result.err


def test_an_entry_that_forbids_every_listed_gpu_is_a_validation_error(tmp_path: Path) -> None:
    """Was: ``validate`` said ok and only ``plan`` found the entry infeasible (an empty
    ``allowed_gpus`` was already refused)."""
    path = tmp_path / "forbid.yaml"
    path.write_text(
        "name: forbid\nregion: US\nelectricity_usd_per_kwh: 0.1\ngpus:\n  L4: {}\nmodels:\n"
        "  - name: a\n    model: meta-llama/Llama-3.1-8B-Instruct\n    forbidden_gpus: [L4]\n"
        "    load: {requests_per_s: 1, input_tokens: 512, output_tokens: 128}\n"
        "    sla: {itl_ms: 80}\n",
        encoding="utf-8",
    )
    result = run_cli("validate", str(path))
    assert result.code == 1
    assert "models[0].forbidden_gpus: forbids every GPU type listed under gpus" in result.err
