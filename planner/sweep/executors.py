"""One small executor seam: run a batch function over batches on local processes, Dask or Ray.

:func:`run_batches` takes the shared object (sent to each worker once: the local pool's
initializer, Dask ``scatter(broadcast=True)``, Ray ``put``), the batches and a callback for
progress, and returns the batch results in batch order, whatever order they finished in — so
the results are the same on every engine and worker count.

* ``local`` (default): ``concurrent.futures.ProcessPoolExecutor`` with the ``spawn`` start
  method, *workers* processes, one solver thread per task.
* ``dask``: ``dask.distributed.Client(address)``; without an address a ``LocalCluster`` of
  *workers* single-threaded worker processes.
* ``ray``: ``ray.init(address)``; without an address a local Ray with *workers* CPUs.

An address is checked first (TCP connect, :data:`CONNECT_TIMEOUT_S`); an engine whose extra is
not installed names the ``pip install`` line. Ctrl-C cancels what has not started and stops
the workers (the caller writes nothing).
"""

from __future__ import annotations

import logging
import multiprocessing
import socket
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any
from urllib.parse import urlsplit

from predictors.core.errors import WattgpuError, did_you_mean

ENGINES: tuple[str, ...] = ("local", "dask", "ray")
CONNECT_TIMEOUT_S = 10.0
EXTRAS = {"dask": "dask", "ray": "ray"}

BatchFn = Callable[[Any, Any], Any]
Done = Callable[[int], None]

_SHARED: Any = None


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


def check_address(engine: str, address: str) -> None:
    """WattgpuError when *address* (``tcp://host:port``, ``host:port``, ``ray://host:port``)
    does not accept a TCP connection within :data:`CONNECT_TIMEOUT_S`."""
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or not port:
        raise WattgpuError(
            f"--address: {address!r} is not host:port; give e.g. tcp://10.0.0.5:8786 (dask) "
            "or 10.0.0.5:6379 (ray)"
        )
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise WattgpuError(
            f"--address: cannot reach the {engine} scheduler at {address} within "
            f"{CONNECT_TIMEOUT_S:g} s ({exc.strerror or exc}); check the address and that the "
            "scheduler runs"
        ) from None


def _init_worker(shared: Any) -> None:
    global _SHARED
    _SHARED = shared


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


def _local(fn: BatchFn, shared: Any, batches: Sequence[Any], workers: int, done: Done) -> list[Any]:
    if workers <= 1:  # no pool: the same function in this process
        out = []
        for i, batch in enumerate(batches):
            out.append(fn(shared, batch))
            done(i)
        return out
    ctx = multiprocessing.get_context("spawn")
    results: list[Any] = [None] * len(batches)
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(
        workers, mp_context=ctx, initializer=_init_worker, initargs=(shared,)
    )
    try:
        pending = {pool.submit(_call_local, fn, b): i for i, b in enumerate(batches)}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                i = pending.pop(fut)
                results[i] = fut.result()
                done(i)
    except BaseException:
        _stop_pool(pool, before)
        raise
    pool.shutdown()
    return results


def _dask(
    fn: BatchFn, shared: Any, batches: Sequence[Any], workers: int, done: Done, address: str | None
) -> list[Any]:
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if address is None:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        )
        client = Client(cluster)
    else:
        client = Client(address, timeout=CONNECT_TIMEOUT_S)
    try:
        ref = client.scatter(shared, broadcast=True)
        futures = [client.submit(fn, ref, b, pure=False) for b in batches]
        index = {f.key: i for i, f in enumerate(futures)}
        results: list[Any] = [None] * len(batches)
        for fut in as_completed(futures):
            i = index[fut.key]
            results[i] = fut.result()
            done(i)
        return results
    except BaseException:
        client.cancel(futures if "futures" in locals() else [])
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _ray(
    fn: BatchFn, shared: Any, batches: Sequence[Any], workers: int, done: Done, address: str | None
) -> list[Any]:
    import ray

    started = not ray.is_initialized()
    if started:
        if address is None:
            ray.init(
                num_cpus=workers,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,
                configure_logging=True,
            )
        else:
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
    try:
        remote = ray.remote(num_cpus=1)(fn)
        ref = ray.put(shared)
        refs = [remote.remote(ref, b) for b in batches]
        index = {r: i for i, r in enumerate(refs)}
        results: list[Any] = [None] * len(batches)
        pending = list(refs)
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for r in ready:
                    results[index[r]] = ray.get(r)
                    done(index[r])
        except BaseException:
            for r in pending:
                ray.cancel(r, force=True)
            raise
        return results
    finally:
        if started:
            ray.shutdown()


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
    """``[fn(shared, b) for b in batches]`` on *engine* (module doc), in batch order."""
    check_engine(engine)
    callback = done or (lambda i: None)
    if engine == "local":
        if address is not None:
            raise WattgpuError("--address: only for --engine dask or ray; leave it out for local")
        return _local(fn, shared, batches, workers, callback)
    _need(engine)
    if address is not None:
        check_address(engine, address)
    if engine == "dask":
        return _dask(fn, shared, batches, workers, callback, address)
    return _ray(fn, shared, batches, workers, callback, address)
