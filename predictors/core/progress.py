"""A progress line on stderr for commands that run longer than about two seconds.

:class:`Progress` shows a rich spinner with the current step and the elapsed time on stderr,
and only when stderr is a terminal, ``CI`` is not set to a true value and
``WATTGPU_NO_PROGRESS`` is not set. It appears :data:`DELAY_S` seconds after the start (short
runs show nothing), is erased when the work ends, and never writes to or redirects stdout, so
piped output stays exactly the same. Commands print their results after leaving the ``with``
block.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from types import TracebackType
from typing import Any

#: Seconds before the progress line appears.
DELAY_S = 2.0
#: Environment variable that turns the progress line off.
NO_PROGRESS_ENV = "WATTGPU_NO_PROGRESS"
_FALSE = {"", "0", "false", "no", "off"}


def progress_enabled() -> bool:
    """True when a progress line may be shown: stderr is a terminal, not CI, not turned off."""
    if os.environ.get("CI", "").strip().lower() not in _FALSE:
        return False
    if os.environ.get(NO_PROGRESS_ENV, "").strip().lower() not in _FALSE:
        return False
    stream = sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)())


class Progress:
    """``with Progress("planning") as p: ...; p.update("solving")`` — see the module doc."""

    def __init__(self, text: str, *, delay_s: float = DELAY_S, enabled: bool | None = None) -> None:
        self.text = text
        self.enabled = progress_enabled() if enabled is None else enabled
        self._delay_s = delay_s
        self._start = time.perf_counter()
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._live: Any = None
        self._spinner: Any = None
        self._closed = False

    def _renderable(self) -> Any:
        elapsed = time.perf_counter() - self._start
        self._spinner.update(text=f"{self.text} ({elapsed:.0f} s)")
        return self._spinner

    def _show(self) -> None:
        from rich.console import Console
        from rich.live import Live
        from rich.spinner import Spinner

        with self._lock:
            if self._closed:
                return
            self._spinner = Spinner("dots")
            self._live = Live(
                console=Console(stderr=True),
                get_renderable=self._renderable,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
                refresh_per_second=8,
            )
            self._live.start()

    def __enter__(self) -> Progress:
        self._start = time.perf_counter()
        if self.enabled:
            self._timer = threading.Timer(self._delay_s, self._show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def update(self, text: str) -> None:
        """Show *text* as the current step (picked up at the next refresh)."""
        self.text = text

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._closed = True
            if self._live is not None:
                self._live.stop()
                self._live = None
