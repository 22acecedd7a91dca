"""Channels to peer services with size limits, keepalive, deadlines and error conversion."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc

from weaverbird_common.errors import DeadlineExceeded, error_from_status
from weaverbird_common.telemetry.tracing import tracing_client_interceptors
from weaverbird_common.tls import TlsFiles, channel_credentials

# The process's own certificate for its calls to peers (mutual TLS); set once at start-up.
_client_tls: TlsFiles | None = None


def use_client_tls(files: TlsFiles | None) -> None:
    """Makes every channel opened after this call use TLS with `files` (None: plaintext).

    A service has one identity, so its __main__ sets it once, before building its peers."""
    global _client_tls
    _client_tls = files


def open_channel(target: str, *, max_message_mb: int = 64, tls: TlsFiles | None = None) -> grpc.aio.Channel:
    """Opens a channel to `target` (host:port): mutual TLS with `tls` (or the process's certificate, see
    use_client_tls), else plaintext (127.0.0.1, or a network whose mesh encrypts)."""
    limit = max_message_mb * 1024 * 1024
    options = [
        ("grpc.max_send_message_length", limit),
        ("grpc.max_receive_message_length", limit),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.enable_retries", 1),
    ]
    files = tls or _client_tls
    if files is None:
        return grpc.aio.insecure_channel(target, interceptors=tracing_client_interceptors(), options=options)
    credentials = channel_credentials(files.ca, files)
    return grpc.aio.secure_channel(target, credentials, interceptors=tracing_client_interceptors(), options=options)


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
