"""gRPC adapter of the ingester: AddDocument loads the payload and hands it to the document writer."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc
from weaverbird_common.docs.documents import Document
from weaverbird_common.docs.loaders import UnreadableDocument, load_bytes
from weaverbird_common.errors import InvalidArgument, Unimplemented

from weaverbird_ingester.writer import DocumentWriter


def _apply_metadata(doc: Document, meta: ingester_pb2.DocumentMetadata) -> Document:
    overrides: dict[str, object] = {}
    if meta.title:
        overrides["title"] = meta.title
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
    """Serves AddDocument synchronously: the reply comes once the chunks are searchable."""

    def __init__(self, writer: DocumentWriter, max_document_bytes: int) -> None:
        self._writer = writer
        self._max_bytes = max_document_bytes

    async def AddDocument(
        self, request: ingester_pb2.AddDocumentRequest, context: grpc.aio.ServicerContext
    ) -> ingester_pb2.AddDocumentResponse:
        kind = request.WhichOneof("content")
        if kind is None:
            raise InvalidArgument("one of data, text or url is required")
        if kind == "url" or request.asynchronous:
            raise Unimplemented("adding URLs and asynchronous ingestion need the Kafka ingest path")
        if kind == "text":
            if not request.text.strip():
                raise InvalidArgument("text must not be empty")
            data, filename = request.text.encode(), request.filename or "document.txt"
            if "." not in filename:
                filename += ".txt"
        else:
            if not request.filename:
                raise InvalidArgument("filename (with extension) is required with data")
            data, filename = request.data, request.filename
        if len(data) > self._max_bytes:
            raise InvalidArgument(f"document has {len(data)} bytes; the limit is {self._max_bytes}")
        try:
            # Parsing a PDF is CPU work: keep the event loop free for other calls.
            doc = await asyncio.to_thread(load_bytes, data, filename, source=request.source or filename)
        except UnreadableDocument as exc:
            raise InvalidArgument(f"cannot read {filename}: {exc}") from exc
        doc = _apply_metadata(doc, request.metadata)
        result = await self._writer.write(doc)
        return ingester_pb2.AddDocumentResponse(
            document_id=result.document_id, title=result.title, pages=result.pages, chunks=result.chunks
        )
