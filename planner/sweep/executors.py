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
the process exits 143 or 129. The engine starts inside that protection: a signal while it starts
its workers waits until they have started (:mod:`planner.sweep.starting`; they keep SIGINT
blocked, so a Ctrl-C at the terminal reaches this process alone), then stops them; Ray's own
signal handling is kept out (:mod:`planner.sweep.ray_engine`). A worker process that dies
(killed, out of memory) stops the sweep with one error line on every engine
(:func:`worker_died`); nothing is written.
"""

from __future__ import annotations

import importlib
import multiprocessing
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, Protocol

from planner.sweep.address import CONNECT_TIMEOUT_S, GIVE, check_address
from planner.sweep.engine_types import WORKER_DIED, BatchFn, Done, worker_died
from planner.sweep.ray_engine import RayEngine, import_ray
from planner.sweep.starting import CLUSTER_LIMIT_S, POOL_LIMIT_S, starting
from predictors.core.errors import WattgpuError, did_you_mean
from predictors.core.signals import stop_signals_exit

ENGINES: tuple[str, ...] = ("local", "dask", "ray")
EXTRAS = {"dask": "dask", "ray": "ray"}


_SHARED: Any = None


class Session(Protocol):
    """An engine that is running: its workers hold the shared object."""

    def start(self, shared: Any, warm: str | None) -> None:
        """Start the workers, each with *shared* and the module *warm* imported."""
        ...

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
            import_ray()
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

    def start(self, shared: Any, warm: str | None) -> None:
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


def _ready() -> None:
    """A task that only waits for its worker to have started (its initializer ran)."""


class _LocalPool:
    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.before = set(multiprocessing.active_children())
        self.pool: ProcessPoolExecutor | None = None

    def start(self, shared: Any, warm: str | None) -> None:
        with starting(POOL_LIMIT_S):  # each submit spawns a worker, which reads *shared*
            self.pool = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
                initargs=(shared, warm),
            )
            ready = [self.pool.submit(_ready) for _ in range(self.workers)]
        try:
            for fut in ready:
                fut.result()
        except BrokenProcessPool:
            raise WattgpuError(WORKER_DIED) from None

    def run(self, fn: BatchFn, batches: Sequence[Any], done: Done) -> list[Any]:
        assert self.pool is not None
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
        if self.pool is not None:
            self.pool.shutdown()

    def abort(self) -> None:
        if self.pool is not None:
            _stop_pool(self.pool, self.before)


class _Dask:
    def __init__(self, workers: int, address: str | None) -> None:
        self.workers = workers
        self.address = address
        self.cluster: Any = None
        self.client: Any = None
        self.futures: list[Any] = []

    def start(self, shared: Any, warm: str | None) -> None:
        from dask.distributed import Client, LocalCluster

        address = self.address
        if address is None:
            with starting(CLUSTER_LIMIT_S):  # a LocalCluster still starting cannot be closed
                self.cluster = LocalCluster(
                    n_workers=self.workers,
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
        self.ref = self.client.scatter(shared, broadcast=True)
        self.client.run(_import, warm)

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
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def abort(self) -> None:
        if self.client is not None and self.futures:
            self.client.cancel(self.futures)
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
        session = _InProcess() if workers <= 1 else _LocalPool(workers)
    else:
        session = _Dask(workers, address) if engine == "dask" else RayEngine(workers, address)
    with stop_signals_exit():  # SIGTERM, SIGHUP: the workers stop too (exit 143, 129)
        try:
            session.start(shared, warm)  # an interrupt while it starts stops it too
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
