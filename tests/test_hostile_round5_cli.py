"""Hostile inputs found in the fifth review (2026-12-04, night), through the real CLI: each gets
one clean ``error:`` line and exit 1, or the right answer.

* ``-o newdir/`` wrote a file named ``newdir`` (typer's Path drops the slash);
* ``pareto --chart x.svg`` wrote PNG bytes into ``x.svg`` (now an SVG file);
* ``-o LINK`` replaced a symbolic link by a regular file;
* ``disclosure.lifetime_years: 1e-320`` made the disclosure's embodied share ``inf``;
* ``predict --requests-per-s 1e308`` printed a numpy RuntimeWarning before its error;
* a path holding a line break split an error into two lines.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from cli_runner import Result, run_bounded, run_cli

from planner.cli.oneline import escape_user_breaks, user_values
from planner.cli.outputs import directory_name_problem
from predictors.core.output import atomic_write

PAPER = "paper-llama8b-low-load"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.usefixtures("cached_predictor")


def _one_error(result: Result) -> str:
    """The single ``error:`` line of *result* (asserting exit 1 and no other stderr line)."""
    assert result.code == 1, result.err
    err = result.err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: ") and "internal error" not in err, err
    return err


# 1. a trailing slash names a directory ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option", "example"),
    [
        (("plan", PAPER, "-f", "json", "-o", "{d}/"), "--output", "plan.json"),
        (("plan", PAPER, "--output={d}/"), "--output", "plan.json"),
        (("plan", PAPER, "-o{d}/"), "--output", "plan.json"),
        (("compare", "--model", LLAMA, "-o", "{d}/"), "--output", "compare.json"),
        (("report", PAPER, "-o", "{d}/"), "--output", "report.md"),
        (("schema", "plan", "-o", "{d}/"), "--output", "schema.json"),
        (("sweep", PAPER, "-o", "{d}/"), "--output", "sweep.json"),
        (("predict", "--input", "rows.csv", "--output", "{d}/"), "--output", "predictions.csv"),
        (("evaluate", "--output", "{d}/"), "--output", "accuracy.md"),
        (("pareto", PAPER, "--chart", "{d}/"), "--chart", "chart.png"),
    ],
)
def test_an_output_with_a_trailing_slash_is_refused(
    tmp_path: Path, args: tuple[str, ...], option: str, example: str
) -> None:
    newdir = tmp_path / "newdir"
    result = run_cli(*(a.format(d=newdir) for a in args))
    err = _one_error(result)
    assert err == (
        f"error: {option} {newdir}/: names a directory; give a file name such as {newdir}/{example}"
    )
    assert not newdir.exists()  # neither a file nor a directory named newdir


@pytest.mark.parametrize("suffix", ["/.", "/..", "//"])
def test_other_directory_spellings_are_refused(tmp_path: Path, suffix: str) -> None:
    target = f"{tmp_path / 'newdir'}{suffix}"
    err = _one_error(run_cli("schema", "plan", "-o", target))
    assert f"--output {target}: names a directory" in err
    assert not (tmp_path / "newdir").exists()


def test_an_existing_directory_with_a_slash_is_refused_and_a_file_name_is_written(
    tmp_path: Path,
) -> None:
    err = _one_error(run_cli("schema", "plan", "-o", f"{tmp_path}/"))
    assert "names a directory" in err
    assert run_cli("schema", "plan", "-o", f"{tmp_path}/new/s.json").code == 0
    assert (tmp_path / "new" / "s.json").read_text(encoding="utf-8").startswith("{")


def test_an_empty_output_is_refused() -> None:
    assert _one_error(run_cli("schema", "plan", "-o", "")) == (
        "error: --output: is empty; give a file name such as schema.json"
    )


def test_train_output_is_a_directory_and_keeps_its_slash(tmp_path: Path) -> None:
    result = run_cli("train", "--output", f"{tmp_path}/models/", "--data", str(tmp_path / "no"))
    err = _one_error(result)
    assert "names a directory" not in err and err.startswith("error: --data:")


def test_directory_name_problem() -> None:
    assert directory_name_problem("a/b.json", "-o", "x.json") is None
    assert directory_name_problem("a/.b", "-o", "x.json") is None
    assert directory_name_problem("a/b/", "-o", "x.json") == (
        "-o a/b/: names a directory; give a file name such as a/b/x.json"
    )
    assert directory_name_problem(".", "-o", "x.json") == (
        "-o .: names a directory; give a file name such as ./x.json"
    )


# 2. pareto --chart writes PNG or SVG by the name's suffix, and nothing else ----------------


@pytest.mark.parametrize("name", ["x.pdf", "x", "x.png.txt", "x.svgz"])
def test_a_chart_name_not_ending_in_png_or_svg_is_refused(tmp_path: Path, name: str) -> None:
    chart = tmp_path / name
    err = _one_error(run_cli("pareto", PAPER, "-n", "2", "--chart", str(chart)))
    assert err == (
        f"error: --chart {chart}: the chart is written as PNG or SVG; give a file name ending in "
        ".png or .svg"
    )
    assert not chart.exists()


@pytest.mark.slow  # 1.3-2 s: the default run stays under 2 minutes
def test_an_svg_chart_is_svg_and_the_same_on_every_run(tmp_path: Path) -> None:
    """``x.svg`` got PNG bytes; it is now an SVG document, without a date or random ids."""
    first, second = tmp_path / "front.svg", tmp_path / "again.SVG"
    for chart in (first, second):
        result = run_cli("pareto", PAPER, "-n", "2", "--chart", str(chart))
        assert result.code == 0, result.err
    text = first.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text and text.rstrip().endswith("</svg>")
    assert "<dc:date>" not in text
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_a_png_chart_is_written(tmp_path: Path) -> None:
    chart = tmp_path / "front.PNG"
    result = run_cli("pareto", PAPER, "-n", "2", "--chart", str(chart))
    assert result.code == 0, result.err
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


# 3. a symbolic link is written through -----------------------------------------------------


def test_output_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = real_dir / "plan.json"
    real.write_text("old", encoding="utf-8")
    real.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to(os.path.relpath(real, tmp_path))
    result = run_cli("schema", "plan", "-o", str(link))
    assert result.code == 0, result.err
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert real.read_text(encoding="utf-8").startswith("{")
    assert stat.S_IMODE(real.stat().st_mode) == 0o600  # the target keeps its permissions
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real"]
    assert [p.name for p in real_dir.iterdir()] == ["plan.json"]  # no temporary file left


def test_a_symlinked_input_is_still_refused_as_output(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_bytes((REPO / "scenarios" / f"{PAPER}.yaml").read_bytes())
    link = tmp_path / "link.yaml"
    link.symlink_to(scenario)
    err = _one_error(run_cli("plan", str(scenario), "-o", str(link)))
    assert "is the input file" in err
    assert link.is_symlink()


@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_a_dangling_or_looping_symlink_is_one_line(tmp_path: Path, kind: str) -> None:
    link = tmp_path / "out.json"
    if kind == "dangling":
        link.symlink_to(tmp_path / "missing" / "x.json")
        reason = f"dangling symbolic link to {tmp_path / 'missing' / 'x.json'}"
    else:
        (tmp_path / "other").symlink_to(link)
        link.symlink_to(tmp_path / "other")
        reason = "symbolic link loop"
    err = _one_error(run_cli("schema", "plan", "-o", str(link)))
    assert err == (f"error: --output {link}: {reason} — fix the link or write to another path")
    assert link.is_symlink() and not (tmp_path / "missing").exists()


def test_atomic_write_through_a_symlink_writes_beside_the_target(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    target = tmp_path / "b" / "t.bin"
    target.write_bytes(b"old")
    link = tmp_path / "a" / "l.bin"
    link.symlink_to(target)
    atomic_write(link, b"new")
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["l.bin"]
    assert [p.name for p in (tmp_path / "b").iterdir()] == ["t.bin"]
    (tmp_path / "d").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="dangling symbolic link"):
        atomic_write(tmp_path / "d", b"x")
    assert not (tmp_path / "nowhere").exists()


# 4. disclosure.lifetime_years has a lower bound -------------------------------------------


@pytest.mark.parametrize("value", ["1e-320", "0.1", "31", "0"])
def test_a_lifetime_out_of_range_is_one_line(tmp_path: Path, value: str) -> None:
    scenario = tmp_path / "s.yaml"
    text = (REPO / "scenarios" / f"{PAPER}.yaml").read_text(encoding="utf-8")
    scenario.write_text(text + f"disclosure:\n  lifetime_years: {value}\n", encoding="utf-8")
    err = _one_error(run_cli("report", str(scenario), "--pareto-points", "0"))
    assert err == (
        f"error: {scenario}: disclosure.lifetime_years: {value} is out of range — "
        "give 0.25 to 30 years"
    )


def test_the_shortest_lifetime_gives_finite_figures() -> None:
    result = run_cli(
        "report", PAPER, "--pareto-points", "0", "--set", "disclosure.lifetime_years=0.25"
    )
    assert result.code == 0, result.err
    rows = [line for line in result.out.splitlines() if line.startswith("| embodied")]
    assert rows and not any(" inf " in r or "nan" in r for r in rows)
    assert any(r.startswith("| embodied_time_share | 4 |") for r in rows)


# 5. predict --requests-per-s 1e308: the error and nothing else ------------------------------


@pytest.mark.slow  # about 1 s: the default run stays under 2 minutes
def test_a_huge_rate_is_one_line_without_a_warning(tmp_path: Path) -> None:
    result = run_bounded(
        "predict", "--model", LLAMA, "--gpu", "A30", "--requests-per-s", "1e308", cwd=tmp_path
    )
    err = _one_error(result)
    assert err.startswith("error: predict: --requests-per-s: 1e+308 is more than one replica")
    assert "Warning" not in result.err


@pytest.mark.slow  # about 1 s: the default run stays under 2 minutes
def test_a_huge_rate_in_a_csv_row_is_its_error_without_a_warning(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(f"model,gpu,requests_per_s\n{LLAMA},A30,1e308\n{LLAMA},A30,1\n")
    result = run_bounded("predict", "--input", str(rows), "--output", "out.csv", cwd=tmp_path)
    assert result.code == 0, result.err
    assert "Warning" not in result.err and "error" not in result.err
    assert "2 rows, 1 with errors" in result.out
    assert "is more than one replica carries" in (tmp_path / "out.csv").read_text()


# 6. a line break in a path stays inside one error line -------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("validate", "{t}/a\nb.yaml"), "error: {t}/a\\nb.yaml: cannot read"),
        (("plan", "{t}/a\r\nb.yaml"), "error: {t}/a\\r\\nb.yaml: cannot read"),
        (("predict", "--input", "{t}/a\nb.csv"), "error: --input: {t}/a\\nb.csv: cannot read"),
        (("schema", "plan", "-o", "{t}/f/x\ny/"), "error: --output {t}/f/x\\ny/: names a dir"),
        (("schema", "plan", "--output={t}/f\n/"), "error: --output {t}/f\\n/: names a dir"),
        (("report", PAPER, "--overlay", "{t}/o\u2028v.yaml"), "error: {t}/o\\u2028v.yaml"),
        (("pareto", PAPER, "--chart", "{t}/a\nb.pdf"), "error: --chart {t}/a\\nb.pdf: the chart"),
    ],
)
def test_a_line_break_in_a_path_is_escaped(
    tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    err = _one_error(run_cli(*(a.format(t=tmp_path) for a in args)))
    assert err.startswith(expected.format(t=tmp_path)), err


def test_a_line_break_in_an_unwritable_output_is_escaped(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a file, not a directory", encoding="utf-8")
    target = f"{tmp_path}/f/a\nb.json"
    err = _one_error(run_cli("schema", "plan", "-o", target))
    assert (
        err == f"error: --output {tmp_path}/f/a\\nb.json: {tmp_path}/f is a file, not a directory"
    )


def test_a_line_break_in_the_user_catalog_variable_is_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WATTGPU_USER_CATALOG", f"{tmp_path}/x\ny")
    err = _one_error(run_cli("catalog", "gpus"))
    assert err.startswith(f"error: {tmp_path}/x\\ny: user catalog directory does not exist")


def test_a_long_name_with_a_line_break_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    err = _one_error(run_cli("validate", f"a\nb{'y' * 300}.yaml"))
    assert "a\\nby" in err and "file name too long" in err


def test_a_break_between_problems_stays_a_break() -> None:
    message = "s.yaml: a: bad\ns.yaml: b: worse"
    assert escape_user_breaks(message, ["plan", "s.yaml"]) == message
    assert escape_user_breaks("x\ny: no\nz: no", ["x\ny"]) == "x\\ny: no\nz: no"
    assert escape_user_breaks("--output -oa\nb", ["-oa\nb"]) == "--output -oa\\nb"
    assert escape_user_breaks("/abs/a\nb: no", ["a\nb"]) == "/abs/a\\nb: no"
    assert user_values(["a", "b\nc"], {"WATTGPU_DATA": "d\ne", "OTHER": "f\ng"}) == [
        "b\nc",
        "d\ne",
    ]
