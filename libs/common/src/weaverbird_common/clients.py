"""Channels to peer services with size limits, keepalive, deadlines and error conversion."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc

from weaverbird_common.errors import error_from_status
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
