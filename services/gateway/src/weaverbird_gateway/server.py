"""The uvicorn server of the gateway, on h11 with a bounded request head.

uvicorn's default parser (httptools) buffers headers of any size. h11 refuses a request head still
incomplete after `h11_max_incomplete_event_size` bytes with a 431 hint, which uvicorn answers as a
generic 400; this protocol sends h11's status instead. So memory stays bounded however the head is sent;
a head that arrived whole in one read (up to one socket read over the limit) is measured by guard.py.
"""

from __future__ import annotations

from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from weaverbird_gateway.settings import GatewaySettings


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, answering a refused request with h11's suggested status (431 or 400)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._refusal_status = 400
        next_event = self.conn.next_event

        def recording_next_event() -> Any:
            try:
                return next_event()
            except h11.RemoteProtocolError as exc:
                self._refusal_status = exc.error_status_hint
                raise

        self.conn.next_event = recording_next_event  # type: ignore[method-assign]

    def send_400_response(self, msg: str) -> None:
        if self._refusal_status != 431:
            super().send_400_response(msg)
            return
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
        self.transport.write(
            self.conn.send(h11.Response(status_code=431, headers=headers, reason=b"Request Header Fields Too Large"))
            or b""
        )
        self.transport.write(self.conn.send(h11.Data(data=b"Request header fields too large.")) or b"")
        self.transport.write(self.conn.send(h11.EndOfMessage()) or b"")
        self.transport.close()


def config(app: Any, settings: GatewaySettings) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=BoundedH11Protocol,
        h11_max_incomplete_event_size=settings.max_header_bytes,
        log_config=None,  # keep the service's one-line log format
        log_level=settings.log_level.lower(),
        proxy_headers=True,
        timeout_graceful_shutdown=int(settings.shutdown_grace_s),
    )
