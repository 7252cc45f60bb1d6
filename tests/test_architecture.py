"""The import rules of the package layout, checked on the source (every import statement,
including those inside functions): ``predictors`` never imports ``planner``; the command-line
packages (``planner.cli``, ``planner.cli``) are imported by no library module (only by each
other: the one app registers them)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("predictors", "planner")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> set[str]:
    """Every module that *path* (the module *module*) imports, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module.split(".")
    if path.name != "__init__.py":
        here = here[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


SOURCES = sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))
IMPORTS = {_module_name(p): _imports(p, _module_name(p)) for p in SOURCES}


def _importers_of(prefix: str) -> set[str]:
    return {
        mod
        for mod, names in IMPORTS.items()
        if any(n == prefix or n.startswith(prefix + ".") for n in names)
    }


def test_sources_found() -> None:
    assert len(SOURCES) > 50, "the layout scan found too few modules"
    for required in ("planner.cli.app", "planner.cli", "planner.solve", "planner.scenario"):
        assert required in IMPORTS, f"{required} missing from the scan"


@pytest.mark.parametrize("module", sorted(m for m in IMPORTS if m.startswith("predictors")))
def test_predictors_never_import_planner(module: str) -> None:
    bad = sorted(n for n in IMPORTS[module] if n == "planner" or n.startswith("planner."))
    assert not bad, f"{module} imports {bad}; predictors must not depend on planner"


CLI_PACKAGES = ("planner.cli", "planner.cli")


def _is_cli(module: str) -> bool:
    return any(module == c or module.startswith(c + ".") for c in CLI_PACKAGES)


@pytest.mark.parametrize("cli", CLI_PACKAGES)
def test_cli_packages_imported_only_by_cli_modules(cli: str) -> None:
    outside = sorted(m for m in _importers_of(cli) if not _is_cli(m))
    assert not outside, f"{outside} import {cli}; command-line modules are imported by no library"


def test_library_code_does_not_import_benchmarks_or_tests() -> None:
    bad = sorted(
        m
        for m, names in IMPORTS.items()
        if any(n.split(".")[0] in {"benchmarks", "tests", "bench_solver"} for n in names)
    )
    assert not bad, f"{bad} import benchmark or test code"


def test_scanner_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    """The rules above can fail: the scanner finds imports hidden inside functions."""
    path = tmp_path / "probe.py"
    path.write_text(
        "def f():\n    from planner.result import Plan\n    from . import api\n    return Plan\n",
        encoding="utf-8",
    )
    found = _imports(path, "predictors.probe")
    assert "planner.result" in found and "predictors.api" in found


def test_tests_do_not_import_benchmarks() -> None:
    """Benchmarks are scripts: tests share code with them through the packages (e.g.
    :mod:`planner.solve.synthetic`), never by importing a benchmark module."""
    bench = {p.stem for p in (REPO / "benchmarks").glob("*.py")}
    for path in sorted((REPO / "tests").glob("*.py")):
        names = _imports(path, f"tests.{path.stem}")
        bad = sorted(n for n in names if n.split(".")[0] in bench | {"benchmarks"})
        assert not bad, f"{path.name} imports benchmark code {bad}"
