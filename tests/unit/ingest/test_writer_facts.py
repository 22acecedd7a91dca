"""The write path stores a document's facts after its chunks, through the ingester's real retriever client
(GrpcKnowledgeBase) and a real retriever gRPC server over Qdrant Edge; a failure to store facts is logged
and counted, and never fails the ingest."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import numpy as np
import pytest
from weaverbird.v1 import retriever_pb2, retriever_pb2_grpc
from weaverbird_common.docs.loaders import load_text
from weaverbird_common.facts.proto import from_proto
from weaverbird_common.server import ServiceBinding, start_server
from weaverbird_ingester.peers import GrpcKnowledgeBase
from weaverbird_ingester.writer import DocumentWriter
from weaverbird_retriever.facts import facts_collection
from weaverbird_retriever.servicer import RetrieverServicer
from weaverbird_retriever.stores import open_store

SERVICE = retriever_pb2.DESCRIPTOR.services_by_name["RetrieverService"].full_name

REPORT = """---
company: Kestrel Foundry
year: 2024
---
# Kestrel Foundry Annual Report 2024

Kestrel Foundry casts turbine housings for industrial customers in Europe and Asia.

## Consolidated statement of income

(USD million)

| | 2024 | 2023 |
|---|---:|---:|
| Revenue | 1,102.9 | 987.4 |
| Cost of sales | (702.3) | (655.0) |
| Gross profit | 400.6 | 332.4 |
| Net income | 88.1 | (12.5) |
"""


class HashEmbeddingKb(GrpcKnowledgeBase):
    """The ingester's retriever client; passages get seeded unit vectors instead of an embedder's."""

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        rng = np.random.default_rng(len(texts))
        return [list(map(float, v / np.linalg.norm(v))) for v in rng.normal(size=(len(texts), 8))]


@asynccontextmanager
async def _retriever(tmp_path: Path, *, with_facts: bool) -> AsyncIterator[str]:
    """A real retriever gRPC server on 127.0.0.1 over Edge stores; yields its address."""
    store = open_store("edge", path=str(tmp_path), url=None, api_key=None, collection="kb")
    facts = open_store("edge", path=str(tmp_path), url=None, api_key=None, collection=facts_collection("kb"))
    servicer = RetrieverServicer(store, max_k=10, max_upsert_batch=100, facts=facts if with_facts else None)
    binding = ServiceBinding(retriever_pb2_grpc.add_RetrieverServiceServicer_to_server, servicer, SERVICE)
    running = await start_server([binding])
    try:
        yield f"127.0.0.1:{running.port}"
    finally:
        await running.stop(0)
        store.close()
        facts.close()


async def _lookup(addr: str, **fields: object) -> list[retriever_pb2.Fact]:
    async with grpc.aio.insecure_channel(addr) as channel:
        reply = await retriever_pb2_grpc.RetrieverServiceStub(channel).LookupFacts(
            retriever_pb2.LookupFactsRequest(**fields)  # type: ignore[arg-type]
        )
    return list(reply.facts)


async def test_write_stores_the_documents_facts_after_its_chunks(tmp_path: Path) -> None:
    doc = load_text(REPORT, "kestrel-2024.md")
    async with _retriever(tmp_path, with_facts=True) as addr:
        kb = HashEmbeddingKb("127.0.0.1:9", addr, timeout_s=30)  # the embedder is never called
        writer = DocumentWriter(kb, chunk_tokens=40, max_chunk_tokens=80, embed_batch=4)
        result = await writer.write(doc)
        stored = [from_proto(f) for f in await _lookup(addr, document_id=doc.document_id)]
        assert result.chunks >= 1 and result.facts == len(stored) >= 8 and writer.fact_failures == 0
        revenue = [f for f in stored if f.concept == "revenue" and f.period.fiscal_year == 2024]
        assert [(f.label, f.value, f.scale, f.company) for f in revenue] == [("Revenue", 1102.9, 1e6, doc.company)]

        # Writing the document again replaces its facts instead of adding copies.
        again = await writer.write(doc)
        assert again.facts == result.facts
        assert len(await _lookup(addr, document_id=doc.document_id)) == result.facts
        await kb.close()


async def test_a_fact_store_failure_is_counted_and_the_document_still_stored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    doc = load_text(REPORT, "kestrel-2024.md")
    # A retriever without a facts store refuses UpsertFacts (FAILED_PRECONDITION): a real failure.
    async with _retriever(tmp_path, with_facts=False) as addr:
        kb = HashEmbeddingKb("127.0.0.1:9", addr, timeout_s=30)
        writer = DocumentWriter(kb, chunk_tokens=40, max_chunk_tokens=80, embed_batch=4)
        result = await writer.write(doc)
        assert result.chunks >= 1 and result.facts == 0 and writer.fact_failures == 1
        assert f"facts of document {doc.document_id} not stored" in caplog.text
        assert (await kb.get_document(doc.document_id)).document.chunks == result.chunks
        await kb.close()
