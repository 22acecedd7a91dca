"""The RPC metrics every service exports, and the server interceptor that records them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import prometheus_client

from weaverbird_common.interceptor import CallInterceptor
from weaverbird_common.telemetry.registry import LATENCY_BUCKETS

GRPC_SERVER_REQUESTS = prometheus_client.Counter(
    "weaverbird_grpc_server_requests_total",
    "Finished gRPC calls by service, full method name and final status code.",
    ("service", "method", "code"),
)
GRPC_SERVER_REQUEST_DURATION = prometheus_client.Histogram(
    "weaverbird_grpc_server_request_duration_seconds",
    "Time from handler start to final status (the whole stream for server-streaming calls).",
    ("service", "method", "code"),
    buckets=LATENCY_BUCKETS,
)


def _final_code(context: grpc.aio.ServicerContext, exc: BaseException | None) -> grpc.StatusCode:
    """The status the client receives: the one abort()/set_code() stored, else derived from `exc`."""
    code = context.code()
    if isinstance(code, grpc.StatusCode) and (code is not grpc.StatusCode.OK or exc is None):
        return code
    if exc is None:
        return grpc.StatusCode.OK
    if isinstance(exc, grpc.aio.AbortError):
        return grpc.StatusCode.UNKNOWN  # abort() always stores its code, so this is not expected
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return grpc.StatusCode.CANCELLED  # the client went away
    return grpc.StatusCode.UNKNOWN  # what grpc.aio sends for an exception nobody converted


class MetricsInterceptor(CallInterceptor):
    """Counts every unary and server-streaming call and times it, labelled with its final status code.

    Runs outside the error interceptor, so it sees the code that interceptor's abort() set. Health
    checks and reflection are not counted.
    """

    def __init__(self, service: str) -> None:
        """Args:
        service: the `service` label, e.g. "embedder".
        """
        self._service = service

    @asynccontextmanager
    async def around(self, method: str, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[None]:
        started = time.perf_counter()
        try:
            yield
        except BaseException as exc:
            self._record(method, _final_code(context, exc), started)
            raise
        self._record(method, _final_code(context, None), started)

    def _record(self, method: str, code: grpc.StatusCode, started: float) -> None:
        # The method label is the RPC span's name: 'weaverbird.v1.EmbedderService/Embed'.
        labels = {"service": self._service, "method": method.lstrip("/"), "code": code.name}
        GRPC_SERVER_REQUESTS.labels(**labels).inc()
        GRPC_SERVER_REQUEST_DURATION.labels(**labels).observe(time.perf_counter() - started)
