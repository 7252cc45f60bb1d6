"""One small executor seam: run a batch function over batches on local processes, Dask or Ray.

:func:`open_engine` starts the engine once and sends the shared object to every worker once
(the local pool's initializer, Dask ``scatter(broadcast=True)``, Ray ``put``); the
:class:`Session` it yields runs any number of passes (:meth:`Session.run`: the sweep's draws,
then the robust choice's second pass) on the same workers and returns each pass's results in
batch order, whatever order they finished in — so the results are the same on every engine and
worker count. *warm* names a module every worker imports while the engine starts (the task's
module: OR-Tools and the solver), so that a pass's first tasks do not pay for it.
:func:`run_batches` is one pass on an engine of its own.

* ``local`` (default): ``concurrent.futures.ProcessPoolExecutor`` with the ``spawn`` start
  method, *workers* processes, one solver thread per task (one worker: this process, no pool).
* ``dask``: ``dask.distributed.Client(address)``; without an address a ``LocalCluster`` of
  *workers* single-threaded worker processes (their nannies set ``OMP_NUM_THREADS=1``).
* ``ray``: ``ray.init(address)``; without an address a local Ray with *workers* CPUs.

An address is checked first (:func:`planner.sweep.address.check_address`: a TCP connect within
:data:`~planner.sweep.address.CONNECT_TIMEOUT_S`, then the engine's own handshake within
:data:`~planner.sweep.address.HANDSHAKE_TIMEOUT_S`, since neither engine bounds it); an engine
whose extra is not installed names the ``pip install`` line. Ctrl-C cancels what has not
started and stops the workers (the caller writes nothing); SIGTERM and SIGHUP do the same, and
the process exits 143 or 129. A worker process that dies (killed, out of memory) stops the
sweep with one error line on every engine (:func:`worker_died`); nothing is written.
"""

from __future__ import annotations

import importlib
import logging
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, Protocol

from planner.sweep.address import CONNECT_TIMEOUT_S, GIVE, check_address
from predictors.core.errors import WattgpuError, did_you_mean
from predictors.core.signals import stop_signals_exit

ENGINES: tuple[str, ...] = ("local", "dask", "ray")
EXTRAS = {"dask": "dask", "ray": "ray"}


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

_SHARED: Any = None


class Session(Protocol):
    """An engine that is running: its workers hold the shared object."""

    def run(self, fn: BatchFn, batches: Sequence[Any], done: Done) -> list[Any]:
        """``[fn(shared, b) for b in batches]`` on the workers, in batch order."""
        ...

    def close(self) -> None:
        """Stop the workers (after the last pass)."""
        ...

    def abort(self) -> None:
        """Stop the workers now (Ctrl-C, a failed batch)."""
        ...


def check_engine(engine: str) -> None:
    """WattgpuError unless *engine* is one of :data:`ENGINES`."""
    if engine not in ENGINES:
        hint = did_you_mean(engine, ENGINES)
        raise WattgpuError(f"--engine: unknown engine {engine!r}{hint}; use {', '.join(ENGINES)}")


def _need(engine: str) -> None:
    try:
        if engine == "dask":
            import dask.distributed  # noqa: F401
        elif engine == "ray":
            import ray  # noqa: F401
    except ImportError:
        raise WattgpuError(
            f"--engine {engine}: the {engine} extra is not installed; "
            f'run pip install "wattgpu[{EXTRAS[engine]}]" (or pip install ".[{EXTRAS[engine]}]")'
        ) from None


def _import(name: str | None) -> None:
    if name:
        importlib.import_module(name)


def _init_worker(shared: Any, warm: str | None = None) -> None:
    global _SHARED
    _SHARED = shared
    _import(warm)


def _call_local(fn: BatchFn, batch: Any) -> Any:
    return fn(_SHARED, batch)


def _stop_pool(pool: ProcessPoolExecutor, before: set[Any]) -> None:
    """Stop *pool* now (Ctrl-C, a failed batch): terminate its workers, cancel what has not
    started, let its manager thread end (it is what starts workers), then end any worker it
    started meanwhile, so that no child process outlives the call."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.terminate()  # before shutdown(), which forgets them
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    if manager is not None:
        manager.join(timeout=10)
    for proc in set(multiprocessing.active_children()) - before:
        proc.terminate()
        proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=5)


class _InProcess:
    """One worker: the batches run in this process, in order."""

    def __init__(self, shared: Any, warm: str | None) -> None:
        self.shared = shared
        _import(warm)

    def run(self, fn: BatchFn, batches: Sequence[Any], done: Done) -> list[Any]:
        out = []
        for i, batch in enumerate(batches):
            out.append(fn(self.shared, batch))
            done(i)
        return out

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass


class _LocalPool:
    def __init__(self, shared: Any, workers: int, warm: str | None) -> None:
        self.before = set(multiprocessing.active_children())
        self.pool = ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(shared, warm),
        )

    def run(self, fn: BatchFn, batches: Sequence[Any], done: Done) -> list[Any]:
        results: list[Any] = [None] * len(batches)
        try:
            pending = {self.pool.submit(_call_local, fn, b): i for i, b in enumerate(batches)}
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    i = pending.pop(fut)
                    results[i] = fut.result()
                    done(i)
        except BrokenProcessPool:
            raise WattgpuError(WORKER_DIED) from None
        return results

    def close(self) -> None:
        self.pool.shutdown()

    def abort(self) -> None:
        _stop_pool(self.pool, self.before)


class _Dask:
    def __init__(self, shared: Any, workers: int, address: str | None, warm: str | None) -> None:
        from dask.distributed import Client, LocalCluster

        self.cluster = None
        if address is None:
            self.cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=50,
            )
            self.client = Client(self.cluster)
        else:
            try:  # check_address saw the scheduler answer; this is a second line of defence
                self.client = Client(address, timeout=CONNECT_TIMEOUT_S)
            except (OSError, MemoryError, ValueError, TypeError) as exc:
                # a listener that is no dask scheduler: its banner read as a frame length
                # (MemoryError), a closed stream or a timed-out handshake (OSError)
                raise WattgpuError(
                    f"--address: {address} answered, but not as a dask scheduler "
                    f"({type(exc).__name__}: {str(exc)[:120]}); {GIVE['dask']}"
                ) from None
        self.futures: list[Any] = []
        try:
            self.ref = self.client.scatter(shared, broadcast=True)
            self.client.run(_import, warm)
        except BaseException:
            self.close()
            raise

    def run(self, fn: BatchFn, batches: Sequence[Any], done: Done) -> list[Any]:
        from concurrent.futures import CancelledError

        from dask.distributed import as_completed
        from distributed.scheduler import KilledWorker

        self.futures = [self.client.submit(fn, self.ref, b, pure=False) for b in batches]
        index = {f.key: i for i, f in enumerate(self.futures)}
        results: list[Any] = [None] * len(batches)
        try:
            for fut in as_completed(self.futures):
                i = index[fut.key]
                results[i] = fut.result()
                done(i)
        except (KilledWorker, CancelledError):  # this client cancels only when it stops
            raise WattgpuError(worker_died("dask")) from None
        return results

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def abort(self) -> None:
        self.client.cancel(self.futures)
        self.close()


class _Ray:
    def __init__(self, shared: Any, workers: int, address: str | None) -> None:
        import ray

        self.started = not ray.is_initialized()
        if self.started:
            if address is None:
                ray.init(
                    num_cpus=workers,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                    configure_logging=True,
                )
            else:
                try:
                    ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
                except ConnectionError as exc:  # it answered as gRPC (check_address), but Ray
                    # gave up on it (after about 20 s): not a GCS, another Ray, a token refused
                    raise WattgpuError(
                        f"--address: Ray could not connect to the cluster at {address} "
                        f"({str(exc)[:120]}); {GIVE['ray']}, run by the same Ray version, with "
                        "the same auth token (RAY_AUTH_MODE, ~/.ray/auth_token)"
                    ) from None
        self.ref = ray.put(shared)
        self.pending: list[Any] = []

    def run(self, fn: BatchFn, batches: Sequence[Any], done: Done) -> list[Any]:
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
        import ray

        if self.started:
            ray.shutdown()

    def abort(self) -> None:
        import ray

        for r in self.pending:
            ray.cancel(r, force=True)
        self.close()


def preflight(engine: str, address: str | None) -> None:
    """What can refuse *engine* and *address* before any work: the engine's name, its extra,
    an address for the local engine, and an address that answers as no scheduler
    (:func:`check_address`); ``wattgpu sweep`` calls it before planning, so such an error is
    the command's only line."""
    check_engine(engine)
    if engine == "local":
        if address is not None:
            raise WattgpuError("--address: only for --engine dask or ray; leave it out for local")
        return
    _need(engine)
    if address is not None:
        check_address(engine, address)


@contextmanager
def open_engine(
    engine: str,
    shared: Any,
    *,
    workers: int = 1,
    address: str | None = None,
    warm: str | None = None,
) -> Iterator[Session]:
    """Start *engine* with *shared* on every worker (module doc); stop it on leaving."""
    preflight(engine, address)
    session: Session
    if engine == "local":
        session = _InProcess(shared, warm) if workers <= 1 else _LocalPool(shared, workers, warm)
    else:
        session = (
            _Dask(shared, workers, address, warm)
            if engine == "dask"
            else _Ray(shared, workers, address)
        )
    try:
        with stop_signals_exit():  # SIGTERM, SIGHUP: the workers stop too (exit 143, 129)
            yield session
    except BaseException:
        session.abort()
        raise
    session.close()


def run_batches(
    engine: str,
    fn: BatchFn,
    shared: Any,
    batches: Sequence[Any],
    *,
    workers: int = 1,
    address: str | None = None,
    done: Done | None = None,
) -> list[Any]:
    """``[fn(shared, b) for b in batches]`` on an engine of its own (module doc), in batch
    order."""
    with open_engine(engine, shared, workers=workers, address=address) as session:
        return session.run(fn, batches, done or (lambda i: None))
