"""Checks every HTTP request before a route sees it, cheapest first: the size of its head, the Host
(DNS rebinding), the Authorization header's syntax, where a write comes from (cross-site requests), and the body's size
(from Content-Length at once, then while it streams).

Starlette's TrustedHostMiddleware cuts "[::1]:8080" at the first colon and its body limit answers in plain
text; this keeps IPv6 hosts and the gateway's JSON error shape.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from weaverbird_gateway import sites
from weaverbird_gateway.credentials import check_authorization
from weaverbird_gateway.errors import GatewayError
from weaverbird_gateway.settings import GatewaySettings
from weaverbird_gateway.uploads import counting_receive

# Probes reach a pod by its IP, which no setting can list; they answer with nothing worth rebinding for.
_PROBES = frozenset({"/healthz", "/readyz"})
# The upload route enforces its own (larger) limit with its own message (uploads.py).
_UPLOAD_SUFFIX = "/api/documents/upload"


class BodyTooLarge(HTTPException):
    """Raised from `receive` when a streamed body passes the limit; an HTTPException so FastAPI's body
    parsing passes it on instead of calling it a malformed body."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request bodies are limited to {limit} bytes (GATEWAY_MAX_BODY_KB)")


class RequestGuard:
    """ASGI middleware; refusals are answered here, as `{"detail", "code", "status"}`."""

    def __init__(self, app: ASGIApp, settings: GatewaySettings) -> None:
        self.app = app
        self._settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        limit = None if path.endswith(_UPLOAD_SUFFIX) else self._settings.max_body_bytes
        try:
            self._check(scope, Headers(scope=scope), path, limit)
        except GatewayError as refusal:
            response = JSONResponse(refusal.body(), status_code=refusal.status, headers=refusal.headers)
            await response(scope, receive, send)
            return
        if limit is not None:
            receive = counting_receive(receive, limit, lambda: BodyTooLarge(limit))
        await self.app(scope, receive, send)

    def _check(self, scope: Scope, headers: Headers, path: str, limit: int | None) -> None:
        self._check_head_size(scope)
        host = headers.get("host", "")
        if path not in _PROBES:
            name = sites.host_name(host)
            if name is None or not sites.host_allowed(name, self._settings.allowed_hosts):
                raise GatewayError(400, "this host name is not served here (GATEWAY_ALLOWED_HOSTS)", "INVALID_ARGUMENT")
        authorization = headers.get("authorization")
        if authorization is not None:
            check_authorization(authorization)
        if scope["method"] in sites.WRITE_METHODS:
            self._check_same_site(headers, host)
        if limit is not None:
            declared = headers.get("content-length", "").strip()
            if declared.isdigit() and int(declared) > limit:
                raise GatewayError(413, BodyTooLarge(limit).detail, "PAYLOAD_TOO_LARGE")

    def _check_head_size(self, scope: Scope) -> None:
        # h11 bounds a head that arrives in pieces; one that arrives in a single read is measured here.
        most = self._settings.max_header_bytes
        size = len(scope.get("raw_path") or b"") + len(scope.get("query_string", b""))
        size += sum(len(name) + len(value) + 4 for name, value in scope["headers"])
        if size > most:
            raise GatewayError(
                431,
                f"request line and headers are limited to {most} bytes (GATEWAY_MAX_HEADER_KB)",
                "REQUEST_HEADER_FIELDS_TOO_LARGE",
            )

    def _check_same_site(self, headers: Headers, host: str) -> None:
        """A browser marks a write from another site (Fetch Metadata) and always names its Origin."""
        origin = headers.get("origin")
        cross_site = headers.get("sec-fetch-site", "").strip().lower() == "cross-site"
        if cross_site or (
            origin is not None and not sites.origin_allowed(origin, host, self._settings.allowed_origins)
        ):
            raise GatewayError(
                403,
                "cross-site request refused: writes are accepted from this site's own pages only",
                "PERMISSION_DENIED",
            )
