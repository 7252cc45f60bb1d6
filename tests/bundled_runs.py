"""The bundled example scenarios planned once per test session (:func:`tests.conftest.bundled`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from planner.pipeline import PlanRun, plan_file
from predictors.api import Predictor
from tests.cli_runner import run_cli


def cached_load(predictor: Predictor) -> classmethod:  # type: ignore[type-arg]
    """``Predictor.load`` returning *predictor*; a catalog given to ``load`` is bound to the
    cached models, as the real ``load`` binds it."""

    def load(cls: type[Predictor], directory: object = None, catalog: object = None) -> Predictor:
        return predictor if catalog is None else Predictor(predictor.models, catalog)  # type: ignore[arg-type]

    return classmethod(load)


class BundledRuns:
    """``plan_file`` of the bundled example scenarios by name, each planned at most once per test
    session (per xdist worker) with the session's :func:`predictor`. Tests read these runs and
    never change them; a test that edits a plan plans its own."""

    def __init__(self, predictor: Predictor) -> None:
        self._predictor = predictor
        self._runs: dict[str, PlanRun] = {}
        self._json: dict[str, str] = {}

    def __getitem__(self, name: str) -> PlanRun:
        if name not in self._runs:
            self._runs[name] = plan_file(name, predictor=self._predictor)
        return self._runs[name]

    def plan_json(self, name: str) -> str:
        """The text ``wattgpu plan NAME --format json -o FILE`` writes (run in-process with the
        session's predictor, once per session)."""
        if name not in self._json:
            with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
                patch.setattr(Predictor, "load", cached_load(self._predictor))
                out = Path(folder) / "plan.json"
                result = run_cli("plan", name, "--format", "json", "-o", str(out))
                assert result.code == 0, result.err
                self._json[name] = out.read_text(encoding="utf-8")
        return self._json[name]
