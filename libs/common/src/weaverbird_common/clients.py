"""Channels to peer services with size limits, keepalive, deadlines and error conversion."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc

from weaverbird_common.errors import DeadlineExceeded, error_from_status
from weaverbird_common.telemetry import tracing_client_interceptors


def open_channel(target: str, *, max_message_mb: int = 64) -> grpc.aio.Channel:
    """Opens an insecure channel to `target` (host:port). In-cluster traffic is meshed/TLS-terminated."""
    limit = max_message_mb * 1024 * 1024
    return grpc.aio.insecure_channel(
        target,
        interceptors=tracing_client_interceptors(),
        options=[
            ("grpc.max_send_message_length", limit),
            ("grpc.max_receive_message_length", limit),
            ("grpc.keepalive_time_ms", 30_000),
            ("grpc.enable_retries", 1),
        ],
    )


@asynccontextmanager
async def peer_errors(peer: str) -> AsyncIterator[None]:
    """Converts a failed call to `peer` into the matching `WeaverbirdError` that names the peer."""
    try:
        yield
    except grpc.aio.AioRpcError as exc:
        raise error_from_status(exc.code(), exc.details() or "", peer) from exc


def hop_timeout(fixed_s: float, remaining_s: float | None, what: str = "the next call") -> float:
    """The timeout of one hop: its fixed setting, or the caller's remaining deadline when that is shorter.

    Without it every hop would keep its own budget (300 s for a generation) after the caller gave up.

    Args:
        fixed_s: the hop's configured timeout.
        remaining_s: seconds left of the caller's deadline (grpc's `context.time_remaining()`); None = none.
        what: the hop, for the error message.

    Raises:
        DeadlineExceeded: no time is left for the hop.
    """
    if remaining_s is None:
        return fixed_s
    if remaining_s <= 0:
        raise DeadlineExceeded(f"the caller's deadline passed before {what}")
    return min(fixed_s, remaining_s)
