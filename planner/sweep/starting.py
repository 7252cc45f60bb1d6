"""Ctrl-C, SIGTERM and SIGHUP while an engine starts its worker processes (:func:`starting`).

An interrupt in the middle of a start leaves what no one can stop cleanly: a spawned pool
worker reads its pickled start data from a pipe the parent stopped writing (it prints
``UnpicklingError: pickle data was truncated``), a Dask ``LocalCluster`` whose workers are still
starting cannot be closed (its exit hook prints ``AssertionError: Status.init``), a ``ray.init``
cut short leaves Ray's agents behind, and a Ctrl-C at the terminal reaches every process of the
group, so a worker still importing prints its own ``KeyboardInterrupt`` traceback.

While :func:`starting` is active these signals wait: each is noted, and when the start has ended
(started or failed) the first one is handled as it would have been (``KeyboardInterrupt``, exit
143 or 129), so the engine's stop sees an engine it can stop. The wait is bounded: *limit_s*
seconds after the first signal, or a second signal, and it is handled at once (a start that
hangs, e.g. a spawned worker that died while the parent writes to it, still stops). The threads
and processes started meanwhile keep SIGINT blocked for good: the parent alone answers a Ctrl-C,
and stops them (SIGTERM is not blocked in them, so they can be stopped). Outside the main
thread, or where the platform has no signal masks or interval timers, it changes nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing import resource_tracker
from typing import Any

from predictors.core.signals import STOP_SIGNALS, hold_stop_signals

#: How long a start may keep an interrupt waiting: a local pool's (each worker reads the
#: shared table at its start), a local Dask cluster's or Ray's (they start several processes).
POOL_LIMIT_S = 10.0
CLUSTER_LIMIT_S = 30.0


def _deferred() -> list[signal.Signals]:
    names = ("SIGINT", *STOP_SIGNALS)
    return [getattr(signal, name) for name in names if hasattr(signal, name)]


class _Wait:
    """The signals noted while a start runs, and how to end the wait (:func:`starting`)."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.noted: list[int] = []
        self.saved: dict[int, Any] = {}
        self.mask: set[int | signal.Signals] = set()
        self.over = False

    def begin(self) -> None:
        # multiprocessing's spawn starts its resource tracker first, which unblocks SIGINT in
        # the thread that starts it (a pool's or a Dask nanny's): it starts here, before
        resource_tracker.ensure_running()
        self.saved = {int(sig): signal.signal(sig, self.note) for sig in _deferred()}
        self.saved[signal.SIGALRM] = signal.signal(signal.SIGALRM, self.timeout)
        # a blocked signal is inherited by a thread or a child process, and kept across exec:
        # what starts in the block never sees a Ctrl-C (a Python handler is not inherited)
        self.mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def note(self, signum: int, _frame: Any) -> None:
        self.noted.append(signum)
        if len(self.noted) == 1:
            signal.setitimer(signal.ITIMER_REAL, self.limit_s)
        else:
            self.end()  # a second signal: no more waiting

    def timeout(self, _signum: int, _frame: Any) -> None:
        if self.noted:
            self.end()

    def end(self) -> None:
        """Stop waiting: the handlers and the mask as they were, then the first signal noted
        handled as its handler would have."""
        if self.over:
            return
        self.over = True
        signal.setitimer(signal.ITIMER_REAL, 0)
        if signal.SIGINT in signal.sigpending():  # came while blocked everywhere: take it here
            signal.sigtimedwait({signal.SIGINT}, 0)
            self.noted.append(signal.SIGINT)
        signal.pthread_sigmask(signal.SIG_SETMASK, self.mask)
        for sig, handler in self.saved.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        hold_stop_signals()  # ignored, not the handler again, once a stop signal was handled
        if self.noted:
            _deliver(self.noted[0], self.saved.get(self.noted[0]))


@contextmanager
def starting(limit_s: float) -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block ends (at most *limit_s* seconds after
    the first), and what it starts keeps SIGINT blocked (module doc)."""
    usable = all(hasattr(signal, f) for f in ("pthread_sigmask", "setitimer", "sigtimedwait"))
    if not usable or threading.current_thread() is not threading.main_thread():
        yield
        return
    wait = _Wait(limit_s)
    wait.begin()
    try:
        yield
    finally:
        wait.end()


def _deliver(signum: int, handler: Any) -> None:
    """Handle *signum* as *handler* (the one before :func:`starting`) would have."""
    if callable(handler):
        handler(signum, None)  # Python's Ctrl-C handler, the command's stop handler
    elif handler == signal.SIG_DFL:
        signal.raise_signal(signum)  # the default action, as it would have been
