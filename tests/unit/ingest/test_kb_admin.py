"""The ingester's side of KB management: provenance carried from a message or request to every chunk, the
dedupe index forgetting a deleted document, and KnowledgeBaseAdmin over the retriever's real servicer and a
real Qdrant Edge store (called in process instead of over gRPC)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from weaverbird.v1 import ingester_pb2, retriever_pb2
from weaverbird_common.docs.documents import Chunk, Document, Page
from weaverbird_common.errors import NotFound
from weaverbird_common.ingest_messages import IngestMessage
from weaverbird_ingester.dedupe import DedupeIndex
from weaverbird_ingester.kb_admin import KnowledgeBaseAdmin
from weaverbird_ingester.peers import chunk_payload
from weaverbird_ingester.provenance import Provenance, SourcedDocument, provenance_of, stamped, with_provenance
from weaverbird_ingester.writer import DocumentWriter
from weaverbird_retriever.servicer import RetrieverServicer
from weaverbird_retriever.stores import open_store

URL = "https://example.com/news/halcyon-fy2025.html"


def _doc(origin: str = "web", document_id: str = "a1b2c3d4e5f60718") -> Document:
    text = "Halcyon Quarry Minerals reported fiscal 2025 revenue of USD 731.4 million. " * 8
    return Document(document_id, "Halcyon FY2025", URL, [Page(None, text)], "en", "", 2025, None, "", origin=origin)


def test_a_message_gives_web_provenance_and_a_queued_url_user_provenance() -> None:
    found = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    web = Provenance.of_message(IngestMessage(url=URL, question="Revenue?", best_score=0.61, found_at=found))
    assert (web.origin, web.question, web.best_score, web.found_at) == ("web", "Revenue?", 0.61, found)
    assert Provenance.of_message(IngestMessage(url=URL, origin="user")) == Provenance("user")
    proto = dataclasses.replace(web, added_at=found).to_proto()
    assert proto.origin == retriever_pb2.DOCUMENT_ORIGIN_WEB and proto.question == "Revenue?"
    assert proto.best_score == pytest.approx(0.61) and proto.found_at.ToDatetime(tzinfo=UTC) == found


def test_stamping_keeps_the_document_and_records_when_it_was_written() -> None:
    now = datetime(2026, 3, 2, tzinfo=UTC)
    doc = with_provenance(_doc(), Provenance("web", question="q", best_score=0.5))
    written = stamped(doc, now)
    assert isinstance(written, SourcedDocument) and written.text == doc.text and written.year == 2025
    assert provenance_of(written) == Provenance("web", added_at=now, question="q", best_score=0.5)
    # A document without provenance: a web page came from a user, anything else is a local file.
    assert provenance_of(stamped(_doc("web"), now)) == Provenance("user", added_at=now)
    assert provenance_of(stamped(_doc("local"), now)) == Provenance("local", added_at=now)
    # dataclasses.replace (used on the write path) keeps the provenance.
    assert provenance_of(dataclasses.replace(written, aliases=[])) == provenance_of(written)


def test_dedupe_forgets_a_document_by_id(tmp_path: Path) -> None:
    index = DedupeIndex(tmp_path / "dedupe.sqlite")
    index.remember(URL, "hash-1", "doc-1", 3)
    assert index.seen(URL, "hash-1")
    assert index.forget_document("doc-1") is True
    assert not index.seen(URL, "hash-1")
    assert index.forget_document("doc-1") is False
    index.close()


class InProcessKb:
    """Writes through the retriever's servicer (validation, conversion, a real Edge store), no gRPC."""

    def __init__(self, servicer: RetrieverServicer) -> None:
        self.servicer = servicer

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        rng = np.random.default_rng(len(texts))
        return [list(map(float, v / np.linalg.norm(v))) for v in rng.normal(size=(len(texts), 8))]

    async def upsert(self, doc: Document, chunks: Sequence[Chunk], vectors: Sequence[list[float]]) -> None:
        provenance = provenance_of(doc)
        request = retriever_pb2.UpsertRequest(
            chunks=[
                retriever_pb2.Chunk(
                    vector=v,
                    text=c.text,
                    payload=chunk_payload(doc, c),
                    provenance=provenance.to_proto() if provenance else None,
                )
                for c, v in zip(chunks, vectors, strict=True)
            ]
        )
        await self.servicer.Upsert(request, None)  # type: ignore[arg-type]

    async def delete_document(self, document_id: str) -> int:
        reply = await self.servicer.DeleteDocument(retriever_pb2.DeleteDocumentRequest(document_id=document_id), None)  # type: ignore[arg-type]
        return reply.deleted

    async def list_documents(self, request: retriever_pb2.ListDocumentsRequest) -> retriever_pb2.ListDocumentsResponse:
        return await self.servicer.ListDocuments(request, None)  # type: ignore[arg-type]

    async def get_document(self, document_id: str) -> retriever_pb2.GetDocumentResponse:
        return await self.servicer.GetDocument(retriever_pb2.GetDocumentRequest(document_id=document_id), None)  # type: ignore[arg-type]


@pytest.fixture
async def kb(tmp_path: Path) -> AsyncIterator[InProcessKb]:
    store = open_store("edge", path=str(tmp_path), url=None, api_key=None, collection="kb")
    servicer = RetrieverServicer(store, max_k=10, max_upsert_batch=100)  # type: ignore[arg-type]
    yield InProcessKb(servicer)
    store.close()


async def test_written_provenance_is_shown_and_a_delete_clears_chunks_and_dedupe(
    kb: InProcessKb, tmp_path: Path
) -> None:
    writer = DocumentWriter(kb, chunk_tokens=40, max_chunk_tokens=80, embed_batch=4)
    found = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    doc = with_provenance(_doc(), Provenance("web", question="Halcyon revenue?", best_score=0.58, found_at=found))
    before = datetime.now(UTC)
    result = await writer.write(doc)
    index = DedupeIndex(tmp_path / "dedupe.sqlite")
    index.remember(URL, "hash", result.document_id, result.chunks)
    admin = KnowledgeBaseAdmin(kb, index)

    shown = await admin.get(result.document_id)
    p = shown.document.provenance
    assert shown.document.chunks == result.chunks > 1
    assert (p.origin, p.question, p.found_at.ToDatetime(tzinfo=UTC)) == (
        retriever_pb2.DOCUMENT_ORIGIN_WEB,
        "Halcyon revenue?",
        found,
    )
    assert p.best_score == pytest.approx(0.58) and p.added_at.ToDatetime(tzinfo=UTC) >= before.replace(microsecond=0)
    listed = await admin.list(
        ingester_pb2.IngesterServiceListDocumentsRequest(
            filter=retriever_pb2.DocumentFilter(origin=retriever_pb2.DOCUMENT_ORIGIN_WEB)
        )
    )
    assert [d.document_id for d in listed.documents] == [result.document_id] and listed.total_size == 1

    deleted = await admin.delete(result.document_id)
    assert (deleted.deleted_chunks, deleted.dedupe_cleared) == (result.chunks, True)
    assert not index.seen(URL, "hash")
    with pytest.raises(NotFound):
        await admin.get(result.document_id)
    with pytest.raises(NotFound, match=result.document_id):
        await admin.delete(result.document_id)
    index.close()
