"""Check a ``--address`` before the engine connects to it: reachable, and answering as that
engine's scheduler, each within a bound.

``dask.distributed.Client(address, timeout=...)`` bounds its TCP connect but not the read of
the scheduler's handshake (``distributed.comm.core.connect`` awaits it without a deadline), and
``ray.init(address=...)`` retries a GCS that never answers for minutes on end: at a listener that
accepts the connection and stays silent (an HTTP server, a stray socket) both hung forever. So
:func:`check_address`, before the engine starts:

1. connects over TCP within :data:`CONNECT_TIMEOUT_S`;
2. runs the engine's own first exchange within :data:`HANDSHAKE_TIMEOUT_S`, in this process and
   on a connection of its own, so that a deadline can end it cleanly:

   * dask: ``distributed.comm.connect`` (dask's handshake) and an ``identity`` call, the two
     under one ``asyncio.wait_for`` on a private event loop; the answer must come from a
     scheduler (a worker's address answers ``Worker``);
   * ray: ``HOST:PORT`` (the GCS) and ``ray://HOST:PORT`` (Ray Client) are gRPC servers, which
     speak HTTP/2: the probe sends the HTTP/2 client preface and an empty SETTINGS frame, and
     the server's first frame must be a SETTINGS frame (RFC 9113, section 3.4). Running
     ``ray.init`` itself under a deadline is not an option: it cannot be cancelled, and a thread
     left inside it blocks the interpreter's exit (Ray's atexit shutdown). With
     ``RAY_USE_TLS`` set the GCS speaks TLS first, so only the TCP connect is checked.

A listener that stays silent or answers something else is one ``error:`` line naming the
address and what to give instead. A scheduler that passes the check and then stops answering
before the engine's own connect (a race of a few milliseconds) is not covered.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from predictors.core.errors import WattgpuError

#: Seconds the TCP connect to ``--address`` may take.
CONNECT_TIMEOUT_S = 10.0
#: Seconds the scheduler may take to answer the engine's first exchange once connected.
HANDSHAKE_TIMEOUT_S = 10.0

#: What to give instead, per engine.
GIVE = {
    "dask": "check that it is a dask scheduler's address (dask-scheduler prints it, usually "
    "tcp://HOST:8786)",
    "ray": "check that it is a Ray head's address (ray start --head prints it, usually "
    "HOST:6379) or a Ray Client address (ray://HOST:10001)",
}
NAME = {"dask": "a dask scheduler", "ray": "a Ray cluster"}

_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_H2_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # length 0, type SETTINGS, stream 0
_H2_FRAME_HEADER = 9


def host_port(address: str) -> tuple[str, int]:
    """(host, port) of ``tcp://host:port``, ``host:port`` or ``ray://host:port``."""
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
    return host, port


def check_address(engine: str, address: str) -> None:
    """WattgpuError unless *address* accepts a TCP connection within :data:`CONNECT_TIMEOUT_S`
    and then answers as *engine*'s scheduler within :data:`HANDSHAKE_TIMEOUT_S` (module doc)."""
    host, port = host_port(address)
    try:
        conn = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
    except OSError as exc:
        raise WattgpuError(
            f"--address: cannot reach the {engine} scheduler at {address} within "
            f"{CONNECT_TIMEOUT_S:g} s ({exc.strerror or exc}); check the address and that the "
            "scheduler runs"
        ) from None
    with conn:
        if engine == "ray" and os.environ.get("RAY_USE_TLS", "0").lower() not in ("1", "true"):
            _answer(engine, address, _ray_answer(conn))
    if engine == "dask":
        _answer(engine, address, _dask_answer(address))


def _answer(engine: str, address: str, problem: str | None) -> None:
    """WattgpuError naming *problem* (None: the scheduler answered as one)."""
    if problem is not None:
        raise WattgpuError(f"--address: {address} {problem}; {GIVE[engine]}")


def _silent(engine: str) -> str:
    return (
        f"accepted the connection but did not answer as {NAME[engine]} within "
        f"{HANDSHAKE_TIMEOUT_S:g} s"
    )


def _not_as(engine: str, what: str) -> str:
    return f"answered, but not as {NAME[engine]} ({what[:120]})"


def _ray_answer(conn: socket.socket) -> str | None:
    """What is wrong with the gRPC (HTTP/2) server on *conn*, None when its first frame is a
    SETTINGS frame."""
    deadline = time.monotonic() + HANDSHAKE_TIMEOUT_S
    head = b""
    try:
        conn.settimeout(HANDSHAKE_TIMEOUT_S)
        conn.sendall(_H2_PREFACE + _H2_SETTINGS)
        while len(head) < _H2_FRAME_HEADER:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            conn.settimeout(left)
            chunk = conn.recv(_H2_FRAME_HEADER - len(head))
            if not chunk:
                break
            head += chunk
    except TimeoutError:
        return _silent("ray") if not head else _not_as("ray", f"an answer of {len(head)} bytes")
    except (ConnectionResetError, BrokenPipeError):
        return _not_as("ray", "it closed the connection")
    except OSError as exc:
        return _not_as("ray", f"the connection failed: {exc.strerror or exc}")
    if len(head) == _H2_FRAME_HEADER and head[3] == 0x04 and head[5:9] == b"\0\0\0\0":
        return None
    if not head:
        return _not_as("ray", "it closed the connection")
    return _not_as("ray", f"its first bytes were {head!r}, not an HTTP/2 SETTINGS frame")


def _dask_answer(address: str) -> str | None:
    """What is wrong with the dask scheduler at *address*, None when it answers dask's handshake
    and an ``identity`` call as a scheduler."""
    from distributed.comm import connect

    async def identity() -> Any:
        comm = await connect(address, timeout=CONNECT_TIMEOUT_S, deserialize=False)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded() -> Any:
        return await asyncio.wait_for(identity(), HANDSHAKE_TIMEOUT_S)

    try:  # on a thread of its own: the caller may be running an event loop (a notebook)
        with ThreadPoolExecutor(1) as pool:
            reply = pool.submit(asyncio.run, bounded()).result()
    except TimeoutError:
        return _silent("dask")
    except Exception as exc:  # whatever a listener that is no dask scheduler made dask raise:
        # its banner read as a frame length (MemoryError), a closed stream (OSError), ...
        return _not_as("dask", f"{type(exc).__name__}: {exc}")
    kind = reply.get("type") if isinstance(reply, dict) else None
    if isinstance(kind, str) and "Scheduler" in kind:
        return None
    return _not_as("dask", f"its identity is {str(kind or reply)[:60]!r}")
