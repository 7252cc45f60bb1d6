"""Round-25 findings on the batch prediction contract (``wattgpu predict --input``).

Before: the attention-DP fix of a layout error left out the pipeline stages (``keep 144 GPUs
with data_parallel 9 (tensor parallelism 8 × data 9)``: 72 GPUs, and stating only
``data_parallel 9`` gave TP 16 × PP 1 × DP 9); batch rows with an unknown engine or precision
had no did-you-mean (the single form gave one); two unnamed header columns (``a,b,,``) refused
the file as ``'' appear more than once``; Ctrl-C while the command line loaded printed a
``KeyboardInterrupt`` traceback; ``-o /dev/full`` said ``cannot write (None)``; and the contract
listed ``domain_reason`` of an error row as one of two values where a row refused for memory
also carries its other domain reasons.
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from predictors.core.errors import WattgpuError
from predictors.core.output import write_output
from tests.cli_runner import one_error_line, run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")

ROOT = Path(__file__).resolve().parents[1]
HEADER = "model,gpu,gpu_count,pipeline_parallel,data_parallel,engine,precision,batch_size"


def _batch(tmp_path: Path, *lines: str, header: str = HEADER) -> list[dict[str, str]]:
    """``wattgpu predict --input`` of *lines* under *header*; the output rows."""
    rows = tmp_path / "rows.csv"
    rows.write_text("\n".join((header, *lines)) + "\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    result = run_cli("predict", "--input", str(rows), "-o", str(out))
    assert result.code == 0, result.err
    with out.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


# --- F1: the attention-DP fix names the pipeline stages it keeps ---------------------------------

_KEEP = re.compile(
    r"or keep (?P<gpus>\d+) GPUs with data_parallel (?P<dp>\d+) and pipeline_parallel "
    r"(?P<pp>\d+) \(tensor parallelism (?P<tp>\d+) × pipeline (?P=pp) × data (?P=dp)\)$"
)


@pytest.mark.slow
def test_the_data_parallel_fix_states_the_stages_and_following_it_gives_that_layout(
    tmp_path: Path,
) -> None:
    (row,) = _batch(tmp_path, "deepseek-ai/DeepSeek-V3,GB200,144,,,,,1")
    found = _KEEP.search(row["error"])
    assert found, row["error"]
    gpus, tp, pp, dp = (int(found[k]) for k in ("gpus", "tp", "pp", "dp"))
    assert (gpus, pp) == (144, 2) and tp * pp * dp == gpus  # 8 × 2 × 9
    (followed,) = _batch(tmp_path, f"deepseek-ai/DeepSeek-V3,GB200,{gpus},{pp},{dp},,,1")
    assert followed["error"] == "", followed["error"]
    layout = [int(followed[c]) for c in ("tensor_parallel", "pipeline_parallel", "data_parallel")]
    assert layout == [tp, pp, dp]


def test_the_single_form_names_the_stages_too_and_one_stage_stays_unstated() -> None:
    line = one_error_line(
        run_cli(
            "predict", "--model", "deepseek-ai/DeepSeek-V3", "--gpu", "GB200", "--gpu-count", "144"
        ),
        "data_parallel 9 and pipeline_parallel 2 (tensor parallelism 8 × pipeline 2 × data 9)",
    )
    assert line.startswith("error: predict: --gpu-count:")
    one = one_error_line(
        run_cli(
            "predict",
            "--model",
            "moonshotai/Kimi-K2-Instruct",
            "--gpu",
            "GB200",
            "--gpu-count",
            "72",
        )
    )
    assert one.endswith("keep 72 GPUs with data_parallel 9 (tensor parallelism 8 × data 9)")


# --- F2: the batch form's unknown engine or precision gets the single form's did-you-mean --------

NAMES = "model,gpu,gpu_count,engine,precision,batch_size"


@pytest.mark.parametrize(
    ("cells", "option", "hint"),
    [
        (",vlm,", "--engine", "(did you mean: vllm?)"),
        (",deepspeed,", "--engine", "(did you mean: deepspeed-mii?)"),
        (",,fp-8", "--precision", "(did you mean: fp8"),
    ],
)
@pytest.mark.slow
def test_batch_rows_with_an_unknown_engine_or_precision_get_the_did_you_mean(
    tmp_path: Path, cells: str, option: str, hint: str
) -> None:
    (row,) = _batch(
        tmp_path,
        f"llama-3.1-8b,h100,1{cells},1",
        header=NAMES,
    )
    assert hint in row["error"], row["error"]
    engine, precision = cells.split(",")[1:]
    single = run_cli(
        "predict",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100",
        *(("--engine", engine) if engine else ()),
        *(("--precision", precision) if precision else ()),
    )
    line = one_error_line(single, hint)
    column = option.removeprefix("--")
    assert line == f"error: predict: {option}: {row['error'].removeprefix(column + ': ')}"


def test_a_row_without_a_close_name_keeps_the_plain_list(tmp_path: Path) -> None:
    (row,) = _batch(tmp_path, "llama-3.1-8b,h100,1,qqqqqq,,1", header=NAMES)
    assert row["error"].startswith("engine: unknown 'qqqqqq'; use one of vllm"), row["error"]


# --- F3: two or more unnamed header columns are named as such ------------------------------------


def test_two_unnamed_columns_refuse_the_file_naming_their_positions(tmp_path: Path) -> None:
    rows = tmp_path / "trail.csv"
    rows.write_text("model,gpu,batch_size,,\nllama-3.1-8b,h100,8,,\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    one_error_line(
        run_cli("predict", "--input", str(rows), "-o", str(out)),
        "trail.csv: columns 4 and 5 have no name in the header",
        "give each a name, or delete them if they are empty",
        never=("more than once", "''"),
    )
    assert not out.exists()


def test_many_unnamed_columns_are_counted_not_listed(tmp_path: Path) -> None:
    rows = tmp_path / "wide.csv"
    rows.write_text("model,,gpu" + "," * 12 + "\nllama-3.1-8b,,h100\n", encoding="utf-8")
    line = one_error_line(run_cli("predict", "--input", str(rows)), "have no name in the header")
    assert "columns 2, 4, 5, 6, 7 and 8 more have no name" in line


def test_one_unnamed_column_is_still_kept_and_a_repeated_name_still_refused(
    tmp_path: Path,
) -> None:
    header = "model,gpu,batch_size,"
    (row,) = _batch(tmp_path, "llama-3.1-8b,h100,8,kept", header=header)
    assert row[""] == "kept" and row["error"] == ""
    rows = tmp_path / "dup.csv"
    rows.write_text("model,gpu,gpu,,\nllama-3.1-8b,h100,h100,,\n", encoding="utf-8")
    one_error_line(run_cli("predict", "--input", str(rows)), "columns 4 and 5 have no name")
    rows.write_text("model,gpu,gpu\nllama-3.1-8b,h100,h100\n", encoding="utf-8")
    one_error_line(
        run_cli("predict", "--input", str(rows)),
        "column(s) 'gpu' appear more than once in the header; keep one of each",
    )


# --- F4: Ctrl-C while the command line loads: exit 130, no traceback -----------------------------

#: A child that runs the console script of pyproject.toml and gets a real SIGINT (as a terminal's
#: Ctrl-C sends it) while it imports the command line's heavy module.
_CTRL_C_CHILD = """
import importlib, os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, even if ignored

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "planner.cli.app":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlC())
module, _, function = sys.argv[1].partition(":")
sys.argv = ["wattgpu", "--version"]
sys.exit(getattr(importlib.import_module(module), function)())
"""


def _console_script() -> str:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return str(scripts["project"]["scripts"]["wattgpu"])


def test_ctrl_c_while_the_command_line_loads_exits_130_without_a_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CTRL_C_CHILD, _console_script()],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "KeyboardInterrupt" not in proc.stderr
    assert proc.stdout == ""


def test_the_console_script_still_runs_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import import_module

    module, _, function = _console_script().partition(":")
    assert module != "planner.cli.app"  # the light entry point: see the module doc
    with pytest.raises(SystemExit) as stopped:
        getattr(import_module(module), function)(["--version"])
    assert stopped.value.code in (0, None)
    assert capsys.readouterr().out.startswith("wattgpu ")


# --- F5: a write error on a device or pipe says why ----------------------------------------------


def test_a_write_through_error_without_strerror_shows_its_message() -> None:
    def fill(_fh: object) -> None:
        raise OSError("No space left on device (os error 28)")  # as polars' writer raises it

    with pytest.raises(WattgpuError) as caught:
        write_output(Path("/dev/null"), fill)
    message = str(caught.value)
    assert "None" not in message
    assert "cannot write (No space left on device (os error 28))" in message


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_output_to_dev_full_names_the_full_device(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("model,gpu\nllama-3.1-8b,h100\n", encoding="utf-8")
    one_error_line(
        run_cli("predict", "--input", str(rows), "-o", "/dev/full"),
        "--output /dev/full: cannot write (No space left on device",
        never=("(None)",),
    )


# --- F6: what domain_reason holds on an error row ------------------------------------------------

MEMORY = "does not fit in GPU memory"


def test_an_error_rows_domain_reason_is_invalid_row_or_starts_with_the_memory_reason(
    tmp_path: Path,
) -> None:
    rows = _batch(
        tmp_path,
        "llama-3.1-70b,L40S,1,1",  # refused for memory, and its GPU is outside the training data
        "llama-3.1-70b,H100,1,1",  # refused for memory only
        "no-such-model,H100,1,1",
        "llama-3.1-8b,H100,1,abc",
        header="model,gpu,gpu_count,batch_size",
    )
    reasons = [row["domain_reason"] for row in rows]
    assert all(row["error"] and row["in_domain"] == "false" for row in rows)
    assert reasons[0].startswith(f"{MEMORY}; ") and "has no training rows" in reasons[0]
    assert reasons[1] == MEMORY
    assert reasons[2:] == ["invalid row (see error)"] * 2
    contract = " ".join((ROOT / "docs" / "contracts.md").read_text(encoding="utf-8").split())
    assert f"starts with `{MEMORY}`, followed by the row's other reasons" in contract
