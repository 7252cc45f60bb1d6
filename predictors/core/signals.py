"""SIGTERM and SIGHUP end a command the way Ctrl-C does: cleanly.

Their default action ends the process at once: a half-written temporary file of an atomic
write stays beside its target (``.out.csv.XXXXXXXX``), a sweep's worker processes outlive it.
While :func:`stop_signals_exit` is active, either raises ``SystemExit(128 + signal)`` in the
main thread, so every ``finally`` runs (the temporary file is removed, the workers stopped) and
the exit status is the one the signal would have given (143, 129); a second signal while
stopping is ignored. Outside the main thread it changes nothing (Python delivers signals to the
main thread only).

A library may replace the handler (Ray's ``ray.init`` installs its own for SIGTERM) or turn the
``SystemExit`` into another exception on its way out (Ray's ``ray.wait`` raises
``SystemExit(1)``): :func:`hold_stop_signals` puts the handler back, and once a stop signal was
received whatever leaves :func:`stop_signals_exit` leaves as ``SystemExit(128 + signal)``.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: What ``kill``, ``timeout`` and batch schedulers send, and a closed terminal.
STOP_SIGNALS: tuple[str, ...] = ("SIGTERM", "SIGHUP")

_received: int | None = None
"""The stop signal received while :func:`stop_signals_exit` is active (None: none)."""
_depth = 0
"""How many :func:`stop_signals_exit` are active (nested: the command's and a sweep engine's)."""


def _signals() -> list[signal.Signals]:
    return [getattr(signal, name) for name in STOP_SIGNALS if hasattr(signal, name)]


def stopping(signum: int) -> SystemExit:
    """The exit of stop signal *signum* (``SystemExit(128 + signum)``), noted as received and
    with the stop signals ignored from now on: :func:`_stop`'s work, for a signal that another
    handler caught first (Ray's, while ``ray.init`` runs)."""
    global _received
    for sig in _signals():
        signal.signal(sig, signal.SIG_IGN)
    if _received is None:
        _received = signum
    return SystemExit(128 + _received)


def _stop(signum: int, _frame: Any) -> None:
    raise stopping(signum)


def hold_stop_signals() -> None:
    """Install the stop signals' handler again after a library replaced it, while
    :func:`stop_signals_exit` is active in the main thread (elsewhere: nothing); after a stop
    signal they stay ignored."""
    if _depth == 0 or threading.current_thread() is not threading.main_thread():
        return
    for sig in _signals():
        signal.signal(sig, signal.SIG_IGN if _received is not None else _stop)


@contextmanager
def stop_signals_exit() -> Iterator[None]:
    """:data:`STOP_SIGNALS` raise ``SystemExit(128 + signal)`` while active (module doc)."""
    global _depth, _received
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _depth == 0:
        _received = None
    saved = {sig: signal.signal(sig, _stop) for sig in _signals()}
    _depth += 1
    try:
        yield
    except BaseException as exc:
        got = _received
        if got is not None and not (isinstance(exc, SystemExit) and exc.code == 128 + got):
            raise SystemExit(128 + got) from exc  # a library turned the exit into its own
        raise
    finally:
        _depth -= 1
        for sig, handler in saved.items():
            if handler is None:
                handler = signal.SIG_DFL
            elif handler is _stop and _received is not None:
                handler = signal.SIG_IGN  # still stopping: a second signal is ignored
            signal.signal(sig, handler)
