"""The layering of both packages, checked on the source (every import statement, including those
inside functions and under ``TYPE_CHECKING``):

* each module imports only modules of its own layer or of layers below it (:data:`LAYERS`);
* there is no import cycle at all, counted module by module;
* ``predictors`` never imports ``planner``; command-line modules are imported by no library
  module; no module imports a private name (``_x``) from another room (package or top-level
  module); library code imports no benchmark or test code.

The two top-level ``__init__`` modules are the public facades (lazy re-exports of the top layers,
``from planner import plan_scenario``): they sit above every layer and no library module imports
a name from them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("predictors", "planner")
FACADES = frozenset(PACKAGES)

#: Bottom to top. A module belongs to the first entry its name equals or lies under.
LAYERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "predictors": (
        ("predictors.core",),
        ("predictors.catalog",),
        (
            "predictors.kv_physics",
            "predictors.physics",
            "predictors.memory_rule",
            "predictors.fit_verdict",
            "predictors.numbers",
        ),
        ("predictors.feature_sets", "predictors.features"),
        ("predictors.measurements",),
        ("predictors.estimators",),
        ("predictors.api",),
        ("predictors.serving",),
        ("predictors.row_header", "predictors.row_identity", "predictors.rows"),
        ("predictors.training",),
    ),
    "planner": (
        ("planner.paths", "planner.text", "planner.guides"),
        ("planner.inputs",),
        ("planner.scenario",),
        (
            "planner.layouts",
            "planner.capacity",
            "planner.disagg",
            "planner.specs",
            "planner.ladder_rule",
            "planner.build",
        ),
        ("planner.result",),
        ("planner.solve",),
        ("planner.pipeline",),
        ("planner.documents",),
        ("planner.analysis",),
        ("planner.disclosure",),
        ("planner.sweep",),
        ("planner.report",),
        ("planner.cli",),
    ),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


SOURCES = sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))
MODULES = {_module_name(p): p for p in SOURCES}


def _imports(path: Path, module: str, known: set[str]) -> set[tuple[str, str | None]]:
    """(module, name) pairs that *path* imports: ``from a import b`` gives ``(a.b, None)`` when
    ``a.b`` is a module of *known*, else ``(a, "b")``; relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module.split(".")
    if path.name != "__init__.py":
        here = here[:-1]
    found: set[tuple[str, str | None]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add((sub, None) if sub in known else (base, alias.name))
    return found


IMPORTS = {m: _imports(p, m, set(MODULES)) for m, p in MODULES.items()}
#: Project modules each module imports (the package itself when a name comes from its __init__).
EDGES = {
    m: {target for target, _ in pairs if target in MODULES and target != m}
    for m, pairs in IMPORTS.items()
}


def _room(module: str) -> str:
    """``predictors.catalog.store`` -> ``predictors.catalog``; ``predictors.api`` -> itself."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _layer(module: str) -> int:
    for index, members in enumerate(LAYERS[module.split(".")[0]]):
        if any(module == m or module.startswith(m + ".") for m in members):
            return index
    raise AssertionError(f"{module} belongs to no layer of LAYERS; add it to one")


def test_sources_found() -> None:
    assert len(SOURCES) > 50, "the layout scan found too few modules"
    for required in (
        "planner.cli.app",
        "predictors.core.errors",
        "planner.solve",
        "predictors.api",
    ):
        assert required in MODULES, f"{required} missing from the scan"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m not in FACADES))
def test_every_module_imports_only_its_own_layer_or_below(module: str) -> None:
    mine = _layer(module)
    same_package = module.split(".")[0]
    upward = sorted(
        t
        for t in EDGES[module]
        if t not in FACADES and t.split(".")[0] == same_package and _layer(t) > mine
    )
    assert not upward, f"{module} (layer {mine}) imports the higher layers {upward}"


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_no_import_cycles() -> None:
    library = {m: {t for t in e if t not in FACADES} for m, e in EDGES.items() if m not in FACADES}
    assert _cycles(library) == []


def test_library_modules_import_no_name_from_a_facade() -> None:
    bad = sorted(
        f"{m} imports {name!r} from {target}"
        for m, pairs in IMPORTS.items()
        if m not in FACADES
        for target, name in pairs
        if target in FACADES and name is not None
    )
    assert not bad, bad


def test_no_private_name_is_imported_across_rooms() -> None:
    bad = sorted(
        f"{m} imports {target}.{name}"
        for m, pairs in IMPORTS.items()
        for target, name in pairs
        if name is not None
        and name.startswith("_")
        and not name.startswith("__")
        and target.split(".")[0] in PACKAGES
        and _room(target) != _room(m)
    )
    assert not bad, bad


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("predictors")))
def test_predictors_never_import_planner(module: str) -> None:
    bad = sorted(t for t, _ in IMPORTS[module] if t == "planner" or t.startswith("planner."))
    assert not bad, f"{module} imports {bad}; predictors must not depend on planner"


def test_cli_package_is_imported_only_by_cli_modules() -> None:
    outside = sorted(
        m
        for m, targets in EDGES.items()
        if not m.startswith("planner.cli")
        and any(t == "planner.cli" or t.startswith("planner.cli.") for t in targets)
    )
    assert not outside, f"{outside} import planner.cli; command-line modules are imported by none"


def test_library_code_does_not_import_benchmarks_or_tests() -> None:
    bad = sorted(
        m
        for m, pairs in IMPORTS.items()
        if any(t.split(".")[0] in {"benchmarks", "tests", "bench_solver"} for t, _ in pairs)
    )
    assert not bad, f"{bad} import benchmark or test code"


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """The scanner sees imports inside functions and relative ones, the layer rule flags an
    upward import, and the cycle finder finds a cycle."""
    path = tmp_path / "probe.py"
    path.write_text(
        "def f():\n    from planner.result import Plan\n    from . import api\n    return Plan\n",
        encoding="utf-8",
    )
    found = _imports(path, "predictors.probe", set(MODULES))
    assert ("planner.result", "Plan") in found and ("predictors.api", None) in found
    assert _layer("predictors.core.errors") < _layer("predictors.api")
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.slow
def test_tests_do_not_import_benchmarks() -> None:
    """Benchmarks are scripts: tests share code with them through the packages (e.g.
    :mod:`planner.solve.synthetic`), never by importing a benchmark module."""
    bench = {p.stem for p in (REPO / "benchmarks").glob("*.py")}
    for path in sorted((REPO / "tests").glob("*.py")):
        names = _imports(path, f"tests.{path.stem}", set(MODULES))
        bad = sorted(n for n, _ in names if n.split(".")[0] in bench | {"benchmarks"})
        assert not bad, f"{path.name} imports benchmark code {bad}"


#: Modules stay under this many lines (one job each; the developers' guide).
MAX_MODULE_LINES = 400


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_stays_under_the_line_limit(module: str) -> None:
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines < MAX_MODULE_LINES, (
        f"{module} has {lines} lines; split it (one job per module, under {MAX_MODULE_LINES})"
    )
