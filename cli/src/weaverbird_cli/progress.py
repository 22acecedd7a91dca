"""A one-line status on the terminal while an answer is on its way: which stage, and for how long.

On one CPU machine the model reads the prompt for seconds before its first token; without a sign of
life a user cannot tell a slow answer from a hung one. The status goes to stderr and only when it is a
terminal, so piped output (scripts, tests) stays exactly the answer.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


class Status:
    """`show("reading 312 prompt tokens")` keeps "… reading 312 prompt tokens 4 s" updated; `clear()` erases it."""

    def __init__(self, stream: TextIO | None = None, interval_s: float = 0.5) -> None:
        self._stream = stream or sys.stderr
        self._enabled = bool(getattr(self._stream, "isatty", lambda: False)())
        self._interval_s = interval_s
        self._text = ""
        self._since = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def enabled(self) -> bool:
        return self._enabled

    def show(self, text: str) -> None:
        if not self._enabled:
            return
        with self._lock:
            self._text, self._since = text, time.monotonic()
            self._draw()
        if self._thread is None:
            self._thread = threading.Thread(target=self._tick, name="status", daemon=True)
            self._thread.start()

    def clear(self) -> None:
        if not self._enabled:
            return
        with self._lock:
            if self._text:
                self._stream.write("\r\033[K")
                self._stream.flush()
            self._text = ""

    def close(self) -> None:
        self.clear()
        self._stop.set()

    def _tick(self) -> None:
        while not self._stop.wait(self._interval_s):
            with self._lock:
                if self._text:
                    self._draw()

    def _draw(self) -> None:
        elapsed = time.monotonic() - self._since
        self._stream.write(f"\r\033[K… {self._text} {elapsed:.0f} s")
        self._stream.flush()
