"""Shared fixtures: the public measurement data beside the checkout, skipped when absent."""

from __future__ import annotations

from pathlib import Path

import pytest

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
