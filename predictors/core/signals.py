"""SIGTERM and SIGHUP end a command the way Ctrl-C does: cleanly.

Their default action ends the process at once: a half-written temporary file of an atomic
write stays beside its target (``.out.csv.XXXXXXXX``), a sweep's worker processes outlive it.
While :func:`stop_signals_exit` is active, either raises ``SystemExit(128 + signal)`` in the
main thread, so every ``finally`` runs (the temporary file is removed, the workers stopped) and
the exit status is the one the signal would have given (143, 129); a second signal while
stopping is ignored. Outside the main thread it changes nothing (Python delivers signals to the
main thread only).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: What ``kill``, ``timeout`` and batch schedulers send, and a closed terminal.
STOP_SIGNALS: tuple[str, ...] = ("SIGTERM", "SIGHUP")


def _signals() -> list[signal.Signals]:
    return [getattr(signal, name) for name in STOP_SIGNALS if hasattr(signal, name)]


def _stop(signum: int, _frame: Any) -> None:
    for sig in _signals():
        signal.signal(sig, signal.SIG_IGN)
    raise SystemExit(128 + signum)


@contextmanager
def stop_signals_exit() -> Iterator[None]:
    """:data:`STOP_SIGNALS` raise ``SystemExit(128 + signal)`` while active (module doc)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.signal(sig, _stop) for sig in _signals()}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
