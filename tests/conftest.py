"""Shared fixtures: the public measurement data beside the checkout (skipped when absent) and the
shipped predictors, loaded once and handed to every ``Predictor.load()`` of a command."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from predictors.api import Predictor
from tests.bundled_runs import BundledRuns, cached_load

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """``../shared/data`` (reference tables and measurements), or skip with the reason."""
    if not (SHARED_DATA / "measurements").is_dir():
        pytest.skip(f"public data not found at {SHARED_DATA} (clone ../shared beside the project)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def measurements_dir(shared_data_dir: Path) -> Path:
    return shared_data_dir / "measurements"


@pytest.fixture(scope="session")
def predictor() -> Predictor:
    """The shipped predictors, loaded once per test session."""
    return Predictor.load()


@pytest.fixture
def cached_predictor(predictor: Predictor, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Commands run in-process reuse :func:`predictor` instead of loading the models again
    (``pytestmark = pytest.mark.usefixtures("cached_predictor")`` in a test module)."""
    monkeypatch.setattr(Predictor, "load", cached_load(predictor))
    yield


@pytest.fixture(scope="module")
def module_cached_predictor(predictor: Predictor) -> Iterator[None]:
    """:func:`cached_predictor` for a whole module (for module-scoped fixtures that run
    commands)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Predictor, "load", cached_load(predictor))
        yield


@pytest.fixture(scope="session")
def bundled(predictor: Predictor) -> BundledRuns:
    """:class:`BundledRuns` of this session."""
    return BundledRuns(predictor)
