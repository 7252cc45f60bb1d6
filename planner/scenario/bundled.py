"""The bundled example scenarios: list them, find one by name, copy one out.

The examples ship in the wheel (``planner/_scenarios``) and live in ``scenarios/`` in a checkout
(:func:`planner.paths.scenarios_dir`). Every command that takes a scenario file also takes an
example's name, so the README's commands work from any directory after ``pip install .``:
:func:`find_scenario` maps ``NAME``, ``NAME.yaml`` and ``scenarios/NAME.yaml`` (when no such file
exists in the working directory) to the bundled file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from planner.paths import scenarios_dir
from predictors.core.errors import WattgpuError, did_you_mean
from predictors.core.output import atomic_write

SUFFIXES: tuple[str, ...] = (".yaml", ".yml")
_LIST_HINT = "`wattgpu scenarios` lists the bundled examples"


@dataclass(frozen=True)
class BundledScenario:
    """One bundled example as ``wattgpu scenarios`` lists it."""

    name: str
    """File stem: what ``wattgpu plan NAME`` accepts."""
    path: Path
    summary: str
    """First sentence (or clause) of the scenario's ``description``, on one line."""
    models: tuple[str, ...]
    """Catalog LLM of every model entry, in file order (as written, aliases unresolved)."""
    gpus: tuple[str, ...] | None
    """GPU types offered (as written); None = every catalog GPU with a price."""

    def to_json_dict(self) -> dict[str, Any]:
        """JSON row of ``wattgpu scenarios --format json`` (name, file, models, GPUs)."""
        return {
            "name": self.name,
            "file": self.path.name,
            "description": self.summary,
            "model_entries": len(self.models),
            "models": sorted(set(self.models)),
            "gpus": None if self.gpus is None else list(self.gpus),
        }


def bundled_paths() -> list[Path]:
    """Every bundled example file, sorted by name."""
    directory = scenarios_dir()
    files = [p for p in directory.iterdir() if p.suffix in SUFFIXES and p.is_file()]
    return sorted(files, key=lambda p: p.name)


def bundled_names() -> list[str]:
    """The names (file stems) of the bundled examples."""
    return [p.stem for p in bundled_paths()]


def _stem(name: str) -> str:
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def bundled_path(name: str) -> Path | None:
    """The bundled file of *name* (``NAME`` or ``NAME.yaml``), or None when there is none."""
    stem = _stem(name)
    return next((p for p in bundled_paths() if p.stem == stem), None)


def find_scenario(arg: str | Path) -> Path:
    """The scenario file a command argument names.

    An existing path is returned as it is. Otherwise ``NAME``, ``NAME.yaml`` and
    ``scenarios/NAME.yaml`` name the bundled example NAME. A bare name that is no example raises
    an error with the closest example names; any other missing path is returned unchanged (the
    loader reports it with the file's own error).
    """
    path = Path(arg)
    if path.exists() or path.is_symlink():  # a dangling link: the loader names it as one
        return path
    bare = path.parent == Path(".")
    if bare or path.parent == Path("scenarios"):
        found = bundled_path(path.name)
        if found is not None:
            return found
    if path.suffix.lower() == ".json":  # report, pareto and diff read saved plans
        raise WattgpuError(
            f"{arg}: no such file — give a scenario file, or (report, pareto) a saved plan JSON "
            "written by `wattgpu plan SCENARIO --format json --output FILE`"
        )
    if bare and path.suffix not in SUFFIXES:
        raise WattgpuError(
            f"{arg}: no such file and no bundled example of that name"
            f"{did_you_mean(path.name, bundled_names())} — give a scenario file ({_LIST_HINT})"
        )
    return path


def copy_scenario(name: str, directory: Path, *, force: bool = False) -> Path:
    """Copy the bundled example *name* into *directory* (created); return the new file."""
    source = bundled_path(name)
    if source is None:
        raise WattgpuError(
            f"--copy {name}: no bundled example of that name"
            f"{did_you_mean(_stem(name), bundled_names())} — {_LIST_HINT}"
        )
    target = directory / source.name
    if target.exists() and not force:
        raise WattgpuError(f"{target}: already exists — pass --force to overwrite it")
    if target.is_dir():
        raise WattgpuError(f"{target}: is a directory — move it or copy into another directory")
    try:
        atomic_write(target, source.read_bytes())
    except OSError as exc:
        raise WattgpuError(f"{target}: cannot write ({exc.strerror}) — check the path") from None
    return target


def _summary(description: Any) -> str:
    text = " ".join(str(description or "").split())
    for stop in ("; ", ". "):
        if stop in text:
            text = text.split(stop, 1)[0]
    return text.rstrip(".")


@lru_cache(maxsize=32)
def _describe(path: Path, mtime_ns: int) -> BundledScenario:
    from planner.scenario.load import _read_yaml

    data = _read_yaml(path)
    data = data if isinstance(data, dict) else {}
    entries = data.get("models")
    models = tuple(
        str(e.get("model"))
        for e in (entries if isinstance(entries, list) else [])
        if isinstance(e, dict)
    )
    gpus = data.get("gpus")
    return BundledScenario(
        name=path.stem,
        path=path,
        summary=_summary(data.get("description")),
        models=models,
        gpus=tuple(str(g) for g in gpus) if isinstance(gpus, dict) else None,
    )


def bundled_scenarios() -> list[BundledScenario]:
    """Every bundled example with its description, model entries and GPU types."""
    return [_describe(p, p.stat().st_mtime_ns) for p in bundled_paths()]
