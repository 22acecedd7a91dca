"""Knowledge-base management behind the ingester's ListDocuments, GetDocument and DeleteDocument.

The retriever holds the chunks and answers the reads; the ingester owns the dedupe index, so a delete
comes here: it removes the chunks through the retriever and forgets the page in the index, so the same
URL arriving on the ingest topic again is stored again.
"""

from __future__ import annotations

import logging
from typing import Protocol

from weaverbird.v1 import ingester_pb2, retriever_pb2
from weaverbird_common.docs.names import clean_line, display_source
from weaverbird_common.errors import NotFound

from weaverbird_ingester.dedupe import DedupeIndex

log = logging.getLogger(__name__)
# GetDocument lists at most this many facts (a 10-K has ~1,300; the first ones are its statements).
MAX_FACTS_SHOWN = 500


class DocumentStore(Protocol):
    """What the admin needs of the knowledge base (peers.GrpcKnowledgeBase)."""

    async def list_documents(
        self, request: retriever_pb2.ListDocumentsRequest
    ) -> retriever_pb2.ListDocumentsResponse: ...

    async def get_document(self, document_id: str) -> retriever_pb2.GetDocumentResponse: ...

    async def delete_document(self, document_id: str) -> int: ...


def for_clients(summary: retriever_pb2.DocumentSummary) -> retriever_pb2.DocumentSummary:
    """The summary with a relative source and a clean title: a KB written before sources were stored
    relative still holds absolute server paths, and no client should see them (issue 34)."""
    shown = retriever_pb2.DocumentSummary()
    shown.CopyFrom(summary)
    shown.source = display_source(summary.source) if summary.source else ""
    shown.title = clean_line(summary.title) or shown.source
    return shown


class KnowledgeBaseAdmin:
    """Lists, shows and deletes documents; `dedupe` is None when the ingester consumes no topic."""

    def __init__(self, kb: DocumentStore, dedupe: DedupeIndex | None) -> None:
        self._kb = kb
        self._dedupe = dedupe

    async def list(
        self, request: ingester_pb2.IngesterServiceListDocumentsRequest
    ) -> ingester_pb2.IngesterServiceListDocumentsResponse:
        reply = await self._kb.list_documents(
            retriever_pb2.ListDocumentsRequest(
                filter=request.filter, page_size=request.page_size, page_token=request.page_token
            )
        )
        return ingester_pb2.IngesterServiceListDocumentsResponse(
            documents=[for_clients(d) for d in reply.documents],
            next_page_token=reply.next_page_token,
            total_size=reply.total_size,
        )

    async def get(self, document_id: str) -> ingester_pb2.IngesterServiceGetDocumentResponse:
        reply = await self._kb.get_document(document_id)
        shown = ingester_pb2.IngesterServiceGetDocumentResponse(
            document=for_clients(reply.document), preview=reply.preview
        )
        facts = getattr(self._kb, "document_facts", None)
        if facts is not None:
            try:
                for fact in await facts(document_id, MAX_FACTS_SHOWN):
                    item = shown.facts.add()
                    item.CopyFrom(fact)
                    item.source = display_source(fact.source) if fact.source else ""
            except Exception as exc:  # a document is shown without its facts rather than not at all
                log.warning("facts of %s not read: %s: %s", document_id, type(exc).__name__, exc)
        return shown

    async def delete(self, document_id: str) -> ingester_pb2.IngesterServiceDeleteDocumentResponse:
        """Chunks first: if the retriever fails, the index still remembers the page, which is right
        while its chunks are there. NotFound when there was neither chunk nor index entry."""
        deleted = await self._kb.delete_document(document_id)
        cleared = self._dedupe.forget_document(document_id) if self._dedupe is not None else False
        if not deleted and not cleared:
            raise NotFound(f"document {document_id!r} is not in the knowledge base")
        log.info("deleted document %s: %d chunks, dedupe entry cleared: %s", document_id, deleted, cleared)
        return ingester_pb2.IngesterServiceDeleteDocumentResponse(
            document_id=document_id, deleted_chunks=deleted, dedupe_cleared=cleared
        )
