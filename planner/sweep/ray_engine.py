"""The Ray engine of the executor seam (:mod:`planner.sweep.executors`, ``--engine ray``).

Ray would take over what the command set up for SIGTERM (:mod:`predictors.core.signals`):
``ray.init`` first installs a Python handler of its own (``sys.exit(15)``; ``ray.shutdown``
leaves it), and its core worker a C++ one that prints a stack dump; a signal that comes while
``ray.wait`` waits leaves as Ray's ``SystemExit(1)``. So Ray is imported with the C++ handler
off (:func:`import_ray`, Ray's documented ``RAY_DISABLE_FAILURE_SIGNAL_HANDLER``), ``ray.init``
runs under :func:`~planner.sweep.starting.starting` (a Ctrl-C, SIGTERM or SIGHUP is handled once
it has returned, and then stops the Ray it started, whole) without Ray's Python handler
(:func:`_no_ray_handlers`), the command's handler is installed again after ``ray.init`` and
after ``ray.shutdown``, and an exit Ray replaced after a stop signal is the signal's again
(:func:`~predictors.core.signals.stop_signals_exit`). Ctrl-C during ``ray.wait`` is Ray's
``KeyboardInterrupt``, exit 130. Nothing is written and no Ray process is left in any case.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

from planner.sweep.address import GIVE
from planner.sweep.engine_types import BatchFn, Done, worker_died
from planner.sweep.starting import CLUSTER_LIMIT_S, starting
from predictors.core.errors import WattgpuError
from predictors.core.signals import hold_stop_signals, stopping

#: Ray's switch for its core worker's C++ failure signal handler (SIGTERM among its signals),
#: read when ``ray`` is imported.
NO_CPP_HANDLER = "RAY_DISABLE_FAILURE_SIGNAL_HANDLER"


def import_ray() -> None:
    """Import Ray, its core worker's C++ failure signal handler off unless the environment says
    otherwise (the Ray processes it starts inherit that; an import before this one decides)."""
    os.environ.setdefault(NO_CPP_HANDLER, "1")
    import ray  # noqa: F401


@contextmanager
def _no_ray_handlers() -> Iterator[None]:
    """While ``ray.init`` runs, Ray's ``set_sigterm_handler`` does nothing (the handler it would
    replace is :func:`~planner.sweep.starting.starting`'s)."""
    import ray._private.utils as utils

    install = getattr(utils, "set_sigterm_handler", None)
    if install is None:
        yield
        return
    utils.set_sigterm_handler = lambda handler: None
    try:
        yield
    finally:
        utils.set_sigterm_handler = install


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 on /dev/null while an interrupted Ray shuts down: its core worker's C++
    log writes there directly (an interrupted sweep printed "task_manager.cc:1545: Failed to push
    error to driver for task ..." after the command's own lines); the command's message comes
    after, on the real stderr. Ray's setting of its C++ log level (``RAY_BACKEND_LOG_LEVEL``)
    would print a line of its own at every start."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class RayEngine:
    """A session on Ray (:func:`planner.sweep.executors.open_engine`): a local ``ray.init`` or one
    at an address; the command's stop signals hold across it (module doc)."""

    def __init__(self, workers: int, address: str | None) -> None:
        self.workers = workers
        self.address = address
        self.started = False
        self.pending: list[Any] = []

    def start(self, shared: Any, warm: str | None) -> None:
        """``ray.init`` (unless Ray runs already: then it stays up after) and ``ray.put``."""
        import_ray()
        import ray

        if not ray.is_initialized():
            self.started = True  # from here on, stopping it shuts Ray down
            try:
                local = self.address is None  # it starts Ray's processes: let it end first
                with starting(CLUSTER_LIMIT_S) if local else nullcontext(), _no_ray_handlers():
                    self._init()
            except SystemExit as exc:  # Ray's Python handler, had it been installed after all
                if exc.code == signal.SIGTERM:
                    raise stopping(signal.SIGTERM) from None
                raise
            finally:
                hold_stop_signals()  # the command's handler again, not Ray's
        self.ref = ray.put(shared)

    def _init(self) -> None:
        import ray

        address = self.address
        if address is None:
            ray.init(
                num_cpus=self.workers,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,
                configure_logging=True,
            )
            return
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
        except ConnectionError as exc:  # it answered as gRPC (check_address), but Ray
            # gave up on it (after about 20 s): not a GCS, another Ray, a token refused
            raise WattgpuError(
                f"--address: Ray could not connect to the cluster at {address} "
                f"({str(exc)[:120]}); {GIVE['ray']}, run by the same Ray version, with "
                "the same auth token (RAY_AUTH_MODE, ~/.ray/auth_token)"
            ) from None

    def run(self, fn: BatchFn, batches: Sequence[Any], done: Done) -> list[Any]:
        """``[fn(shared, b) for b in batches]`` as Ray tasks, in batch order."""
        import ray

        remote = ray.remote(num_cpus=1)(fn)
        refs = [remote.remote(self.ref, b) for b in batches]
        index = {r: i for i, r in enumerate(refs)}
        results: list[Any] = [None] * len(batches)
        self.pending = list(refs)
        died = (
            ray.exceptions.WorkerCrashedError,
            ray.exceptions.NodeDiedError,
            ray.exceptions.OutOfMemoryError,
        )
        try:
            while self.pending:
                ready, self.pending = ray.wait(self.pending, num_returns=1)
                for r in ready:
                    results[index[r]] = ray.get(r)
                    done(index[r])
        except died:
            raise WattgpuError(worker_died("ray")) from None
        return results

    def close(self) -> None:
        """Shut Ray down if :meth:`start` started it; the command's stop handler again."""
        import ray

        if self.started:
            ray.shutdown()
            hold_stop_signals()

    def abort(self) -> None:
        """:meth:`_abort`, Ray's C++ log kept off the command's stderr (:func:`_quiet_stderr`)."""
        with _quiet_stderr():
            self._abort()

    def _abort(self) -> None:
        """Stop the tasks not finished, then :meth:`close`.

        A Ray this session started is shut down whole, which ends its workers; tasks are not
        cancelled first: a forced cancel that crosses a task's completion trips a fatal check in
        Ray's core worker ("Tried to complete task that was not pending", exit 1 instead of the
        signal's). On a cluster that stays up, the tasks are cancelled (not forced: they stop at
        their next Python bytecode) so that they do not hold its CPUs.
        """
        import ray

        if not self.started:
            for r in self.pending:
                ray.cancel(r, force=False)
        self.close()
