"""gRPC status codes to HTTP statuses: one table, and an error the app renders as JSON.

The message a service put in its status is already safe to show (services never send tracebacks), so it
is passed on unchanged; only the HTTP status is chosen here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import grpc

# 502 for everything not listed: the gateway itself is fine, a service behind it failed.
HTTP_STATUS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    # The deployment cannot do this now (e.g. asynchronous ingestion without Kafka): the request is fine,
    # the state is not; 409 says "conflict with the current state", 502 would blame a broken service.
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}
DEFAULT_STATUS = 502
# Texts grpc core writes for transport failures, never written by a WeaverBird service.
_TRANSPORT_TEXT = re.compile(r"failed to connect|connection refused|socket closed|ipv[46]:|dns resolution", re.I)


@dataclass
class GatewayError(Exception):
    """An error answered as `{"detail": message, "code": code}` with `status` and `headers`."""

    status: int
    message: str
    code: str
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message

    def body(self) -> dict[str, object]:
        return {"detail": self.message, "code": self.code, "status": self.status}


def _retry_after(error: grpc.aio.AioRpcError, default_s: int) -> str:
    """The service's own hint (trailing metadata `retry-after`, seconds) or the default."""
    for key, value in error.trailing_metadata() or ():
        if key.lower() == "retry-after":
            text = value.decode() if isinstance(value, bytes) else str(value)
            if text.strip().isdigit():
                return text.strip()
    return str(default_s)


def from_rpc_error(error: grpc.aio.AioRpcError, peer: str, *, retry_after_s: int = 1) -> GatewayError:
    """The HTTP error for a failed call to `peer`, with the service's message."""
    code = error.code()
    status = HTTP_STATUS.get(code, DEFAULT_STATUS)
    details = (error.details() or "").strip()
    if code == grpc.StatusCode.UNAVAILABLE and (not details or _TRANSPORT_TEXT.search(details)):
        # grpc's own connection text ("failed to connect to all addresses; ipv4:...") is for operators;
        # a service's UNAVAILABLE ("generator is unavailable: ...") is kept as it is.
        message = f"the {peer} is unavailable; try again shortly"
    elif code == grpc.StatusCode.DEADLINE_EXCEEDED and details.lower() in ("", "deadline exceeded"):
        message = f"the {peer} did not answer in time"
    else:
        message = details or f"the {peer} failed ({code.name})"
    headers = {"Retry-After": _retry_after(error, retry_after_s)} if status in (429, 503) else {}
    return GatewayError(status, message, code.name, headers)
