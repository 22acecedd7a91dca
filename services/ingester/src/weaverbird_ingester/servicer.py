"""gRPC adapter of the ingester: AddDocument loads a file, text or URL and writes it, or queues it;
ListDocuments, GetDocument and DeleteDocument manage what the knowledge base holds (kb_admin)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Literal

import grpc
from pydantic import ValidationError
from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc
from weaverbird_common.auth import CALLER
from weaverbird_common.docs.documents import Document
from weaverbird_common.docs.loaders import (
    ExtractionCancelled,
    ExtractionTimedOut,
    UnreadableDocument,
    document_id_for,
    load_bytes,
)
from weaverbird_common.docs.names import clean_line, display_source, safe_filename
from weaverbird_common.errors import FailedPrecondition, InvalidArgument, Overloaded, Unimplemented, plain_message
from weaverbird_common.ingest_messages import IngestMessage
from weaverbird_common.web.ssrf import UrlGuard

from weaverbird_ingester.kb_admin import KnowledgeBaseAdmin
from weaverbird_ingester.provenance import Provenance, with_provenance
from weaverbird_ingester.validation import (
    default_url_guard,
    validate_add,
    validate_document_id,
    validate_list,
    vet_url_for_queue,
)
from weaverbird_ingester.web_pages import filename_for_url
from weaverbird_ingester.writer import DocumentWriter

FetchUrl = Callable[[str], Awaitable[tuple[bytes, str]]]


def caller_of(context: grpc.aio.ServicerContext) -> str:
    """Who is asking, for the parse workers' per-principal share: the authenticated identity, else
    the peer's address without its port (every connection from one host is one principal)."""
    name = CALLER.get()
    if name:
        return name
    peer = context.peer() or ""
    return peer.rsplit(":", 1)[0] if peer.count(":") > 1 else peer


def _stored_source(source: str, filename: str) -> str:
    """A client's path, relative (never the server's or the client's absolute layout), or the file name."""
    return display_source(source) if source.strip() else filename


def _apply_metadata(doc: Document, meta: ingester_pb2.DocumentMetadata) -> Document:
    overrides: dict[str, object] = {}
    if clean_line(meta.title):
        overrides["title"] = clean_line(meta.title)
    if meta.company:
        overrides["company"] = meta.company.upper()
    if meta.year:
        overrides["year"] = meta.year
    if meta.quarter:
        overrides["quarter"] = meta.quarter
    if meta.language:
        overrides["language"] = meta.language
    if meta.published_date:
        overrides["published"] = meta.published_date
    return dataclasses.replace(doc, **overrides) if overrides else doc


class IngesterServicer(ingester_pb2_grpc.IngesterServiceServicer):
    """AddDocument: synchronous (reply once searchable) or, with `asynchronous`, queued to Kafka."""

    def __init__(
        self,
        writer: DocumentWriter,
        max_document_bytes: int,
        fetch_url: FetchUrl,
        publish: Callable[[IngestMessage], bool | None] | None = None,
        *,
        url_guard: UrlGuard | None = None,
        admin: KnowledgeBaseAdmin | None = None,
    ) -> None:
        """`url_guard` vets URLs before they are queued; by default it has the INGESTER_FETCH_ALLOW_HOSTS
        allow-list, like the fetcher's guard (pass the same guard to share one). `admin` serves the
        document RPCs (UNIMPLEMENTED without one)."""
        self._writer = writer
        self._max_bytes = max_document_bytes
        self._fetch_url = fetch_url
        self._publish = publish
        self._url_guard = url_guard or default_url_guard()
        self._admin = admin

    async def _queue(self, request: ingester_pb2.AddDocumentRequest) -> ingester_pb2.AddDocumentResponse:
        if self._publish is None:
            raise FailedPrecondition("asynchronous ingestion needs Kafka (INGESTER_KAFKA__BOOTSTRAP_SERVERS)")
        # Refused now rather than failing later in the dead-letter topic.
        await vet_url_for_queue(self._url_guard, request.url)
        try:
            message = IngestMessage(
                url=request.url, title=request.metadata.title, text="", found_at=datetime.now(UTC), origin="user"
            )
        except ValidationError as exc:  # the edge checks cover the schema; this keeps pydantic's text out
            problem = exc.errors()[0]
            raise InvalidArgument(f"cannot queue {'.'.join(map(str, problem['loc']))}: {problem['msg']}") from exc
        if self._publish(message) is False:
            raise Overloaded("the ingest queue is full or closing; retry in a few seconds")
        return ingester_pb2.AddDocumentResponse(document_id=document_id_for(request.url), queued=True)

    async def _load(self, request: ingester_pb2.AddDocumentRequest, principal: str) -> Document:
        kind = request.WhichOneof("content")
        if kind == "url":
            body, final_url = await self._fetch_url(request.url)
            data, filename, source = body, filename_for_url(final_url, body), final_url
            origin: Literal["local", "user"] = "user"
        elif kind == "text":
            data, filename = request.text.encode(), safe_filename(request.filename or "document.txt")
            filename = filename if "." in filename else filename + ".txt"
            source, origin = _stored_source(request.source, filename), "local"
        else:
            data, filename = request.data, safe_filename(request.filename)
            source, origin = _stored_source(request.source, filename), "local"
        if len(data) > self._max_bytes:
            raise InvalidArgument(f"document has {len(data)} bytes; the limit is {self._max_bytes}")
        # Set when this call ends for any reason, above all when the client goes away (gRPC cancels
        # the handler): the parse thread cannot be stopped, but its worker process can (issue 34).
        cancel = threading.Event()
        try:
            # Parsing a PDF is CPU work: keep the event loop free for other calls.
            doc = await asyncio.to_thread(load_bytes, data, filename, source=source, cancel=cancel, principal=principal)
        except ExtractionCancelled as exc:
            raise Overloaded("the document's parse was cancelled") from exc
        except ExtractionTimedOut as exc:
            # Not the document's fault as such: it costs more parsing time than one request is given.
            raise Overloaded(f"reading {filename} took too long: {plain_message(str(exc))}") from exc
        except UnreadableDocument as exc:
            raise InvalidArgument(f"cannot read {filename}: {plain_message(str(exc))}") from exc
        finally:
            cancel.set()
        # Pages a user saved from the web are stored as web documents with their URL as source.
        doc = dataclasses.replace(doc, origin="web") if origin == "user" else doc
        return with_provenance(_apply_metadata(doc, request.metadata), Provenance(origin))

    async def AddDocument(
        self, request: ingester_pb2.AddDocumentRequest, context: grpc.aio.ServicerContext
    ) -> ingester_pb2.AddDocumentResponse:
        validate_add(request, max_document_bytes=self._max_bytes)
        if request.asynchronous:
            return await self._queue(request)
        doc = await self._load(request, caller_of(context))
        result = await self._writer.write(doc)
        return ingester_pb2.AddDocumentResponse(
            document_id=result.document_id, title=result.title, pages=result.pages, chunks=result.chunks
        )

    def _require_admin(self) -> KnowledgeBaseAdmin:
        if self._admin is None:
            raise Unimplemented("this ingester does not manage documents")
        return self._admin

    async def ListDocuments(
        self, request: ingester_pb2.IngesterServiceListDocumentsRequest, context: grpc.aio.ServicerContext
    ) -> ingester_pb2.IngesterServiceListDocumentsResponse:
        validate_list(request)
        return await self._require_admin().list(request)

    async def GetDocument(
        self, request: ingester_pb2.IngesterServiceGetDocumentRequest, context: grpc.aio.ServicerContext
    ) -> ingester_pb2.IngesterServiceGetDocumentResponse:
        validate_document_id(request.document_id)
        return await self._require_admin().get(request.document_id)

    async def DeleteDocument(
        self, request: ingester_pb2.IngesterServiceDeleteDocumentRequest, context: grpc.aio.ServicerContext
    ) -> ingester_pb2.IngesterServiceDeleteDocumentResponse:
        validate_document_id(request.document_id)
        return await self._require_admin().delete(request.document_id)
