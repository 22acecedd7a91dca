"""The caller's deadline of the request being served, so that every hop made for it ends by then.

The servicer sets it once per call from grpc's `context.time_remaining()`; the peers and the web path
read it. A context variable, because the flow between them knows nothing of gRPC: each call runs in its
own task, and asyncio copies the variable into any task the flow starts.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from weaverbird_common.clients import hop_timeout

# time.monotonic() by which the current call must be answered; None = the caller set no deadline.
_DEADLINE: ContextVar[float | None] = ContextVar("weaverbird_caller_deadline", default=None)


@contextmanager
def caller_deadline(remaining_s: float | None) -> Iterator[None]:
    """Within this block, hops are bounded by `remaining_s` seconds from now (None = unbounded)."""
    token = _DEADLINE.set(None if remaining_s is None else time.monotonic() + remaining_s)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def time_left() -> float | None:
    """Seconds left of the current call's deadline (negative once passed); None when it has none."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()


def hop(fixed_s: float, what: str) -> float:
    """min(fixed_s, time left); raises DeadlineExceeded when no time is left for `what`."""
    return hop_timeout(fixed_s, time_left(), what)
