"""gRPC clients of the embedder and retriever used to write chunks into the knowledge base and to read
and delete its documents."""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from weaverbird.v1 import common_pb2, embedder_pb2, embedder_pb2_grpc, retriever_pb2, retriever_pb2_grpc
from weaverbird_common.clients import open_channel, peer_errors
from weaverbird_common.docs.documents import Chunk, Document
from weaverbird_common.errors import error_from_status
from weaverbird_common.facts.model import Fact
from weaverbird_common.facts.proto import to_proto

from weaverbird_ingester.provenance import provenance_of


def chunk_payload(doc: Document, chunk: Chunk) -> common_pb2.ChunkPayload:
    return common_pb2.ChunkPayload(
        document_id=doc.document_id,
        title=doc.title,
        source=doc.source,
        page=chunk.page or 0,
        origin=common_pb2.ORIGIN_WEB if doc.origin == "web" else common_pb2.ORIGIN_LOCAL,
        language=doc.language,
        company=doc.company,
        year=doc.year or 0,
        quarter=doc.quarter or 0,
        published_date=doc.published,
        chunk_index=chunk.index,
        heading=chunk.heading,
        doc_type=doc.doc_type,
        aliases=doc.aliases,
    )


class GrpcKnowledgeBase:
    """Embeds passages through the embedder and stores them through the retriever."""

    def __init__(self, embedder_addr: str, retriever_addr: str, timeout_s: float) -> None:
        self._channels = [open_channel(embedder_addr), open_channel(retriever_addr)]
        self._embedder = embedder_pb2_grpc.EmbedderServiceStub(self._channels[0])
        self._retriever = retriever_pb2_grpc.RetrieverServiceStub(self._channels[1])
        self._timeout = timeout_s

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close()

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        async with peer_errors("embedder"):
            response = await self._embedder.Embed(
                embedder_pb2.EmbedRequest(texts=list(texts), kind=embedder_pb2.EMBED_KIND_PASSAGE),
                timeout=self._timeout,
            )
        return [list(v.values) for v in response.vectors]

    async def upsert(self, doc: Document, chunks: Sequence[Chunk], vectors: Sequence[list[float]]) -> None:
        provenance = provenance_of(doc)
        proto = provenance.to_proto() if provenance is not None else None
        request = retriever_pb2.UpsertRequest(
            chunks=[
                retriever_pb2.Chunk(vector=vec, text=chunk.text, payload=chunk_payload(doc, chunk), provenance=proto)
                for chunk, vec in zip(chunks, vectors, strict=True)
            ]
        )
        async with peer_errors("retriever"):
            await self._retriever.Upsert(request, timeout=self._timeout)

    async def upsert_facts(self, document_id: str, facts: Sequence[Fact]) -> int:
        """Replaces the document's facts in the retriever."""
        request = retriever_pb2.UpsertFactsRequest(document_id=document_id, facts=[to_proto(f) for f in facts])
        async with peer_errors("retriever"):
            response = await self._retriever.UpsertFacts(request, timeout=self._timeout)
        return response.upserted

    async def delete_document(self, document_id: str) -> int:
        async with peer_errors("retriever"):
            response = await self._retriever.DeleteDocument(
                retriever_pb2.DeleteDocumentRequest(document_id=document_id), timeout=self._timeout
            )
        return response.deleted

    async def list_documents(self, request: retriever_pb2.ListDocumentsRequest) -> retriever_pb2.ListDocumentsResponse:
        async with peer_errors("retriever"):
            return await self._retriever.ListDocuments(request, timeout=self._timeout)

    async def get_document(self, document_id: str) -> retriever_pb2.GetDocumentResponse:
        """NotFound (from the retriever's NOT_FOUND) when no chunk of the document is stored."""
        async with peer_errors("retriever"):
            return await self._retriever.GetDocument(
                retriever_pb2.GetDocumentRequest(document_id=document_id), timeout=self._timeout
            )

    async def document_facts(self, document_id: str, limit: int) -> list[retriever_pb2.Fact]:
        """The document's statement facts, in table order (none when the retriever keeps no facts)."""
        async with peer_errors("retriever"):
            reply = await self._retriever.LookupFacts(
                retriever_pb2.LookupFactsRequest(document_id=document_id, limit=limit), timeout=self._timeout
            )
        return list(reply.facts)

    async def document_stored(self, document_id: str) -> bool:
        """Whether any chunk of the document is stored (asked of the retriever)."""
        try:
            await self._retriever.GetDocument(
                retriever_pb2.GetDocumentRequest(document_id=document_id), timeout=self._timeout
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                return False
            raise error_from_status(exc.code(), exc.details() or "", "retriever") from exc
        return True
