"""The README and docs/ keep working: every relative link and image points to an existing file
(and every ``#anchor`` to a heading there), every docs page is reachable from the README, the
README's Python example runs from an empty directory, the README's plan table is what
``wattgpu plan`` prints, and the column lists of docs/contracts.md are what the code writes.

The README's and docs/cli.md's shell commands run in tests/test_first_run.py.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from typer.testing import CliRunner

from planner.cli.app import app

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
runner = CliRunner()

# --- links ---------------------------------------------------------------------------------------

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)
_HTML_SRC = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)=\"([^\"]+)\"", re.IGNORECASE)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)


def _prose(text: str) -> str:
    """*text* without fenced code blocks and inline code spans (links there are not links)."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def link_targets(text: str) -> list[str]:
    """Every link and image target of a Markdown text: inline, reference-style and HTML."""
    prose = _prose(text)
    found = [m.group(1) for m in _LINK.finditer(prose)]
    found += [m.group(1) for m in _REFERENCE.finditer(prose)]
    found += [m.group(1) for m in _HTML_SRC.finditer(prose)]
    return found


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of every heading of a Markdown text (duplicates get -1, -2, …)."""
    seen: dict[str, int] = {}
    out = set()
    for match in _HEADING.finditer(_FENCE.sub("", text)):
        slug = github_slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def broken_links(page: Path, root: Path = REPO) -> list[str]:
    """Every relative link of *page* whose file or ``#anchor`` does not exist, or that leaves
    *root* (the repository), as messages."""
    problems = []
    for target in link_targets(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("//"):
            continue  # http:, https:, mailto: … are not files of the repository
        path_part, _, anchor = target.partition("#")
        path = (page.parent / unquote(path_part)).resolve() if path_part else page
        if not path.exists():
            problems.append(f"{page.name}: {target}: no such file {path}")
        elif root.resolve() not in (path, *path.parents):
            problems.append(f"{page.name}: {target}: outside the repository")
        elif anchor:
            if path.is_dir() or path.suffix != ".md":
                problems.append(f"{page.name}: {target}: an anchor into a file without headings")
            elif unquote(anchor).lower() not in anchors(path.read_text(encoding="utf-8")):
                problems.append(f"{page.name}: {target}: no heading #{anchor} in {path.name}")
    return problems


def test_link_checker_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# Exit codes\n\n## The paper's example: A30\n", "utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#exit-codes) [ok](there.md#the-papers-example-a30) "
        "![img](missing.png) [bad](there.md#nowhere) [web](https://example.org/x.md) "
        "[self](#top)\n\n# Top\n\n`[code](not-a-link.md)`\n\n```\n[fenced](nope.md)\n```\n"
        '[ref]: gone.md\n<img src="also-gone.png">\n',
        "utf-8",
    )
    problems = broken_links(page, root=tmp_path)
    assert [p.split(": ")[1] for p in problems] == [
        "missing.png",
        "there.md#nowhere",
        "gone.md",
        "also-gone.png",
    ]
    outside = tmp_path / "sub"
    outside.mkdir()
    (outside / "page.md").write_text("[up](../there.md)\n", "utf-8")
    assert broken_links(outside / "page.md", root=outside) == [
        "page.md: ../there.md: outside the repository"
    ]


def test_github_slugs() -> None:
    assert github_slug("NVIDIA datacenter GPUs, unseen (LOGO): the issue-9 targets") == (
        "nvidia-datacenter-gpus-unseen-logo-the-issue-9-targets"
    )
    assert github_slug("1. Physics of a decode step (`predictors/physics.py`)") == (
        "1-physics-of-a-decode-step-predictorsphysicspy"
    )
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def test_every_relative_link_in_readme_and_docs_exists() -> None:
    assert len(PAGES) >= 10
    problems = [problem for page in PAGES for problem in broken_links(page)]
    assert problems == []
    readme_links = link_targets(README.read_text(encoding="utf-8"))
    assert len(readme_links) >= 15 and any("#" in t for t in readme_links)
    assert any(t.endswith(".png") for t in readme_links)


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    reached, todo = {README.resolve()}, [README.resolve()]
    while todo:
        page = todo.pop()
        for target in link_targets(page.read_text(encoding="utf-8")):
            path = (page.parent / unquote(target.partition("#")[0])).resolve()
            if path.suffix == ".md" and path.is_file() and path not in reached:
                reached.add(path)
                todo.append(path)
    orphans = [p.name for p in PAGES if p.resolve() not in reached]
    assert orphans == [], "link these pages from README.md or a page it links"


# --- the README's Python example ----------------------------------------------------------------

#: The stable lazy top-level exports the README may use.
STABLE_API = {
    "planner": {"load_scenario", "plan_file", "plan_scenario", "Plan", "Predictor"},
    "predictors": {"Predictor", "load_catalog"},
}


def _fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def test_readme_python_example_uses_only_the_stable_api() -> None:
    (example,) = _fenced(README.read_text(encoding="utf-8"), "python")
    imported = []
    for node in ast.walk(ast.parse(example)):
        if isinstance(node, ast.ImportFrom) and node.module:
            root = node.module.split(".")[0]
            if root in STABLE_API:
                assert node.module == root, f"import from the top level, not {node.module}"
                imported += [(root, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            assert all(a.name.split(".")[0] not in STABLE_API for a in node.names)
    assert imported and all(name in STABLE_API[root] for root, name in imported), imported
    assert len(example.strip().splitlines()) <= 8


@pytest.mark.slow  # 1.3-2 s: the default run stays under 2 minutes
def test_readme_python_example_runs_from_an_empty_directory(tmp_path: Path) -> None:
    (example,) = _fenced(README.read_text(encoding="utf-8"), "python")
    script = tmp_path / "readme_example.py"
    script.write_text(example, encoding="utf-8")
    work = tmp_path / "empty"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "WATTGPU_USER_CATALOG"}
    env["WATTGPU_NO_PROGRESS"] = "1"
    done = subprocess.run(
        [sys.executable, str(script)], cwd=work, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    status, kwh, usd = lines[0].split()
    assert status == "optimal" and float(kwh) > 0 and float(usd) > 0
    assert "power_w_per_gpu" in done.stdout and "in_domain" in done.stdout
    assert list(work.iterdir()) == []


# --- the README's plan table and the contracts ---------------------------------------------------


pytestmark = pytest.mark.usefixtures("cached_predictor")


@pytest.fixture(autouse=True)
def _no_user_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WATTGPU_USER_CATALOG", raising=False)


def _plan_lines(text: str) -> list[str]:
    """The header fields (less the solve time) and the table rows of ``wattgpu plan`` output."""
    keep = []
    for line in (raw.rstrip() for raw in text.splitlines()):
        if line.startswith("solve "):
            continue  # wall-clock time
        if re.match(r"^[a-z]+ {2,}\S", line) or line[:1] in "┃│":
            keep.append(line)
    return keep


def test_readme_plan_table_is_what_wattgpu_plan_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = README.read_text(encoding="utf-8")
    shown = readme.split("## What you get", 1)[1]
    block = _fenced(shown, "text")[0]
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["plan"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    expected = _plan_lines(block)
    assert len(expected) >= 15 and expected[0].startswith("scenario   enterprise-fleet")
    printed = _plan_lines(result.stdout)
    assert printed[: len(expected)] == expected, (
        "README.md shows an outdated plan: paste the output of `wattgpu plan` into its "
        "'What you get' block"
    )


def _code_list(text: str) -> list[str]:
    return [name.strip() for name in " ".join(text.split()).split(",")]


def _grab(pattern: str, text: str) -> list[str]:
    match = re.search(pattern, text)
    assert match, f"docs/contracts.md no longer says {pattern!r}"
    return _code_list(match.group(1))


def _predict_csv(rows: Path, out: Path) -> tuple[list[str], list[dict[str, str]]]:
    result = runner.invoke(
        app, ["predict", "--input", str(rows), "--output", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    with out.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def test_batch_contract_columns_are_what_predict_writes(tmp_path: Path) -> None:
    doc = (DOCS / "contracts.md").read_text(encoding="utf-8")
    batch = doc.split("## Batch prediction contract", 1)[1].split("\n## ", 1)[0]
    inputs = _grab(r"reads the\s+columns `([^`]+)`", batch)
    outputs = _grab(r"in\s+order plus `([^`]+)`", batch)
    defaults = _grab(r"takes the\s+default ([^;]+);", batch)
    assert inputs[:2] == ["model", "gpu"] and len(defaults) == len(inputs) - 2
    rows_csv = tmp_path / "rows.csv"
    rows_csv.write_text(
        "model,gpu,note,batch_size\nmeta-llama/Llama-3.1-8B-Instruct,A30,kept,\n"
        "no-such-model,H100,also kept,4\n",
        encoding="utf-8",
    )
    header, rows = _predict_csv(rows_csv, tmp_path / "out.csv")
    assert header[-len(outputs) :] == outputs
    assert header[:4] == ["model", "gpu", "note", "batch_size"]  # input columns kept, in order
    layout = {"pipeline_parallel", "data_parallel", "expert_parallel"}  # resolved at the end
    assert layout <= set(outputs[-7:-3])
    assert set(header[: -len(outputs)]) == (set(inputs) - layout) | {"note"}
    good, bad = rows
    # Llama-3.1-8B's checkpoint is BF16; its usual layout on one A30 is TP 1, PP 1, DP 1, EP 1
    stated = {"none": "", "the checkpoint's precision": "bf16", "usual": "1"}
    assert [good[c] for c in inputs[2:]] == [stated.get(d, d) for d in defaults]
    assert good["error"] == "" and good["in_domain"] in ("true", "false")
    assert float(good["power_w_per_gpu_lo"]) <= float(good["power_w_per_gpu"])
    assert bad["error"] and bad["power_w_per_gpu"] == "" and bad["note"] == "also kept"


def test_batch_contract_engines_and_precisions_are_the_accepted_ones(tmp_path: Path) -> None:
    doc = (DOCS / "contracts.md").read_text(encoding="utf-8")
    engines = _grab(r"Engines: ([^;]+);", doc)
    precisions = _grab(r"precisions: ([^.]+)\.", doc)
    model = "meta-llama/Llama-3.1-8B-Instruct"
    lines = ["model,gpu,engine,precision"]
    lines += [f"{model},H100,{engine}," for engine in engines]
    lines += [f"{model},H100,,{precision}" for precision in precisions]
    lines += [f"{model},H100,no-such-engine,", f"{model},H100,,no-such-precision"]
    rows_csv = tmp_path / "rows.csv"
    rows_csv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, rows = _predict_csv(rows_csv, tmp_path / "out.csv")
    *documented, bad_engine, bad_precision = rows
    assert [r["error"] for r in documented] == [""] * len(documented)
    # an unknown one is refused with the full list: the documented list, in the same order
    assert bad_engine["error"].endswith("use one of " + ", ".join(engines))
    assert bad_precision["error"].endswith("use one of " + ", ".join(precisions))


def test_plan_json_contract_keys_are_in_the_plan_json(tmp_path: Path) -> None:
    doc = (DOCS / "contracts.md").read_text(encoding="utf-8")
    section = doc.split("## Plan JSON contract", 1)[1]
    named = {n for code in re.findall(r"`([^`]+)`", section) for n in _code_list(code)}
    top = _code_list("scenario, status, solve, assumptions, models, inventory, candidates")
    top += ["allocations", "totals", "baselines"]
    per_candidate = ["load_curve_requests_per_s", "power_curve_w_per_replica", "itl_curve_s"]
    per_allocation = ["itl_s_at_capacity", "itl_s_at_served_load"]
    assert set(top + per_candidate + per_allocation) <= named
    result = runner.invoke(
        app, ["plan", "paper-llama8b-low-load", "--format", "json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert set(top) <= set(plan)
    assert plan["candidates"] and all(set(per_candidate) <= set(c) for c in plan["candidates"])
    assert plan["allocations"]
    assert all(set(per_allocation) <= set(a) for a in plan["allocations"])
