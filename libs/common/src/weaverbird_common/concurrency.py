"""A per-server limit on calls in progress: one call too many is refused at once, not queued.

grpc.aio.server(maximum_concurrent_rpcs=...) is not used because it counts health checks and reflection
like any other call (a saturated server would then fail its Kubernetes liveness probe and be restarted
mid-work) and answers with a fixed "Concurrent RPC limit exceeded!" that does not say what to do.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc

from weaverbird_common.interceptor import CallInterceptor

log = logging.getLogger(__name__)


class _Permit:
    """One admitted call; released exactly once, when its handler ends or grpc reports the call done."""

    __slots__ = ("_held", "_limiter")

    def __init__(self, limiter: ConcurrencyLimitInterceptor) -> None:
        self._limiter = limiter
        self._held = True

    def release(self, _context: object = None) -> None:
        if self._held:
            self._held = False
            self._limiter._in_flight -= 1


class ConcurrencyLimitInterceptor(CallInterceptor):
    """Admits at most `limit` calls at a time; the next gets RESOURCE_EXHAUSTED with a message telling the
    client to retry after a short back-off. Probes are never limited: a probe must see the server's
    health however busy it is.

    All counting happens on the event loop's thread, so a plain integer needs no lock.
    """

    def __init__(self, limit: int, service: str = "server") -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self._service = service
        self._in_flight = 0

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def busy_message(self) -> str:
        return (
            f"{self._service} is busy: {self.limit} calls already in progress, its limit; "
            "retry after a short back-off (e.g. 1 s, doubling)"
        )

    async def _admit(self, context: grpc.aio.ServicerContext, method: str) -> _Permit:
        if self._in_flight >= self.limit:
            log.warning("rpc=%s status=RESOURCE_EXHAUSTED in_flight=%d limit=%d", method, self._in_flight, self.limit)
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, self.busy_message())
        self._in_flight += 1
        permit = _Permit(self)
        # Backstop: a streaming handler abandoned at a `yield` may be finalised late; grpc's own end of
        # the call still frees the permit.
        context.add_done_callback(permit.release)
        return permit

    @asynccontextmanager
    async def around(self, method: str, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[None]:
        permit = await self._admit(context, method)
        try:
            yield
        finally:
            permit.release()
