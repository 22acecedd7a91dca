"""The gateway's gRPC side: channels to the orchestrator and the ingester (which also manages the knowledge
base's documents), one method per HTTP action.

Every failed call becomes a `GatewayError` with the matching HTTP status (errors.py); nothing here knows
about HTTP requests, so it is tested against the real services without a web server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc, orchestrator_pb2, orchestrator_pb2_grpc
from weaverbird_common.clients import open_channel
from weaverbird_common.tls import tls_files

from weaverbird_gateway import convert
from weaverbird_gateway.credentials import unauthorized
from weaverbird_gateway.errors import from_rpc_error
from weaverbird_gateway.settings import GatewaySettings

AskEvents = AsyncIterator[tuple[str, dict[str, Any]]]
R = TypeVar("R")

# The HTTP caller's "Authorization: Bearer <token>" header (set per request by the app), passed on as gRPC
# metadata: the services judge the user's rights, not the gateway's.
_authorization: ContextVar[str | None] = ContextVar("authorization", default=None)


def forward_authorization(header: str | None) -> None:
    """Records the current HTTP request's Authorization header for the calls it makes."""
    _authorization.set(header)


class Backend:
    """Open with `await Backend.open(settings)` inside the server's event loop; `close()` at shutdown."""

    def __init__(self, settings: GatewaySettings) -> None:
        self._settings = settings
        tls = tls_files(settings.tls_cert_file, settings.tls_key_file, settings.tls_ca_file)
        limit = settings.max_message_mb
        self._orchestrator = open_channel(settings.orchestrator_addr, max_message_mb=limit, tls=tls)
        self._ingester = open_channel(settings.ingester_addr, max_message_mb=limit, tls=tls)
        self._ask = orchestrator_pb2_grpc.OrchestratorServiceStub(self._orchestrator)
        self._add = ingester_pb2_grpc.IngesterServiceStub(self._ingester)
        self._health = health_pb2_grpc.HealthStub(self._orchestrator)

    async def close(self) -> None:
        await self._orchestrator.close()
        await self._ingester.close()

    def _metadata(self, *, default_allowed: bool = True) -> tuple[tuple[str, str], ...]:
        """The caller's credentials for one call: its own header, else (unless `default_allowed` is False,
        as for deletes: no anonymous admin) the configured default token."""
        header = _authorization.get()
        if header is None and default_allowed and self._settings.default_token is not None:
            header = f"Bearer {self._settings.default_token.get_secret_value()}"
        return (("authorization", header),) if header else ()

    def _error(self, exc: grpc.aio.AioRpcError, peer: str, metadata: tuple[tuple[str, str], ...] = ()) -> Exception:
        if exc.code() == grpc.StatusCode.UNAUTHENTICATED:
            # The service cannot tell a missing token from a wrong one in its message; the gateway can.
            return unauthorized(credentials_sent=bool(metadata))
        return from_rpc_error(exc, peer, retry_after_s=self._settings.retry_after_s)

    async def ask(self, request: orchestrator_pb2.AskRequest) -> AskEvents:
        """The answer as (event name, payload) pairs, after the first event has arrived.

        The orchestrator validates before it sends anything, so waiting for the first event here turns a
        bad question into an HTTP error status instead of an error in the middle of a 200 stream.
        """
        metadata = self._metadata()
        call = self._ask.AskStream(request, timeout=self._settings.ask_timeout_s, metadata=metadata)
        try:
            first = await call.read()
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc, "orchestrator", metadata) from None
        return _events(call, None if first is grpc.aio.EOF else first, self._settings.retry_after_s)

    async def _unary(
        self,
        method: Callable[..., Awaitable[R]],
        request: Message,
        deadline_s: float,
        peer: str,
        *,
        anonymous: bool = True,
    ) -> R:
        """One call with the caller's credentials (the default token too unless not `anonymous`); a failure
        becomes the matching GatewayError."""
        metadata = self._metadata(default_allowed=anonymous)
        try:
            return await method(request, timeout=deadline_s, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc, peer, metadata) from None

    async def retrieve(self, request: orchestrator_pb2.AskRequest) -> orchestrator_pb2.RetrieveResponse:
        return await self._unary(self._ask.Retrieve, request, self._settings.retrieve_timeout_s, "orchestrator")

    async def add_document(self, request: ingester_pb2.AddDocumentRequest) -> ingester_pb2.AddDocumentResponse:
        return await self._unary(self._add.AddDocument, request, self._settings.add_timeout_s, "ingester")

    async def list_documents(
        self, request: ingester_pb2.IngesterServiceListDocumentsRequest
    ) -> ingester_pb2.IngesterServiceListDocumentsResponse:
        return await self._unary(self._add.ListDocuments, request, self._settings.kb_timeout_s, "ingester")

    async def get_document(self, document_id: str) -> ingester_pb2.IngesterServiceGetDocumentResponse:
        request = ingester_pb2.IngesterServiceGetDocumentRequest(document_id=document_id)
        return await self._unary(self._add.GetDocument, request, self._settings.kb_timeout_s, "ingester")

    async def delete_document(self, document_id: str) -> ingester_pb2.IngesterServiceDeleteDocumentResponse:
        # No anonymous admin: a delete carries the caller's own token or none.
        request = ingester_pb2.IngesterServiceDeleteDocumentRequest(document_id=document_id)
        deadline_s = self._settings.kb_timeout_s
        return await self._unary(self._add.DeleteDocument, request, deadline_s, "ingester", anonymous=False)

    async def orchestrator_status(self) -> str:
        """The orchestrator's grpc.health.v1 status name ("SERVING", ...), or why it could not be read."""
        try:
            reply = await self._health.Check(
                health_pb2.HealthCheckRequest(service=""), timeout=self._settings.ready_timeout_s
            )
        except grpc.aio.AioRpcError as exc:
            return f"unreachable ({exc.code().name})"
        return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


async def _events(call: Any, first: orchestrator_pb2.AskEvent | None, retry_after_s: int) -> AskEvents:
    """The rest of the stream. A failure after the first event can no longer change the HTTP status, so
    it becomes an `error` event; the call is cancelled when the client goes away."""
    try:
        if first is not None:
            yield convert.ask_event(first)
        while True:
            try:
                event = await call.read()
            except grpc.aio.AioRpcError as exc:
                error = from_rpc_error(exc, "orchestrator", retry_after_s=retry_after_s)
                yield "error", error.body()
                return
            if event is grpc.aio.EOF:
                return
            yield convert.ask_event(event)
    finally:
        call.cancel()
