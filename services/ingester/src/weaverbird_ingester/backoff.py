"""Waiting between retries: doubling delays up to a ceiling, cut short when the consumer stops."""

from __future__ import annotations

import asyncio
import threading
import time


class Backoff:
    """Delays of first_s, 2 x first_s, ... up to max_s; every wait ends early once `stop` is set."""

    def __init__(self, first_s: float, max_s: float, stop: threading.Event) -> None:
        self._first_s = first_s
        self._max_s = max_s
        self._stop = stop
        self._outages = 0  # transient failures in a row

    def delay_s(self, failures: int) -> float:
        """The wait after `failures` earlier failures in a row."""
        return min(self._max_s, self._first_s * (2**failures))

    async def after_outage(self) -> bool:
        """Sleeps after a transient failure, longer each time in a row; False if stop() came first."""
        delay = self.delay_s(self._outages)
        self._outages += 1
        return await self.sleep(delay)

    def recovered(self) -> None:
        """A call succeeded: the next outage starts from the first delay again."""
        self._outages = 0

    async def sleep(self, seconds: float) -> bool:
        """Sleeps up to `seconds`, waking early on stop(); returns False if stopping."""
        end = time.monotonic() + seconds
        while not self._stop.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return True
            await asyncio.sleep(min(left, 0.1))
        return False
