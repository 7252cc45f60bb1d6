"""What every engine of the executor seam (:mod:`planner.sweep.executors`) shares: the types of
a pass's batch function and progress callback, and the error of a worker process that died."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def worker_died(engine: str) -> str:
    """The error of an engine whose worker process ended abruptly: a local pool's
    ``BrokenProcessPool``, Dask's ``KilledWorker`` (or its futures cancelled under the client),
    Ray's ``WorkerCrashedError``, ``NodeDiedError`` or ``OutOfMemoryError``."""
    return (
        f"--engine {engine}: a worker process died during the sweep (killed, e.g. by the "
        "out-of-memory killer or a signal); the draws it and the others had finished are lost "
        "and nothing was written; rerun with fewer --workers, or with more memory free"
    )


WORKER_DIED = worker_died("local")
"""The error of a local pool whose worker process ended abruptly (``BrokenProcessPool``)."""

BatchFn = Callable[[Any, Any], Any]
Done = Callable[[int], None]
