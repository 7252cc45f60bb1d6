"""Training is reproducible byte for byte: the same data and library versions give the shipped
boosters exactly, with one thread or two (polars, OpenMP and XGBoost thread pools). Under other
library versions (a newer release in the package index) or on another processor (the card's
``training_platform``) the test skips, naming them; CI installs the recorded versions
(``.ci/constraints.txt``).

Each run is a fresh process so that the thread settings apply from its start; the model card's
metrics come from ``wattgpu evaluate`` and are not part of the comparison (the card's other keys
are).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from predictors.core.paths import trained_dir
from predictors.estimators.artifacts import library_versions
from predictors.estimators.platform import training_platform

TRAIN = (
    "import sys; from pathlib import Path; "
    "from predictors.catalog.store import load_catalog; "
    "from predictors.estimators import artifacts; "
    "from predictors.measurements import load_measurements; "
    "from predictors.training.train import train; "
    "catalog = load_catalog(); "
    "table = load_measurements(Path(sys.argv[1]), catalog).table; "
    "artifacts.save(train(table, catalog), Path(sys.argv[2]))"
)
BOOSTERS = ("itl.ubj", "power.ubj", "ttft.ubj")


def _card_without_metrics(path: Path) -> dict[str, object]:
    card: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    card.pop("metrics", None)
    card.pop("residuals", None)  # written by `wattgpu evaluate` too
    return card


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.parametrize("threads", [1, 2])
def test_training_gives_the_shipped_artifacts_byte_for_byte(
    measurements_dir: Path, tmp_path: Path, threads: int
) -> None:
    recorded = json.loads((trained_dir() / "model_card.json").read_text(encoding="utf-8"))
    running = library_versions()
    other = {
        k: (v, running.get(k))
        for k, v in recorded["library_versions"].items()
        if running.get(k) != v
    }
    if other:  # the same data AND library versions are what reproduces byte for byte
        pytest.skip(
            "the shipped models were trained with "
            + ", ".join(f"{k} {was} (this is {now})" for k, (was, now) in sorted(other.items()))
            + ": install those versions (.ci/constraints.txt) to check the reproduction"
        )
    platform = training_platform()
    if recorded.get("training_platform") != platform:  # and the same processor
        pytest.skip(
            f"the shipped models were trained on {recorded.get('training_platform')}, this is "
            f"{platform}: vectorised sums round otherwise across processors (the prediction-"
            "level check in tests/test_predictors.py still runs)"
        )
    env = {
        **os.environ,
        "POLARS_MAX_THREADS": str(threads),
        "OMP_NUM_THREADS": str(threads),
        "OPENBLAS_NUM_THREADS": str(threads),
    }
    done = subprocess.run(
        [sys.executable, "-c", TRAIN, str(measurements_dir), str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    shipped = trained_dir()
    for name in BOOSTERS:
        assert (tmp_path / name).read_bytes() == (shipped / name).read_bytes(), (
            f"{name} differs from the shipped one with {threads} thread(s): retrain and commit"
        )
    assert _card_without_metrics(tmp_path / "model_card.json") == _card_without_metrics(
        shipped / "model_card.json"
    )


#: The distribution each recorded library version comes from (the card names the import).
DISTRIBUTIONS = {"numpy": "numpy", "polars": "polars", "xgboost": "xgboost-cpu", "scipy": "scipy"}


def test_ci_installs_the_versions_the_card_records() -> None:
    """``.ci/constraints.txt`` pins the training libraries at the card's versions, so that the
    byte-for-byte check above runs in CI whatever newer release the package index holds."""
    repo = Path(__file__).resolve().parent.parent
    pins = {}
    for line in (repo / ".ci" / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[name.strip()] = version.strip()
    card = json.loads((trained_dir() / "model_card.json").read_text(encoding="utf-8"))
    for library, dist in DISTRIBUTIONS.items():
        assert pins.get(dist) == card["library_versions"][library], (dist, pins)
    assert pins.get("polars-runtime-32") == pins["polars"]
    assert "-c .ci/constraints.txt" in (repo / ".ci" / "run").read_text(encoding="utf-8")
